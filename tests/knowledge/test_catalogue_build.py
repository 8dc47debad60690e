"""``catalogue build`` against the WDQS stand-in (pyoxigraph over the default stand-in data), in process.

The stand-in holds DyKnow's real statements and made-up subjects with one fault each
(``chronoprobe.testing.wdqs_data``), so the counts below are hand-checked: each new-domain
template keeps 10 of its 20 made-up subjects and refuses the rest for one stated reason.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronoprobe.errors import ConfigError, DataError, EndpointError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.catalogue_build import BuildReport, build_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.templates import PropertyTemplate, resolve_templates, shipped_templates
from chronoprobe.knowledge.wikidata import USER_AGENT, WikidataClient
from chronoprobe.lenses.outdated.audit import AuditConfig, load_gold
from chronoprobe.testing.wdqs import Fault, StubWDQS

DAY = dt.date(2024, 5, 1)
NEW_DOMAIN_REFUSALS = {
    "unlabelled_subject": 1,
    "unlabelled_value": 1,
    "colliding_labels": 1,
    "contradictory": 2,
    "undated": 1,
    "no_current": 1,
    "unchanged": 1,
    "colliding_subject": 1,
}


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(scope="module")
def wdqs() -> Iterator[StubWDQS]:
    with StubWDQS() as server:
        yield server


@pytest.fixture(autouse=True)
def no_leftover_faults(wdqs: StubWDQS) -> Iterator[None]:
    wdqs.faults.clear()
    yield
    wdqs.faults.clear()


@pytest.fixture(scope="module")
def default_build(wdqs: StubWDQS, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildReport, int]:
    out = tmp_path_factory.mktemp("default") / "built"
    before = wdqs.count
    report = build_catalogue(shipped_templates(), out, endpoint=wdqs.url, today=DAY)
    return out, report, wdqs.count - before


def coaches(page_size: int = 4) -> PropertyTemplate:
    """club_head_coaches in pages of four subjects: five pages for its 19 selected subjects."""
    return resolve_templates(["club_head_coaches"])[0].model_copy(update={"page_size": page_size})


def client(url: str, sleeps: Sleeps, timeout_s: float = 5.0) -> WikidataClient:
    return WikidataClient(endpoint=url, timeout_s=timeout_s, max_retries=3, backoff_s=0.5, sleep=sleeps)


@pytest.mark.e2e
def test_the_default_set_gives_more_than_dyknow_in_at_least_ten_categories(default_build) -> None:
    out, report, requests = default_build
    facts = load_catalogue(out / "catalogue.json")
    snapshot = load_snapshot(str(out / "snapshot.json"))
    assert len(facts) == report.facts > 130
    assert len({f.category for f in facts}) == len(report.categories) >= 10
    assert set(snapshot.answers) == {f.fact_id for f in facts} and snapshot.retrieved == DAY
    assert all(f.template for f in facts)
    assert requests == sum(1 + t.pages for t in report.templates)  # one selection and its pages per template
    by_template = Counter(f.template for f in facts)
    for template in shipped_templates():  # what each template says it gives on the stand-in
        assert by_template[template.name] == template.stand_in_facts, template.name
    config = AuditConfig(facts=out / "catalogue.json", snapshot=str(out / "snapshot.json"))
    assert len(load_gold(config)[0]) == len(facts)


def test_dyknow_facts_merge_into_one_fact_each_with_their_real_answers(default_build) -> None:
    out, report, _ = default_build
    facts = {f.fact_id: f for f in load_catalogue(out / "catalogue.json")}
    built = load_snapshot(str(out / "snapshot.json"))
    shipped = load_snapshot(None)
    assert report.dyknow_facts == 130 and report.dyknow_left_out == 0
    assert len({(f.subject_qid, f.property) for f in facts.values()}) == len(facts)  # subject + property: one fact

    def key(s):
        return (s.label, str(s.start), str(s.end), str(s.point_in_time))

    for dyknow in load_catalogue():
        merged = facts[dyknow.fact_id]
        assert merged.model_copy(update={"template": None}) == dyknow  # DyKnow's id, category and prompts
        assert sorted(map(key, built.answers[dyknow.fact_id].statements)) == sorted(
            map(key, shipped.answers[dyknow.fact_id].statements)
        )
        assert all(s.qid for s in built.answers[dyknow.fact_id].statements)
    assert facts["countries_byGDP/Italy/President of Italy"].template == "heads_of_state"


def test_the_report_says_what_each_template_kept_and_why_it_refused_the_rest(default_build) -> None:
    out, report, _ = default_build
    entries = {t.name: t for t in report.templates}
    coaches = entries["club_head_coaches"]
    assert (coaches.selected, coaches.subjects, coaches.kept, coaches.merged_dyknow) == (19, 19, 10, 0)
    assert coaches.dropped == NEW_DOMAIN_REFUSALS
    assert coaches.statements_dropped == {"unknown_value": 1, "undated": 2}
    assert all(len(examples) == count for why, count in coaches.dropped.items() for examples in [coaches.examples[why]])
    heads = entries["heads_of_state"]
    assert (heads.dyknow_asked, heads.merged_dyknow, heads.kept, heads.dropped) == (46, 46, 4, {})
    assert heads.dyknow_kept_despite == {"unchanged": 5}  # DyKnow's single-holder countries stay, as in the paper
    answers = json.loads((out / "snapshot.json").read_text())["answers"]
    labels = {s["label"] for fact in answers.values() for s in fact["statements"]}
    assert not any(label.startswith("Vandal") for label in labels)  # the deprecated claim never comes back


def test_every_request_is_polite(default_build, wdqs: StubWDQS) -> None:
    assert all(seen.headers["User-Agent"] == USER_AGENT for seen in wdqs.requests)
    pages = [seen.query for seen in wdqs.requests if "VALUES ?subject {" in seen.query]
    assert pages and max(q.split("VALUES ?subject {")[1].split("}")[0].count("wd:Q") for q in pages) <= 50


@pytest.mark.e2e
def test_faults_through_a_paged_build_lose_nothing(wdqs: StubWDQS, tmp_path: Path) -> None:
    """429 with Retry-After, a page timing out, a truncated answer and an empty page: the same catalogue."""
    template = [coaches()]
    clean = tmp_path / "clean" / "built"
    build_catalogue(template, clean, endpoint=wdqs.url, today=DAY)
    wdqs.faults += [
        Fault.throttle(retry_after=7),  # the selection query
        Fault.passthrough(),
        Fault.slow(1.5),  # page 0 times out
        Fault.passthrough(),
        Fault.truncated(keep=300),  # page 1
        Fault.passthrough(),
        Fault.empty(),  # page 2
        Fault.passthrough(),
    ]
    sleeps = Sleeps()
    faulty = tmp_path / "faulty" / "built"
    before = wdqs.count
    with client(wdqs.url, sleeps, timeout_s=0.5) as wd:
        build_catalogue(template, faulty, endpoint=wdqs.url, client=wd, today=DAY)
    assert wdqs.count - before == 6 + 4  # six clean requests, four retried
    assert sleeps == [7.0, 0.5, 0.5, 0.5]  # Retry-After as asked, then backoff
    for name in ("catalogue.json", "snapshot.json", "report.json"):
        assert (faulty / name).read_text() == (clean / name).read_text(), name


def test_a_page_that_stays_empty_fails_and_keeps_what_it_fetched(wdqs: StubWDQS, tmp_path: Path) -> None:
    out = tmp_path / "built"
    wdqs.faults += [Fault.passthrough(), Fault.passthrough(), *[Fault.empty() for _ in range(4)]]
    with client(wdqs.url, Sleeps()) as wd, pytest.raises(EndpointError, match=r"empty page .* rerun to resume"):
        build_catalogue([coaches()], out, endpoint=wdqs.url, client=wd, today=DAY)
    assert sorted(p.name for p in (out / "pages" / "club_head_coaches").iterdir()) == [
        "page-00000.json",
        "subjects.json",
    ]
    assert not (out / "catalogue.json").exists()
    before = wdqs.count
    build_catalogue([coaches()], out, endpoint=wdqs.url, today=DAY)  # the rerun asks only what is missing
    assert wdqs.count - before == 4 and (out / "catalogue.json").is_file()


@pytest.mark.e2e
def test_limit_and_as_of(wdqs: StubWDQS, tmp_path: Path) -> None:
    templates = resolve_templates(["heads_of_state", "club_head_coaches"])
    report = build_catalogue(templates, tmp_path / "few", endpoint=wdqs.url, limit=3, today=DAY)
    assert [t.subjects for t in report.templates] == [3, 3]
    facts = load_catalogue(tmp_path / "few" / "catalogue.json")
    assert [f.fact_id for f in facts][:3] == [f.fact_id for f in load_catalogue() if f.property == "P35"][:3]
    then = build_catalogue(templates[:1], tmp_path / "then", endpoint=wdqs.url, as_of=dt.date(2015, 1, 1), today=DAY)
    snapshot = load_snapshot(str(tmp_path / "then" / "snapshot.json"))
    italy = snapshot.answers["countries_byGDP/Italy/President of Italy"]
    assert [s.label for s in italy.current()] == ["Giorgio Napolitano"]  # Mattarella began in 2015
    assert all(
        s.start and s.start.earliest() <= dt.date(2015, 1, 1) for a in snapshot.answers.values() for s in a.statements
    )
    assert snapshot.name == "catalogue-2024-05-01-as-of-2015-01-01" and then.as_of == dt.date(2015, 1, 1)
    assert snapshot.retrieved == dt.date(2015, 1, 1) and "retrieved 2024-05-01, as of 2015-01-01" in snapshot.source


@pytest.mark.e2e
def test_a_user_template_that_repeats_a_subject_and_property_adds_no_fact(wdqs: StubWDQS, tmp_path: Path) -> None:
    heads = resolve_templates(["heads_of_state"])[0]
    again = heads.model_copy(update={"name": "heads_again", "category": "heads_again"})
    report = build_catalogue([heads, again], tmp_path / "built", endpoint=wdqs.url, today=DAY)
    first, second = report.templates
    assert second.kept == 0 and second.dropped == {"duplicate": first.subjects}
    assert report.facts == first.kept + first.merged_dyknow


@pytest.mark.e2e
def test_the_out_folder_is_checked_before_any_request(wdqs: StubWDQS, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    before = wdqs.count
    with pytest.raises(ConfigError, match="not a catalogue build folder"):
        build_catalogue([coaches()], theirs, endpoint=wdqs.url)
    out = tmp_path / "built"
    build_catalogue([coaches()], out, endpoint=wdqs.url, today=DAY)
    requests = wdqs.count
    with pytest.raises(ConfigError, match=r"other settings \(limit differ\)"):
        build_catalogue([coaches()], out, endpoint=wdqs.url, limit=2)
    with pytest.raises(ConfigError, match=r"other settings \(templates differ\)"):
        build_catalogue([coaches(page_size=5)], out, endpoint=wdqs.url)
    assert wdqs.count == requests and (theirs / "notes.txt").read_text() == "mine" and before < requests


def test_a_failed_first_request_leaves_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "built"
    with (
        StubWDQS(always=Fault(status=400, body=b"MalformedQueryException")) as broken,
        pytest.raises(EndpointError, match="HTTP 400"),
    ):
        build_catalogue([coaches()], out, endpoint=broken.url)
    assert not out.exists()


def test_templates_that_give_nothing_write_nothing(wdqs: StubWDQS, tmp_path: Path) -> None:
    nothing = coaches().model_copy(update={"subjects": coaches().subjects.model_copy(update={"items": ("Q424242",)})})
    with pytest.raises(DataError, match="gave no fact"):
        build_catalogue([nothing], tmp_path / "built", endpoint=wdqs.url, today=DAY)
    assert not (tmp_path / "built" / "catalogue.json").exists()
