"""The Python API: run a lens, read a run folder back, keep a model loaded between calls.

    import chronoprobe as cp

    run = cp.run("outdated", model="smollm2", limit=20)
    run.summary.headline          # a few numbers per model
    run.to_pandas()               # one row per answer (needs pandas)
    again = cp.load(run.path)     # any run folder, new or old layout

    handle = cp.model("smollm2")  # one load, many uses
    cp.run("recency", model=handle, sample=20)
    cp.recency_gate("What is the ECB's interest rate?", handle)

See docs/api.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from chronoprobe.cache import CachedModel
from chronoprobe.engines import Engine
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import json_kind, read_text
from chronoprobe.lens import LENSES, Lens, ProgressFactory, Summary, lens_class
from chronoprobe.models.registry import DEFAULT_MODEL, BackendOptions
from chronoprobe.runner import ITEMS, RUN_LOG, default_out, execute, load_models, open_cache

if TYPE_CHECKING:
    import pandas


class Model(CachedModel):
    """A loaded model behind the call cache, reusable across runs and gate calls (``chronoprobe.model``)."""

    @property
    def spec(self) -> str:
        return self.info.spec

    @property
    def name(self) -> str:
        return self.info.name or self.info.spec

    def __repr__(self) -> str:
        return f"<chronoprobe.Model {self.name} ({self.spec})>"


def _as_given(handle: Model) -> str:
    """A handle as a ``--model`` value: ``NAME=SPEC`` when it was named, so the lens keys it as the run will."""
    return f"{handle.info.given_name}={handle.spec}" if handle.info.given_name else handle.spec


def model(spec: str = DEFAULT_MODEL, *, cache: Path | str | None = None, **options: Any) -> Model:
    """Load ``spec`` once (any form ``chronoprobe models`` lists; ``NAME=SPEC`` names it).

    ``options`` are backend options: dtype, device, batch_size, chat_template, api_mode, concurrency ...
    """
    backend_options = _backend_options(options)
    if options:
        raise ConfigError(
            "model", f"unknown option(s) {', '.join(sorted(options))}; known: {', '.join(BackendOptions.model_fields)}"
        )
    [loaded] = load_models([spec], backend_options, open_cache(Path(cache) if cache else None))
    return Model(loaded.backend, loaded.cache, source=loaded.source)


class Run:
    """A run folder read into memory: its lens, config, typed summary, typed rows and provenance."""

    def __init__(
        self,
        path: Path,
        lens: str,
        summary: Summary,
        rows: list[BaseModel],
        config: dict[str, Any],
        provenance: dict[str, Any],
        layout: str = "run.json",
    ) -> None:
        self.path = path
        self.lens = lens
        self.summary = summary
        self.rows = rows
        self.config = config
        self.provenance = provenance
        self.layout = layout
        """``run.json`` for folders with the shared run log, ``summary.json`` for folders written before it."""

    def to_pandas(self) -> pandas.DataFrame:
        """One row per item (answer), one column per field."""
        try:
            import pandas
        except ImportError:
            raise ConfigError("Run.to_pandas", "needs pandas: pip install pandas") from None
        return pandas.DataFrame([row.model_dump(mode="json") for row in self.rows])

    def __repr__(self) -> str:
        return f"<chronoprobe.Run {self.lens} {', '.join(self.summary.models)} at {self.path} ({len(self.rows)} rows)>"


def lenses() -> list[str]:
    """The names :func:`run` accepts."""
    return sorted(LENSES)


def _backend_options(options: dict[str, Any]) -> BackendOptions:
    """Pop the backend options out of ``options`` (what is left belongs to the lens)."""
    chosen = {k: options.pop(k) for k in list(options) if k in BackendOptions.model_fields}
    try:
        return BackendOptions(**chosen)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(".".join(str(p) for p in error["loc"]), error["msg"]) from None


def _config(cls: type[Lens[Any]], specs: list[str], options: dict[str, Any]) -> BaseModel:
    fields = cls.config_type.model_fields
    if "models" in fields:  # the outdated config records its model specs
        options.setdefault("models", tuple(specs))
    unknown = sorted(set(options) - set(fields))
    if unknown:
        raise ConfigError(
            f"{cls.name} option(s) {', '.join(unknown)}",
            f"unknown; known: {', '.join(sorted(set(fields) | set(BackendOptions.model_fields)))}",
        )
    try:
        return cls.config_type(**options)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(".".join(str(p) for p in error["loc"]) or cls.name, error["msg"]) from None


def run(
    lens: str,
    model: str | Model | Sequence[str | Model] = DEFAULT_MODEL,
    *,
    out: Path | str | None = None,
    cache: Path | str | None = None,
    progress: ProgressFactory | None = None,
    engine: str | Engine = "local",
    **options: Any,
) -> Run:
    """Run a lens and return the run (its folder is written like the CLI's, at ``out``).

    ``model``: a spec, a :func:`model` handle, or a list of them (not a mix). ``out``: default
    ``results/<lens>/<model>-<timestamp>``. ``options``: the lens's config fields (e.g. ``limit``
    for outdated, ``sample`` and ``strategies`` for recency, ``dataset`` for conflicts) and backend
    options (dtype, device, batch_size ...). ``engine``: where the calls the cache misses run,
    ``local`` (this process), ``ray`` (a Ray cluster started for the run), ``ray:auto`` or
    ``ray:HOST:PORT`` (a running cluster); see docs/scale.md.
    """
    cls = lens_class(lens)
    chosen = [model] if isinstance(model, str | Model) else list(model)
    handles = [m for m in chosen if isinstance(m, Model)]
    if handles and len(handles) != len(chosen):
        raise ConfigError("model", "give model specs or chronoprobe.model() handles, not a mix")
    specs = [_as_given(m) for m in handles] if handles else [str(m) for m in chosen]
    backend_options = _backend_options(options)
    instance = cls(_config(cls, specs, options))
    folder = Path(out) if out is not None else default_out(instance, specs)
    result = execute(
        instance,
        folder,
        models=handles or specs,
        options=backend_options,
        cache=Path(cache) if cache else None,
        progress=progress,
        engine=engine,
    )
    return Run(result.path, result.lens, result.summary, result.rows, result.config, result.provenance)


_KIND_OF_LENS = {"outdated run": "outdated", "recency eval": "recency", "conflicts run": "conflicts"}
_OLD_ROWS = {"outdated": "responses.jsonl", "recency": ITEMS, "conflicts": ITEMS}


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text(path))
    except ValueError as exc:
        raise DataError(str(path), f"cannot read JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(str(path), "is not a JSON object")
    return data


def _object(log: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    """``log[key]`` when it is a JSON object (an absent or null one reads as empty); DataError otherwise."""
    value = log.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(str(path), f"its {key} is not an object ({json_kind(value)})")
    return value


def _summary(log: dict[str, Any], path: Path) -> Summary:
    """The run log's typed summary; a missing or malformed one is a DataError naming the file and the field."""
    if "summary" not in log:
        raise DataError(str(path), "has no summary")
    try:
        return Summary.model_validate(log["summary"])
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in ("summary", *error["loc"]))
        raise DataError(str(path), f"{field}: {error['msg']}") from None


def _lens_of(log: dict[str, Any], path: Path) -> type[Lens[Any]]:
    name = log.get("lens")
    if not isinstance(name, str) or name not in LENSES:
        raise DataError(str(path), f"its lens {name!r} is not one of {', '.join(sorted(LENSES))}")
    return lens_class(name)


def _old_lens(folder: Path, summary: dict[str, Any]) -> str:
    """Which lens wrote a folder from before run.json: its marker, else the layout of its summary.json."""
    marker = folder / ".chronoprobe-run"
    if marker.is_file():
        try:
            kind = json.loads(marker.read_text(encoding="utf-8")).get("kind")
        except (OSError, ValueError, AttributeError):
            kind = None
        if kind in _KIND_OF_LENS:
            return _KIND_OF_LENS[kind]
    if "models" in summary and "overall_key" in summary:
        return "outdated"
    if "runs" in summary and "table6" in summary:
        return "recency"
    if "classes" in summary and "summary" in summary:
        return "conflicts"
    raise DataError(
        str(folder / "summary.json"), "is not from a lens run (outdated run, recency eval or conflicts run)"
    )


def _rows(path: Path, row_type: type[BaseModel]) -> list[BaseModel]:
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


def load(path: Path | str) -> Run:
    """Read a run folder back: the shared run log (``run.json``) or an older folder's ``summary.json``."""
    folder = Path(path)
    log_path = folder / RUN_LOG
    if log_path.exists():
        log = _read_json(log_path)
        cls = _lens_of(log, log_path)
        summary = _summary(log, log_path)
        config, provenance = _object(log, "config", log_path), _object(log, "provenance", log_path)
        rows = _rows(folder / ITEMS, cls.row_type)
        return Run(folder, cls.name, summary, rows, config, provenance)
    old_path = folder / "summary.json"
    if not old_path.exists():
        raise DataError(str(folder), "not a chronoprobe run folder (no run.json or summary.json)")
    data = _read_json(old_path)
    cls = lens_class(_old_lens(folder, data))
    provenance = _object(data, "provenance", old_path)
    detail = {k: v for k, v in data.items() if k != "provenance"}
    try:
        summary = cls.summary_from_detail(detail)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise DataError(str(old_path), f"unexpected {cls.kind} layout ({where}: {error['msg']})") from None
    except (LookupError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(str(old_path), f"unexpected {cls.kind} layout ({type(exc).__name__}: {exc})") from None
    rows = _rows(folder / _OLD_ROWS[cls.name], cls.row_type)
    return Run(folder, cls.name, summary, rows, {}, provenance, layout="summary.json")


# --- the knowledge date (outdated lens) ------------------------------------------------------------

KNOWLEDGE_DATE_METRICS = ("knowledge_date", "knowledge_date_naive", "published_cutoff")


def _knowledge_blocks(run: Run | Path | str) -> dict[str, dict[str, Any]]:
    """Model name -> ``knowledge_date`` block of an ``outdated run`` or ``outdated score`` folder (or a
    loaded run); an outdated run written before the block existed gets it computed from its rows."""
    from chronoprobe.reports.tidy import read_run

    path = run.path if isinstance(run, Run) else Path(run)
    folder = read_run(path)
    if folder is None or folder.lens != "outdated":
        raise DataError(str(path), "is not an outdated run or outdated score folder")
    if folder.kind == "outdated score":
        block = folder.summary.get("knowledge_date")
        return {folder.models[0].name: block} if block else {}
    names = {m.key or m.spec: m.name for m in folder.models}  # keyed as the run's summary and rows key them
    blocks = {names[key]: model.get("knowledge_date") for key, model in folder.summary["models"].items()}
    if all(blocks.values()):
        return {name: block for name, block in blocks.items() if block}
    return _recomputed_blocks(run if isinstance(run, Run) else load(path), names)


def _recomputed_blocks(run: Run, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    from chronoprobe.knowledge.snapshot import load_snapshot
    from chronoprobe.outdated.knowledge_date import dated_answers, knowledge_summary

    snapshot_name = (run.provenance.get("snapshot") or {}).get("name")
    snapshot = load_snapshot(str(snapshot_name) if snapshot_name else None)
    blocks = {}
    for key, name in names.items():
        rows = [r for r in run.rows if getattr(r, "model", None) == key]
        answers, excluded = dated_answers(
            ((r.fact_id, r.category, r.verdict, r.matched) for r in rows),  # type: ignore[attr-defined]  # an outdated run's rows, typed as any lens's
            snapshot.answers,
        )
        blocks[name] = knowledge_summary(answers, excluded, snapshot.retrieved)
    return blocks


def knowledge_date(run: Run | Path | str) -> pandas.DataFrame:
    """The effective knowledge date of every model of an outdated run or score folder, as a tidy frame.

    One row per model and class (``all`` and each category with enough facts) for the metrics
    ``knowledge_date`` (decimal years: 2021.5 is July 2021) and ``knowledge_date_naive`` (the argmax
    of the as-of curve), plus ``published_cutoff`` where one was given; columns ``model``, ``class``,
    ``metric``, ``value``, ``n``, ``ci_low``, ``ci_high`` and ``month`` (``YYYY-MM``). See docs/outdated.md.
    """
    import pandas

    from chronoprobe.metrics.knowledge_date import month_label

    records = []
    for model, block in _knowledge_blocks(run).items():
        for cls, entry in block["per_category"].items():
            for metric, key in (("knowledge_date", "estimate"), ("knowledge_date_naive", "naive")):
                e = entry[key]
                records.append([model, cls, metric, e["value"], e["n"], e["ci_low"], e["ci_high"]])
        if block.get("published_cutoff_year") is not None:
            records.append([model, "all", "published_cutoff", block["published_cutoff_year"], None, None, None])
    frame = pandas.DataFrame(records, columns=["model", "class", "metric", "value", "n", "ci_low", "ci_high"])
    frame["n"] = pandas.array(frame["n"].tolist(), dtype="Int64")
    frame["month"] = [month_label(v) if v == v and v is not None else None for v in frame["value"]]
    return frame


def staleness(run: Run | Path | str) -> pandas.DataFrame:
    """The staleness curves of an outdated run or score folder, one row per model, class and month.

    Columns: ``model``, ``class``, ``date`` (decimal years from the model's knowledge date to the
    snapshot), ``still_current`` (share of the values it knew at its knowledge date that still held),
    ``ci_low``, ``ci_high`` (95% bootstrap), ``n`` (values followed), ``half_life_years``.
    """
    import pandas

    records = []
    for model, block in _knowledge_blocks(run).items():
        for cls, curve in ((block.get("staleness") or {}).get("per_category") or {}).items():
            half = curve["half_life_years"]["value"]
            for date, share, low, high in zip(curve["dates"], curve["share"], curve["low"], curve["high"], strict=True):
                records.append([model, cls, date, share, low, high, curve["n"], half])
    columns = ["model", "class", "date", "still_current", "ci_low", "ci_high", "n", "half_life_years"]
    return pandas.DataFrame(records, columns=columns)
