"""A world that moves on, and a model that knows it as it was.

The WDQS stand-in (:mod:`chronoprobe.testing.wdqs`) serves the shipped DyKnow snapshot as Wikidata
RDF by default. ``World.move_on`` changes it between two fetches: the fact's current holders get an
end date and a successor takes over. ``knower`` is a mock handler that answers every paraphrase with
the fact's current answer in the shipped snapshot (with ``every=2``, only every second fact; an
earlier holder, an outdated answer, for the rest).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.testing import register_mock

PREFIXES = """PREFIX wd: <http://www.wikidata.org/entity/>
PREFIX wds: <http://www.wikidata.org/entity/statement/>
PREFIX p: <http://www.wikidata.org/prop/>
PREFIX ps: <http://www.wikidata.org/prop/statement/>
PREFIX pq: <http://www.wikidata.org/prop/qualifier/>
PREFIX pqv: <http://www.wikidata.org/prop/qualifier/value/>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""


class World:
    """The shipped facts and who holds each."""

    def __init__(self) -> None:
        self.facts = {f.fact_id: f for f in load_catalogue()}
        self.snapshot = load_snapshot()
        self.successors = 0

    def current(self, fact_id: str) -> list[str]:
        return [s.label for s in self.snapshot.answers[fact_id].current()]

    def move_on(self, store: Any, fact_id: str, successor: str, on: dt.date) -> None:
        """In the stand-in's ``store``: the fact's current holders leave on ``on`` and ``successor`` takes over."""
        fact = self.facts[fact_id]
        day = f'"{on.isoformat()}T00:00:00Z"^^xsd:dateTime'
        subject, prop = f"wd:{fact.subject_qid}", fact.property
        for label in self.current(fact_id):
            escaped = label.replace("\\", "\\\\").replace('"', '\\"')
            store.update(
                PREFIXES
                + f"""INSERT {{ ?s pq:P582 {day} }}
WHERE {{ {subject} p:{prop} ?s . ?s ps:{prop} ?v . ?v rdfs:label "{escaped}"@en .
         FILTER NOT EXISTS {{ ?s pq:P582 ?any }} }}"""
            )
        self.successors += 1
        value, statement = f"wd:Q8999999{self.successors:02d}", f"wds:successor-{self.successors}"
        store.update(
            PREFIXES
            + f"""INSERT DATA {{
  {subject} p:{prop} {statement} .
  {statement} ps:{prop} {value} ; wikibase:rank wikibase:PreferredRank ; pq:P580 {day} .
  {value} rdfs:label "{successor}"@en .
}}"""
        )


def knower(world: World, *, every: int = 1):
    """A mock handler answering each paraphrase with the fact's current answer in the shipped snapshot."""
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
