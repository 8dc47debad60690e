"""The two SPARQL texts behind a property template, and the parser for their answers.

A template's build runs one **selection** query (the subjects, best known first: a list of QIDs
and sitelinks counts, cheap to send back) and then one **statement** query, paged: the same text
with a ``VALUES`` block of at most ``page_size`` subjects. Paging by subject lists rather than by
``OFFSET`` keeps every page as cheap as the first (an offset page re-runs the whole selection),
keeps a subject's statements inside one page, and makes each page a fixed piece of work that a
rerun can skip. Like :mod:`chronoprobe.knowledge.sparql`, the text declares its prefixes and
avoids the WDQS-only label service, so the same string runs on query.wikidata.org and pyoxigraph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chronoprobe.errors import EndpointError
from chronoprobe.knowledge.sparql import (
    WD,
    WIKIBASE,
    Times,
    is_some_value,
    read_term,
    statement_id,
    usable_label,
)
from chronoprobe.knowledge.templates import PropertyTemplate
from chronoprobe.knowledge.types import QID_RE

PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wdt: <http://www.wikidata.org/prop/direct/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
"""
RANK_IRI = {
    "preferred": "wikibase:PreferredRank",
    "normal": "wikibase:NormalRank",
    "deprecated": "wikibase:DeprecatedRank",
}
SUBJECTS_MARK = "$SUBJECTS"
"""Where a statement page's QIDs go (each validated before it is put there)."""


def _languages(template: PropertyTemplate) -> str:
    return ", ".join(f'"{language}"' for language in template.values.languages)


def _ranks(template: PropertyTemplate, variable: str) -> str:
    return f"FILTER(?{variable} IN ({', '.join(RANK_IRI[r] for r in template.validity.ranks)}))"


def _selection_body(template: PropertyTemplate) -> list[str]:
    chosen = template.subjects
    lines = []
    if chosen.items:
        lines.append("VALUES ?subject { " + " ".join(f"wd:{q}" for q in chosen.items) + " }")
    if len(chosen.classes) == 1:
        lines.append(f"?subject wdt:P31 wd:{chosen.classes[0]} .")
    elif chosen.classes:
        lines.append("?subject wdt:P31 ?subjectClass .")
        lines.append("VALUES ?subjectClass { " + " ".join(f"wd:{q}" for q in chosen.classes) + " }")
    if chosen.pattern:
        lines.append(chosen.pattern if chosen.pattern.rstrip().endswith(".") else chosen.pattern + " .")
    lines.append("?subject wikibase:sitelinks ?sitelinks .")
    if chosen.min_sitelinks:
        lines.append(f"FILTER(?sitelinks >= {int(chosen.min_sitelinks)})")
    lines.append(f"?subject p:{template.property} ?anyStatement .")
    lines.append("?anyStatement wikibase:rank ?anyRank .")
    lines.append(_ranks(template, "anyRank"))
    return lines


def selection_query(template: PropertyTemplate, limit: int) -> str:
    """The subjects of ``template`` that have the property (in a kept rank), most sitelinks first."""
    body = "\n  ".join(_selection_body(template))
    return (
        f"{PREFIXES}SELECT DISTINCT ?subject ?sitelinks\nWHERE {{\n  {body}\n}}\n"
        f"ORDER BY DESC(?sitelinks) ?subject\nLIMIT {int(limit)}\n"
    )


def statement_query_text(template: PropertyTemplate) -> str:
    """The statement query with :data:`SUBJECTS_MARK` where a page's subjects go."""
    prop, validity, languages = template.property, template.validity, _languages(template)

    def qualifier(pid: str, name: str) -> str:
        return (
            f"  OPTIONAL {{ ?statement pq:{pid} ?{name} .\n"
            f"    OPTIONAL {{ ?statement pqv:{pid} [ wikibase:timeValue ?{name} ; "
            f"wikibase:timePrecision ?{name}Precision ] . }} }}\n"
        )

    return (
        f"{PREFIXES}SELECT ?subject ?subjectLabel ?statement ?rank ?value ?label ?alias\n"
        "       ?start ?startPrecision ?end ?endPrecision ?point ?pointPrecision\n"
        "WHERE {\n"
        f"  VALUES ?subject {{ {SUBJECTS_MARK} }}\n"
        f"  ?subject p:{prop} ?statement .\n"
        f"  ?statement ps:{prop} ?value ;\n"
        "             wikibase:rank ?rank .\n"
        f"  {_ranks(template, 'rank')}\n"
        f"  OPTIONAL {{ ?subject rdfs:label ?subjectLabel . FILTER(LANG(?subjectLabel) IN ({languages})) }}\n"
        + qualifier(validity.start, "start")
        + qualifier(validity.end, "end")
        + qualifier(validity.point_in_time, "point")
        + f"  OPTIONAL {{ ?value rdfs:label ?label . FILTER(LANG(?label) IN ({languages})) }}\n"
        f"  OPTIONAL {{ ?value skos:altLabel ?alias . FILTER(LANG(?alias) IN ({languages})) }}\n"
        "}\nORDER BY ?subject ?statement\n"
    )


def statement_query(template: PropertyTemplate, subjects: Sequence[str]) -> str:
    """One statement page: the statements of ``subjects`` (QIDs, validated here)."""
    for qid in subjects:
        if not isinstance(qid, str) or not QID_RE.fullmatch(qid):
            raise EndpointError("statement page", f"{qid!r} is not a Wikidata item id")
    return statement_query_text(template).replace(SUBJECTS_MARK, " ".join(f"wd:{q}" for q in subjects))


# --- answers ---------------------------------------------------------------------------------------


def _bindings(data: Any, where: str) -> list[Mapping[str, Any]]:
    try:
        bindings = data["results"]["bindings"]
    except (TypeError, KeyError):
        raise EndpointError(where, "response is not a SPARQL JSON result (no results.bindings)") from None
    if not isinstance(bindings, list) or not all(isinstance(b, Mapping) for b in bindings):
        raise EndpointError(where, "results.bindings is not a list of bindings")
    return bindings


def _item(iri: str | None) -> str | None:
    """The QID of an entity IRI; None for anything else (an "unknown value" blank node)."""
    if iri is None or not iri.startswith(WD):
        return None
    qid = iri[len(WD) :]
    return qid if QID_RE.fullmatch(qid) else None


def parse_selection(data: Any, where: str) -> list[tuple[str, int]]:
    """``(QID, sitelinks)`` per selected subject, in the answer's order, each once."""
    found: dict[str, int] = {}
    bindings = _bindings(data, where)
    for binding in bindings:
        qid = _item(read_term(binding, "subject", where))
        if qid is None or qid in found:
            continue
        raw = read_term(binding, "sitelinks", where)
        try:
            found[qid] = int(raw) if raw is not None else 0
        except ValueError:
            raise EndpointError(where, f"sitelinks {str(raw)[:40]!r} of {qid} is not a number") from None
    if bindings and not found:
        shown = read_term(bindings[0], "subject", where) or "nothing"
        raise EndpointError(
            where, f"none of the {len(bindings)} subjects selected is a Wikidata item (e.g. {shown[:80]!r})"
        )
    return list(found.items())


@dataclass
class RawStatement:
    """One statement as retrieved, before any rule is applied."""

    statement_id: str
    rank: str
    value: str | None
    """The value's QID; None for an "unknown value" or a value that is no item."""
    not_an_item: bool = False
    """The value is something other than an item or an "unknown value" (a literal, another IRI)."""
    labels: dict[str, str] = field(default_factory=dict)
    """Language -> label."""
    aliases: dict[str, list[str]] = field(default_factory=dict)
    times: Times = field(default_factory=Times)


@dataclass
class RawSubject:
    qid: str
    labels: dict[str, str] = field(default_factory=dict)
    statements: dict[str, RawStatement] = field(default_factory=dict)


def _language(binding: Mapping[str, Any], name: str) -> str:
    cell = binding.get(name)
    return str(cell.get("xml:lang", "")) if isinstance(cell, Mapping) else ""


def _raw_statement(binding: Mapping[str, Any], key: str, rank: str, where: str) -> RawStatement:
    value = read_term(binding, "value", where)
    qid = _item(value)
    other = value is not None and qid is None and not is_some_value(binding["value"])
    return RawStatement(key, rank.removeprefix(WIKIBASE), qid, not_an_item=other)


def parse_statements(data: Any, where: str) -> dict[str, RawSubject]:
    """Every subject of one statement page with its statements, labels, aliases and dates (all languages asked)."""
    subjects: dict[str, RawSubject] = {}
    for binding in _bindings(data, where):
        qid = _item(read_term(binding, "subject", where))
        iri = read_term(binding, "statement", where)
        rank = read_term(binding, "rank", where)
        if qid is None or iri is None or rank is None:
            raise EndpointError(where, "SPARQL row lacks ?subject, ?statement or ?rank")
        subject = subjects.setdefault(qid, RawSubject(qid))
        subject_label = usable_label(read_term(binding, "subjectLabel", where))
        if subject_label:
            subject.labels.setdefault(_language(binding, "subjectLabel"), subject_label)
        key = statement_id(iri, where)
        statement = subject.statements.get(key) or subject.statements.setdefault(
            key, _raw_statement(binding, key, rank, where)
        )
        label = usable_label(read_term(binding, "label", where))
        if label:
            statement.labels.setdefault(_language(binding, "label"), label)
        alias = usable_label(read_term(binding, "alias", where))
        if alias:
            bucket = statement.aliases.setdefault(_language(binding, "alias"), [])
            if alias not in bucket:
                bucket.append(alias)
        statement.times.add(binding, where)
    return subjects
