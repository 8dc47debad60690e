"""``chronoprobe check``: every registered lens at a budget's size, one folder, one answer, a CI gate.

:func:`~chronoprobe.checkup.run.check` runs it; ``chronoprobe.check(model, budget=...)`` is the
Python entry point and ``chronoprobe check`` the command (docs/check.md).
"""

from chronoprobe.checkup.plan import LensPlan
from chronoprobe.checkup.report import CheckRecord
from chronoprobe.checkup.run import CheckRequest, CheckResult, LensOutcome, check, default_check_out
from chronoprobe.checkup.thresholds import GateResult, Threshold, parse_threshold

__all__ = [
    "CheckRecord",
    "CheckRequest",
    "CheckResult",
    "GateResult",
    "LensOutcome",
    "LensPlan",
    "Threshold",
    "check",
    "default_check_out",
    "parse_threshold",
]
