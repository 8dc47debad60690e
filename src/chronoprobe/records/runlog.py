"""The run folder's one owner: its file names, the run log (``run.json`` and ``items.jsonl``) and
the :class:`Run` that :func:`chronoprobe.contract.runner.execute` returns and :func:`load_run` (``chronoprobe.load``)
reads back: one type for a run folder, its config and provenance typed both ways.

A run folder holds:

- ``run.json``: format, lens, kind, config, the typed :class:`Summary` (its :class:`Metric`
  records, the run's one record of every number) and the provenance;
- ``items.jsonl``: the typed rows, one per line;
- ``report.md`` and the plots, written by the lens;
- the marker ``.chronoprobe-run`` (what wrote the folder, see :mod:`chronoprobe.records.publish`);
- each lens's historical files (``summary.json`` ...), which folders written before the run log
  existed hold alone.

Nothing here knows a lens: a reader gets the lens's name and its records from the log. A folder from before
the records (a run log without them, or a ``summary.json`` alone) is read by the one reader of the older
layouts, :mod:`chronoprobe.lenses.old_layouts`, found by name through :mod:`chronoprobe.plugins`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from chronoprobe import plugins
from chronoprobe.errors import ChronoprobeError, ConfigError, DataError
from chronoprobe.io import json_kind, read_text, write_json_atomic, write_jsonl_atomic
from chronoprobe.models.base import BackendInfo
from chronoprobe.models.registry import config_with_models, strip_url_credentials
from chronoprobe.provenance import Provenance
from chronoprobe.renames import RECORDED
from chronoprobe.version import SHIMS_REMOVED_IN

if TYPE_CHECKING:
    import pandas

RUN_LOG = "run.json"
ITEMS = "items.jsonl"
REPORT = "report.md"
SUMMARY = "summary.json"
"""A lens's historical summary; the only record of a folder written before ``run.json``."""
MARKER = ".chronoprobe-run"
RUN_FORMAT = "chronoprobe-run/1"
PLOT_SUFFIXES = (".svg", ".png")


class Metric(BaseModel):
    """One reported number: for which model and group, its name, value, n and 95% interval."""

    model: str
    """The run's key for the model (the name the user gave, else the spec), as its rows use it."""
    group: str
    """The class, category or setting the number is over (``all`` for every item)."""
    name: str
    """The metric, dotted (``soft_constraint_pct.outdated``, ``zero-shot.with.accuracy``)."""
    value: float | None
    n: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    unit: str = ""
    """``%`` (0-100), ``rate`` (0-1), ``year`` (a date, as a decimal year), ``years`` (a duration), ``s``
    (seconds), ``count``, or empty (an unbounded score: CP, entropy). How each is shown:
    :mod:`chronoprobe.reports.metric_format`."""
    headline: bool = False
    """One of the few numbers a run is judged by (the card's headline table)."""


class Note(BaseModel):
    """What a lens's sentences need beside its numbers and that is not a number: a date as the run was told it,
    what a model said, the reason a number is missing. Never shown as a row of ``chronoprobe results``."""

    model: str
    group: str = "all"
    name: str
    """Dotted like a metric's (``deployed_at``, ``knowledge_cutoff.too_few``)."""
    text: str


class Difference(BaseModel):
    """A paired difference ``b`` − ``a`` of one metric between two of a run's settings (two methods) on the items
    both were applied to, with its 95% interval and its test."""

    model: str
    a: str
    b: str
    metric: str
    delta: float | None = None
    n: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p: float | None = None
    test: str = ""


class Summary(BaseModel):
    """A run's typed summary: lens, models, headline numbers and the metric records, the one record of every
    number (what ``chronoprobe results``, ``compare``, ``check`` and the card read), with the words and paired
    differences its sentences need. A lens's own layout of its numbers is its report's business
    (``summary.json``), never read back through here."""

    lens: str
    models: list[str]
    """Model keys (the given name, else the spec), in run order."""
    headline: dict[str, dict[str, float | None]]
    """Per model key: the few numbers a run is judged by (e.g. soft-constraint up-to-date %)."""
    metrics: list[Metric] = []
    """Every number of the run, lens-neutral: what ``chronoprobe results`` and the card show."""
    notes: list[Note] = []
    """What the lens's sentences need that is not a number (``check``'s paragraph)."""
    paired: list[Difference] = []
    """Paired differences between the run's settings that its sentences state (editing: retrieval against editing)."""
    dataset: str = ""
    """What the run asked about, as the results table labels it (``dyknow-2023-12-18``, ``mulan``)."""
    names: dict[str, str] = {}
    """Display name per model key, where the lens knows it better than the provenance."""
    specs: dict[str, str] = {}
    """Spec per model key, for models the provenance does not record (another tool's generations)."""
    labels: dict[str, str] = {}
    """What the lens's report calls a part of a metric name (an editing method: ``ike-null`` -> ``IKE``)."""
    detail: dict[str, Any] = Field(
        default={},
        exclude=True,
        deprecated=f"Summary.detail, the lens's own layout, is no longer part of the summary (its records are); "
        f"it stays for a plug-in written for 0.2.0 until {SHIMS_REMOVED_IN}, never written to run.json",
    )
    """0.2.0's lens layout, kept only for a plug-in that still gives and reads it: never written, never read back."""

    def note(self, model: str, name: str, group: str = "all") -> str | None:
        """The text of ``model``'s note ``name`` over ``group``; None when the run has none."""
        return next((n.text for n in self.notes if (n.model, n.group, n.name) == (model, group, name)), None)


__all__ = [
    "ITEMS",
    "MARKER",
    "PLOT_SUFFIXES",
    "REPORT",
    "RUN_FORMAT",
    "RUN_LOG",
    "SUMMARY",
    "Difference",
    "Metric",
    "ModelEntry",
    "Note",
    "Provenance",
    "Run",
    "Summary",
    "load_run",
    "read_folder",
    "read_items",
    "read_json_object",
    "typed_layout",
    "write_run_log",
]


@dataclass(frozen=True)
class ModelEntry:
    """A model as a run names it: the display name in tables, the spec and what its provenance recorded."""

    name: str
    spec: str
    info: BackendInfo | None = None
    """What the run's provenance recorded about it; None for a model it does not describe (another tool's)."""
    key: str = ""
    """The run's key for it in the summary and rows (the name the user gave, else the spec)."""


class Run:
    """A run folder: lens, kind, typed summary, config and provenance, and its rows (read when first asked for).

    What :func:`chronoprobe.contract.runner.execute` returns and :func:`load_run` reads back, from a folder with the
    shared run log (``run.json``) or one written before it (``summary.json``, ``layout``).
    """

    def __init__(
        self,
        path: Path,
        lens: str,
        summary: Summary,
        *,
        kind: str = "",
        config: BaseModel | Mapping[str, Any] | None = None,
        provenance: Provenance | None = None,
        rows: Sequence[Any] | None = None,
        layout: str = RUN_LOG,
        label: str | None = None,
    ) -> None:
        self.path = path
        self.lens = lens
        self.summary = summary
        self.kind = kind
        """What wrote the folder (``outdated run`` ...), as its marker names it."""
        self.provenance = provenance or Provenance.model_validate({})
        self.layout = layout
        """``run.json`` for folders with the shared run log, ``summary.json`` for folders written before it."""
        self.label = label or str(path)
        """The results table's run column: the folder as the user named it (or found it under one they named)."""
        self._config = config
        self._rows: list[Any] | None = list(rows) if rows is not None else None

    @property
    def config(self) -> BaseModel | None:
        """The lens's config as the run recorded it (its ``config_type``, with ``models``); None for a folder
        written before the run log recorded one. Read back on first use: a recorded config the lens no
        longer accepts is a DataError naming the file."""
        if isinstance(self._config, Mapping):
            self._config = _read_config(self.lens, self._config, self.path / RUN_LOG)
        return self._config

    @property
    def rows(self) -> list[Any]:
        """The typed rows, of the lens's ``row_type`` (``items.jsonl``, or an older folder's own rows file)."""
        if self._rows is None:
            cls = plugins.load(self.lens)
            name = ITEMS if self.layout == RUN_LOG else cls.old_rows_file
            self._rows = read_items(self.path / name, cls.row_type)
        return self._rows

    @property
    def dataset(self) -> str:
        """What the run asked about, as the results table labels it."""
        return self.summary.dataset or self.lens

    @functools.cached_property
    def models(self) -> tuple[ModelEntry, ...]:
        """The run's models, keyed as its records key them, named as the lens or the provenance names them."""
        keys = list(dict.fromkeys([*self.summary.models, *(m.model for m in self.summary.metrics)]))
        entries = []
        for key in keys:
            info = self.provenance.model(key)
            name = self.summary.names.get(key) or (info.name if info else None) or key
            spec = self.summary.specs.get(key) or (info.spec if info else None) or key
            entries.append(ModelEntry(name=str(name), spec=str(spec), info=info, key=key))
        return tuple(entries)

    @property
    def plots(self) -> list[Path]:
        """The run's figures, an SVG preferred over a PNG of the same name."""
        files = sorted(p for p in self.path.iterdir() if p.suffix in PLOT_SUFFIXES and p.is_file())
        svgs = {p.stem for p in files if p.suffix == ".svg"}
        return [p for p in files if p.suffix == ".svg" or p.stem not in svgs]

    def to_pandas(self) -> pandas.DataFrame:
        """One row per item (answer), one column per field."""
        try:
            import pandas  # deferred: pandas
        except ImportError:
            raise ConfigError("Run.to_pandas", "needs pandas: pip install pandas") from None
        return pandas.DataFrame([row.model_dump(mode="json") for row in self.rows])

    def __repr__(self) -> str:
        rows = f"{len(self._rows)} rows" if self._rows is not None else "rows not read yet"
        return f"<chronoprobe.Run {self.lens} {', '.join(self.summary.models)} at {self.path} ({rows})>"


def _read_config(lens: str, recorded: Mapping[str, Any], where: Path) -> BaseModel:
    config_type = config_with_models(plugins.load(lens).config_type)
    try:
        return config_type.model_validate(dict(recorded), context=RECORDED)  # a folder of 0.2: its older names
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in ("config", *error["loc"]))
        raise DataError(str(where), f"{field}: {error['msg']}") from None
    except ChronoprobeError as exc:  # a recorded model spec this installation cannot read (a backend gone)
        raise DataError(str(where), f"config: {exc}") from None


def recorded_config(config: BaseModel) -> dict[str, Any]:
    """A config as the run log records it: its JSON form, a key in a model URL removed."""
    loaded: dict[str, Any] = json.loads(strip_url_credentials(config.model_dump_json()))
    return loaded


def write_run_log(
    folder: Path,
    *,
    lens: str,
    kind: str,
    config: BaseModel,
    summary: Summary,
    provenance: Provenance,
    rows: Sequence[BaseModel],
) -> None:
    """Write ``items.jsonl`` and ``run.json`` into ``folder`` (a staging folder; the plots are already there)."""
    write_jsonl_atomic(folder / ITEMS, (row.model_dump(mode="json") for row in rows))
    plots = sorted(p.name for p in folder.glob("*.png"))
    write_json_atomic(
        folder / RUN_LOG,
        {
            "format": RUN_FORMAT,
            "lens": lens,
            "kind": kind,
            "config": recorded_config(config),
            "summary": summary.model_dump(mode="json"),
            "provenance": provenance.recorded(),
            "files": {"items": ITEMS, "report": REPORT, "plots": plots},
        },
    )


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object file; DataError naming the file when it is not valid JSON or not an object."""
    try:
        data = json.loads(read_text(path, str(path)))
    except json.JSONDecodeError as exc:
        raise DataError(str(path), f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise DataError(str(path), f"is not a JSON object (it holds {json_kind(data)})")
    return data


def object_field(log: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    """``log[key]`` when it is a JSON object (an absent or null one reads as empty); DataError otherwise."""
    value = log.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(str(path), f"its {key} is not an object ({json_kind(value)})")
    return value


def has_metrics(log: dict[str, Any]) -> bool:
    """Whether a run log carries metric records (written since they exist; older logs hold only the layout)."""
    summary = log.get("summary")
    return isinstance(summary, dict) and "metrics" in summary


def log_summary(log: dict[str, Any], path: Path) -> Summary:
    """The run log's typed summary; a missing or malformed one is a DataError naming the file and the field
    (an older log's layout, ``summary.detail``, included: it is read when the log has no records)."""
    if "summary" not in log:
        raise DataError(str(path), "has no summary")
    if not isinstance(log["summary"], dict):
        raise DataError(str(path), f"its summary is not an object ({json_kind(log['summary'])})")
    layout = log["summary"].get("detail", {})
    if not isinstance(layout, dict):
        raise DataError(str(path), f"summary.detail: not an object ({json_kind(layout)})")
    try:
        return Summary.model_validate(log["summary"])
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in ("summary", *error["loc"]))
        raise DataError(str(path), f"{field}: {error['msg']}") from None


def marker_kind(folder: Path) -> str | None:
    """What the folder's marker says wrote it (``outdated run`` ...), if it has a readable one."""
    try:
        kind = json.loads((folder / MARKER).read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


def read_items(path: Path, row_type: type[BaseModel]) -> list[BaseModel]:
    """The typed rows of an ``items.jsonl`` (or an older rows file); none when it is absent."""
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(row_type.model_validate_json(line))
        except ValidationError as exc:
            raise DataError(
                f"{path} line {number}", f"not a {row_type.__name__} row ({exc.errors()[0]['msg']})"
            ) from None
    return rows


def read_provenance(data: Mapping[str, Any], path: Path) -> Provenance:
    """The ``provenance`` of a run log or an older ``summary.json``, typed (an absent one is empty); a
    malformed one is a DataError naming the file and the field."""
    value = data.get("provenance")
    if value is None:
        return Provenance.model_validate({})
    if not isinstance(value, dict):
        raise DataError(str(path), f"its provenance is not an object ({json_kind(value)})")
    try:
        return Provenance.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in ("provenance", *error["loc"]))
        raise DataError(str(path), f"{field}: {error['msg']}") from None


def read_folder(folder: Path, label: str | None = None) -> Run | None:
    """The run folder at ``folder``; None when it has neither a run log nor a ``summary.json`` that a
    registered lens recognises. A run log written before metric records existed, and an older
    ``summary.json``, get their records from the one reader of the older layouts
    (:mod:`chronoprobe.lenses.old_layouts`). ``label``: the results table's run column (default: the path)."""
    log_path = folder / RUN_LOG
    if log_path.exists():
        log = read_json_object(log_path)
        lens = log.get("lens")
        if not isinstance(lens, str) or lens not in plugins.registered():
            raise DataError(str(log_path), f"its lens {lens!r} is not one of {', '.join(plugins.names())}")
        summary = log_summary(log, log_path)
        provenance = read_provenance(log, log_path)
        if not has_metrics(log):
            summary = _with_records(folder, log, summary, provenance)
        elif "notes" not in log["summary"] and log["summary"].get("detail"):  # records, but its words in the layout
            summary = _with_records(folder, log, summary, provenance, WORDS)
        kind = log.get("kind")
        return Run(
            folder,
            lens,
            summary,
            kind=kind if isinstance(kind, str) else str(plugins.load(lens).kind),
            config=object_field(log, "config", log_path),
            provenance=provenance,
            layout=RUN_LOG,
            label=label,
        )
    if not (folder / SUMMARY).is_file():
        return None
    return _read_old_summary(folder, label)


def load_run(path: Path | str) -> Run:
    """Read a run folder back (``chronoprobe.load``): the shared run log (``run.json``) or an older folder's
    ``summary.json``; a DataError naming the folder when it is neither."""
    folder = Path(path)
    found = read_folder(folder)
    if found is None:
        if (folder / SUMMARY).exists():
            raise DataError(str(folder / SUMMARY), f"is not from a lens run ({', '.join(plugins.names())})")
        raise DataError(str(folder), "not a chronoprobe run folder (no run.json or summary.json)")
    found.rows  # noqa: B018 - read now: a folder whose rows do not read is named here, not later
    return found


RECORDS = ("metrics", "notes", "paired", "dataset", "names", "specs", "labels")
"""What a summary holds besides its lens, models and headline, all read from an older log's layout."""
WORDS = ("notes", "paired")
"""What a log written with metric records but before notes and paired differences holds only in its layout."""


def _with_records(
    folder: Path, log: dict[str, Any], summary: Summary, provenance: Provenance, parts: tuple[str, ...] = RECORDS
) -> Summary:
    """A run log's summary from before metric records (or before its ``parts``): the old layouts' reader rebuilds
    them (and the headline) from the layout the log holds (``summary.detail``), else from the lens's
    ``summary.json`` beside it."""
    path = folder / RUN_LOG
    layout = log["summary"].get("detail")
    if not layout and (folder / SUMMARY).is_file():
        layout = {k: v for k, v in read_json_object(folder / SUMMARY).items() if k != "provenance"}
    if not layout:
        raise DataError(str(path), "has neither metric records nor the layout they were read from (summary.detail)")
    kind = log.get("kind")
    rebuilt = plugins.old_layouts().run_log_summary(
        summary.lens, kind if isinstance(kind, str) else None, layout, provenance, path
    )
    if rebuilt is None:  # a plug-in's layout: it has no words to add; records it must have
        if parts == WORDS:
            return summary
        raise DataError(str(path), f"a {summary.lens} run log without metric records (no layout chronoprobe wrote)")
    update: dict[str, Any] = {k: getattr(rebuilt, k) for k in parts}
    if parts == RECORDS:  # headline keys in today's one spelling (older logs wrote a/b and a/b/c); every model stays
        update["headline"] = {model: {} for model in summary.headline} | rebuilt.headline
    return summary.model_copy(update=update)


def _read_old_summary(folder: Path, label: str | None) -> Run | None:
    path = folder / SUMMARY
    data = read_json_object(path)
    provenance = read_provenance(data, path)
    found: tuple[str, str, Summary] | None = plugins.old_layouts().file_summary(data, marker_kind(folder), path)
    if found is None:
        return None
    lens, kind, summary = found
    return Run(folder, lens, summary, kind=kind, provenance=provenance, layout=SUMMARY, label=label)


@contextmanager
def layout_errors(path: Path, kind: str) -> Iterator[None]:
    """Turn a lens layout that does not read (a missing key, a wrong type) into a DataError naming the file."""
    try:
        yield
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise DataError(str(path), f"unexpected {kind} layout ({where}: {error['msg']})") from None
    except (LookupError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(str(path), f"unexpected {kind} layout ({type(exc).__name__}: {exc})") from None


LayoutT = TypeVar("LayoutT")


def typed_layout(view: TypeAdapter[LayoutT], detail: Mapping[str, Any], where: str | None = None) -> LayoutT:
    """A lens's own summary layout (what its ``summary.json`` holds) as its typed view (a TypedDict of the parts
    its readers read), checked once. The same dict comes back, so the stored layout keeps every key and its order.

    A layout that does not fit is a DataError naming ``where`` (the file it came from); without
    ``where``, the ValidationError, for a caller that names the file (as :func:`read_folder` does)."""
    try:
        view.validate_python(detail)
    except ValidationError as exc:
        if where is None:
            raise
        error = exc.errors()[0]
        place = ".".join(str(part) for part in error["loc"])
        raise DataError(where, f"unexpected summary layout ({place}: {error['msg']})") from None
    return cast(LayoutT, detail)
