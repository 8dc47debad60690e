"""``chronoprobe check``: every registered lens at a budget's size, one folder, one answer, a CI gate.

:func:`~chronoprobe.check.run.check` runs it; ``chronoprobe.check(model, budget=...)`` is the
Python entry point and ``chronoprobe check`` the command (docs/check.md).
"""

from chronoprobe.check.gate import GateResult, Threshold, parse_threshold
from chronoprobe.check.plan import LensPlan
from chronoprobe.check.report import CheckRecord
from chronoprobe.check.run import CheckRequest, CheckResult, LensOutcome, check, default_check_out

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
