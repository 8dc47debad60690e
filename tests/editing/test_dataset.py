"""The editing dataset: DyKnow's file read and written unchanged, and built from a real (mock-model) outdated run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.errors import ChronoprobeError, ConfigError, DataError
from chronoprobe.knowledge.types import Statement, WikidataDate
from chronoprobe.lenses.editing.dataset import (
    BuiltDataset,
    build_from_run,
    dataset_text,
    dyknow_answer,
    group_counts,
    read_dataset,
    select_fact,
    write_dataset,
)
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, register_mock, unregister_mock

REPO = Path(__file__).resolve().parents[2]
DYKNOW_DATASETS = REPO.parent / "shared" / "data" / "dyknow" / "models_editing" / "editing_datasets"
FIXTURE = REPO / "tests" / "assets" / "editing_results" / "models_editing" / "editing_datasets" / "llama2-7b-chat"


# --- reading and writing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["gpt2-xl", "gpt-j-6B", "llama2-7b-chat", "Mistral-7B-Instruct-v0.1", "llama2-7b", "Mistral-7B-v0.1", "t5-3b"],
)
def test_dyknow_files_round_trip_byte_for_byte(model: str, tmp_path: Path) -> None:
    source = DYKNOW_DATASETS / model / "editing_dataset.json"
    if not source.is_file():
        pytest.skip("../shared/data (DyKnow's editing datasets) is not present")
    records = read_dataset(source)
    copy = tmp_path / "editing_dataset.json"
    write_dataset(copy, records)
    assert copy.read_bytes() == source.read_bytes()


def test_the_paper_counts_of_outdated_facts() -> None:
    if not DYKNOW_DATASETS.is_dir():
        pytest.skip("../shared/data (DyKnow's editing datasets) is not present")
    counts = group_counts(read_dataset(DYKNOW_DATASETS / "gpt2-xl" / "editing_dataset.json"))
    assert counts == {"Politicians": 35, "Teams": 10, "Positions": 9}  # Table 3, GPT-2


def test_the_fixture_round_trips(tmp_path: Path) -> None:
    records = read_dataset(FIXTURE / "editing_dataset.json")
    write_dataset(tmp_path / "again.json", records)
    assert read_dataset(tmp_path / "again.json") == records
    assert (
        json.loads(dataset_text(records))[0].keys()
        == json.loads((FIXTURE / "editing_dataset.json").read_text())[0].keys()
    )


def _row(**changes: object) -> dict[str, object]:
    row = json.loads((FIXTURE / "editing_dataset.json").read_text())[0]
    row.update(changes)
    return row


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([], "no facts to edit"),
        ({"prompt": "x"}, "expected a JSON list"),
        (
            [_row(subject="Nobody")],
            "row 0 (countries_byGDP/Aland/President of Aland): subject 'Nobody' is not in its prompt",
        ),
        ([_row(domain="planets")], "row 0 (planets/Aland/President of Aland): unknown domain 'planets'"),
        ([{k: v for k, v in _row().items() if k != "target"}], "missing field 'target'"),
        ([_row(answers=["Nora Newman |S: soon"])], "bad date 'soon'"),
        ([_row(), _row()], "row 1 (countries_byGDP/Aland/President of Aland): the same fact appears twice"),
        (["text"], "row 0 (?): expected an object"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_row(tmp_path: Path, rows: object, expected: str) -> None:
    path = tmp_path / "editing_dataset.json"
    path.write_text(json.dumps(rows))
    with pytest.raises(DataError) as raised:
        read_dataset(path)
    assert expected in str(raised.value) and "\n" not in str(raised.value)


def test_answers_are_written_as_dyknow_writes_them() -> None:
    statement = Statement(
        label="Portugal national association football team",
        start=WikidataDate(year=2003),
        point_in_time=WikidataDate(year=2021, month=6, day=27),
    )
    assert dyknow_answer(statement) == (
        "Portugal national association football team |S: +2003-00-00T00:00:00Z |P: +2021-06-27T00:00:00Z"
    )


def test_selection_rules() -> None:
    assert select_fact(["outdated", "irrelevant", "irrelevant"], "outdated") == (True, None)
    assert select_fact(["outdated", "up-to-date", "outdated"], "outdated") == (False, None)
    assert select_fact(["irrelevant"] * 3, "outdated") == (False, None)
    included, why = select_fact(["outdated", "ambiguous", "irrelevant"], "outdated")
    assert not included and why is not None and "ambiguous" in why
    assert select_fact(["irrelevant"] * 3, "not-up-to-date") == (True, None)
    assert select_fact(["ambiguous", "outdated", "irrelevant"], "not-up-to-date") == (True, None)
    assert select_fact(["up-to-date", "outdated", "outdated"], "not-up-to-date") == (False, None)


# --- building from a run ------------------------------------------------------------------------

GRC: dict[
    str, dict[str, dict[str, Any]]
] = {  # DyKnow's wording (a grc_generated.json), so DyKnow's subjects occur in the prompts
    "countries_byGDP": {
        "Italy": {
            "Prime Minister of Italy": {
                "questions": {
                    "generic": "The head of government of Italy is",
                    "contextualized": "The country Italy is governed by its Prime Minister of Italy,",
                    "rephrased_1": "The current Prime Minister of Italy is",
                    "rephrased_2": "The position of the Prime Minister of Italy is currently held by",
                },
                "answers": [
                    "Mario Draghi |S: +2021-02-13T00:00:00Z |E: +2022-10-22T00:00:00Z",
                    "Giorgia Meloni |S: +2022-10-22T00:00:00Z",
                ],
            }
        },
        "Japan": {
            "Prime Minister of Japan": {
                "questions": {
                    "generic": "The head of government of Japan is",
                    "contextualized": "The country Japan is governed by its Prime Minister of Japan,",
                    "rephrased_1": "The current Prime Minister of Japan is",
                    "rephrased_2": "The position of the Prime Minister of Japan is currently held by",
                },
                "answers": [
                    "Fumio Kishida |S: +2021-10-04T00:00:00Z",
                    "Yoshihide Suga |S: +2020-09-16T00:00:00Z |E: +2021-10-04T00:00:00Z",
                ],
            }
        },
    },
    "athletes_byPayment": {
        "Cristiano Ronaldo": {
            "questions": {
                "generic": "The current team of Cristiano Ronaldo is",
                "contextualized": "The football team Cristiano Ronaldo currently plays for is",
                "rephrased_1": "Cristiano Ronaldo is currently playing for",
                "rephrased_2": "The current football club of Cristiano Ronaldo is",
            },
            "answers": [
                "Juventus FC |S: +2018-00-00T00:00:00Z |E: +2021-08-26T00:00:00Z",
                "Portugal national association football team |S: +2003-00-00T00:00:00Z",
                "Al-Nassr |S: +2023-01-00T00:00:00Z",
                "Sporting CP |E: +2003-00-00T00:00:00Z",
            ],
        },
        "Lionel Messi": {
            "questions": {
                "generic": "The current team of Lionel Messi is",
                "contextualized": "The football team Lionel Messi currently plays for is",
                "rephrased_1": "Lionel Messi is currently playing for",
                "rephrased_2": "The current football club of Lionel Messi is",
            },
            "answers": [
                "Paris Saint-Germain F.C. |S: +2021-08-10T00:00:00Z |E: +2023-06-30T00:00:00Z",
                "Argentina national association football team |S: +2005-00-00T00:00:00Z",
                "Inter Miami CF |S: +2023-07-15T00:00:00Z",
            ],
        },
    },
    "companies_byRevenue": {
        "Amazon": {
            "questions": {
                "generic": "The current Chief Executive Officer of Amazon is",
                "rephrased_1": "The current CEO of Amazon is",
                "rephrased_2": "The CEO position at Amazon is currently held by",
                "rephrased_3": "The position of Chief Executive Officer at Amazon is currently held by",
            },
            "answers": [
                "Andy Jassy |S: +2021-07-06T00:00:00Z",
                "Jeff Bezos |S: +1996-05-00T00:00:00Z |E: +2021-07-05T00:00:00Z",
            ],
        }
    },
    "organizations": {
        "World Bank": {
            "chairperson": {
                "questions": {
                    "generic": "The chairperson of World Bank is",
                    "rephrased_1": "The current chairperson of World Bank is",
                    "rephrased_2": "The person who is currently the chairperson of World Bank is",
                    "rephrased_3": "The name of the current chairperson at World Bank is",
                },
                "answers": [
                    "Ajay Banga |S: +2023-06-02T00:00:00Z",
                    "David Malpass |S: +2019-04-09T00:00:00Z |E: +2023-06-01T00:00:00Z",
                ],
            }
        },
        "United Nations": {
            "general secretary": {
                "questions": {
                    "generic": "The general secretary of United Nations is",
                    "rephrased_1": "The current general secretary of United Nations is",
                    "rephrased_2": "The person who is currently the general secretary of United Nations is",
                    "rephrased_3": "The name of the current general secretary at United Nations is",
                },
                "answers": [
                    "Ana Able |S: +2023-01-01T00:00:00Z",
                    "Ben Both |S: +2023-02-01T00:00:00Z",
                    "Kofi Annan |S: +1997-01-01T00:00:00Z |E: +2006-12-31T00:00:00Z",
                ],
            }
        },
    },
}


def editing_answers(prompt: MockPrompt, params: DecodingParams) -> str:
    """Outdated on Italy, Ronaldo, Amazon, the UN and (one paraphrase) the World Bank; up to date on Japan."""
    asked = prompt.request
    for key, answer in [
        ("Italy", "Mario Draghi"),
        ("Japan", "Fumio Kishida"),
        ("Ronaldo", "Juventus FC"),
        ("Amazon", "Jeff Bezos"),
        ("United Nations", "Kofi Annan"),
        ("current chairperson of World Bank", "David Malpass"),
    ]:
        if key in asked:
            return answer
    return "Paris"


@pytest.fixture(scope="module")
def grc_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("grc-run")
    facts = tmp / "grc_generated.json"
    facts.write_text(json.dumps(GRC))
    register_mock("editing-dataset", editing_answers)
    try:
        run = cp.run(
            "outdated",
            models=["mock:editing-dataset", "mock:constant=Paris"],
            facts=facts,
            out=tmp / "run",
            cache=tmp / "calls.sqlite",
        )
    finally:
        unregister_mock("editing-dataset")
    yield run.path


@pytest.mark.e2e
def test_build_selects_dyknows_facts_in_dyknows_order(grc_run: Path) -> None:
    built = build_from_run(grc_run, model="mock:editing-dataset")
    assert isinstance(built, BuiltDataset)
    assert [r.fact_id for r in built.records] == [
        "companies_byRevenue/Amazon",
        "organizations/World Bank/chairperson",
        "countries_byGDP/Italy/Prime Minister of Italy",
        "athletes_byPayment/Cristiano Ronaldo",
    ]
    assert built.notes == []  # DyKnow's wording: every subject is in its prompt
    assert set(built.skipped) == {"organizations/United Nations/general secretary"}
    assert "2 current values" in built.skipped["organizations/United Nations/general secretary"]
    amazon, world_bank, italy, ronaldo = built.records
    assert (amazon.prompt_type, amazon.subject, amazon.target) == (
        "rephrased_2",
        "CEO position at Amazon",
        "Andy Jassy",
    )
    assert amazon.prompt == "The CEO position at Amazon is currently held by"
    assert (world_bank.prompt_type, world_bank.subject) == ("rephrased_3", "chairperson at World Bank")
    assert (italy.prompt_type, italy.subject, italy.target) == (
        "rephrased_2",
        "Prime Minister of Italy",
        "Giorgia Meloni",
    )
    assert italy.paraphrase_types == ["contextualized", "rephrased_1"]
    assert (ronaldo.prompt_type, ronaldo.subject, ronaldo.target) == ("rephrased_1", "Cristiano Ronaldo", "Al-Nassr")
    # every counted statement, as DyKnow writes it (the undated Sporting CP entry does not count)
    assert ronaldo.answers == [
        "Juventus FC |S: +2018-00-00T00:00:00Z |E: +2021-08-26T00:00:00Z",
        "Portugal national association football team |S: +2003-00-00T00:00:00Z",
        "Al-Nassr |S: +2023-01-00T00:00:00Z",
    ]
    assert ronaldo.questions == GRC["athletes_byPayment"]["Cristiano Ronaldo"]["questions"]


def test_not_up_to_date_adds_the_facts_with_only_irrelevant_answers(grc_run: Path) -> None:
    built = build_from_run(grc_run, model="mock:editing-dataset", select="not-up-to-date")
    ids = [r.fact_id for r in built.records]
    assert "athletes_byPayment/Lionel Messi" in ids and "countries_byGDP/Japan/Prime Minister of Japan" not in ids
    messi = built.records[ids.index("athletes_byPayment/Lionel Messi")]
    assert messi.target == "Inter Miami CF"  # the current national team is never the target


def test_the_built_dataset_reads_back(grc_run: Path, tmp_path: Path) -> None:
    built = build_from_run(grc_run, model="mock:editing-dataset")
    write_dataset(tmp_path / "editing_dataset.json", built.records)
    assert read_dataset(tmp_path / "editing_dataset.json") == built.records


def test_model_choice_errors(grc_run: Path) -> None:
    with pytest.raises(ConfigError, match="several models"):
        build_from_run(grc_run)
    with pytest.raises(ConfigError, match=r"its models are mock:editing-dataset, mock:constant=Paris"):
        build_from_run(grc_run, model="mock:other")
    constant = build_from_run(grc_run, model="mock:constant=Paris")
    assert constant.records == []  # "Paris" is irrelevant everywhere: nothing outdated


def test_not_an_outdated_run_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no run\.json"):
        build_from_run(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"lens": "recency", "config": {}}))
    with pytest.raises(ChronoprobeError, match="is a 'recency' run"):
        build_from_run(tmp_path)


@pytest.mark.e2e
def test_our_catalogue_wording_falls_back_to_the_subject_name(tmp_path: Path) -> None:
    register_mock("editing-catalogue", lambda prompt, params: "Mario Draghi")
    try:
        run = cp.run(
            "outdated", models="mock:editing-catalogue", limit=2, out=tmp_path / "run", cache=tmp_path / "c.sqlite"
        )
    finally:
        unregister_mock("editing-catalogue")
    built = build_from_run(run.path, select="not-up-to-date")
    assert built.records, built.skipped
    italy = built.records[0]
    assert italy.domain == "countries_byGDP" and italy.subject == "Italy" and italy.subject in italy.prompt
    assert any("Italy" in note and "not in the edit prompt" in note for note in built.notes)


@pytest.mark.e2e
def test_facts_of_a_built_catalogues_own_categories_are_skipped_by_name(tmp_path: Path) -> None:
    from chronoprobe.knowledge.catalogue_build import build_catalogue
    from chronoprobe.knowledge.templates import resolve_templates
    from chronoprobe.testing.wdqs import StubWDQS

    built = tmp_path / "built"
    with StubWDQS() as wdqs:
        build_catalogue(resolve_templates(["heads_of_government", "city_mayors"]), built, endpoint=wdqs.url, limit=3)
    run = cp.run(
        "outdated",
        models="mock:constant=Paris",
        facts=built / "catalogue.json",
        snapshot=str(built / "snapshot.json"),
        out=tmp_path / "run",
        cache=tmp_path / "c.sqlite",
    )
    dataset = build_from_run(run.path, select="not-up-to-date")
    assert dataset.records and {r.domain for r in dataset.records} == {"countries_byGDP"}
    city = [fact for fact in dataset.skipped if fact.startswith("city_mayors/")]
    assert len(city) == 2 and "is not one of DyKnow's" in dataset.skipped[city[0]]
