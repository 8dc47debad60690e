"""The shipped DyKnow snapshot as Wikidata RDF, served by the loopback SPARQL stand-in, and a model that knows it.

``world_store()`` turns every fact of the shipped catalogue and snapshot into the statements the
WDQS query reads (``p:``/``ps:``/``pq:`` with precisions, English labels; made-up QIDs, since the
shipped snapshot has labels only). ``move_on`` changes the world between two fetches: the fact's
current holder gets an end date and a new one takes over. ``register_knower`` registers a mock
model that answers every paraphrase with the fact's current answer in the shipped snapshot.
"""

from __future__ import annotations

import datetime as dt

import pyoxigraph

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.types import WikidataDate
from chronoprobe.testing import register_mock

PREFIXES = """@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wds: <http://www.wikidata.org/entity/statement/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix ps: <http://www.wikidata.org/prop/statement/> .
@prefix pq: <http://www.wikidata.org/prop/qualifier/> .
@prefix pqv: <http://www.wikidata.org/prop/qualifier/value/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""


def _time(date: WikidataDate) -> tuple[str, int]:
    precision = 11 if date.day else 10 if date.month else 9
    return f"{date.year:04d}-{date.month or 1:02d}-{date.day or 1:02d}T00:00:00Z", precision


def _qualifier(statement: str, prop: str, date: WikidataDate) -> str:
    value, precision = _time(date)
    node = f"<http://www.wikidata.org/value/{statement}-{prop}>"
    return (
        f'wds:{statement} pq:{prop} "{value}"^^xsd:dateTime ; pqv:{prop} {node} .\n'
        f'{node} wikibase:timeValue "{value}"^^xsd:dateTime ; wikibase:timePrecision {precision} .\n'
    )


SPARQL_PREFIXES = PREFIXES.replace("@prefix", "PREFIX").replace(" .\n", "\n")


class World:
    """The facts and who holds each, with the label -> QID table the RDF uses."""

    def __init__(self) -> None:
        self.facts = {f.fact_id: f for f in load_catalogue()}
        self.snapshot = load_snapshot()
        self.qids: dict[str, str] = {}
        self.statements = 0

    def qid(self, label: str) -> str:
        return self.qids.setdefault(label, f"Q{9_000_000 + len(self.qids)}")

    def statement(self, fact_id: str, label: str, start: WikidataDate | None, end: WikidataDate | None) -> str:
        fact = self.facts[fact_id]
        self.statements += 1
        name = f"S{self.statements}"
        value = self.qid(label)
        escaped = label.replace("\\", "\\\\").replace('"', '\\"')
        text = (
            f"wd:{fact.subject_qid} p:{fact.property} wds:{name} .\n"
            f"wds:{name} ps:{fact.property} wd:{value} ; wikibase:rank wikibase:NormalRank .\n"
            f'wd:{value} rdfs:label "{escaped}"@en .\n'
        )
        if start is not None:
            text += _qualifier(name, "P580", start)
        if end is not None:
            text += _qualifier(name, "P582", end)
        return text

    def turtle(self) -> str:
        parts = [PREFIXES]
        for fact_id, answers in self.snapshot.answers.items():
            if fact_id in self.facts:
                parts += [self.statement(fact_id, s.label, s.start, s.end) for s in answers.statements]
        return "".join(parts)

    def store(self) -> pyoxigraph.Store:
        store = pyoxigraph.Store()
        store.load(self.turtle().encode("utf-8"), format=pyoxigraph.RdfFormat.TURTLE)
        return store

    def current(self, fact_id: str) -> list[str]:
        return [s.label for s in self.snapshot.answers[fact_id].current()]

    def move_on(self, store: pyoxigraph.Store, fact_id: str, successor: str, on: dt.date) -> None:
        """The fact's current holders leave office on ``on``, and ``successor`` takes over."""
        fact = self.facts[fact_id]
        end = WikidataDate(year=on.year, month=on.month, day=on.day)
        value, _ = _time(end)
        for label in self.current(fact_id):
            store.update(
                SPARQL_PREFIXES
                + f"""INSERT {{ ?s pq:P582 "{value}"^^xsd:dateTime }}
WHERE {{ wd:{fact.subject_qid} p:{fact.property} ?s . ?s ps:{fact.property} wd:{self.qid(label)} .
         FILTER NOT EXISTS {{ ?s pq:P582 ?any }} }}"""
            )
        addition = self.statement(fact_id, successor, end, None)
        store.update(SPARQL_PREFIXES + "INSERT DATA {\n" + addition + "}")


def knower(world: World, *, every: int = 1):
    """A mock handler that answers each paraphrase with the fact's current answer in the shipped snapshot;
    with ``every=2``, only for every second fact, and an earlier holder (an outdated answer) for the rest."""
    answers = {}
    for index, (fact_id, fact) in enumerate(world.facts.items()):
        statements = world.snapshot.answers[fact_id].statements if fact_id in world.snapshot.answers else ()
        current = world.current(fact_id) if statements else []
        past = [s.label for s in statements if s.end is not None and s.label not in current]
        chosen = current if index % every == 0 or not past else past
        for template in fact.templates:
            answers[template] = chosen[0] if chosen else "I do not know"

    def answer(prompt, params):  # the request quotes the paraphrase it completes
        found = [t for t in answers if t in prompt.request]
        return answers[max(found, key=len)] if found else "I do not know"

    return answer


def register_knower(name: str, world: World, *, every: int = 1) -> None:
    """``mock:<name>`` answering as :func:`knower` does."""
    register_mock(name, knower(world, every=every))
