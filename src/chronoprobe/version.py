"""The release, written once: the package's ``__version__``, its metadata (``pyproject.toml`` reads it from here)
and every record that names the release. A leaf: it imports nothing, so any module may import it."""

__version__ = "0.2.0"
