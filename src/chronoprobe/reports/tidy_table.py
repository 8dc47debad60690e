"""One tidy table across result folders: a row per (run, model, class, metric).

Pure readers: nothing here writes a file. ``chronoprobe results`` prints or saves the
table and ``chronoprobe card`` renders it, so both show the same numbers.

Every number comes from the run's :class:`~chronoprobe.records.runlog.Metric` records (``run.json``),
and the lens from the log's ``lens`` field; this module knows no lens. A folder written before
the records existed gets them from the lens that wrote it, through the registry
(:func:`chronoprobe.records.runlog.read_folder`). A number without an interval (a per-label F1, a bare
float from an old layout) has its n and interval empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronoprobe import plugins
from chronoprobe.errors import DataError
from chronoprobe.paths import latest_named
from chronoprobe.records.runlog import (
    ITEMS,
    MARKER,
    PLOT_SUFFIXES,
    RUN_LOG,
    SUMMARY,
    Metric,
    ModelEntry,
    Run,
    read_folder,
)

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
    "Run",
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
    """One number of the results table: a run's :class:`~chronoprobe.records.runlog.Metric` record and where it
    comes from (the run, the model's display name, the lens and the dataset)."""

    run: str
    model: str
    """The model's display name (the record's ``model`` is the run's key for it)."""
    lens: str
    dataset: str
    metric: Metric

    def as_dict(self) -> dict[str, Any]:
        """The row as the table's :data:`COLUMNS` (the record's ``group`` is the column ``class``)."""
        metric = self.metric
        return {
            "run": self.run,
            "model": self.model,
            "lens": self.lens,
            "dataset": self.dataset,
            "class": metric.group,
            "metric": metric.name,
            "value": metric.value,
            "n": metric.n,
            "ci_low": metric.ci_low,
            "ci_high": metric.ci_high,
        }


@dataclass
class Found:
    runs: list[Run] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- finding run folders ---------------------------------------------------------------------


def read_run(path: Path, run: str | None = None) -> Run | None:
    """The run folder at ``path`` (its run.json, else its summary.json), ``run`` its label in the table;
    None when neither is of a known layout."""
    return read_folder(path, run)


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

    A named folder that is neither is an error; one whose only result folders do not read is the
    error of the first of them (its file named). A subfolder that is not a run folder is skipped with
    a warning when it looks like a broken one (a summary.json we cannot place); the folders that hold
    no result folder are counted in one warning; hidden folders (staging, caches) are never entered.
    """
    found = Found()
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if not path.exists():
            path = latest_named(path) or path  # results/outdated/smollm2: its latest smollm2-<timestamp>
        if not path.exists():
            raise DataError(str(path), f"no such folder (nor a run folder named {path.name}-<timestamp> beside it)")
        if not path.is_dir():
            raise DataError(str(path), "is a file; give a result folder (or a folder of them)")
        run = read_run(path)
        if run is not None:
            _add(found, seen, run)
            continue
        before = len(found.runs)
        broken, empty = _search(path, depth, found, seen)
        if len(found.runs) == before:
            if broken:
                raise broken[0]
            raise DataError(str(path), _unknown(path).split(": ", 1)[1] + " and holds no result folders")
        if empty:
            shown = ", ".join(str(p) for p in empty[:3]) + (", ..." if len(empty) > 3 else "")
            found.warnings.append(
                f"skipped {len(empty):,} folder(s) under {path} with no result folder within {depth} levels: {shown}"
            )
    return found


def _search(root: Path, depth: int, found: Found, seen: set[Path]) -> tuple[list[DataError], list[Path]]:
    """Add the run folders below ``root`` to ``found``: the broken ones (each also a warning), and the
    outermost folders that hold no run folder."""
    broken: list[DataError] = []
    visited: list[Path] = []
    holding: set[Path] = set()
    for sub, label in _walk(root, depth):
        try:
            nested = read_run(sub, label)
        except DataError as exc:
            found.warnings.append(f"skipped {exc}")
            broken.append(exc)
            holding.update(sub.parents)
            continue
        if nested is not None:
            _add(found, seen, nested)
            holding.update(sub.parents)
        elif (sub / SUMMARY).is_file():
            found.warnings.append(f"skipped {_unknown(sub)}")
            holding.update(sub.parents)
        else:
            visited.append(sub)
    empty = set(p for p in visited if p not in holding)
    return broken, [p for p in visited if p in empty and p.parent not in empty]


def _add(found: Found, seen: set[Path], run: Run) -> None:
    key = run.path.resolve()
    if key not in seen:
        seen.add(key)
        found.runs.append(run)


def _walk(root: Path, depth: int) -> Iterator[tuple[Path, str]]:
    """Visible subfolders, breadth first, each real folder once (a link back up, a loop, is not followed
    again); a run folder's own subfolders are not entered."""
    level = [root]
    entered = {root.resolve()}
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
                real = child.resolve()
                if real in entered:
                    continue
                entered.add(real)
                yield child, str(child)
                if not (child / SUMMARY).is_file():
                    below.append(child)
        level = below


# --- rows --------------------------------------------------------------------------------------


def run_rows(run: Run) -> list[Row]:
    """Every number of one run folder as tidy rows, in the order the lens recorded them."""
    names = {m.key: m.name for m in run.models}
    return [
        Row(run=run.label, model=names.get(m.model, m.model), lens=run.lens, dataset=run.dataset, metric=m)
        for m in run.summary.metrics
    ]


def tidy_rows(runs: Sequence[Run]) -> list[Row]:
    return [row for run in runs for row in run_rows(run)]


def to_frame(rows: Sequence[Row]) -> pd.DataFrame:
    """The rows as a DataFrame with the :data:`COLUMNS`; n is a nullable integer."""
    import pandas as pd  # deferred: pandas

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
