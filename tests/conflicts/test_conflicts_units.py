"""Small pure pieces of the conflicts pipeline: answer spans, prompts, context files, subsampling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conflicts_rows import persuasion_row

from chronoprobe.errors import ConfigError, DataError
from chronoprobe.lenses.conflicts.completion import answer_span
from chronoprobe.lenses.conflicts.contexts import ContextRow, load_context_file, subsample
from chronoprobe.lenses.conflicts.prompts import PromptWording, completion_prompt, qa_prompt
from chronoprobe.lenses.conflicts.rows import PersuasionRow

ASSETS = Path(__file__).resolve().parents[1] / "assets"


def test_answer_span_cuts_at_line_then_sentence_end():
    assert answer_span(" Ulm, Germany. He was born in 1879.\nMore") == "Ulm, Germany"
    assert answer_span("St. Louis") == "St"  # known limitation: abbreviations end the span (documented)
    assert answer_span("Paris\nLondon") == "Paris"
    assert answer_span("  ") == ""
    assert answer_span("U.S.A.") == "U.S.A"


def test_prompts_render_for_chat_and_base():
    wording = PromptWording()
    p = completion_prompt(wording, "France's capital city is")
    assert p.answer_prefix == "France's capital city is" and p.text == ""
    assert p.messages is not None and "as few words as possible" in p.messages[-1].content
    update = completion_prompt(wording, "X is", preamble="Imagine that X is Y. Then, ")
    assert (
        update.text == "Imagine that X is Y. Then, "
        and "Imagine that X is Y. Then, X is" in update.messages[-1].content
    )
    qa = qa_prompt(wording, "Q?", "Some context.")
    assert "Context: Some context." in qa.messages[-1].content and qa.text.endswith("Answer:")


def test_prompt_file_overrides_and_rejects_unknown_keys(tmp_path: Path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"qa": "Q: {question}\nA:"}))
    assert PromptWording.from_file(path).qa == "Q: {question}\nA:"
    path.write_text(json.dumps({"nope": "x"}))
    with pytest.raises(ConfigError):
        PromptWording.from_file(path)


def test_context_file_round_trip_and_errors(tmp_path: Path):
    facts = load_context_file(ASSETS / "mulan_contexts.jsonl")
    assert facts[0].fact_id == "mulan/Q142_P36" and facts[0].filled("Berlin").count("Berlin") == 1
    bad = tmp_path / "ctx.jsonl"
    row = json.loads((ASSETS / "mulan_contexts.jsonl").read_text().splitlines()[0])
    bad.write_text(json.dumps({**row, "context": "no slot"}) + "\n")
    with pytest.raises(DataError, match=r"ctx\.jsonl line 1: context has no \[ENTITY\]"):
        load_context_file(bad)
    bad.write_text(json.dumps({"id": "x"}) + "\n")
    with pytest.raises(DataError, match="line 1: not a contexts row"):
        load_context_file(bad)


def _row(i: int, cls: str) -> ContextRow:
    return ContextRow(
        id=f"f{i}",
        fact_class=cls,
        relation="P1",
        subject="s",
        question="q",
        obj="o",
        replace_name="r",
        context="[ENTITY]",
        possible_answers=[],
        fact_sentence="s",
        entailment=None,
    )


def test_subsample_is_seeded_and_per_class():
    rows = [_row(i, "a") for i in range(10)] + [_row(i + 10, "b") for i in range(3)]
    first = subsample(rows, 4, seed=1)
    assert first == subsample(rows, 4, seed=1)
    assert sum(r.fact_class == "a" for r in first) == 4 and sum(r.fact_class == "b" for r in first) == 3
    assert [r.id for r in first] == [r.id for r in rows if r in first]  # input order kept


def _cp_row(fact: str, counterfactual: bool, cp: float) -> PersuasionRow:
    return persuasion_row(
        fact_id=fact,
        counterfactual=counterfactual,
        cp=cp,
        stubborn=False if counterfactual else None,
        persuaded=True if counterfactual else None,
    )


def test_class_cp_is_the_mean_over_all_items_with_the_split_beside_it():
    from chronoprobe.lenses.conflicts.persuasion import summarise_persuasion
    from chronoprobe.lenses.conflicts.report import persuasion_markdown

    rows = [_cp_row("a", False, 0.1), _cp_row("a", True, 1.0), _cp_row("b", False, 0.3), _cp_row("b", True, 2.0)]
    static = summarise_persuasion(rows, ["static"])["static"]
    assert static["cp"] == pytest.approx((0.1 + 1.0 + 0.3 + 2.0) / 4)  # 0.85: the paper's figure
    assert static["cp_true_context"] == pytest.approx(0.2)
    assert static["cp_counterfactual"] == pytest.approx(1.5)
    report = persuasion_markdown({"m": {"static": static}}, ["static"], "t")
    assert "| Model | Static all | Static true ctx | Static counterfactual |" in report
    assert "| m | 0.850 | 0.200 | 1.500 |" in report


def test_completion_report_names_its_fidelity():
    from chronoprobe.lenses.conflicts.report import completion_markdown

    summary = {
        "m": {
            "c": {
                "f1": 50.0,
                "confidence": 0.45,
                "f1_per_relation": {"P1": 50.0},
                "memorised": 1,
                "updates": 1,
                "update_success": 1.0,
                "queries": 4,
                "empty_predictions": 1,
            }
        }
    }
    assert "Scoring: original" in completion_markdown(summary, ["c"], "t", "original")
    report = completion_markdown(summary, ["c"], "t")
    assert "Scoring: corrected" in report and "| m | 1 of 4 |" in report
