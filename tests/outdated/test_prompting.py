"""Which prompting each model got: the bare sentence for base models, recorded in the report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.prompts import BARE_SENTENCE, CHAT_PROMPTING, audit_prompt, prompting_label
from chronoprobe.lenses.outdated.report import render_markdown
from chronoprobe.lenses.outdated.summary import summarize_model
from chronoprobe.models.base import BackendInfo
from chronoprobe.provenance import Provenance


def _record(model: str) -> ResponseRecord:
    return ResponseRecord(
        model=model,
        fact_id="f1",
        category="leaders",
        subject="X",
        attribute=None,
        template_index=0,
        template="The leader of X is",
        rendered_prompt="The leader of X is",
        response=" Y",
        verdict="irrelevant",
        matched=[],
        matched_start_years=[],
    )


def test_prompting_label_names_the_path() -> None:
    assert prompting_label(chat_template=False) == BARE_SENTENCE
    assert prompting_label(chat_template=True) == CHAT_PROMPTING
    assert "bare sentence" in BARE_SENTENCE and "chat template" in CHAT_PROMPTING


def test_base_prompt_is_the_bare_sentence() -> None:
    prompt = audit_prompt("The head of government of Italy is")
    assert prompt.text == "The head of government of Italy is"
    assert prompt.answer_prefix == ""


def test_report_says_which_prompting_each_model_got() -> None:
    infos = [
        BackendInfo(
            spec="smollm2",
            backend="hf",
            model_id="s",
            revision="r",
            chat_template=True,
            is_chat_model=True,
            extra={"licence": "Apache-2.0"},
        ),
        BackendInfo(
            spec="gemma3-270m",
            backend="hf",
            model_id="g",
            revision="r",
            chat_template=False,
            extra={"licence": "Gemma Terms of Use"},
        ),
    ]
    provenance = Provenance(models=infos)
    per_model = {i.spec: summarize_model([_record(i.spec)], with_as_of=False) for i in infos}
    text = render_markdown(per_model, provenance, None)
    lines = text.splitlines()
    chat_rows = [line for line in lines if line.startswith("| smollm2 | ") and CHAT_PROMPTING in line]
    base_rows = [line for line in lines if line.startswith("| gemma3-270m | ") and BARE_SENTENCE in line]
    assert len(chat_rows) == 1 and "Apache-2.0" in chat_rows[0]
    assert len(base_rows) == 1 and "Gemma Terms of Use" in base_rows[0]


def _gemma_ready() -> bool:
    from chronoprobe.models.embedded import gemma3_available

    return gemma3_available()


@pytest.mark.slow
@pytest.mark.skipif(not _gemma_ready(), reason="Gemma 3 270M packages not installed (./setup.sh installs them)")
def test_real_gemma_audit_sends_the_bare_sentence(tmp_path: Path) -> None:
    out = tmp_path / "report"
    args = [
        "outdated",
        "run",
        "--model",
        "gemma3-270m",
        "--limit",
        "2",
        "--max-new-tokens",
        "8",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "calls.sqlite"),
    ]
    subprocess.run([sys.executable, "-m", "chronoprobe.cli.main", *args], check=True, timeout=900)
    records = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
    assert len(records) == 6  # 2 facts x 3 paraphrases
    for record in records:
        assert record["model"] == "gemma3-270m"
        assert record["rendered_prompt"] == record["template"]  # no chat markup, no instruction
        assert record["response"].strip(), "the base model should continue the sentence"
    summary = json.loads((out / "summary.json").read_text())
    (info,) = summary["provenance"]["models"]
    assert info["chat_template"] is False and info["is_chat_model"] is False
    assert "Gemma Terms of Use" in info["extra"]["licence"]
    assert info["revision"].startswith("gguf-sha256:a5fd3b62230aa5ec")
    report = (out / "report.md").read_text()
    assert any(line.startswith("| gemma3-270m | ") and BARE_SENTENCE in line for line in report.splitlines())
