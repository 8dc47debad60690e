"""One tidy table across result folders: a row per (run, model, class, metric).

Pure readers: nothing here writes a file. ``chronoprobe results`` prints or saves the
table and ``chronoprobe card`` renders it, so both show the same numbers.

Today's folders are recognised by the layout of their ``summary.json``:

============== ====================================================== =========================
lens           summary.json                                           written by
============== ====================================================== =========================
outdated       ``models`` per model spec, ``overall_key``              ``outdated run``
outdated       ``categories`` and ``overall`` (shares 0-1)            ``outdated score``
conflicts      ``classes`` and ``summary`` per model spec              ``conflicts run``
recency        ``labels`` and ``runs`` (one per model x strategy x     ``recency eval``
               context mode), ``table6``, ``table7``
============== ====================================================== =========================

Metric names are the summary's own keys, joined with dots (``soft_constraint_pct.outdated``).
Two normalisations keep lenses comparable: ``outdated score`` shares are reported as
percentages under the names ``outdated run`` uses, and recency metrics carry their strategy
and context mode as a prefix (``zero-shot.with.accuracy``). A value with an ``estimates``
entry gets its n and 95% interval; the few numbers without one (per-label F1, recency Δ%)
have them empty.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from chronoprobe.errors import DataError
from chronoprobe.io import json_kind, read_text
from chronoprobe.reports.markdown import recorded_label

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: tuple[str, ...] = ("run", "model", "lens", "dataset", "class", "metric", "value", "n", "ci_low", "ci_high")
LENSES: tuple[str, ...] = ("outdated", "conflicts", "recency", "editing")
ALL = "all"
SUMMARY = "summary.json"
RUN_LOG = "run.json"
MARKER = ".chronoprobe-run"
PLOT_SUFFIXES = (".svg", ".png")
_VERDICT_BLOCKS = {"soft_constraint": "soft_constraint_pct", "average": "average_pct"}
"""``outdated score`` block -> the ``outdated run`` name of the same numbers in percent."""


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


class _Base(TypedDict):
    """The columns a group of rows shares."""

    run: str
    model: str
    lens: str
    dataset: str
    cls: str


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
    """What wrote it: ``outdated run``, ``outdated score``, ``conflicts run`` or ``recency eval``."""
    dataset: str
    summary: Mapping[str, Any]
    provenance: Mapping[str, Any]
    models: tuple[ModelEntry, ...]

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


def _kind_of(summary: Mapping[str, Any]) -> str | None:
    if "models" in summary and "methods" in summary:
        return "editing run"
    if "models" in summary and "overall_key" in summary:
        return "outdated run"
    if "categories" in summary and "overall" in summary and "generations_dir" in summary:
        return "outdated score"
    if "classes" in summary and "summary" in summary:
        return "conflicts run"
    if "runs" in summary and "labels" in summary:
        return "recency eval"
    return None


def _load_summary(path: Path) -> Mapping[str, Any]:
    where = str(path / SUMMARY)
    try:
        data = json.loads(read_text(path / SUMMARY, where))
    except json.JSONDecodeError as exc:
        raise DataError(where, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise DataError(where, "is not a JSON object")
    return data


def _summary_from_run_log(path: Path) -> Mapping[str, Any] | None:
    """The lens's summary layout from ``run.json`` (its ``summary.detail`` plus the provenance), if present."""
    log_path = path / RUN_LOG
    if not log_path.exists():
        return None
    try:
        log = json.loads(read_text(log_path, str(log_path)))
    except json.JSONDecodeError as exc:
        raise DataError(
            str(log_path), f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(log, dict):
        raise DataError(str(log_path), f"is not a JSON object (it holds {json_kind(log)})")
    summary = log.get("summary")
    if not isinstance(summary, dict):
        raise DataError(str(log_path), f"its summary is not an object ({json_kind(summary)})")
    detail = summary.get("detail")
    if not isinstance(detail, dict):
        raise DataError(str(log_path), f"its summary.detail is not an object ({json_kind(detail)})")
    provenance = log.get("provenance")
    if provenance is not None and not isinstance(provenance, dict):
        raise DataError(str(log_path), f"its provenance is not an object ({json_kind(provenance)})")
    return {**detail, "provenance": provenance or {}}


def _source(path: Path) -> str:
    """The file a run folder's numbers were read from: run.json, else the older summary.json."""
    return str(path / (RUN_LOG if (path / RUN_LOG).exists() else SUMMARY))


def read_run(path: Path, run: str | None = None) -> RunFolder | None:
    """The run folder at ``path`` (its run.json, else its summary.json); None when neither is of a known layout."""
    summary = _summary_from_run_log(path)
    if summary is None:
        if not (path / SUMMARY).is_file():
            return None
        summary = _load_summary(path)
    kind = _kind_of(summary)
    if kind is None:
        return None
    provenance = summary.get("provenance") or {}
    if not isinstance(provenance, dict):
        provenance = {}
    try:
        return RunFolder(
            path=path,
            run=run or str(path),
            lens=kind.split()[0],
            kind=kind,
            dataset=_dataset(kind, summary, provenance),
            summary=summary,
            provenance=provenance,
            models=_models(kind, summary, provenance),
        )
    except (LookupError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(_source(path), f"unexpected {kind} layout ({type(exc).__name__}: {exc})") from None


def _unknown(path: Path) -> str:
    if (path / SUMMARY).is_file():
        return f"{path}: its summary.json is not from outdated, conflicts or recency"
    return f"{path}: not a chronoprobe result folder (no summary.json)"


def find_runs(paths: Sequence[Path], depth: int = 2) -> Found:
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


# --- what each layout holds --------------------------------------------------------------------


def _provenance_models(provenance: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    models = provenance.get("models") or []
    return {recorded_label(m): m for m in models if isinstance(m, dict)}


def _models(kind: str, summary: Mapping[str, Any], provenance: Mapping[str, Any]) -> tuple[ModelEntry, ...]:
    recorded = _provenance_models(provenance)
    if kind == "outdated run":
        specs = list(summary["models"])
    elif kind == "outdated score":
        scored = str(summary["model"])
        return (ModelEntry(name=scored, spec=f"generations in {summary.get('generations_dir', scored)}"),)
    elif kind == "conflicts run":
        specs = list(summary["summary"])
    elif kind == "editing run":
        specs = list(summary["models"])
    else:
        specs = list(dict.fromkeys(str(r["model"]) for r in summary["runs"]))
    entries = []
    for spec in specs:
        info = recorded.get(spec, {})
        name: Any = info.get("name")
        if kind in ("outdated run", "editing run"):
            name = summary["models"][spec].get("name") or name
        entries.append(
            ModelEntry(name=str(name or spec), spec=str(info.get("spec") or spec), provenance=info, key=spec)
        )
    return tuple(entries)


def _dataset(kind: str, summary: Mapping[str, Any], provenance: Mapping[str, Any]) -> str:
    extra = provenance.get("extra") or {}
    if kind == "outdated run":
        snapshot = provenance.get("snapshot") or {}
        return str(snapshot.get("name") or "dyknow")
    if kind == "outdated score":
        gold = summary.get("gold") or {}
        if gold.get("name"):
            return str(gold["name"])
        if gold.get("path"):
            return Path(str(gold["path"])).name
        return str(gold.get("kind") or "dyknow")
    if kind == "editing run":
        sources = {str(m["dataset"]["source"]) for m in summary["models"].values()}
        return "dyknow editing" + (f" ({Path(sources.pop()).name})" if len(sources) == 1 else "")
    if kind == "conflicts run":
        dataset, methodology = extra.get("dataset"), extra.get("methodology")
        if dataset and methodology and dataset != methodology:
            return f"{dataset} ({methodology} methodology)"
        return str(dataset or methodology or "conflicts")
    source = str(extra.get("dataset") or "recencyqa")
    if source.startswith("hf:"):
        return source
    return Path(source).stem.lower() or source


# --- rows --------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _estimate_row(base: _Base, metric: str, estimate: Mapping[str, Any], scale: float = 1.0) -> Row:
    def scaled(key: str) -> float | None:
        number = _num(estimate.get(key))
        return None if number is None else number * scale

    n = estimate.get("n")
    return Row(
        **base,
        metric=metric,
        value=scaled("value"),
        n=int(n) if isinstance(n, int) and not isinstance(n, bool) else None,
        ci_low=scaled("ci_low"),
        ci_high=scaled("ci_high"),
    )


def _group_rows(base: _Base, group: Mapping[str, Any], prefix: str = "") -> list[Row]:
    """Rows for one group of numbers that carries an ``estimates`` block (nested one level for
    the per-verdict blocks); a group written before estimates existed gives its bare floats."""
    estimates = group.get("estimates")
    rows: list[Row] = []
    if isinstance(estimates, dict):
        for key, estimate in estimates.items():
            if not isinstance(estimate, dict):
                continue
            if "value" in estimate:
                rows.append(_estimate_row(base, prefix + key, estimate))
            else:  # {verdict: estimate}
                for sub, inner in estimate.items():
                    if isinstance(inner, dict):
                        rows.append(_estimate_row(base, f"{prefix}{key}.{sub}", inner))
        return rows
    for key, value in group.items():
        if isinstance(value, float):
            rows.append(Row(**base, metric=prefix + key, value=_num(value)))
    return rows


def _outdated_run_rows(run: RunFolder) -> list[Row]:
    rows: list[Row] = []
    names = {m.key: m.name for m in run.models}
    for spec, model in run.summary["models"].items():
        for block, prefix in (("per_category", ""), ("as_of", "as_of.")):
            for category, group in (model.get(block) or {}).items():
                base = _base(run, names[spec], category)
                rows.extend(_group_rows(base, group, prefix))
        rows.extend(_knowledge_date_rows(run, names[spec], model.get("knowledge_date")))
    return rows


def _knowledge_date_rows(run: RunFolder, model: str, block: Mapping[str, Any] | None) -> list[Row]:
    """The knowledge date (decimal years), its naive floor, the published cutoff, and per category
    the freshness half-life, the share still current at the snapshot and the deployment forecast."""
    if not block:
        return []
    rows: list[Row] = []
    for category, entry in (block.get("per_category") or {}).items():
        base = _base(run, model, category)
        rows.append(_estimate_row(base, "knowledge_date", entry["estimate"]))
        rows.append(_estimate_row(base, "knowledge_date_naive", entry["naive"]))
    if block.get("published_cutoff_year") is not None:
        rows.append(
            Row(**_base(run, model, ALL), metric="published_cutoff", value=_num(block["published_cutoff_year"]))
        )
    for category, curve in ((block.get("staleness") or {}).get("per_category") or {}).items():
        base = _base(run, model, category)
        rows.append(_estimate_row(base, "freshness_half_life_years", curve["half_life_years"]))
        last = {"value": curve["share"][-1], "n": curve["n"], "ci_low": curve["low"][-1], "ci_high": curve["high"][-1]}
        rows.append(_estimate_row(base, "still_current_at_snapshot_pct", last, scale=100.0))
    for category, points in ((block.get("deployed_at") or {}).get("per_category") or {}).items():
        base = _base(run, model, category)
        for months, point in points.items():
            name = "deployed_at.stale_pct" if months == "0" else f"deployed_at.stale_{months}m_pct"
            rows.append(_estimate_row(base, name, point))
    return rows


def _outdated_score_rows(run: RunFolder) -> list[Row]:
    rows: list[Row] = []
    prefix = "as_of." if run.summary.get("as_of") else ""
    groups = {**run.summary["categories"], ALL: run.summary["overall"]}
    for category, group in groups.items():
        base = _base(run, run.models[0].name, category)
        estimates = group.get("estimates") or {}
        for block, name in _VERDICT_BLOCKS.items():
            for verdict, estimate in (estimates.get(block) or {}).items():
                rows.append(_estimate_row(base, f"{prefix}{name}.{verdict}", estimate, scale=100.0))
        if estimates.get("inconsistency"):
            rows.append(_estimate_row(base, f"{prefix}inconsistency_pct", estimates["inconsistency"], scale=100.0))
    rows.extend(_knowledge_date_rows(run, run.models[0].name, run.summary.get("knowledge_date")))
    return rows


def _conflicts_rows(run: RunFolder) -> list[Row]:
    rows: list[Row] = []
    names = {m.key: m.name for m in run.models}
    for spec, per_class in run.summary["summary"].items():
        for cls in run.summary["classes"]:
            if cls in per_class:
                rows.extend(_group_rows(_base(run, names[spec], cls), per_class[cls]))
    return rows


def _recency_rows(run: RunFolder) -> list[Row]:
    rows: list[Row] = []
    names = {m.key: m.name for m in run.models}
    for entry in run.summary["runs"]:
        model = names[str(entry["model"])]
        prefix = f"{entry['strategy']}.{entry['context_mode']}."
        rows.extend(_group_rows(_base(run, model, ALL), entry, prefix))
        for key, group in entry.items():
            if isinstance(group, dict) and "estimates" in group:  # the stationarity groups
                rows.extend(_group_rows(_base(run, model, key), group, prefix))
        per_class = entry.get("per_class_f1_estimates") or {}
        for label, f1 in (entry.get("per_class_f1") or {}).items():
            if isinstance(per_class.get(label), dict):
                rows.append(_estimate_row(_base(run, model, label), prefix + "f1", per_class[label]))
            else:
                rows.append(Row(**_base(run, model, label), metric=prefix + "f1", value=_num(f1)))
    for entry in run.summary.get("table6") or []:
        base = _base(run, names[str(entry["model"])], str(entry["stationarity"]))
        deltas = entry.get("estimates") or {}
        for key in ("accuracy_delta_pct", "f1_delta_pct"):
            metric = f"{entry['strategy']}.{key}"
            if isinstance(deltas.get(key), dict):
                rows.append(_estimate_row(base, metric, {**deltas[key], "value": entry[key]}))
            elif key in entry:
                rows.append(Row(**base, metric=metric, value=_num(entry[key])))
    for entry in run.summary.get("table7") or []:
        base = _base(run, names[str(entry["model"])], "Non-Stationary")
        rows.extend(_group_rows(base, entry, f"{entry['strategy']}."))
    return rows


_EDITING_MEASURES = ("efficacy", "paraphrase", "harmonic_mean", "soft_constraint")


def _editing_rows(run: RunFolder) -> list[Row]:
    """Per method (and scaling fraction) and Table 3 group: the four measures in percent; locality and fluency."""
    rows: list[Row] = []
    names = {m.key: m.name for m in run.models}
    for spec, model in run.summary["models"].items():
        for result in model["results"]:
            method = str(result["method"])
            if result["fraction"] != 1.0:
                method += f"@{100 * result['fraction']:g}%"
            for group, scores in result["scores"].items():
                base = _base(run, names[spec], ALL if group == "All" else group)
                for measure in _EDITING_MEASURES:
                    rows.append(_estimate_row(base, f"{method}.{measure}_pct", scores[measure], scale=100.0))
            base = _base(run, names[spec], ALL)
            local = result.get("locality")
            if local:
                for key in ("answers_changed", "facts_changed", "up_to_date_lost"):
                    rows.append(_estimate_row(base, f"{method}.locality_{key}_pct", local[key], scale=100.0))
            if result.get("fluency") is not None:
                rows.append(Row(**base, metric=f"{method}.ngram_entropy", value=_num(result["fluency"])))
            if result.get("seconds_per_edit") is not None:
                rows.append(Row(**base, metric=f"{method}.seconds_per_edit", value=_num(result["seconds_per_edit"])))
    return rows


def _base(run: RunFolder, model: str, cls: str) -> _Base:
    return {"run": run.run, "model": model, "lens": run.lens, "dataset": run.dataset, "cls": str(cls)}


_READERS = {
    "outdated run": _outdated_run_rows,
    "outdated score": _outdated_score_rows,
    "conflicts run": _conflicts_rows,
    "recency eval": _recency_rows,
    "editing run": _editing_rows,
}


def run_rows(run: RunFolder) -> list[Row]:
    """Every number of one run folder as tidy rows, in the summary's order."""
    try:
        return _READERS[run.kind](run)
    except (LookupError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(_source(run.path), f"unexpected {run.kind} layout ({type(exc).__name__}: {exc})") from None


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
