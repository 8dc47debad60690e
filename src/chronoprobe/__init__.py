"""chronoprobe: audit how language models handle time-sensitive knowledge."""

__version__ = "0.1.0"
