"""One tidy table across result folders: a row per (run, model, class, metric).

Pure readers: nothing here writes a file. ``chronoprobe results`` prints or saves the
table and ``chronoprobe card`` renders it, so both show the same numbers.

Every number comes from the run's :class:`~chronoprobe.runlog.Metric` records (``run.json``),
and the lens from the log's ``lens`` field; this module knows no lens. A folder written before
the records existed gets them from the lens that wrote it, through the registry
(:func:`chronoprobe.runlog.read_folder`). A number without an interval (a per-label F1, a bare
float from an old layout) has its n and interval empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe import plugins
from chronoprobe.errors import DataError
from chronoprobe.reports.markdown import recorded_label
from chronoprobe.runlog import ITEMS, MARKER, PLOT_SUFFIXES, RUN_LOG, SUMMARY, Metric, Summary, read_folder

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: tuple[str, ...] = ("run", "model", "lens", "dataset", "class", "metric", "value", "n", "ci_low", "ci_high")
ALL = "all"
__all__ = [
    "ALL",
    "COLUMNS",
    "ITEMS",
    "MARKER",
    "PLOT_SUFFIXES",
    "RUN_LOG",
    "SUMMARY",
    "Found",
    "ModelEntry",
    "Row",
    "RunFolder",
    "find_runs",
    "lens_order",
    "read_run",
    "results_frame",
    "run_rows",
    "tidy_rows",
    "to_frame",
]


@dataclass(frozen=True)
class Row:
    run: str
    model: str
    lens: str
    dataset: str
    cls: str
    metric: str
    value: float | None
    n: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    unit: str = ""
    """Not a column: how the card scales and prints the value (see :class:`~chronoprobe.runlog.Metric`)."""
    headline: bool = False
    """Not a column: whether the card's headline table shows it."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "model": self.model,
            "lens": self.lens,
            "dataset": self.dataset,
            "class": self.cls,
            "metric": self.metric,
            "value": self.value,
            "n": self.n,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
        }


@dataclass(frozen=True)
class ModelEntry:
    """A model as a run names it: the display name in tables, the spec in the provenance."""

    name: str
    spec: str
    provenance: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""
    """The run's key for it in the summary and rows (the name the user gave, else the spec)."""


@dataclass(frozen=True)
class RunFolder:
    path: Path
    run: str
    """The run column: the folder as the user named it (or as found under a parent they named)."""
    lens: str
    kind: str
    """What wrote it (the lens's kind, e.g. ``<lens> run``), as the run log or the lens recorded it."""
    dataset: str
    summary: Mapping[str, Any]
    """The lens's own layout (its ``detail``), for the lens's readers; this module reads only ``record``."""
    provenance: Mapping[str, Any]
    models: tuple[ModelEntry, ...]
    record: Summary = field(default_factory=lambda: Summary(lens="", models=[], headline={}, detail={}))
    """The typed summary: the metric records, the dataset and the models' names."""

    @property
    def plots(self) -> list[Path]:
        """The run's figures, an SVG preferred over a PNG of the same name."""
        files = sorted(p for p in self.path.iterdir() if p.suffix in PLOT_SUFFIXES and p.is_file())
        svgs = {p.stem for p in files if p.suffix == ".svg"}
        return [p for p in files if p.suffix == ".svg" or p.stem not in svgs]


@dataclass
class Found:
    runs: list[RunFolder] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- finding run folders ---------------------------------------------------------------------


def read_run(path: Path, run: str | None = None) -> RunFolder | None:
    """The run folder at ``path`` (its run.json, else its summary.json); None when neither is of a known layout."""
    folder = read_folder(path)
    if folder is None:
        return None
    summary = folder.summary
    return RunFolder(
        path=path,
        run=run or str(path),
        lens=folder.lens,
        kind=folder.kind,
        dataset=summary.dataset or folder.lens,
        summary=summary.detail,
        provenance=folder.provenance,
        models=_models(summary, folder.provenance),
        record=summary,
    )


def lens_order(lens: str) -> int:
    """Where a lens's section goes: the registry's order, an unknown name last."""
    order = plugins.names()
    return order.index(lens) if lens in order else len(order)


def _unknown(path: Path) -> str:
    if (path / SUMMARY).is_file():
        return f"{path}: its summary.json is not from any lens ({', '.join(plugins.names())})"
    return f"{path}: not a chronoprobe result folder (no summary.json)"


def find_runs(paths: Sequence[Path], depth: int = 3) -> Found:
    """The run folders named by ``paths``: each a run folder or a folder holding run folders
    up to ``depth`` levels down.

    A named folder that is neither is an error. A subfolder that is not a run folder is
    skipped with a warning when it looks like a broken one (a summary.json we cannot place)
    and silently otherwise; hidden folders (staging, caches) are never entered.
    """
    found = Found()
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise DataError(str(path), "no such folder")
        if not path.is_dir():
            raise DataError(str(path), "is a file; give a result folder (or a folder of them)")
        run = read_run(path)
        if run is not None:
            _add(found, seen, run)
            continue
        before = len(found.runs)
        for sub, label in _walk(path, depth):
            try:
                nested = read_run(sub, label)
            except DataError as exc:
                found.warnings.append(f"skipped {exc}")
                continue
            if nested is not None:
                _add(found, seen, nested)
            elif (sub / SUMMARY).is_file():
                found.warnings.append(f"skipped {_unknown(sub)}")
        if len(found.runs) == before:
            raise DataError(str(path), _unknown(path).split(": ", 1)[1] + " and holds no result folders")
    return found


def _add(found: Found, seen: set[Path], run: RunFolder) -> None:
    key = run.path.resolve()
    if key not in seen:
        seen.add(key)
        found.runs.append(run)


def _walk(root: Path, depth: int) -> Iterator[tuple[Path, str]]:
    """Visible subfolders, breadth first; a run folder's own subfolders are not entered."""
    level = [root]
    for _ in range(depth):
        below = []
        for folder in level:
            try:
                children = sorted(folder.iterdir())
            except OSError:
                continue
            for child in children:
                if child.name.startswith(".") or not child.is_dir():
                    continue
                yield child, str(child)
                if not (child / SUMMARY).is_file():
                    below.append(child)
        level = below


# --- rows --------------------------------------------------------------------------------------


def _models(summary: Summary, provenance: Mapping[str, Any]) -> tuple[ModelEntry, ...]:
    """The run's models, keyed as its records key them, named as the lens or the provenance names them."""
    models = provenance.get("models") or []
    recorded = {recorded_label(m): m for m in models if isinstance(m, dict)}
    keys = list(dict.fromkeys([*summary.models, *(m.model for m in summary.metrics)]))
    entries = []
    for key in keys:
        info = recorded.get(key, {})
        name = summary.names.get(key) or info.get("name") or key
        spec = summary.specs.get(key) or info.get("spec") or key
        entries.append(ModelEntry(name=str(name), spec=str(spec), provenance=info, key=key))
    return tuple(entries)


def _row(run: RunFolder, names: Mapping[str, str], metric: Metric) -> Row:
    return Row(
        run=run.run,
        model=names.get(metric.model, metric.model),
        lens=run.lens,
        dataset=run.dataset,
        cls=metric.group,
        metric=metric.name,
        value=metric.value,
        n=metric.n,
        ci_low=metric.ci_low,
        ci_high=metric.ci_high,
        unit=metric.unit,
        headline=metric.headline,
    )


def run_rows(run: RunFolder) -> list[Row]:
    """Every number of one run folder as tidy rows, in the order the lens recorded them."""
    names = {m.key: m.name for m in run.models}
    return [_row(run, names, metric) for metric in run.record.metrics]


def tidy_rows(runs: Sequence[RunFolder]) -> list[Row]:
    return [row for run in runs for row in run_rows(run)]


def to_frame(rows: Sequence[Row]) -> pd.DataFrame:
    """The rows as a DataFrame with the :data:`COLUMNS`; n is a nullable integer."""
    import pandas as pd

    frame = pd.DataFrame([r.as_dict() for r in rows], columns=list(COLUMNS))
    for column in ("run", "model", "lens", "dataset", "class", "metric"):
        frame[column] = frame[column].astype("string")
    for column in ("value", "ci_low", "ci_high"):
        frame[column] = pd.to_numeric(frame[column]).astype("float64")
    frame["n"] = pd.array(frame["n"].tolist(), dtype="Int64")
    return frame


def results_frame(paths: Sequence[Path]) -> tuple[pd.DataFrame, list[str]]:
    """The tidy table of every run folder under ``paths``, and the warnings for skipped folders."""
    found = find_runs(paths)
    return to_frame(tidy_rows(found.runs)), found.warnings
