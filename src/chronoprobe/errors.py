"""One exception type for every failure a user can cause.

The CLI prints ``str(error)`` as a single line and exits non-zero; nothing else
is shown, so the message must name the place (file and row, QID, endpoint,
model spec) and what is wrong there.
"""

from __future__ import annotations


class ChronoprobeError(Exception):
    """A user-facing error with a location and a one-line explanation."""

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}")

    def __reduce__(self) -> tuple[type[ChronoprobeError], tuple[str, str]]:
        # rebuilt from (where, problem), so the error survives a trip between processes (Ray workers)
        return type(self), (self.where, self.problem)


class ConfigError(ChronoprobeError):
    """Bad options, model specs or configuration."""


class DataError(ChronoprobeError):
    """A malformed dataset, catalogue or snapshot row."""


class CapabilityError(ChronoprobeError):
    """A backend lacks a capability the caller needs (raised before any work)."""


class EndpointError(ChronoprobeError):
    """A remote endpoint (WDQS, an OpenAI-compatible server) failed."""


class PluginError(ChronoprobeError):
    """A plug-in (a ``chronoprobe.lenses`` or ``chronoprobe.backends`` entry point) failed: its import, or one of
    its stages.

    *where* names the entry point and the distribution that declares it; the original exception is
    the ``__cause__``. The message reads ``lens plug-in 'toy' (toy-lens 0.1) failed to import: ...``.
    """

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.args = (f"{where} {problem}",)

    def __str__(self) -> str:
        return f"{self.where} {self.problem}"


class CacheUnavailable(DataError):
    """The call cache stayed busy, locked or failing I/O through every retry (another process's activity).

    What finished is kept: a run that failed so resumes with the same command and the same ``--out``, which
    the runner records in ``resume`` (the option and the folder) for the CLI's one line."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(where, problem)
        self.resume: tuple[str, str] | None = None
