"""Validity qualifiers judged as Wikidata means them, through ``snapshot fetch`` and ``outdated run``.

Each row is one fact on a loopback SPARQL endpoint (the stand-in, pyoxigraph over Wikidata-shaped
RDF written here as WDQS holds it: ``pq:``/``pqv:`` with ``wikibase:timePrecision``, an "unknown
value" as a ``.well-known/genid/`` IRI, "no value" as the statement typed ``wdno:P582``), one answer
of a mock model that names one holder, and the verdict ``outdated run`` gives that answer against
the snapshot ``snapshot fetch`` saved. The snapshot's day is the day the test runs, so the dates
that must lie after it are computed from today. docs/knowledge.md ("Validity qualifiers") has the
same table with the reason for each row.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.cli.main import main
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock
from chronoprobe.testing.wdqs import StubWDQS
from chronoprobe.testing.wdqs_data import GENID, PREFIXES

pytestmark = pytest.mark.e2e

TODAY = dt.date.today()
LATER = TODAY + dt.timedelta(days=900)
"""A day after the snapshot's: a scheduled end, an announced start."""


@dataclass(frozen=True)
class Held:
    """One statement: its value's label and its qualifiers as (time literal, precision), or a shape's name."""

    label: str
    starts: tuple[tuple[str, int] | str, ...] = ()
    ends: tuple[tuple[str, int] | str, ...] = ()
    """Each end a time, ``"unknown"`` (somevalue) or ``"none"`` (novalue)."""
    point: tuple[str, int] | None = None
    rank: str = "NormalRank"


@dataclass(frozen=True)
class Case:
    name: str
    held: tuple[Held, ...]
    answer: str
    """The label the model names (the first paraphrase's subject is the case)."""
    verdict: str


def day(when: dt.date) -> tuple[str, int]:
    return f"{when.isoformat()}T00:00:00Z", 11


OLD, NEW = ("2010-01-01T00:00:00Z", 11), ("2016-05-01T00:00:00Z", 11)
CASES = [
    # --- the two the held-out check found, now as Wikidata means them
    Case(
        "end-unknown-value",
        (Held("Ann Former", (OLD,), ("unknown",)), Held("Bob Current", (NEW,))),
        "Ann Former",
        "outdated",  # 0.2: up-to-date (the genid IRI was read as no end)
    ),
    Case("end-scheduled-after-snapshot", (Held("Cleo Mandate", (OLD,), (day(LATER),)),), "Cleo Mandate", "up-to-date"),
    # --- right before, and kept
    Case(
        "end-no-value",
        (Held("Dan Past", (OLD,), (NEW,)), Held("Eve Open", (NEW,), ("none",), rank="PreferredRank")),
        "Eve Open",
        "up-to-date",
    ),
    Case(
        "end-no-value-predecessor",
        (Held("Dan Past", (OLD,), (NEW,)), Held("Eve Open", (NEW,), ("none",))),
        "Dan Past",
        "outdated",
    ),
    Case("no-end-qualifier", (Held("Fay Open", (OLD,)),), "Fay Open", "up-to-date"),
    Case(
        "end-day-precision",
        (Held("Gus Day", (OLD,), (("2019-06-30T00:00:00Z", 11),)), Held("Hal Next", (("2019-07-01T00:00:00Z", 11),))),
        "Gus Day",
        "outdated",
    ),
    Case(
        "end-month-precision",
        (Held("Ida Month", (OLD,), (("2019-06-01T00:00:00Z", 10),)), Held("Jo Next", (("2019-07-01T00:00:00Z", 11),))),
        "Ida Month",
        "outdated",
    ),
    Case(
        "end-year-precision-this-year",  # may already have passed on the snapshot's day: it has
        (Held("Kit Year", (OLD,), ((f"{TODAY.year}-01-01T00:00:00Z", 9),)), Held("Lou Next", (NEW,))),
        "Kit Year",
        "outdated",
    ),
    Case(
        "start-after-snapshot",  # an announced successor: named, the model knows the latest change
        (Held("Max Outgoing", (OLD,), (day(LATER),)), Held("Ned Incoming", (day(LATER),))),
        "Ned Incoming",
        "up-to-date",
    ),
    Case(
        "start-after-snapshot-predecessor",
        (Held("Max Outgoing", (OLD,), (day(LATER),)), Held("Ned Incoming", (day(LATER),))),
        "Max Outgoing",
        "up-to-date",  # 0.2: outdated (its end is after the snapshot's day)
    ),
    # --- the other shapes a catalogue meets
    Case(
        "several-ends-latest-kept",
        (
            Held("Oda Twice", (OLD,), (("2014-01-01T00:00:00Z", 11), ("2016-01-01T00:00:00Z", 11))),
            Held("Pia Next", (NEW,)),
        ),
        "Oda Twice",
        "outdated",
    ),
    Case(
        "several-starts-earliest-kept",
        (Held("Quin Old", (("2005-01-01T00:00:00Z", 11),), (OLD,)), Held("Ray Twice", (OLD, NEW))),
        "Ray Twice",
        "up-to-date",
    ),
    Case(
        "end-date-beside-unknown-value",
        (Held("Sam Both", (OLD,), (("2015-01-01T00:00:00Z", 11), "unknown")), Held("Tia Next", (NEW,))),
        "Sam Both",
        "outdated",
    ),
    Case(
        "preferred-but-ended",  # the qualifiers decide, not the rank
        (Held("Uma Preferred", (OLD,), (NEW,), rank="PreferredRank"), Held("Vic Normal", (NEW,))),
        "Vic Normal",
        "up-to-date",
    ),
    Case(
        "preferred-but-ended-itself",
        (Held("Uma Preferred", (OLD,), (NEW,), rank="PreferredRank"), Held("Vic Normal", (NEW,))),
        "Uma Preferred",
        "outdated",
    ),
    Case(
        "point-in-time-without-start",  # not an answer: nothing places it in a period
        (Held("Wim Point", point=("2020-01-01T00:00:00Z", 9)), Held("Xia Open", (NEW,))),
        "Wim Point",
        "irrelevant",
    ),
    Case(
        "start-unknown-value",  # not an answer, as a missing start
        (Held("Yan Unknown", ("unknown",)), Held("Zoe Open", (NEW,))),
        "Yan Unknown",
        "irrelevant",
    ),
    Case(
        "dates-before-year-1",  # WDQS's XSD 1.1 years: -0043 is 44 BCE
        (
            Held("Abe Consul", (("-0043-03-15T00:00:00Z", 11),), (("-0042-01-01T00:00:00Z", 9),)),
            Held("Bea Now", (NEW,)),
        ),
        "Abe Consul",
        "outdated",
    ),
    Case(
        "end-precision-century",  # 2000 at century precision: the 20th century, long past
        (Held("Cy Century", (("1950-01-01T00:00:00Z", 9),), (("2000-01-01T00:00:00Z", 7),)), Held("Di Now", (NEW,))),
        "Cy Century",
        "outdated",
    ),
    Case("start-precision-decade", (Held("Ed Decade", (("1990-01-01T00:00:00Z", 8),)),), "Ed Decade", "up-to-date"),
]


def _subject(index: int) -> str:
    return f"Q{800000 + index}"


def _time(subject: str, number: int, pid: str, time: tuple[str, int] | str, k: int) -> list[str]:
    if time == "unknown":  # WDQS: a skolem IRI for pq:, no pqv: node
        digest = hashlib.sha256(f"{subject}{number}{pid}{k}".encode()).hexdigest()[:32]
        return [f"pq:{pid} <{GENID}{digest}>"]
    if isinstance(time, str):  # "none": the statement is typed wdno:P582 instead
        return []
    stamp, precision = time
    node = f"wdv:{subject}-{number}-{pid}-{k}"
    return [
        f'pq:{pid} "{stamp}"^^xsd:dateTime',
        f"pqv:{pid} {node}",
        f'{node} wikibase:timeValue "{stamp}"^^xsd:dateTime ; wikibase:timePrecision "{precision}"^^xsd:integer',
    ]


def _turtle() -> str:
    lines, values = [PREFIXES], dict[str, str]()
    for index, case in enumerate(CASES):
        subject = _subject(index)
        lines.append(f'wd:{subject} rdfs:label "{case.name}"@en .')
        for number, held in enumerate(case.held):
            value = values.setdefault(held.label, f"Q{900000 + len(values)}")
            lines.append(f'wd:{value} rdfs:label "{held.label}"@en .')
            iri = f"wds:{subject}-{number}"
            kinds = "wikibase:Statement" + (" , wdno:P582" if "none" in held.ends else "")
            parts = [f"{iri} a {kinds}", f"wikibase:rank wikibase:{held.rank}", f"ps:P35 wd:{value}"]
            nodes = []
            qualifiers = [("P580", t) for t in held.starts] + [("P582", t) for t in held.ends]
            qualifiers += [("P585", held.point)] if held.point else []
            for k, (pid, time) in enumerate(qualifiers):
                triples = _time(subject, number, pid, time, k)
                parts += triples[:2]
                nodes += triples[2:]
            lines.append(f"wd:{subject} p:P35 {iri} .")
            lines.append(" ;\n    ".join(parts) + " .")
            lines += [f"{node} ." for node in nodes]
    return "\n".join(lines) + "\n"


def _catalogue(path: Path) -> Path:
    facts = [
        {
            "fact_id": f"qualifiers/{case.name}",
            "category": "qualifiers",
            "subject": case.name,
            "subject_qid": _subject(index),
            "property": "P35",
            "templates": [
                f"The holder in case {case.name} is",
                f"Case {case.name} is held by",
                f"Now case {case.name} has",
            ],
        }
        for index, case in enumerate(CASES)
    ]
    path.write_text(json.dumps({"name": "qualifiers", "facts": facts}), encoding="utf-8")
    return path


def _chronoprobe(patch: pytest.MonkeyPatch, *args: str) -> None:
    """``chronoprobe ARGS`` through the real ``main()``, which must succeed (its output stays with pytest)."""
    patch.setattr(sys, "argv", ["chronoprobe", *args])
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None), f"chronoprobe {' '.join(args)} exited {stopped.code}"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, list[str]], dict[str, Any]]]:
    """Fetch a snapshot of every case, then judge the mock's answers: the verdicts per case, and the snapshot file."""
    tmp = tmp_path_factory.mktemp("qualifiers")
    catalogue = _catalogue(tmp / "catalogue.json")
    answers = {f"case {case.name} ": case.answer for case in CASES}

    def reply(prompt: MockPrompt, params: DecodingParams) -> str:
        text = prompt.casefold() + " "
        return next((answer for key, answer in answers.items() if key in text), "I cannot say")  # its cutoff

    snapshot = tmp / "snapshots" / "qualifiers.json"
    register_mock("qualifiers", reply)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("CHRONOPROBE_HOME", str(tmp / "home"))
            with StubWDQS(turtle=_turtle()) as wdqs:
                fetch = ["--endpoint", wdqs.url, "--catalogue", str(catalogue), "--name", "qualifiers"]
                _chronoprobe(patch, "snapshot", "fetch", *fetch, "--output-dir", str(snapshot.parent))
            run = ["-m", "mock:qualifiers", "--facts", str(catalogue), "--snapshot", str(snapshot)]
            _chronoprobe(patch, "outdated", "run", *run, "--out", str(tmp / "run"), "--cache", str(tmp / "c.sqlite"))
    finally:
        unregister_mock("qualifiers")
    verdicts: dict[str, list[str]] = {}
    for line in (tmp / "run" / "responses.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        verdicts.setdefault(row["fact_id"].split("/", 1)[1], []).append(row["verdict"])
    yield verdicts, json.loads(snapshot.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_each_shape_is_judged_as_wikidata_means_it(case: Case, judged: tuple[dict[str, list[str]], Any]) -> None:
    verdicts, _ = judged
    assert verdicts[case.name] == [case.verdict] * 3


def test_the_snapshot_tells_an_unknown_end_from_no_end(judged: tuple[Any, dict[str, Any]]) -> None:
    _, snapshot = judged
    assert snapshot["format"] == 2
    ended = {s["label"]: s for s in snapshot["answers"]["qualifiers/end-unknown-value"]["statements"]}
    assert ended["Ann Former"]["end_unknown"] is True and "end" not in ended["Ann Former"]
    assert "end_unknown" not in ended["Bob Current"] and "end" not in ended["Bob Current"]
    both = {s["label"]: s for s in snapshot["answers"]["qualifiers/end-date-beside-unknown-value"]["statements"]}
    assert both["Sam Both"]["end"] == {"year": 2015, "month": 1, "day": 1} and "end_unknown" not in both["Sam Both"]
    century = snapshot["answers"]["qualifiers/end-precision-century"]["statements"][0]
    assert century["end"] == {"year": 2000, "precision": 7}
    consul = snapshot["answers"]["qualifiers/dates-before-year-1"]["statements"][0]
    assert (consul["start"], consul["end"]) == ({"year": -43, "month": 3, "day": 15}, {"year": -42})
