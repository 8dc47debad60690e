"""MuLan (Fierro et al., 2024): fact-completion queries over Wikidata relations.

Queries come from the hub dataset ``coastalcph/fm_queries`` (needs the
``datasets`` package and network) or a local copy in the same format, one JSON
object per line (JSONL) or a JSON list of such objects:

    {"id": "Q42_P19_0",              # <subject QID>_<relation>_<template index>
     "relation": "P19",
     "type": "immutable",            # immutable | immutable_n | mutable (optional; the relation decides)
     "query": "Douglas Adams was born in _X_ .",
     "answer": [{"name": "Cambridge", "wikidata_id": "Q350"}]}

Aliases: ``coastalcph/fm_aliases`` rows ``{"id": "<QID>", "aliases": [...]}`` (JSONL)
or a JSON object mapping QID -> list of aliases (``aliases_MULAN.json``).
Templates: ``templates/clean.json`` (relation -> {"templates": [5 strings with [X], [Y]]}).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import read_text

QUERIES_HUB_ID = "coastalcph/fm_queries"
ALIASES_HUB_ID = "coastalcph/fm_aliases"
OBJECT_SLOT = "_X_"
NOT_SHIPPED = (
    "MuLan has no licence, so chronoprobe does not ship it: give --data a local file in this format "
    "(JSONL, chronoprobe docs conflicts), or load it from the hub (network)"
)

IMMUTABLE_1 = ("P740", "P103", "P19", "P20", "P30", "P36", "P159", "P449", "P364", "P495", "P140", "P138")
IMMUTABLE_N = ("P47", "P136", "P166", "P69", "P101", "P530", "P27", "P1412", "P1303", "P190")
MUTABLE = ("P937", "P108", "P488", "P286", "P6", "P39", "P54", "P264", "P551", "P451", "P1308", "P210", "P1037")
RELATION_CLASS: dict[str, str] = {
    **{r: "immutable-1" for r in IMMUTABLE_1},
    **{r: "immutable-N" for r in IMMUTABLE_N},
    **{r: "mutable" for r in MUTABLE},
}
MULAN_CLASSES = ("immutable-1", "immutable-N", "mutable")
_TYPE_NAMES = {
    "immutable": "immutable-1",
    "immutable_1": "immutable-1",
    "immutable-1": "immutable-1",
    "immutable_n": "immutable-N",
    "immutable-n": "immutable-N",
    "mutable": "mutable",
}
_ID_RE = re.compile(r"^(Q\d+)_(P\d+)_(\d+)$")


def relation_class(relation: str) -> str | None:
    """immutable-1 / immutable-N / mutable for a MuLan relation, None if not one of the 35."""
    return RELATION_CLASS.get(relation)


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    qid: str | None = None


class MulanQuery(BaseModel):
    """One query: a fact rendered with one of its relation's templates."""

    model_config = ConfigDict(frozen=True)

    query_id: str
    fact_id: str
    subject_qid: str
    relation: str
    template_index: int
    fact_class: str
    query: str
    """The statement with ``_X_`` where the object goes."""
    answers: tuple[Answer, ...]
    source: str = ""

    @property
    def prefix(self) -> str:
        """The text before the object slot (what the model completes)."""
        return self.query.split(OBJECT_SLOT, 1)[0].rstrip()


def _read_json_rows(path: Path) -> list[tuple[str, Any]]:
    """(where, parsed object) for a JSONL file or a JSON list."""
    if not path.is_file():
        raise DataError(str(path), "file not found")
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} line {exc.lineno}", f"invalid JSON ({exc.msg})") from None
        return [(f"{path} row {i}", row) for i, row in enumerate(data, start=1)]
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"{path} line {number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} line {number}", f"invalid JSON ({exc.msg})") from None
    return rows


def parse_query(row: Any, where: str) -> MulanQuery:
    if not isinstance(row, dict):
        raise DataError(where, "expected a JSON object")
    for name in ("id", "relation", "query", "answer"):
        if name not in row:
            raise DataError(where, f"missing field {name!r}")
    match = _ID_RE.match(str(row["id"]))
    if not match:
        raise DataError(where, f"id {row['id']!r} is not <subject QID>_<relation>_<template index>")
    subject_qid, id_relation, template = match.groups()
    relation = str(row["relation"])
    if relation != id_relation:
        raise DataError(where, f"relation {relation!r} disagrees with the id {row['id']!r}")
    fact_class = relation_class(relation)
    if fact_class is None:
        raw_type = str(row.get("type", "")).lower()
        fact_class = _TYPE_NAMES.get(raw_type)
        if fact_class is None:
            raise DataError(where, f"relation {relation} is not a MuLan relation and type {raw_type!r} is unknown")
    query = str(row["query"])
    if OBJECT_SLOT not in query:
        raise DataError(where, f"query has no {OBJECT_SLOT} slot")
    answers_raw = row["answer"]
    if not isinstance(answers_raw, list) or not answers_raw:
        raise DataError(where, "answer must be a non-empty list")
    answers = []
    for a in answers_raw:
        if isinstance(a, str):
            answers.append(Answer(name=a))
        elif isinstance(a, dict) and isinstance(a.get("name"), str):
            answers.append(Answer(name=a["name"], qid=a.get("wikidata_id") or a.get("qid")))
        else:
            raise DataError(where, "each answer must be a string or an object with a 'name'")
    return MulanQuery(
        query_id=str(row["id"]),
        fact_id=f"{subject_qid}_{relation}",
        subject_qid=subject_qid,
        relation=relation,
        template_index=int(template),
        fact_class=fact_class,
        query=query,
        answers=tuple(answers),
        source=where,
    )


def load_queries(source: str | Path) -> list[MulanQuery]:
    """Queries from a local JSONL/JSON file (or a folder holding ``queries.jsonl``) or the hub id."""
    if str(source) == QUERIES_HUB_ID:
        return [parse_query(row, f"{QUERIES_HUB_ID} row {i}") for i, row in enumerate(_hub_rows(QUERIES_HUB_ID), 1)]
    path = Path(source).expanduser()
    if path.is_dir():
        path = path / "queries.jsonl"
    return [parse_query(row, where) for where, row in _read_json_rows(path)]


def _hub_rows(hub_id: str) -> Iterable[dict[str, Any]]:
    try:
        import datasets  # deferred: datasets
    except ImportError:
        raise ConfigError(
            f"dataset {hub_id}", f"{NOT_SHIPPED}; loading it needs pip install 'chronoprobe[hub]'"
        ) from None
    try:
        return list(datasets.load_dataset(hub_id)["train"])
    except Exception as exc:  # network and hub errors come in many types
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"dataset {hub_id}", f"{NOT_SHIPPED}; the hub failed: {first[:160]}") from None


def load_aliases(source: str | Path) -> dict[str, list[str]]:
    """QID -> aliases, from a JSON map, a JSONL of {"id", "aliases"} rows, or the hub id."""
    if str(source) == ALIASES_HUB_ID:
        rows: list[tuple[str, Any]] = [
            (f"{ALIASES_HUB_ID} row {i}", r) for i, r in enumerate(_hub_rows(ALIASES_HUB_ID), 1)
        ]
    else:
        path = Path(source).expanduser()
        if not path.is_file():
            raise DataError(str(path), "file not found")
        text = read_text(path)
        if text.lstrip().startswith("{") and "\n{" not in text.strip():
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path} line {exc.lineno}", f"invalid JSON ({exc.msg})") from None
            out: dict[str, list[str]] = {}
            for qid, values in data.items():
                if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                    raise DataError(f"{path} key {qid}", "aliases must be a list of strings")
                out[str(qid)] = list(values)
            return out
        rows = _read_json_rows(path)
    result: dict[str, list[str]] = {}
    for where, row in rows:
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("aliases"), list):
            raise DataError(where, 'expected {"id": <QID>, "aliases": [...]}')
        result[str(row["id"])] = [str(a) for a in row["aliases"]]
    return result


def load_templates(path: Path) -> dict[str, list[str]]:
    """relation -> its templates (with ``[X]`` and ``[Y]``) from ``clean.json``."""
    if not path.is_file():
        raise DataError(str(path), "file not found")
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} line {exc.lineno}", f"invalid JSON ({exc.msg})") from None
    templates: dict[str, list[str]] = {}
    for relation, entry in data.items():
        values = entry.get("templates") if isinstance(entry, dict) else None
        if not isinstance(values, list) or not values:
            raise DataError(f"{path} relation {relation}", 'expected {"templates": [...]}')
        for t in values:
            if "[X]" not in t or "[Y]" not in t:
                raise DataError(f"{path} relation {relation}", f"template {t!r} lacks [X] or [Y]")
        templates[relation] = list(values)
    return templates


def subject_of(query: MulanQuery, templates: Sequence[str]) -> str | None:
    """Recover the subject label by matching the query against the relation's templates."""
    text = query.query.replace(f"{OBJECT_SLOT} .", f"{OBJECT_SLOT}.").strip()
    ordered = list(templates)
    if 0 <= query.template_index < len(ordered):
        ordered.insert(0, ordered.pop(query.template_index))
    for template in ordered:
        pattern = re.escape(template.replace(" .", ".").strip())
        pattern = pattern.replace(re.escape("[X]"), "(.+?)").replace(re.escape("[Y]"), re.escape(OBJECT_SLOT))
        match = re.fullmatch(pattern, text)
        if match:
            return match.group(1).strip()
    return None


def take_balanced_facts(queries: Sequence[MulanQuery], limit: int | None) -> list[MulanQuery]:
    """All queries of at most ``limit`` facts, facts spread evenly over classes (file order)."""
    if limit is None:
        return list(queries)
    facts_by_class: dict[str, list[str]] = {}
    for q in queries:
        bucket = facts_by_class.setdefault(q.fact_class, [])
        if q.fact_id not in bucket:
            bucket.append(q.fact_id)
    chosen: set[str] = set()
    queues = {c: list(v) for c, v in facts_by_class.items()}
    while len(chosen) < limit and any(queues.values()):
        for c in sorted(queues):
            if queues[c] and len(chosen) < limit:
                chosen.add(queues[c].pop(0))
    return [q for q in queries if q.fact_id in chosen]
