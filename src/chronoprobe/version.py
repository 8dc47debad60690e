"""The release, written once: the package's ``__version__``, its metadata (``pyproject.toml`` reads it from here)
and every record that names the release. A leaf: it imports nothing, so any module may import it."""

__version__ = "0.3.0.dev0"

SHIMS_REMOVED_IN = "0.4.0"
"""The release that drops the older spellings 0.1.0 released and 0.2.0 still takes with a warning: module names
(``chronoprobe.moved``), Python keywords (``chronoprobe.renames``) and CLI flags (``cli/deprecated.py``).
``tests/test_moved.py`` fails once ``__version__`` reaches it while any of them is left."""
