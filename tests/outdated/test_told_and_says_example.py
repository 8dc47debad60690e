"""docs/outdated.md's example of what a model is told and what it says, built from the embedded SmolLM2 weights with
a Llama-3-shaped chat template (no Llama weights can be had offline), and the same run on two days of the machine's
clock: the same prompts and a rerun served whole from the call cache, unless the template keeps its own clock."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.lenses.outdated.claimed_cutoff import ask_cutoff
from chronoprobe.lenses.outdated.prompts import CUTOFF_QUESTIONS
from chronoprobe.models import chat_dates
from chronoprobe.testing.dated_template import smollm2_with_template

DOCS = Path(__file__).resolve().parents[2] / "docs" / "outdated.md"
ASKED = CUTOFF_QUESTIONS[2][0]


class _Frozen(dt.datetime):
    frozen_at = dt.datetime(2030, 3, 1, 9, 30)

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> _Frozen:
        return cls.fromtimestamp(cls.frozen_at.timestamp(), tz)


def freeze(monkeypatch: pytest.MonkeyPatch, day: dt.date) -> None:
    """The machine's clock reads ``day`` for transformers' ``strftime_now`` and for our own."""
    import transformers.utils.chat_template_utils as rendering

    moment = dt.datetime(day.year, day.month, day.day, 9, 30)
    monkeypatch.setattr(_Frozen, "frozen_at", moment)
    monkeypatch.setattr(rendering, "datetime", _Frozen)
    monkeypatch.setattr(chat_dates, "machine_now", lambda: moment)


def _said(block: dict[str, Any]) -> str:
    [answer] = [a for a in block["answers"] if a["question"] == ASKED]
    return f'"{" ".join(answer["answer"].split())}" -> {answer["parsed"] or "no date"}'


def example(folder: Path, tmp_path: Path) -> tuple[str, cp.Run]:
    """The docs' example text, and the default run it comes from."""
    cache = tmp_path / "example.sqlite"
    run = cp.run("outdated", f"llama3ish=hf:{folder}", limit=1, out=tmp_path / "ex", cache=cache, progress=False)
    header = run.rows[0].rendered_prompt.split("\n\n")[0]
    other = cp.model(f"llama3ish=hf:{folder}", cache=cache, template_date="2021-03-04")
    plain = cp.model("smollm2", cache=cache)
    told = json.loads((run.path / "summary.json").read_text())["models"]["llama3ish"]["claimed_cutoff"]
    lines = [
        "$ chronoprobe outdated run --model llama3ish=hf:<SmolLM2 with a Llama-3-shaped template> --limit 1",
        "the system turn of every prompt:",
        *(f"    {line}" for line in header.splitlines()),
        f'asked "{ASKED}":',
        f"    told 18 Dec 2023 (the default, the snapshot's day): {_said(told)}",
        f"    told 04 Mar 2021 (--template-date 2021-03-04): {_said(ask_cutoff(other))}",
        f"    SmolLM2's own template (it takes no date): {_said(ask_cutoff(plain))}",
    ]
    return "\n".join(lines), run


@pytest.mark.slow
def test_the_docs_example_is_what_smollm2_says_under_a_llama3_shaped_template(tmp_path: Path) -> None:
    folder = smollm2_with_template(tmp_path / "llama3ish")
    text, run = example(folder, tmp_path)
    [model] = run.provenance.models
    assert model.backend == "hf" and model.template_date == "2023-12-18"
    assert model.template_takes_date == ["date_string", "strftime_now", "Today Date", "Cutting Knowledge Date"]
    assert "Today Date: 18 Dec 2023" in text
    assert f"```text\n{text}\n```" in DOCS.read_text(encoding="utf-8"), f"docs/outdated.md should show:\n{text}"


def _prompts(out: Path) -> list[str]:
    return [json.loads(line)["rendered_prompt"] for line in (out / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_the_same_run_a_day_later_asks_the_same_prompts_and_loads_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = f"hf:{smollm2_with_template(tmp_path / 'llama3ish')}"
    cache = tmp_path / "calls.sqlite"
    runs = {}
    for name, day, choice in [
        ("as-of-1", dt.date(2030, 3, 1), "as-of"),
        ("as-of-2", dt.date(2030, 3, 2), "as-of"),
        ("own-1", dt.date(2030, 3, 1), "template"),
        ("own-2", dt.date(2030, 3, 2), "template"),
    ]:
        freeze(monkeypatch, day)
        runs[name] = cp.run("outdated", spec, limit=1, claimed_cutoff=False, template_date=choice, out=tmp_path / name,
                            cache=cache, progress=False)  # fmt: skip
    assert _prompts(tmp_path / "as-of-1") == _prompts(tmp_path / "as-of-2")
    assert all("Today Date: 18 Dec 2023\n" in p for p in _prompts(tmp_path / "as-of-1"))
    served = runs["as-of-2"].provenance.answers[spec]
    assert served.answers == served.from_cache == 3
    assert runs["as-of-2"].provenance.threads is not None and runs["as-of-2"].provenance.threads.torch == []  # no load
    assert all("Today Date: 01 Mar 2030\n" in p for p in _prompts(tmp_path / "own-1"))
    assert all("Today Date: 02 Mar 2030\n" in p for p in _prompts(tmp_path / "own-2"))  # not yesterday's rendering
    assert runs["own-2"].provenance.answers[spec].from_cache == 0
    assert runs["own-2"].provenance.models[0].template_date == "template"
