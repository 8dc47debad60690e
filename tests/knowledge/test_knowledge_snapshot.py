"""Snapshot save/load round trip, name resolution, diff, and the shipped DyKnow snapshot."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from chronoprobe.errors import DataError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import (
    DEFAULT_SNAPSHOT,
    diff_snapshots,
    list_snapshots,
    load_snapshot,
    save_snapshot,
    unused_name,
)
from chronoprobe.knowledge.types import FactAnswers, Snapshot, Statement, WikidataDate


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def d(text: str) -> WikidataDate:
    return WikidataDate.parse(text)


def snap(name: str, answers: dict[str, list[Statement]]) -> Snapshot:
    return Snapshot(
        name=name,
        retrieved=dt.date(2024, 1, 1),
        endpoint="https://query.wikidata.org/sparql",
        query_hash="h",
        answers={k: FactAnswers(fact_id=k, statements=tuple(v)) for k, v in answers.items()},
    )


MATTARELLA = Statement(
    label="Sergio Mattarella",
    qid="Q3956186",
    aliases=("Mattarella",),
    start=d("2015-02-03"),
    rank="preferred",
    statement_id="Q38-a",
)
NAPOLITANO = Statement(label="Giorgio Napolitano", qid="Q19939", start=d("2006-05-15"), end=d("2015-01-14"))


def test_round_trip_through_user_dir(home: Path) -> None:
    original = snap("mine", {"countries_byGDP/Italy/President of Italy": [MATTARELLA, NAPOLITANO]})
    original = original.model_copy(update={"warnings": {"x": "no statements"}})
    path = save_snapshot(original)
    assert path == home / "snapshots" / "mine.json"
    assert load_snapshot("mine") == original
    assert load_snapshot(str(path)) == original
    assert ("mine", path) in list_snapshots()


def test_user_snapshot_shadows_shipped_one(home: Path) -> None:
    own = snap(DEFAULT_SNAPSHOT, {"a/b": [MATTARELLA]})
    save_snapshot(own)
    assert load_snapshot(DEFAULT_SNAPSHOT) == own
    assert len(load_snapshot(None).answers) == 130  # None always means the shipped default
    assert dict(list_snapshots())[DEFAULT_SNAPSHOT].parent == home / "snapshots"


def test_save_into_explicit_dir(tmp_path: Path) -> None:
    path = save_snapshot(snap("x", {}), tmp_path / "out")
    assert path == tmp_path / "out" / "x.json"
    with pytest.raises(DataError, match="plain file name"):
        save_snapshot(snap("../evil", {}), tmp_path)


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(DataError, match=f"snapshot 'nope': not found \\(known: .*{DEFAULT_SNAPSHOT}"):
        load_snapshot("nope")
    with pytest.raises(DataError, match="snapshot file not found"):
        load_snapshot("/no/such/file.json")


def test_malformed_snapshot_names_file_and_fact(tmp_path: Path) -> None:
    good = snap("bad", {"a/b": [MATTARELLA], "c/d": [NAPOLITANO]}).model_dump(mode="json")
    good["answers"]["c/d"]["statements"][0]["start"] = {"year": "soon"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(good))
    with pytest.raises(DataError) as info:
        load_snapshot(str(path))
    assert str(info.value).startswith(f"{path} fact c/d: statements.0.start.year")
    good["answers"]["c/d"] = {"fact_id": "other", "statements": []}
    path.write_text(json.dumps(good))
    with pytest.raises(DataError, match="fact c/d: entry says fact_id 'other'"):
        load_snapshot(str(path))
    del good["answers"]["c/d"]
    del good["retrieved"]
    path.write_text(json.dumps(good))
    with pytest.raises(DataError, match=f"{path}: retrieved: Field required"):
        load_snapshot(str(path))
    path.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        load_snapshot(str(path))


def test_diff_hand_made_snapshots() -> None:
    renzi = Statement(label="Matteo Renzi", start=d("2014-02-22"), end=d("2016-12-12"))
    gentiloni_open = Statement(label="Paolo Gentiloni", start=d("2016-12-12"))
    gentiloni_closed = Statement(label="Paolo Gentiloni", start=d("2016-12-12"), end=d("2018-06-01"))
    conte = Statement(label="Giuseppe Conte", start=d("2018-06-01"))
    old = snap("2017", {"pm": [renzi, gentiloni_open], "ps": [MATTARELLA, NAPOLITANO], "gone": []})
    new = snap("2019", {"pm": [renzi, gentiloni_closed, conte], "ps": [NAPOLITANO, MATTARELLA], "fresh": []})
    diff = diff_snapshots(old, new)
    assert [f.fact_id for f in diff.facts] == ["pm"]  # order of statements does not matter
    pm = diff.facts[0]
    assert pm.old_current == ("Paolo Gentiloni",) and pm.new_current == ("Giuseppe Conte",)
    assert pm.current_changed
    assert {s.label for s in pm.added} == {"Paolo Gentiloni", "Giuseppe Conte"}
    assert pm.added[0].end is not None or pm.added[1].end is not None
    assert [s.label for s in pm.removed] == ["Paolo Gentiloni"] and pm.removed[0].end is None
    assert diff.only_in_old == ["gone"] and diff.only_in_new == ["fresh"]
    assert [f.fact_id for f in diff.changed_current] == ["pm"]
    assert diff_snapshots(new, new).facts == []


def test_diff_lists_statement_changes_without_current_change() -> None:
    old = snap("a", {"ps": [MATTARELLA]})
    new = snap("b", {"ps": [MATTARELLA, NAPOLITANO]})
    diff = diff_snapshots(old, new)
    assert len(diff.facts) == 1 and not diff.facts[0].current_changed
    assert diff.changed_current == []


def test_shipped_snapshot_matches_catalogue() -> None:
    shipped = load_snapshot(None)
    assert shipped.name == DEFAULT_SNAPSHOT
    assert shipped.retrieved == dt.date(2023, 12, 18)
    # provenance names DyKnow's file, not a Wikidata endpoint chronoprobe never queried for it
    assert "wikidata.org" not in shipped.endpoint and "grc_generated.json" in shipped.endpoint
    assert "grc_generated.json" in shipped.source and "1182dd8" in shipped.source
    assert "Wikidata as of 2023-12-18" in shipped.source and shipped.query_hash == "-"
    assert "CC0" in shipped.license
    catalogue_ids = [fact.fact_id for fact in load_catalogue()]
    assert len(shipped.answers) == 130
    assert set(shipped.answers) == set(catalogue_ids)
    statements = [s for answers in shipped.answers.values() for s in answers.statements]
    assert len(statements) == 1147  # 1151 in the DyKnow file minus the 4 without a start
    assert all(s.start is not None for s in statements)
    italy = shipped.answers["countries_byGDP/Italy/Prime Minister of Italy"]
    assert [s.label for s in italy.current()] == ["Giorgia Meloni"]
    assert [s.label for s in italy.current(dt.date(2019, 1, 1))] == ["Giuseppe Conte"]
    ronaldo = shipped.answers["athletes_byPayment/Cristiano Ronaldo"]
    portugal = next(s for s in ronaldo.statements if s.label.startswith("Portugal national association"))
    assert portugal.point_in_time == WikidataDate(year=2021, month=6, day=27) and portugal.end is None
    nassr = next(s for s in ronaldo.statements if s.label == "Al-Nassr")
    assert nassr.start == WikidataDate(year=2023, month=1)
    # open-ended answers: club and national team; the latest start: the club only
    assert sorted(s.label for s in ronaldo.current()) == ["Al-Nassr", portugal.label]
    assert ronaldo.latest() == (nassr,)
    assert sum(len(a.current()) > 1 for a in shipped.answers.values()) == 8
    # every fact has at least one current answer as of the retrieval date
    assert all(answers.current() for answers in shipped.answers.values())


def test_diff_falls_back_to_labels_when_qids_are_missing() -> None:
    unlabelled = MATTARELLA.model_copy(update={"qid": None, "label": "sergio mattarella"})
    assert diff_snapshots(snap("a", {"ps": [unlabelled]}), snap("b", {"ps": [MATTARELLA]})).facts == []
    renamed = MATTARELLA.model_copy(update={"label": "S. Mattarella"})
    # same QID and dates: a relabelled value is the same statement and the same current answer
    assert diff_snapshots(snap("a", {"ps": [MATTARELLA]}), snap("b", {"ps": [renamed]})).facts == []


def test_existing_snapshot_is_never_overwritten_silently(home: Path) -> None:
    good = snap("wikidata-2024-01-01", {"countries_byGDP/Italy/President of Italy": [MATTARELLA]})
    path = save_snapshot(good)
    before = path.read_bytes()
    empty = snap("wikidata-2024-01-01", {"countries_byGDP/Italy/President of Italy": []})
    with pytest.raises(DataError, match=r"already exists; refusing to overwrite it \(use --replace"):
        save_snapshot(empty)
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left behind
    assert unused_name("wikidata-2024-01-01") == "wikidata-2024-01-01-2"
    assert unused_name("fresh") == "fresh"
    save_snapshot(empty, replace=True)
    assert load_snapshot("wikidata-2024-01-01") == empty


@pytest.mark.parametrize(
    ("name", "problem"),
    [("x" * 300, "300 characters long"), ("a\tb", "control characters"), ("../up", "plain file name")],
)
def test_bad_snapshot_names_are_data_errors(name: str, problem: str) -> None:
    with pytest.raises(DataError, match=problem):
        save_snapshot(snap(name, {"a/b": [MATTARELLA]}))


OLD_FORMAT = {  # a snapshot as 0.2 wrote it: no "format" key; an end of "unknown value" came out as no end
    "name": "old",
    "retrieved": "2024-03-01",
    "endpoint": "https://query.wikidata.org/sparql",
    "query_hash": "h",
    "answers": {
        "f": {
            "fact_id": "f",
            "statements": [
                {"label": "Ann", "start": {"year": 2010}},
                {"label": "Bob", "start": {"year": 2016, "month": 5}, "end": {"year": 2027, "month": 1, "day": 1}},
            ],
        }
    },
}


def test_a_snapshot_without_a_format_is_read_as_version_1_with_its_meaning(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(OLD_FORMAT))
    old = load_snapshot(str(path))
    assert old.format == 1
    ann, bob = old.answers["f"].statements
    assert bob.end is not None and not bob.ended_by(old.retrieved)
    assert not ann.has_end and ann.end_unknown is None  # version 1 cannot tell "no end" from "unknown": no end
    assert old.answers["f"].retrieved == dt.date(2024, 3, 1)
    assert [s.label for s in old.answers["f"].current()] == ["Ann", "Bob"]  # Bob's term ends after the snapshot's day
    saved = json.loads(save_snapshot(old, tmp_path / "again").read_text())
    assert saved["format"] == 1 and "retrieved" not in saved["answers"]["f"]


def test_a_new_snapshot_is_version_2_and_round_trips_an_unknown_end(tmp_path: Path) -> None:
    ended = Statement(label="Ann", start=d("+2010-00-00T00:00:00Z"), end_unknown=True)
    coarse = Statement(label="Cy", start=WikidataDate(year=1990, precision=8))
    path = save_snapshot(snap("new", {"f": [ended, coarse]}), tmp_path)
    text = json.loads(path.read_text())
    assert text["format"] == 2
    assert text["answers"]["f"]["statements"][0] == {
        "label": "Ann",
        "aliases": [],
        "start": {"year": 2010},
        "end_unknown": True,
        "rank": "normal",
    }
    back = load_snapshot(str(path))
    assert back.answers["f"].statements == (ended, coarse) and back.format == 2
    assert [s.label for s in back.answers["f"].current()] == ["Cy"]


@pytest.mark.parametrize(
    ("version", "problem"),
    [
        (3, r"snapshot format 3 is newer than this chronoprobe reads \(1 to 2\); upgrade it"),
        ("2", "not a snapshot format"),
    ],
)
def test_a_snapshot_of_an_unknown_format_is_refused(tmp_path: Path, version: object, problem: str) -> None:
    path = tmp_path / "future.json"
    path.write_text(json.dumps({**OLD_FORMAT, "format": version}))
    with pytest.raises(DataError, match=problem) as refused:
        load_snapshot(str(path))
    assert refused.value.where == str(path)


def test_an_end_date_and_an_unknown_end_on_one_statement_are_refused(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(OLD_FORMAT))
    broken["answers"]["f"]["statements"][1]["end_unknown"] = True
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(DataError, match="end_unknown is set beside an end date"):
        load_snapshot(str(path))
