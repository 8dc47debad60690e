"""chronoprobe: audit how language models handle time-sensitive knowledge."""

__version__ = "0.1.0"

from chronoprobe.threads import prepare_openmp as _prepare_openmp

_prepare_openmp()  # before anything imports torch: OpenMP reads its wait policy once
