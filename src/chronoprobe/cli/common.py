"""The names ``cli/common.py`` held before it was split, for code written against it (import from the new modules).

:mod:`~chronoprobe.cli.options` (shared options, the choice check), :mod:`~chronoprobe.cli.model_options`
(``ModelOptions``), :mod:`~chronoprobe.cli.progress_display` (bars, spinners, notices) and
:mod:`~chronoprobe.cli.runs` (claims, model loading, lens runs).
"""

from __future__ import annotations

from chronoprobe.cli.model_options import (
    API_MODES,
    DEFAULT_MODEL_OPTIONS,
    DEVICE_MAPS,
    DTYPES,
    MODEL_OPTIONS,
    QUANTIZE,
    SAMPLERS,
    ModelOptions,
    backend_options,
    model_option_parameters,
    with_model_options,
)
from chronoprobe.cli.options import (
    CutoffOpt,
    DeployedAtOpt,
    ModelOpt,
    SnapshotOpt,
    check_as_of,
    check_endpoint,
    check_share,
    check_snapshot_name,
    check_snapshot_ref,
)
from chronoprobe.cli.progress_display import PlainProgress, console, progress_bar, task_progress
from chronoprobe.cli.runs import (
    claim_output_dir,
    claim_run_dir,
    config_errors,
    load_models,
    open_cache,
    run_in_terminal,
)

__all__ = [
    "API_MODES",
    "DEFAULT_MODEL_OPTIONS",
    "DEVICE_MAPS",
    "DTYPES",
    "MODEL_OPTIONS",
    "QUANTIZE",
    "SAMPLERS",
    "CutoffOpt",
    "DeployedAtOpt",
    "ModelOpt",
    "ModelOptions",
    "PlainProgress",
    "SnapshotOpt",
    "backend_options",
    "check_as_of",
    "check_endpoint",
    "check_share",
    "check_snapshot_name",
    "check_snapshot_ref",
    "claim_output_dir",
    "claim_run_dir",
    "config_errors",
    "console",
    "load_models",
    "model_option_parameters",
    "open_cache",
    "progress_bar",
    "run_in_terminal",
    "task_progress",
    "with_model_options",
]
