"""The one SPARQL query behind every fact, and the parser for its JSON results.

The query text declares all its prefixes and avoids the WDQS-only label
service, so the exact same string runs on query.wikidata.org and on a local
pyoxigraph store (the tests do the latter).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chronoprobe.errors import ConfigError, DataError, EndpointError
from chronoprobe.knowledge.types import (
    PID_RE,
    QID_RE,
    FactAnswers,
    Statement,
    WikidataDate,
)

WD = "http://www.wikidata.org/entity/"
WIKIBASE = "http://wikiba.se/ontology#"
START, END, POINT_IN_TIME = "P580", "P582", "P585"

# Wikidata time precisions: 11 day, 10 month, 9 year; anything coarser is kept as a year.
_DAY, _MONTH = 11, 10

QUERY_TEMPLATE = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
SELECT ?statement ?rank ?value ?label ?alias
       ?start ?startPrecision ?end ?endPrecision ?point ?pointPrecision
WHERE {
  wd:$SUBJECT p:$PROPERTY ?statement .
  ?statement ps:$PROPERTY ?value ;
             wikibase:rank ?rank .
  FILTER(?rank != wikibase:DeprecatedRank)
  OPTIONAL { ?statement pq:P580 ?start .
    OPTIONAL { ?statement pqv:P580 [ wikibase:timeValue ?start ; wikibase:timePrecision ?startPrecision ] . } }
  OPTIONAL { ?statement pq:P582 ?end .
    OPTIONAL { ?statement pqv:P582 [ wikibase:timeValue ?end ; wikibase:timePrecision ?endPrecision ] . } }
  OPTIONAL { ?statement pq:P585 ?point .
    OPTIONAL { ?statement pqv:P585 [ wikibase:timeValue ?point ; wikibase:timePrecision ?pointPrecision ] . } }
  OPTIONAL { ?value rdfs:label ?label . FILTER(LANG(?label) = "en") }
  OPTIONAL { ?value skos:altLabel ?alias . FILTER(LANG(?alias) = "en") }
}
ORDER BY ?statement
"""


def build_query(subject_qid: str, property_id: str) -> str:
    """The query for every non-deprecated (subject, property) statement; ids are validated first."""
    if not isinstance(subject_qid, str) or not QID_RE.fullmatch(subject_qid):
        raise DataError(f"subject {subject_qid!r}", "not a Wikidata item id (expected Q followed by digits)")
    if not isinstance(property_id, str) or not PID_RE.fullmatch(property_id):
        raise ConfigError(f"property {property_id!r}", "not a Wikidata property id (expected P followed by digits)")
    return QUERY_TEMPLATE.replace("$SUBJECT", subject_qid).replace("$PROPERTY", property_id)


@dataclass
class _Row:
    """Everything collected about one statement across its result rows (aliases multiply rows)."""

    rank: str
    value: str
    label: str | None = None
    aliases: list[str] = field(default_factory=list)
    starts: list[WikidataDate] = field(default_factory=list)
    ends: list[WikidataDate] = field(default_factory=list)
    points: list[WikidataDate] = field(default_factory=list)


def read_term(binding: Mapping[str, Any], name: str, endpoint: str, literal_only: bool = False) -> str | None:
    """The value of ``?name`` in one SPARQL JSON binding (None when unbound; with ``literal_only``, also
    when it is not a literal)."""
    cell = binding.get(name)
    if cell is None:
        return None
    value = cell.get("value") if isinstance(cell, Mapping) else None
    if not isinstance(value, str):
        raise EndpointError(endpoint, f"malformed SPARQL result cell for ?{name}: {cell!r:.80}")
    if literal_only and cell.get("type") not in ("literal", "typed-literal"):
        return None  # an "unknown value" qualifier arrives as a blank node / genid IRI
    return value


def read_date(value: str | None, precision: str | None, endpoint: str) -> WikidataDate | None:
    """A time value with its Wikidata precision (11 day, 10 month, 9 or coarser year)."""
    if value is None:
        return None
    try:
        date = WikidataDate.parse(value)
        level = int(precision) if precision is not None else _DAY
    except ValueError as exc:
        raise EndpointError(endpoint, f"unreadable time value {value!r} (precision {precision!r})") from exc
    if level >= _DAY:
        return date
    if level == _MONTH:
        return WikidataDate(year=date.year, month=date.month)
    return WikidataDate(year=date.year)


def _statement_id(iri: str) -> str:
    # WDQS names statements wds:Q38-<uuid>; keep only the local part.
    return iri.rsplit("/", 1)[-1]


def parse_results(data: Any, fact_id: str = "", endpoint: str = "SPARQL endpoint") -> FactAnswers:
    """Turn a SPARQL JSON result of :data:`QUERY_TEMPLATE` into one :class:`FactAnswers`.

    Statements are grouped by their IRI. A value without an item id (an
    "unknown value" statement) is skipped; a value without an English label
    keeps its QID as label. With several start (end) qualifiers the earliest
    start (latest end) is kept.
    """
    try:
        bindings = data["results"]["bindings"]
    except (TypeError, KeyError) as exc:
        raise EndpointError(endpoint, "response is not a SPARQL JSON result (no results.bindings)") from exc
    if not isinstance(bindings, list):
        raise EndpointError(endpoint, "results.bindings is not a list")
    rows: dict[str, _Row] = {}
    for binding in bindings:
        if not isinstance(binding, Mapping):
            raise EndpointError(endpoint, f"malformed SPARQL binding: {binding!r:.80}")
        iri = read_term(binding, "statement", endpoint)
        value = read_term(binding, "value", endpoint)
        rank = read_term(binding, "rank", endpoint)
        if iri is None or value is None or rank is None:
            raise EndpointError(endpoint, "SPARQL row lacks ?statement, ?value or ?rank")
        row = rows.setdefault(iri, _Row(rank=rank, value=value))
        label = read_term(binding, "label", endpoint)
        if label and row.label is None:
            row.label = label
        alias = read_term(binding, "alias", endpoint)
        if alias and alias not in row.aliases:
            row.aliases.append(alias)
        for name, bucket in (("start", row.starts), ("end", row.ends), ("point", row.points)):
            raw = read_term(binding, name, endpoint, literal_only=True)
            date = read_date(raw, read_term(binding, f"{name}Precision", endpoint), endpoint)
            if date is not None and date not in bucket:
                bucket.append(date)
    statements = []
    for iri, row in rows.items():
        if not row.value.startswith(WD) or not QID_RE.fullmatch(row.value[len(WD) :]):
            continue
        if row.rank == WIKIBASE + "DeprecatedRank":
            continue
        qid = row.value[len(WD) :]
        statements.append(
            Statement(
                label=row.label or qid,
                qid=qid,
                aliases=tuple(sorted(a for a in row.aliases if a != row.label)),
                start=min(row.starts, key=lambda d: d.earliest()) if row.starts else None,
                end=max(row.ends, key=lambda d: d.latest()) if row.ends else None,
                point_in_time=row.points[0] if row.points else None,
                rank="preferred" if row.rank == WIKIBASE + "PreferredRank" else "normal",
                statement_id=_statement_id(iri),
            )
        )
    return FactAnswers(fact_id=fact_id, statements=tuple(statements))
