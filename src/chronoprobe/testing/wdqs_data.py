"""The default data of the WDQS stand-in: Wikidata-shaped RDF (Turtle), made here, never fetched.

Two parts, in the data model WDQS serves (statements with ``p:``/``ps:``/``pq:``/``pqv:``,
``wikibase:rank``, ``rdfs:label``, ``skos:altLabel``, ``wikibase:sitelinks``, ``wdt:P31``):

* **DyKnow's real statements.** Every fact of the shipped catalogue, with the answers of the
  shipped snapshot ``dyknow-2023-12-18`` (Wikidata as DyKnow retrieved it): subject QIDs from the
  catalogue, each statement's start, end and point in time with their precision, the current
  value ranked preferred (as Wikidata's editors usually mark it), the others normal. DyKnow's file
  holds only English labels, so the values get stand-in QIDs (``Q90000000xx``, one per label) and
  no aliases; the subjects' classes are the ones the shipped templates select, and their
  sitelinks counts are stand-in numbers.
* **Made-up entities** where a shipped template needs more subjects than DyKnow has: for each
  template, subjects of its classes with histories of its property, every label ending in
  ``(made up)``. Some carry the faults the build must refuse and count: a single value, an
  undated value, an end before its start, two current values, two values with one label, a
  value without a label, a subject without an English label, no current value, a deprecated
  claim, an "unknown value", and a subject under the sitelinks floor. Three more carry qualifier
  shapes that must not refuse them: a previous value whose end is "unknown value" (WDQS's
  ``.well-known/genid/`` IRI), a current value whose end is "no value" (``wdno:P582``), and a
  current value whose term is scheduled to end (2099-12-31).

Everything is deterministic (seeded by each template's name), so the default build always gives
the same catalogue; ``python -m chronoprobe.testing.wdqs --dump FILE.ttl`` writes the data out.
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass, field

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.templates import PropertyTemplate, shipped_templates
from chronoprobe.knowledge.types import WikidataDate

MADE_UP = " (made up)"
DYKNOW_VALUE_BASE = 9_000_000_000
MADE_UP_BASE = 9_500_000_000
DYKNOW_CLASSES = {
    "countries_byGDP": ("Q3624078", "Q6256"),
    "athletes_byPayment": ("Q5",),
    "companies_byRevenue": ("Q4830453",),
    "organizations": ("Q484652",),
}
MADE_UP_SUBJECTS = 20
"""Made-up subjects per template that asks no DyKnow facts (four for those that do)."""

PREFIXES = """@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wds: <http://www.wikidata.org/entity/statement/> .
@prefix wdv: <http://www.wikidata.org/value/> .
@prefix wdno: <http://www.wikidata.org/prop/novalue/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix pq: <http://www.wikidata.org/prop/qualifier/> .
@prefix pqv: <http://www.wikidata.org/prop/qualifier/value/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""

_TOWNS = tuple(
    [
        "Aldbury",
        "Carrowmere",
        "Dunhaven",
        "Eskerby",
        "Fallowfield",
        "Glenrith",
        "Harrowby",
        "Ivelstone",
        "Jarrowick",
        "Kelmscote",
        "Lindmoor",
        "Marrowgate",
        "Northwick",
        "Oakhollow",
        "Pellingham",
        "Quarrington",
        "Rookwood",
        "Saltmarsh",
        "Thornbury",
        "Umberleigh",
        "Valebridge",
        "Wexcombe",
        "Yarlington",
        "Zennorbay",
        "Ashcombe",
        "Brackenford",
        "Coldwater",
        "Deepdale",
        "Elmstead",
        "Fernhill",
    ]
)
_FIRST = tuple(
    [
        "Mara",
        "Tobin",
        "Ilse",
        "Corwin",
        "Anouk",
        "Bram",
        "Selma",
        "Dario",
        "Wren",
        "Otto",
        "Livia",
        "Piet",
        "Rhona",
        "Aurel",
        "Nesta",
        "Hugo",
        "Elke",
        "Jonas",
    ]
)
_LAST = tuple(
    [
        "Quist",
        "Halloran",
        "Vey",
        "Marlowe",
        "Okafor",
        "Lindqvist",
        "Brannock",
        "Sallis",
        "Torvane",
        "Penhale",
        "Ruskin",
        "Achterberg",
        "Doyle",
    ]
)
_KIND_NAMES = {
    "Q3624078": "Republic of {town}",
    "Q4830453": "{town} Holdings",
    "Q891723": "{town} Holdings",
    "Q484652": "International {town} Council",
    "Q476028": "{town} Rovers",
    "Q6979593": "{town} national football team",
    "Q515": "{town}",
    "Q1549591": "{town}",
    "Q7278": "{town} People's Party",
    "Q11032": "The {town} Courier",
    "Q4164871": "Mayor of {town}",
}
_VALUE_NAMES = {"P118": "{town} Premier Division", "P159": "{town}", "P54": "{town} Athletic"}
GENID = "http://www.wikidata.org/.well-known/genid/"
"""How WDQS sends an "unknown value": a skolem IRI, never a literal (and, for a time, no ``pqv:`` node)."""
SCHEDULED_END = WikidataDate(year=2099, month=12, day=31)
"""The end of a term that is still running on any build day (a fixed mandate)."""


def some_value(*parts: str) -> str:
    """The skolem IRI WDQS gives an "unknown value" (a stable hash of ``parts``), in Turtle."""
    return f"<{GENID}{hashlib.sha256('/'.join(parts).encode()).hexdigest()[:32]}>"


def _literal(text: str, language: str = "en") -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + f'"@{language}'


def _time(date: WikidataDate) -> tuple[str, str]:
    """(the pq: literal, the wdv: node with its precision) of a date."""
    precision = 11 if date.day else 10 if date.month else 9
    stamp = f"{date.year:04d}-{date.month or 1:02d}-{date.day or 1:02d}T00:00:00Z"
    node = f"wdv:t{precision}-{stamp[:10]}"
    return f'"{stamp}"^^xsd:dateTime', node


@dataclass
class _Writer:
    """Collects Turtle lines; items and time nodes are written once."""

    lines: list[str] = field(default_factory=list)
    times: dict[str, str] = field(default_factory=dict)
    labelled: set[str] = field(default_factory=set)

    def item(self, qid: str, label: str | None, *, aliases: tuple[str, ...] = (), german: str | None = None) -> None:
        if qid in self.labelled:
            return
        self.labelled.add(qid)
        parts = []
        if label is not None:
            parts.append(f"rdfs:label {_literal(label)}" + (f" , {_literal(german, 'de')}" if german else ""))
        elif german:
            parts.append(f"rdfs:label {_literal(german, 'de')}")
        if aliases:
            parts.append("skos:altLabel " + " , ".join(_literal(a) for a in aliases))
        if parts:
            self.lines.append(f"wd:{qid} " + " ;\n    ".join(parts) + " .")

    def subject(self, qid: str, classes: tuple[str, ...], sitelinks: int) -> None:
        kinds = " , ".join(f"wd:{c}" for c in classes)
        typed = f"wdt:P31 {kinds} ;\n    " if classes else ""
        self.lines.append(f'wd:{qid} {typed}wikibase:sitelinks "{sitelinks}"^^xsd:integer .')

    def statement(
        self,
        subject: str,
        prop: str,
        number: int,
        value: str,
        *,
        start: WikidataDate | None = None,
        end: WikidataDate | None = None,
        point: WikidataDate | None = None,
        rank: str = "NormalRank",
        end_unknown: bool = False,
        end_none: bool = False,
    ) -> None:
        """One statement; ``end_unknown``: an end of "unknown value", ``end_none``: an end of "no value"
        (the RDF dump types the statement ``wdno:P582``; no ``pq:P582`` triple)."""
        iri = f"wds:{subject}-{prop}-{number}"
        self.lines.append(f"wd:{subject} p:{prop} {iri} .")
        kinds = "wikibase:Statement" + (" , wdno:P582" if end_none else "")
        body = [f"{iri} a {kinds}", f"wikibase:rank wikibase:{rank}", f"ps:{prop} {value}"]
        for pid, date in (("P580", start), ("P582", end), ("P585", point)):
            if date is not None:
                literal, node = _time(date)
                self.times[node] = literal.split("^^")[0]
                body += [f"pq:{pid} {literal}", f"pqv:{pid} {node}"]
        if end_unknown:
            body.append(f"pq:P582 {some_value(subject, prop, str(number), 'P582')}")
        self.lines.append(" ;\n    ".join(body) + " .")

    def text(self) -> str:
        times = [
            f"{node} a wikibase:TimeValue ; wikibase:timeValue {stamp}^^xsd:dateTime ; "
            f'wikibase:timePrecision "{node[5:].split("-", 1)[0]}"^^xsd:integer .'
            for node, stamp in sorted(self.times.items())
        ]
        return PREFIXES + "\n".join(self.lines + times) + "\n"


# --- DyKnow's statements -----------------------------------------------------------------------------


def _sitelinks(qid: str) -> int:
    return 150 + int(hashlib.sha256(qid.encode()).hexdigest()[:4], 16) % 100


def _dyknow(writer: _Writer) -> None:
    facts = load_catalogue()
    answers = load_snapshot(None).answers
    value_ids: dict[str, str] = {}
    seen_subjects: set[str] = set()
    for fact in facts:
        assert fact.subject_qid is not None
        if fact.subject_qid not in seen_subjects:
            seen_subjects.add(fact.subject_qid)
            writer.subject(fact.subject_qid, DYKNOW_CLASSES[fact.category], _sitelinks(fact.subject_qid))
            writer.item(fact.subject_qid, fact.subject)
        for number, statement in enumerate(answers[fact.fact_id].statements):
            key = " ".join(statement.label.split()).casefold()
            qid = value_ids.setdefault(key, f"Q{DYKNOW_VALUE_BASE + len(value_ids) + 1}")
            writer.item(qid, statement.label)
            writer.statement(
                fact.subject_qid,
                fact.property,
                number,
                f"wd:{qid}",
                start=statement.start,
                end=statement.end,
                point=statement.point_in_time,
                rank="PreferredRank" if statement.is_current else "NormalRank",
            )


# --- made-up entities --------------------------------------------------------------------------------


class _Ids:
    def __init__(self) -> None:
        self.next = MADE_UP_BASE

    def __call__(self) -> str:
        self.next += 1
        return f"Q{self.next}"


def _history(
    rng: random.Random, values: int, *, open_end: bool = True
) -> list[tuple[WikidataDate, WikidataDate | None]]:
    """``values`` consecutive tenures ending now (the last one open), mixed precision, oldest first."""
    year = rng.randint(2016, 2023)
    spans: list[tuple[WikidataDate, WikidataDate | None]] = []
    end: WikidataDate | None = None if open_end else WikidataDate(year=year + 1, month=6, day=30)
    for _ in range(values):
        month = rng.randint(1, 12)
        start = (
            WikidataDate(year=year, month=month, day=rng.randint(1, 28))
            if rng.random() < 0.7
            else WikidataDate(year=year)
        )
        spans.append((start, end))
        end = WikidataDate(year=start.year, month=start.month, day=start.day) if start.day else WikidataDate(year=year)
        year -= rng.randint(2, 7)
    return spans[::-1]


def _name(pattern: str, rng: random.Random, used: set[str]) -> str:
    for _ in range(1000):
        text = (
            pattern.format(town=rng.choice(_TOWNS))
            if "{town}" in pattern
            else f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        )
        if text not in used:
            used.add(text)
            return text
    raise AssertionError("ran out of made-up names")


def _made_up(writer: _Writer, template: PropertyTemplate, ids: _Ids, count: int, faults: bool) -> None:
    """``count`` made-up subjects of the template's first class, with histories of its property.

    With ``faults``, subject ``i`` carries fault ``i`` of the module docstring's list (see the
    comments); the others are clean and become facts.
    """
    rng = random.Random(template.name)
    classes = template.subjects.classes[:1] or ("Q5",)
    subject_pattern = _KIND_NAMES.get(classes[0], "{person}")
    value_pattern = _VALUE_NAMES.get(template.property, "{person}")
    used: set[str] = set()
    values: dict[str, str] = {}
    prop, floor = template.property, template.subjects.min_sitelinks
    previous = ""
    for index in range(count):
        fault = index if faults else -1
        qid = ids()
        label = previous if fault == 15 else _name(subject_pattern, rng, used) + MADE_UP  # 15: a namesake of 14
        previous = label
        writer.subject(qid, classes, floor - 1 if fault == 6 and floor else floor + 5 + count - index)  # 6: too obscure
        if fault == 8:  # no English label
            writer.item(qid, None, german=label.replace(MADE_UP, " (erfunden)"))
        else:
            writer.item(qid, label)
        spans = _history(
            rng, 1 if fault == 1 else 2 + index % 3, open_end=fault != 11
        )  # 1: one value; 11: none current
        if fault == 13:  # a second current value
            spans.append((WikidataDate(year=2022, month=3, day=1), None))
        names: set[str] = set()
        first = ""
        for number, (start, end) in enumerate(spans):
            unlabelled = fault == 9 and number == 0  # a value with a German label only
            if fault == 7 and number == 1:  # another value with the first one's label
                name, value = first, ids()
            else:
                name = _name(value_pattern, rng, names) + MADE_UP
                # a value shared by several subjects is one item (the unlabelled one is its own)
                value = ids() if unlabelled else values.setdefault(name, ids())
            first = first or name
            person = value_pattern == "{person}"
            aliases = (f"{name[0]}. {name.split(' ', 1)[1]}",) if person and rng.random() < 0.4 else ()
            writer.item(value, None if unlabelled else name, aliases=aliases, german=name if number == 0 else None)
            if fault == 5 and number == 0 and end is not None:  # ends before it starts
                start, end = end, start
            undated = fault == 3 and number == len(spans) - 1  # the current value without a start
            last = number == len(spans) - 1
            unknown_end = fault == 16 and number == len(spans) - 2  # the previous value ended on an unknown day
            rank = "PreferredRank" if end is None else "NormalRank"
            if fault == 18 and last:  # the current value's term is scheduled to end: still current
                end = SCHEDULED_END
            writer.statement(
                qid,
                prop,
                number,
                f"wd:{value}",
                start=None if undated else start,
                end=None if unknown_end else end,
                rank=rank,
                end_unknown=unknown_end,
                end_none=fault == 17 and last,  # the current value: an end of "no value"
            )
            if fault == 2 and number == 0:  # an undated repeat of a dated value: dropped, the fact kept
                writer.statement(qid, prop, 90, f"wd:{value}")
        if fault == 2:  # a deprecated claim: never an answer
            vandal = ids()
            writer.item(vandal, "Vandal" + MADE_UP)
            writer.statement(qid, prop, 91, f"wd:{vandal}", start=WikidataDate(year=2024), rank="DeprecatedRank")
        if fault == 4:  # an "unknown value": skipped
            writer.statement(qid, prop, 92, some_value(qid, prop, "92"), start=WikidataDate(year=1990))


@functools.cache
def default_turtle() -> str:
    """The stand-in's default data: DyKnow's statements and the made-up subjects of every shipped template."""
    writer = _Writer()
    _dyknow(writer)
    ids = _Ids()
    for template in shipped_templates():
        asks_dyknow = template.subjects.include_dyknow is not None
        _made_up(writer, template, ids, 4 if asks_dyknow else MADE_UP_SUBJECTS, faults=not asks_dyknow)
    return writer.text()
