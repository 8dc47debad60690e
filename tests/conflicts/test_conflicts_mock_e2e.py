"""``chronoprobe conflicts run`` end to end on mock models: DynamicQA and MuLan through both methodologies,
every number known from the handlers' answers."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockPrompt, MockReply, register_mock, unregister_mock
from chronoprobe.testing.mock import mean_distribution, split_tokens, token_id
from cli_driver import run_ok

pytestmark = pytest.mark.e2e

ASSETS = Path(__file__).resolve().parents[1] / "assets"
MEMORY = [0.9, 0.1]
FROM_CONTEXT = [0.2, 0.8]
KL = 0.2 * math.log(0.2 / 0.9) + 0.8 * math.log(0.8 / 0.1)  # CP when the context moves the answer
SE_ONE_CLUSTER = -(math.log(0.9) + math.log(3))  # three equal samples, every token at p = 0.9

# question keyword -> (answer from memory, answers a context may hold, follows the context)
DYNAMICQA = {
    "capital of France": ("Paris", ("Paris", "Lyon"), True),
    "Albert Einstein": ("Ulm", ("Ulm", "Munich"), False),
    "Lionel Messi": ("association football", ("association football", "basketball"), True),
    "Jaws": ("Steven Spielberg", ("Steven Spielberg", "George Lucas"), False),
    "Pluto": ("planet", ("dwarf planet", "moon"), True),
}


def dynamicqa_answers(prompt: MockPrompt, params: DecodingParams) -> MockReply:
    asked = prompt.request
    [(memory, candidates, follows)] = [v for k, v in DYNAMICQA.items() if k in asked]
    answer = memory
    if follows and "Context:" in asked:
        context = asked.split("Context:", 1)[1].lower()
        answer = next(c for c in candidates if c.lower() in context)
    return MockReply(answer, distribution=MEMORY if answer == memory else FROM_CONTEXT)


def mulan_answers(prompt: MockPrompt, params: DecodingParams) -> str | MockReply:
    """Knows France's capital (and follows an update of it), not Germany's; names a border of both
    countries (of Germany's without confidence) and ignores updates of them; knows both players' clubs
    and follows updates of them."""
    prefix, update = prompt.prompt.answer_prefix, "Imagine that" in prompt.request
    if "capital" in prefix:
        return " Berlin." if update else (" Paris." if "France" in prefix else " Munich.")
    if "Messi" in prefix or "Ronaldo" in prefix:
        own, other = ("Inter Miami", "Al Nassr") if "Messi" in prefix else ("Al Nassr", "Inter Miami")
        return f" {other}." if update and other in prompt.request else f" {own}."
    return " Spain." if prefix.startswith("France") else MockReply(" France", prob=0.3)


MULAN_CONTEXTS = {
    "France": ("Paris", "Berlin"),
    "Albert Einstein": ("Switzerland", "Austria"),
    "Microsoft": ("Satya Nadella", "Tim Cook"),
}


def context_follower(prompt: MockPrompt, params: DecodingParams) -> str:
    asked = prompt.request
    [(answer, substitute)] = [v for k, v in MULAN_CONTEXTS.items() if k in asked]
    if "Context:" in asked and substitute in asked:
        return substitute
    return answer


@pytest.fixture(autouse=True)
def mocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    for name, handler in (("dq-e2e", dynamicqa_answers), ("mulan-e2e", mulan_answers), ("follower", context_follower)):
        register_mock(name, handler)
    yield
    for name in ("dq-e2e", "mulan-e2e", "follower"):
        unregister_mock(name)


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    return run_ok(monkeypatch, capsys, *args)


def read_rows(folder: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]


def test_dynamicqa_through_dynamicqa(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dq"
    run_cli(
        monkeypatch,
        capsys,
        "conflicts",
        "run",
        "dynamicqa",
        "--data",
        str(ASSETS / "dynamicqa_small"),
        "--model",
        "mock:dq-e2e",
        "--judge",
        "exact",
        "--samples",
        "3",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    )
    rows = {r["item_id"]: r for r in read_rows(out)}
    cp = {item: row["cp"] for item, row in rows.items()}
    assert cp == pytest.approx(
        {
            "dynamicqa/static/1/true": 0.0,
            "dynamicqa/static/1/cf": KL,
            "dynamicqa/static/2/true": 0.0,
            "dynamicqa/static/2/cf": 0.0,
            "dynamicqa/temporal/3/true": 0.0,
            "dynamicqa/temporal/3/cf": KL,
            "dynamicqa/temporal/4/true": 0.0,
            "dynamicqa/temporal/4/cf": 0.0,
            "dynamicqa/disputed/5/true": KL,
            "dynamicqa/disputed/5/cf": KL,
        },
        abs=1e-6,
    )
    assert rows["dynamicqa/static/1/cf"]["answers_context"] == ["Lyon"] * 3
    assert rows["dynamicqa/disputed/5/cf"]["answers_no_context"] == ["planet"] * 3
    assert all(r["se_context"] == pytest.approx(SE_ONE_CLUSTER) for r in rows.values())
    persuaded = {i: r["persuaded"] for i, r in rows.items() if r["counterfactual"]}
    stubborn = {i: r["stubborn"] for i, r in rows.items() if r["counterfactual"]}
    assert persuaded == {
        "dynamicqa/static/1/cf": True,
        "dynamicqa/static/2/cf": False,
        "dynamicqa/temporal/3/cf": True,
        "dynamicqa/temporal/4/cf": False,
        "dynamicqa/disputed/5/cf": True,
    }
    assert stubborn == {
        "dynamicqa/static/1/cf": False,
        "dynamicqa/static/2/cf": True,
        "dynamicqa/temporal/3/cf": False,
        "dynamicqa/temporal/4/cf": True,
        "dynamicqa/disputed/5/cf": False,
    }

    result = json.loads((out / "summary.json").read_text())
    summary = result["summary"]["mock:dq-e2e"]
    for fact_class in ("static", "temporal"):  # one persuadable fact and one stubborn fact each
        s = summary[fact_class]
        assert (s["facts"], s["items"]) == (2, 4)
        assert s["accuracy_context"] == pytest.approx(0.75) and s["accuracy_no_context"] == pytest.approx(1.0)
        assert s["cp"] == pytest.approx(KL / 4) and s["cp_counterfactual"] == pytest.approx(KL / 2)
        assert (s["persuaded_pct"], s["stubborn_pct"]) == pytest.approx((50.0, 50.0))
    disputed = summary["disputed"]
    assert disputed["cp"] == pytest.approx(KL) and disputed["accuracy_no_context"] is None
    assert (disputed["persuaded_pct"], disputed["stubborn_pct"]) == pytest.approx((100.0, 0.0))
    assert result["provenance"]["extra"]["distribution"]["mock:dq-e2e"].startswith("exact")
    assert result["provenance"]["models"][0]["revision"] == "mock"
    assert (out / "cp.png").stat().st_size > 1000
    assert "mock:dq-e2e" in (out / "report.md").read_text()


def test_mulan_through_mulan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # One relation per class with two facts each, so an update has another subject's answer to use.
    queries = tmp_path / "queries.jsonl"
    lines = (ASSETS / "mulan_queries.jsonl").read_text().splitlines()
    queries.write_text(
        "\n".join(line for line in lines if json.loads(line)["relation"] in {"P36", "P47", "P54"}) + "\n"
    )
    templates = tmp_path / "clean.json"
    templates.write_text(
        json.dumps(
            {
                "P36": {
                    "templates": [
                        "The capital city of [X] is [Y].",
                        "[X]'s capital city is [Y].",
                        "[X], whose the capital city is [Y].",
                        "[X] is governed from the capital city of [Y].",
                        "[X] with capital city in [Y].",
                    ]
                },
                "P47": {
                    "templates": [
                        "[X] shares border with [Y].",
                        "[X] shares a common border with [Y].",
                        "[X] borders with [Y].",
                        "[X] is on the border of [Y].",
                        "[X] is neighboring [Y].",
                    ]
                },
                "P54": {
                    "templates": [
                        "[X] plays with [Y].",
                        "[X] is a sport team member of [Y].",
                        "[X] is part of the sports roster for [Y].",
                        "[X] competes in sports for [Y].",
                        "[X] is a team member representing [Y].",
                    ]
                },
            }
        )
    )
    out = tmp_path / "mulan"
    run_cli(
        monkeypatch,
        capsys,
        "conflicts",
        "run",
        "mulan",
        "--data",
        str(queries),
        "--templates",
        str(templates),
        "--aliases-file",
        str(ASSETS / "mulan_aliases.jsonl"),
        "--model",
        "mock:mulan-e2e",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    )
    rows = read_rows(out)
    completions = [r for r in rows if r["kind"] == "completion"]
    assert len(completions) == 30
    by_fact: dict[str, set[tuple[Any, ...]]] = {}
    for r in completions:
        by_fact.setdefault(r["fact_id"], set()).add((r["prediction"], r["f1"], round(r["confidence"], 6)))
    assert by_fact == {
        "Q142_P36": {("Paris", 1.0, 0.9)},
        "Q183_P36": {("Munich", 0.0, 0.9)},
        "Q142_P47": {("Spain", 1.0, 0.9)},
        "Q183_P47": {("France", 1.0, 0.3)},
        "Q615_P54": {("Inter Miami", 1.0, 0.9)},
        "Q11571_P54": {("Al Nassr", 1.0, 0.9)},
    }
    updates = {r["fact_class"]: r for r in rows if r["kind"] == "update"}  # balanced: one memorised fact per class
    assert sorted(updates) == ["immutable-1", "immutable-N", "mutable"]
    assert (updates["immutable-1"]["new_object"], updates["immutable-1"]["success"]) == ("Berlin", True)
    assert updates["immutable-N"]["fact_id"] == "Q142_P47" and updates["immutable-N"]["success"] is False
    assert updates["immutable-N"]["new_object"] in {
        "Austria",
        "France",
        "Poland",
    }  # Germany's, sharing no word with Spain
    assert (
        updates["mutable"]["success"] is True and updates["mutable"]["prediction"] == updates["mutable"]["new_object"]
    )

    summary = json.loads((out / "summary.json").read_text())["summary"]["mock:mulan-e2e"]
    expected = {  # class: (F1 x100, confidence, memorised, update success)
        "immutable-1": (50.0, 0.9, 1, 1.0),
        "immutable-N": (100.0, 0.6, 1, 0.0),
        "mutable": (100.0, 0.9, 2, 1.0),
    }
    for fact_class, (f1, confidence, memorised, success) in expected.items():
        s = summary[fact_class]
        assert (s["queries"], s["empty_predictions"], s["memorised"], s["updates"]) == (10, 0, memorised, 1)
        assert (s["f1"], s["confidence"], s["update_success"]) == pytest.approx((f1, confidence, success))
    assert "Update success rate" in (out / "report.md").read_text()


def test_mulan_through_dynamicqa_with_derived_distributions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mulan-dq"
    run_cli(
        monkeypatch,
        capsys,
        "conflicts",
        "run",
        "mulan",
        "--methodology",
        "dynamicqa",
        "--data",
        str(ASSETS / "mulan_contexts.jsonl"),
        "--model",
        "mock:follower",
        "--judge",
        "exact",
        "--samples",
        "2",
        "--device",
        "cpu",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    )
    rows = {r["item_id"]: r for r in read_rows(out)}
    assert len(rows) == 6

    def derived(answer: str) -> np.ndarray:  # what the mock derives for an answer (64 ids, p = 0.9)
        tokens = split_tokens(answer)
        return mean_distribution([token_id(t, 64) for t in tokens], [0.9] * len(tokens), 64, 0.9).astype(np.float64)

    for row in rows.values():
        [(answer, substitute)] = [v for k, v in MULAN_CONTEXTS.items() if k in row["question"]]
        if row["counterfactual"]:
            p, q = derived(substitute), derived(answer)
            assert row["answers_context"] == [substitute] * 2 and row["persuaded"] is True
            assert row["cp"] == pytest.approx(float(np.sum(p * np.log(p / q))), rel=1e-4)
            assert row["cp"] > 0.1
        else:
            assert row["answers_context"] == [answer] * 2 and row["cp"] == pytest.approx(0.0, abs=1e-6)
    summary = json.loads((out / "summary.json").read_text())["summary"]["mock:follower"]
    for fact_class in ("immutable-1", "immutable-N", "mutable"):
        s = summary[fact_class]
        assert (s["facts"], s["items"], s["persuaded_pct"], s["stubborn_pct"]) == (1, 2, 100.0, 0.0)
        assert s["accuracy_context"] == pytest.approx(1.0) and s["accuracy_no_context"] == pytest.approx(1.0)
