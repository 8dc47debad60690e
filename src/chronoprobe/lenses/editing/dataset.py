"""The editing dataset: DyKnow's ``editing_dataset.json`` read, written, and built from an outdated audit.

A file is a JSON list of :class:`~chronoprobe.datasets.editing_records.EditRecord` objects. We write it
exactly as DyKnow did (the same nine fields, 4-space indent, ASCII escapes), so a file we build
can be handed to EasyEdit-based code and theirs read back unchanged.

:func:`build_from_run` turns an ``outdated run`` folder into a dataset for one model: the facts it
answered with an outdated value (DyKnow's selection), each with an edit prompt, a subject and the
single current value as the target.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from chronoprobe.contract.lens import Summary
from chronoprobe.datasets.editing_records import GROUPS, EditRecord, Group, group_heading
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import json_kind, read_text, write_text_atomic
from chronoprobe.knowledge.grc import fact_id as make_fact_id
from chronoprobe.knowledge.types import Fact, Statement
from chronoprobe.lenses.outdated.audit import AuditConfig, ResponseRecord, load_gold
from chronoprobe.metrics.dyknow import FACT_TO_EDIT_RULE, Verdict, is_fact_to_edit
from chronoprobe.models.registry import ModelRequest, canonical_spec, parse_model
from chronoprobe.records.publish import text_digest
from chronoprobe.records.runlog import read_folder
from chronoprobe.renames import RECORDED

DYKNOW_FIELDS = ("prompt", "target", "subject", "domain", "element", "attribute", "prompt_type", "questions", "answers")
"""The fields of one record in DyKnow's file, in their order."""

DOMAIN_ORDER = ("companies_byRevenue", "organizations", "countries_byGDP", "athletes_byPayment")
"""The order of facts in DyKnow's files (and so the order sequential edits are applied in)."""

TEMPLATE_KINDS: dict[str, tuple[str, str, str]] = {
    "countries_byGDP": ("contextualized", "rephrased_1", "rephrased_2"),
    "athletes_byPayment": ("contextualized", "rephrased_1", "rephrased_2"),
    "companies_byRevenue": ("rephrased_1", "rephrased_2", "rephrased_3"),
    "organizations": ("rephrased_1", "rephrased_2", "rephrased_3"),
}
"""DyKnow's question kind of a fact's ``templates[i]`` (also how a run over ``grc_generated.json`` reads)."""

EDIT_PROMPT_KIND = {
    "countries_byGDP": "rephrased_2",
    "athletes_byPayment": "rephrased_1",
    "companies_byRevenue": "rephrased_2",
    "organizations": "rephrased_3",
}
"""The question kind DyKnow used as the edit prompt, per domain (the other two are the paraphrases)."""

Selection = Literal["outdated", "not-up-to-date"]
SELECTIONS: tuple[Selection, ...] = ("outdated", "not-up-to-date")


# --- reading and writing ------------------------------------------------------------------------


def _row_id(row: Any) -> str:
    if not isinstance(row, dict):
        return "?"
    parts = [row.get("domain"), row.get("element"), row.get("attribute")]
    if not isinstance(parts[0], str) or not isinstance(parts[1], str):
        return "?"
    return make_fact_id(parts[0], parts[1], parts[2] if isinstance(parts[2], str) else None)


def _validation_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(p) for p in error["loc"])
    if error["type"] == "missing":
        return f"missing field {field!r}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "literal_error" and field == "domain":
        return f"unknown domain {error.get('input')!r} (expected one of {', '.join(DOMAIN_ORDER)})"
    return f"{field}: {message}" if field else message


def read_dataset(path: Path | str) -> list[EditRecord]:
    """Every record of a DyKnow ``editing_dataset.json``; a bad row is a one-line DataError naming it."""
    path = Path(path)
    text = read_text(path)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DataError(str(path), f"not valid JSON ({exc})") from None
    if not isinstance(data, list):
        raise DataError(str(path), "expected a JSON list of facts to edit (DyKnow's editing_dataset.json)")
    if not data:
        raise DataError(str(path), "no facts to edit (the list is empty)")
    records: list[EditRecord] = []
    seen: set[str] = set()
    for index, row in enumerate(data):
        where = f"{path} row {index} ({_row_id(row)})"
        if not isinstance(row, dict):
            raise DataError(where, f"expected an object, got {type(row).__name__}")
        try:
            record = EditRecord.model_validate(row)
            record.gold()  # every answer string must parse
        except ValidationError as exc:
            raise DataError(where, _validation_problem(exc)) from None
        except DataError as exc:
            raise DataError(where, exc.problem) from None
        if record.fact_id in seen:
            raise DataError(where, "the same fact appears twice")
        seen.add(record.fact_id)
        records.append(record)
    return records


def record_json(record: EditRecord) -> dict[str, Any]:
    """One record with exactly DyKnow's fields, in DyKnow's order."""
    return {name: getattr(record, name) for name in DYKNOW_FIELDS}


def dataset_text(records: Sequence[EditRecord]) -> str:
    """The file's text as DyKnow's ``json.dump(..., indent=4)`` writes it (byte-identical for their files)."""
    return json.dumps([record_json(r) for r in records], indent=4)


def write_dataset(path: Path | str, records: Sequence[EditRecord]) -> None:
    """Write ``records`` atomically in DyKnow's format; an empty list is refused (EasyEdit cannot use it)."""
    if not records:
        raise DataError(str(path), "no facts to edit; nothing written")
    write_text_atomic(Path(path), dataset_text(records))


def group_counts(records: Iterable[EditRecord]) -> dict[Group, int]:
    """Facts per Table 3 group (all three groups, zeros included)."""
    counts: dict[Group, int] = dict.fromkeys(GROUPS, 0)
    for record in records:
        counts[record.group] += 1
    return counts


# --- DyKnow's conventions -----------------------------------------------------------------------


def dyknow_answer(statement: Statement) -> str:
    """A statement as DyKnow writes it: ``Label |S: +YYYY-MM-DDT00:00:00Z |E: ... |P: ...``."""
    text = statement.label
    for code, date in (("S", statement.start), ("E", statement.end), ("P", statement.point_in_time)):
        if date is not None:
            text += f" |{code}: {date.wikidata()}"
    return text


def dyknow_subject(fact: Fact) -> str | None:
    """The ``subject`` DyKnow gives a fact (None when the fact lacks the attribute it needs)."""
    if fact.category == "athletes_byPayment":
        return fact.subject
    if fact.category == "companies_byRevenue":
        return f"CEO position at {fact.subject}"
    if fact.attribute is None:
        return None
    if fact.category == "countries_byGDP":
        return fact.attribute  # the office title
    attribute = "director" if fact.attribute == "director / manager" else fact.attribute
    return f"{attribute} at {fact.subject}"


def current_targets(fact: Fact, statements: Sequence[Statement]) -> list[Statement]:
    """The statements that can be the edit target: a start, no end and no point in time.

    DyKnow dropped the national teams of seven athletes by name (its ``EXCEPTIONS``); we
    generalise that: for athletes, a current value whose label contains "national" (a national
    team, played for alongside a club) is never the target. A start plus a point in time counts
    as ended, as in DyKnow.
    """
    current = [s for s in statements if s.start is not None and s.end is None and s.point_in_time is None]
    if fact.category == "athletes_byPayment":
        current = [s for s in current if "national" not in s.label.casefold()]
    return current


def select_fact(verdicts: Sequence[Verdict], select: Selection) -> tuple[bool, str | None]:
    """(include?, why it is skipped despite qualifying) for one fact's three scored verdicts.

    ``outdated``: a fact to edit (:func:`~chronoprobe.metrics.dyknow.is_fact_to_edit`, DyKnow's
    rule, the audit report's count); a fact left out only for an ambiguous answer is said so.
    ``not-up-to-date``: every fact with no up-to-date answer (for models with few outdated facts).
    """
    if "up-to-date" in verdicts:
        return False, None
    if select == "not-up-to-date":
        return True, None
    if is_fact_to_edit(verdicts):
        return True, None
    if "ambiguous" in verdicts:
        return False, "an ambiguous answer (DyKnow requires fixing it by hand); left out"
    return False, None


SELECTION_TEXT: dict[str, str] = {
    "outdated": FACT_TO_EDIT_RULE,
    "not-up-to-date": (
        "Every fact with no question answered up-to-date (--select not-up-to-date): a wider set than the facts "
        "to edit, which also need one outdated answer and none ambiguous (DyKnow's rule)."
    ),
}
"""One sentence per selection, for the reports and the console."""


# --- building from an audit ---------------------------------------------------------------------


class BuiltDataset(BaseModel):
    """The result of :func:`build_from_run`."""

    records: list[EditRecord]
    notes: list[str]
    """Things the user should know (a subject that had to differ from DyKnow's wording)."""
    fact_notes: dict[str, str] = {}
    """fact id -> its note among ``notes``, for the notes that concern one fact."""
    skipped: dict[str, str]
    """fact id -> why a fact that qualified is not in the dataset."""
    model: str
    select: Selection
    run: str


class BuildRecord(BaseModel):
    """The file beside a dataset ``editing dataset`` built (``<stem>.build.json``): its checksum, source run,
    model, selection, notes and skipped facts. Its checksum is what marks the dataset as ours to replace."""

    sha256: str
    """:func:`chronoprobe.records.publish.text_digest` of the dataset's text as written."""
    run: str
    model: str
    select: Selection
    notes: list[str]
    skipped: dict[str, str]

    @classmethod
    def of(cls, built: BuiltDataset) -> BuildRecord:

        return cls(
            sha256=text_digest(dataset_text(built.records)),
            run=built.run,
            model=built.model,
            select=built.select,
            notes=built.notes,
            skipped=built.skipped,
        )


BUILD_RECORD_SUFFIX = ".build.json"


def build_record_path(out: Path) -> Path:
    """The build record beside a dataset written to ``out``."""
    return Path(out).with_name(Path(out).stem + BUILD_RECORD_SUFFIX)


def count_lines(records: Sequence[EditRecord], source: str, select: str | None = None, skipped: int = 0) -> list[str]:
    """The facts per editing group, and the one sentence that says how they were chosen (console lines)."""

    shown = ", ".join(f"{group_heading(group)} {n}" for group, n in group_counts(records).items())
    left_out = f"; {skipped} more qualified but cannot be edited (listed)" if skipped else ""
    lines = [f"{len(records)} facts to edit: {shown}, from {source}{left_out}"]
    return lines + ([SELECTION_TEXT[select]] if select in SELECTION_TEXT else [])


def fact_notes_line(count: int, model: str, listed_in: str) -> str | None:
    """The per-fact notes as one console line (there can be a hundred of them); ``listed_in`` holds the list."""
    if not count:
        return None
    return (
        f"[yellow]note[/]{model}: {count} fact(s) take the entity's name as the edit subject (DyKnow's "
        f"subject phrase is not in our edit prompt); {listed_in} lists them"
    )


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold one object (a run's ``run.json``); one-line DataError otherwise."""
    try:
        data = json.loads(read_text(path))
    except ValueError as exc:
        raise DataError(str(path), f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(str(path), "expected a JSON object")
    return data


def _check_run_log(log: dict[str, Any], where: str) -> None:
    """The run log's summary, config and provenance have the shape a run writes; a damaged one is named here."""

    if "summary" in log:
        try:
            Summary.model_validate(log["summary"])
        except ValidationError as exc:
            raise DataError(where, f"summary: {_validation_problem(exc)}") from None
    for key in ("config", "provenance"):
        if log.get(key) is not None and not isinstance(log[key], dict):
            raise DataError(where, f"its {key} is not an object ({json_kind(log[key])})")


def _display_names(folder: Path, log: dict[str, Any]) -> dict[str, str]:
    """The run's display name per model key, from its summary (an older log's: read from its layout)."""
    if "summary" not in log:
        return {}
    found = read_folder(folder)
    return found.summary.names if found is not None else {}


def audit_config_of(log: dict[str, Any], where: str) -> Any:
    """The :class:`~chronoprobe.lenses.outdated.audit.AuditConfig` an outdated run's log records (a live run: its saved snapshot)."""

    recorded = {k: v for k, v in (log.get("config") or {}).items() if k != "models"}  # the audit's, not needed here
    try:
        config = AuditConfig.model_validate(recorded, context=RECORDED)  # a folder of 0.2: its older names
    except ValidationError as exc:
        raise DataError(f"{where} config", _validation_problem(exc)) from None
    if config.live:  # never query again: judge against the snapshot the live run saved
        snapshot = ((log.get("provenance") or {}).get("snapshot") or {}).get("name")
        if not isinstance(snapshot, str):
            raise DataError(where, "a --live run without its saved snapshot name in provenance")
        config = config.model_copy(update={"live": False, "snapshot": snapshot})
    return config


def _choose_model(
    log: dict[str, Any],
    names: Mapping[str, str],
    rows_models: Sequence[str],
    model: str | ModelRequest | None,
    where: str,
) -> str:
    """The run's key for ``model``: a ``--model`` value (``NAME=SPEC``, a spec or a name), matched in canonical form.

    A run keys its models by the name the user gave, else by the spec without credentials; the
    name, the spec, or a spec the run recorded for a named model all find it.
    """
    summary = log.get("summary") or {}
    keys = [str(s) for s in dict.fromkeys([*(summary.get("models") or []), *rows_models])]
    if not keys:
        raise DataError(where, "the run has no answers")
    if model is None:
        if len(keys) > 1:
            raise ConfigError("--model", f"the run holds several models; pick one of {', '.join(keys)}")
        return keys[0]
    also: dict[str, str] = {}  # display names and recorded specs -> the run's key
    for key, shown in names.items():
        also.setdefault(shown, key)
    for info in (log.get("provenance") or {}).get("models") or []:
        if isinstance(info, dict) and isinstance(info.get("spec"), str):
            also.setdefault(info["spec"], str(info.get("given_name") or info["spec"]))
    name, spec = _name_and_spec(model)
    for wanted in (name, spec):
        if wanted in keys:
            return wanted
    for wanted in (name, spec):
        if wanted is not None and also.get(wanted) in keys:
            return also[wanted]
    shown = f"{name}={spec}" if name else spec
    raise ConfigError(f"--model {shown}", f"not in this run; its models are {', '.join(keys)}")


def _name_and_spec(model: str | ModelRequest) -> tuple[str | None, str]:
    """(NAME, the spec as recorded) of a ``--model`` value; a value that is not one is a name the run may use."""
    if isinstance(model, ModelRequest):  # parsed already (the run's own --model)
        return model.name, model.spec.raw
    try:
        request = parse_model(model)
    except ConfigError:
        return None, canonical_spec(model)
    return request.name, request.spec.raw


def _fact_verdicts(rows: Iterable[Any], facts: Mapping[str, Fact]) -> dict[str, dict[int, Verdict]]:
    verdicts: dict[str, dict[int, Verdict]] = {}
    for row in rows:
        if row.fact_id in facts:
            verdicts.setdefault(row.fact_id, {})[row.template_index] = row.verdict
    return verdicts


def outdated_runs_under(folder: Path, depth: int = 3) -> list[Path]:
    """The folders below ``folder`` (``depth`` levels at most, hidden ones skipped) that an outdated run wrote."""
    found: list[Path] = []
    level = [folder]
    for _ in range(depth):
        below = []
        for parent in level:
            try:
                children = sorted(c for c in parent.iterdir() if c.is_dir() and not c.name.startswith("."))
            except OSError:
                continue
            for child in children:
                log = child / "run.json"
                if not log.is_file():
                    below.append(child)
                    continue
                try:
                    if json.loads(log.read_text(encoding="utf-8")).get("lens") == "outdated":
                        found.append(child)
                except (OSError, ValueError, AttributeError):
                    continue
        level = below
    return found


def check_run_folder(folder: Path, option: str = "--from") -> None:
    """A folder with a run log; else one error, listing the outdated run folders inside when there are any."""
    if (folder / "run.json").is_file():
        return
    if not folder.is_dir():
        raise DataError(
            f"{option} {folder}", "no such folder" if not folder.exists() else "is a file, not a run folder"
        )
    runs = outdated_runs_under(folder)
    if not runs:
        raise DataError(
            f"{option} {folder}",
            "is not a run folder (no run.json) and holds none from `chronoprobe outdated run`; give the folder "
            "an outdated run wrote",
        )
    shown = ", ".join(str(r) for r in runs[:5]) + (f" and {len(runs) - 5} more" if len(runs) > 5 else "")
    raise DataError(
        f"{option} {folder}",
        f"is not a run folder (no run.json); give one of the outdated run folders inside it: {shown}",
    )


def build_from_run(
    folder: Path | str, *, model: str | ModelRequest | None = None, select: Selection = "outdated"
) -> BuiltDataset:
    """The facts to edit for one model of an ``outdated run`` folder (run.json + items.jsonl).

    Facts come in DyKnow's order (companies, organizations, countries, athletes, each in the
    run's order). Gold answers are re-read as the run read them (its config: facts file and
    snapshot; a ``--live`` run's saved snapshot).
    """

    if select not in SELECTIONS:
        raise ConfigError("--select", f"{select!r} is not one of {', '.join(SELECTIONS)}")
    folder = Path(folder)
    log_path = folder / "run.json"
    check_run_folder(folder)
    log = read_json_object(log_path)
    if log.get("lens") != "outdated":
        raise DataError(
            str(log_path), f"is a {log.get('lens')!r} run; the editing dataset is built from an outdated run"
        )
    _check_run_log(log, str(log_path))
    items = folder / "items.jsonl"
    rows: list[ResponseRecord] = []
    for number, line in enumerate(read_text(items).splitlines(), start=1):
        if line.strip():
            try:
                rows.append(ResponseRecord.model_validate_json(line))
            except ValidationError as exc:
                raise DataError(f"{items} line {number}", _validation_problem(exc)) from None
    names = _display_names(folder, log)
    spec = _choose_model(log, names, list(dict.fromkeys(r.model for r in rows)), model, str(folder))
    facts, snapshot = load_gold(audit_config_of(log, str(log_path)))
    by_id = {f.fact_id: f for f in facts}
    verdicts = _fact_verdicts((r for r in rows if r.model == spec), by_id)
    records: dict[str, list[EditRecord]] = {domain: [] for domain in DOMAIN_ORDER}
    notes: list[str] = []
    fact_notes: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for fact in facts:
        asked = verdicts.get(fact.fact_id)
        if asked is None:
            continue
        if fact.category not in TEMPLATE_KINDS:  # a built catalogue's own category: DyKnow's format has no place for it
            skipped[fact.fact_id] = f"category {fact.category!r} is not one of DyKnow's ({', '.join(DOMAIN_ORDER)})"
            continue
        kinds = TEMPLATE_KINDS[fact.category]
        if len(fact.templates) != len(kinds) or sorted(asked) != list(range(len(kinds))):
            skipped[fact.fact_id] = (
                f"{len(fact.templates)} questions asked, {len(asked)} answered; DyKnow's kinds need 3"
            )
            continue
        include, problem = select_fact([asked[i] for i in range(len(kinds))], select)
        if problem is not None:
            skipped[fact.fact_id] = problem
        if not include:
            continue
        noted = len(notes)
        built = _record(fact, snapshot.answers[fact.fact_id].counted().statements, notes)
        if len(notes) > noted:
            fact_notes[fact.fact_id] = notes[-1]
        if isinstance(built, str):
            skipped[fact.fact_id] = built
        else:
            records[fact.category].append(built)
    ordered = [r for domain in DOMAIN_ORDER for r in records[domain]]
    return BuiltDataset(
        records=ordered,
        notes=notes,
        fact_notes=fact_notes,
        skipped=skipped,
        model=spec,
        select=select,
        run=str(folder),
    )


def _record(fact: Fact, statements: Sequence[Statement], notes: list[str]) -> EditRecord | str:
    """The fact's record, or why it cannot have one."""
    kinds = TEMPLATE_KINDS[fact.category]
    questions = {"generic": fact.generic} if fact.generic is not None else {}
    questions.update(zip(kinds, fact.templates, strict=True))
    prompt_type = EDIT_PROMPT_KIND[fact.category]
    prompt = questions[prompt_type]
    subject = dyknow_subject(fact)
    if subject is None or subject not in prompt:
        if fact.subject not in prompt:
            return f"neither {subject!r} nor {fact.subject!r} occurs in the edit prompt {prompt!r}"
        notes.append(
            f"{fact.fact_id}: subject {fact.subject!r} (DyKnow's {subject!r} is not in the edit prompt {prompt!r})"
        )
        subject = fact.subject
    targets = current_targets(fact, statements)
    if len(targets) != 1:
        labels = ", ".join(repr(s.label) for s in targets) or "none"
        return f"{len(targets)} current values ({labels}); the edit target must be exactly one"
    return EditRecord(
        prompt=prompt,
        target=targets[0].label,
        subject=subject,
        domain=fact.category,
        element=fact.subject,
        attribute=fact.attribute,
        prompt_type=prompt_type,
        questions=questions,
        answers=[dyknow_answer(s) for s in statements],
    )
