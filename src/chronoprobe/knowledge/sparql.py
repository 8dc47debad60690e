"""The one SPARQL query behind every fact, and the parser for its JSON results.

The query text declares all its prefixes and avoids the WDQS-only label
service, so the exact same string runs on query.wikidata.org and on a local
pyoxigraph store (the tests do the latter).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

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
GENID = "/.well-known/genid/"
"""WDQS sends an "unknown value" (somevalue) as a skolem IRI ``http://www.wikidata.org/.well-known/genid/<hash>``."""
START, END, POINT_IN_TIME = "P580", "P582", "P585"

MOST_PRECISE = 14
"""Wikidata time precisions run from 0 (a billion years) to 14 (a second); 11 is a day."""
MAX_LABEL = 250
"""Wikibase refuses longer labels and aliases; a longer one comes from a broken endpoint, not from Wikidata."""
UNKNOWN: Final = "unknown"
"""A qualifier of "unknown value": it has a value, which Wikidata does not know."""
_STATEMENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9$_.\-]{0,199}$")

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
class Times:
    """A statement's validity qualifiers as its result rows give them (several rows may repeat them)."""

    starts: list[WikidataDate] = field(default_factory=list)
    ends: list[WikidataDate] = field(default_factory=list)
    points: list[WikidataDate] = field(default_factory=list)
    end_unknown: bool = False
    """An end qualifier of "unknown value" came back."""

    def add(self, binding: Mapping[str, Any], endpoint: str) -> None:
        for name, bucket in (("start", self.starts), ("end", self.ends), ("point", self.points)):
            time = read_time(binding, name, endpoint)
            if time == UNKNOWN:
                # an unknown start or point in time dates nothing; an unknown end says the statement ended
                self.end_unknown = self.end_unknown or name == "end"
            elif time is not None and time not in bucket:
                bucket.append(time)

    def validity(self) -> dict[str, Any]:
        """The :class:`Statement` fields: the widest span (earliest start, latest end), the first point in
        time; an end of "unknown value" only where no end date came back (a date says more)."""
        return {
            "start": min(self.starts, key=WikidataDate.first_day) if self.starts else None,
            "end": max(self.ends, key=WikidataDate.last_day) if self.ends else None,
            "end_unknown": True if self.end_unknown and not self.ends else None,
            "point_in_time": self.points[0] if self.points else None,
        }


@dataclass
class _Row:
    """Everything collected about one statement across its result rows (aliases multiply rows)."""

    rank: str
    value: str
    label: str | None = None
    aliases: list[str] = field(default_factory=list)
    times: Times = field(default_factory=Times)


def read_term(binding: Mapping[str, Any], name: str, endpoint: str) -> str | None:
    """The value of ``?name`` in one SPARQL JSON binding (None when unbound)."""
    cell = binding.get(name)
    if cell is None:
        return None
    value = cell.get("value") if isinstance(cell, Mapping) else None
    if not isinstance(value, str):
        raise EndpointError(endpoint, f"malformed SPARQL result cell for ?{name}: {cell!r:.80}")
    return value


def is_some_value(cell: Mapping[str, Any]) -> bool:
    """An "unknown value": a skolem ``.well-known/genid/`` IRI (WDQS) or a blank node (older endpoints)."""
    kind, value = cell.get("type"), str(cell.get("value", ""))
    return kind == "bnode" or (kind == "uri" and GENID in value)


def read_time(binding: Mapping[str, Any], name: str, endpoint: str) -> WikidataDate | Literal["unknown"] | None:
    """``?name`` as a time value with the precision in ``?namePrecision``; :data:`UNKNOWN` for "unknown value"."""
    value = read_term(binding, name, endpoint)
    if value is None:
        return None
    cell = binding[name]
    if is_some_value(cell):
        return UNKNOWN
    if cell.get("type") not in ("literal", "typed-literal"):
        raise EndpointError(endpoint, f"?{name} is not a time value: {cell.get('type')} {value[:80]!r}")
    return read_date(value, read_term(binding, f"{name}Precision", endpoint), endpoint)


def read_date(value: str | None, precision: str | None, endpoint: str) -> WikidataDate | None:
    """A time value with its Wikidata precision (11 day, 10 month, 9 year, coarser a span of years)."""
    if value is None:
        return None
    try:
        date = WikidataDate.parse(value)
        level = int(precision) if precision is not None else MOST_PRECISE
    except ValueError as exc:
        raise EndpointError(
            endpoint, f"unreadable time value {value[:80]!r} (precision {precision!r:.20}): {exc}"
        ) from None
    if not 0 <= level <= MOST_PRECISE:
        raise EndpointError(
            endpoint, f"time value {value[:80]!r} has precision {level}, not a Wikidata precision (0-14)"
        )
    return date.coarsened(level)


def usable_label(text: str | None) -> str | None:
    """``text`` if it can be a Wikidata label or alias: not blank, at most :data:`MAX_LABEL` characters,
    no control characters (Wikibase allows none of these); None otherwise, as if there were no label."""
    if text is None or not text.strip() or len(text) > MAX_LABEL:
        return None
    if any(unicodedata.category(char) == "Cc" for char in text):
        return None
    return text


def statement_id(iri: str, endpoint: str) -> str:
    """WDQS names statements ``wds:Q38-<uuid>``: the IRI's last segment, which must look like one."""
    local = iri.rsplit("/", 1)[-1]
    if not _STATEMENT_ID.fullmatch(local):
        raise EndpointError(endpoint, f"statement IRI {iri[:80]!r} does not name a Wikidata statement")
    return local


def parse_results(data: Any, fact_id: str = "", endpoint: str = "SPARQL endpoint") -> FactAnswers:
    """Turn a SPARQL JSON result of :data:`QUERY_TEMPLATE` into one :class:`FactAnswers`.

    Statements are grouped by their IRI. A value without an item id (an
    "unknown value" statement) is skipped; a value without a usable English
    label keeps its QID as label. With several start (end) qualifiers the
    earliest start (latest end) is kept; an end of "unknown value" is kept as
    ``end_unknown`` (the statement ended, on a day Wikidata does not know).
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
        label = usable_label(read_term(binding, "label", endpoint))
        if label and row.label is None:
            row.label = label
        alias = usable_label(read_term(binding, "alias", endpoint))
        if alias and alias not in row.aliases:
            row.aliases.append(alias)
        row.times.add(binding, endpoint)
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
                **row.times.validity(),
                rank="preferred" if row.rank == WIKIBASE + "PreferredRank" else "normal",
                statement_id=statement_id(iri, endpoint),
            )
        )
    return FactAnswers(fact_id=fact_id, statements=tuple(statements))
