"""``chronoprobe check``: every registered lens at a budget's size, one folder, one answer, a CI gate.

Its options are declared once (:class:`~chronoprobe.checkup.config.CheckToolConfig`); its command is a tool
(:class:`~chronoprobe.checkup.tools.CheckTool`) that the one runner drives, for ``chronoprobe check`` and
``chronoprobe.check(models, budget=...)`` alike (docs/check.md).
"""

from chronoprobe.checkup.config import CheckToolConfig
from chronoprobe.checkup.plan import LensPlan
from chronoprobe.checkup.report import CheckRecord
from chronoprobe.checkup.run import CheckResult, LensOutcome, default_check_out
from chronoprobe.checkup.thresholds import GateResult, Threshold, parse_threshold

__all__ = [
    "CheckRecord",
    "CheckResult",
    "CheckToolConfig",
    "GateResult",
    "LensOutcome",
    "LensPlan",
    "Threshold",
    "default_check_out",
    "parse_threshold",
]
