"""The labelling pipeline's bookkeeping, driven by a scripted mock backend (the real model is in test_recency_e2e)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets.recency_taxonomy import RecencyClass as R
from chronoprobe.datasets.recencyqa import load_recencyqa, write_recencyqa
from chronoprobe.errors import DataError
from chronoprobe.lenses.recency.label import (
    LabelConfig,
    QuestionIn,
    label_dataset,
    read_questions,
)
from chronoprobe.models.base import DecodingParams
from chronoprobe.testing import MockBackend, MockPrompt


class Scripted:
    """Answers by looking at the prompt: a tiny, fully predictable 'model' (served by a MockBackend)."""

    def __call__(self, prompt: MockPrompt, params: DecodingParams) -> list[str]:
        return [self.answer(prompt, i, params) for i in range(params.n)]

    @staticmethod
    def answer(text: str, i: int, params: DecodingParams) -> str:
        if "Is the question stationary?" in text:
            return '{"stationary": "NO"}' if "Q3" in text else '{"stationary": "YES"}'
        if "Write one short sentence" in text:
            if "Q2" in text and "Never" in text:  # round 1 (seed 0) fails verification, round 2 passes
                return (
                    "Context: the archive is sealed for good."
                    if params.seed == 0
                    else "Context: long after the founders retired, historians ask."
                )
            return [
                "Context: during the storm warning, people ask.",
                "Context: as the evening storm warning is issued over the city, commuters ask.",
            ][i % 2]
        if "\nContext: " in text:  # verification relabelling
            if "archive is sealed" in text:
                return '{"label": "Never"}' if i else '{"label": "A-Day"}'  # one disagreement: not verified
            if "historians" in text:
                return '{"label": "Never"}'
            return '{"label": "A-Day"}'
        # recency labelling
        if "Q2" in text:
            return '{"label": "Never"}' if i % 3 == 0 else '{"label": "A-Day"}'
        if "Q4" in text and params.temperature >= 0.7:
            return "I am not sure."  # unparseable in the first pass, fine when redrawn cooler
        return '{"label": "A-Day"}'


@pytest.fixture()
def scripted(tmp_path: Path) -> CachedModel:
    return CachedModel(MockBackend(Scripted(), name="scripted"), CallCache(tmp_path / "calls.sqlite"))


def test_pipeline_rules_verification_and_redraws(scripted: CachedModel, tmp_path: Path) -> None:
    questions = [QuestionIn(q_id=i, question=f"Q{i}: what is it?") for i in range(1, 5)]
    config = LabelConfig(samples=13, verify_samples=13, candidates=2, max_context_rounds=3)
    items, report = label_dataset(questions, scripted, [scripted], config)
    by_id = {item.q_id: item for item in items}

    # Q3: one class, voted non-stationary -> rule 4, discarded and reported
    assert [d["q_id"] for d in report.discarded_rule4] == [3] and 3 not in by_id
    assert report.rule_counts == {"1": 2, "3": 1, "4": 1}

    q1 = by_id[1]
    assert q1.final_stationary_label.value == "Stationary" and q1.extra["stationarity_rule"] == 1
    assert q1.confidence == 1.0 and q1.entropy == 0.0
    # both candidates verify; the longer one is kept
    assert q1.label_contexts[0].context.startswith("as the evening storm warning")

    q2 = by_id[2]
    assert q2.final_stationary_label.value == "Non-Stationary" and q2.extra["stationarity_rule"] == 3
    # samples 0,3,6,9,12 -> Never (5/13), the rest A-Day (8/13)
    assert q2.majority_label is R.A_DAY
    assert q2.label_distribution[R.NEVER] == pytest.approx(5 / 13)
    assert [c.recency_label for c in q2.label_contexts] == [R.A_DAY, R.NEVER]  # taxonomy order
    # the Never context failed (12/13) in round 1 and was regenerated in round 2
    assert q2.label_contexts[1].context == "long after the founders retired, historians ask."
    assert q2.extra["contexts_verified"] == {"A-Day": True, "Never": True}
    assert report.context_rounds_used == 2

    # Q4: 13 unparseable samples in the first pass, all redrawn at temperature 0.3
    assert report.samples_unparseable_first_pass == 13 and report.samples_redrawn == 13
    assert report.samples_unparseable_final == 0
    assert by_id[4].extra["label_samples"] == ["A-Day"] * 13

    # the output is a RecencyQA file that loads back
    write_recencyqa(tmp_path / "out.json", items)
    assert load_recencyqa(tmp_path / "out.json") == items


def test_unverified_context_is_kept_flagged_or_dropped_on_request(scripted: CachedModel) -> None:
    questions = [QuestionIn(q_id=2, question="Q2: what is it?")]
    lenient = LabelConfig(samples=13, verify_samples=13, candidates=1, max_context_rounds=1)
    items, report = label_dataset(questions, scripted, [scripted], lenient)
    assert items[0].extra["contexts_verified"] == {"A-Day": True, "Never": False}
    assert items[0].extra["context_agreement"]["Never"] == "12/13"
    assert report.context_targets == 2 and report.context_targets_verified == 1
    strict = lenient.model_copy(update={"require_verified": True})
    items, report = label_dataset(questions, scripted, [scripted], strict)
    assert items == [] and report.dropped_unverified == ["2"]


def test_read_questions_formats_and_errors(tmp_path: Path) -> None:
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"question": "Who?"}\n\n{"q_id": "x", "question": "When?", "source": "mine"}\n')
    assert [(q.q_id, q.question, q.source) for q in read_questions(jsonl)] == [
        (1, "Who?", "user"),
        ("x", "When?", "mine"),
    ]
    listed = tmp_path / "q.json"
    listed.write_text(json.dumps(["Who?", {"question": "Why?"}]))
    assert [q.question for q in read_questions(listed)] == ["Who?", "Why?"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Who?"}\n{"text": "no question"}\n')
    with pytest.raises(DataError, match=r"bad\.jsonl line 2"):
        read_questions(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "Who?"}\n{oops\n')
    with pytest.raises(DataError, match=r"broken\.jsonl line 2"):
        read_questions(broken)
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"q_id": 1, "question": "A?"}\n{"q_id": 1, "question": "B?"}\n')
    with pytest.raises(DataError, match="duplicate"):
        read_questions(dup)
