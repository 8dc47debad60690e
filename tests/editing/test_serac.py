"""SERAC stand-in: routing with the real MiniLM, the prompts on a hit and a miss, the config."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.errors import ConfigError
from chronoprobe.judges.embedding import Embedder
from chronoprobe.lenses.editing.serac import (
    NLI_THRESHOLD,
    SCOPE_THRESHOLD,
    SERAC_LABEL,
    Serac,
    SeracConfig,
    choose_threshold,
)
from chronoprobe.lenses.outdated.prompts import audit_prompt
from chronoprobe.models.base import Message, Prompt

AMAZON = EditRecord(
    prompt="The CEO position at Amazon is currently held by",
    target="Andy Jassy",
    subject="CEO position at Amazon",
    domain="companies_byRevenue",
    element="Amazon",
    prompt_type="rephrased_2",
    questions={
        "rephrased_1": "The current CEO of Amazon is",
        "rephrased_2": "The CEO position at Amazon is currently held by",
    },
    answers=["Andy Jassy |S: +2021-07-06T00:00:00Z"],
)
ITALY = EditRecord(
    prompt="The position of the Prime Minister of Italy is currently held by",
    target="Giorgia Meloni",
    subject="Prime Minister of Italy",
    domain="countries_byGDP",
    element="Italy",
    attribute="Prime Minister of Italy",
    prompt_type="rephrased_2",
    questions={
        "contextualized": "The Prime Minister of Italy is",
        "rephrased_2": "The position of the Prime Minister of Italy is currently held by",
    },
    answers=["Giorgia Meloni |S: +2022-10-22T00:00:00Z"],
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.mark.e2e
def test_paraphrase_goes_to_the_memory_and_unrelated_questions_to_the_base_model(embedder: Embedder) -> None:
    serac = Serac([AMAZON, ITALY], embedder=embedder)
    hit, italy, other_office, unrelated = serac.build(
        [
            "The current CEO of Amazon is",
            "The Prime Minister of Italy is",
            "The President of Italy is",  # same country, fact not edited
            "The capital city of Australia is",
        ]
    )
    assert hit.route.hit and hit.route.fact_id == AMAZON.fact_id
    assert hit.route.similarity >= SCOPE_THRESHOLD
    assert hit.model is None  # base model with the entry in its context
    assert hit.prompt == Prompt(
        messages=(
            Message(
                role="user",
                content="Updated fact: The CEO position at Amazon is currently held by Andy Jassy.\n\n"
                "Taking the updated fact into account, complete this sentence with a name only, no explanation: "
                '"The current CEO of Amazon is ..."',
            ),
        ),
        text="The CEO position at Amazon is currently held by Andy Jassy.\nThe current CEO of Amazon is",
    )
    assert (
        italy.route.hit
        and italy.route.entry == "The position of the Prime Minister of Italy is currently held by Giorgia Meloni"
    )
    for miss, question in [
        (other_office, "The President of Italy is"),
        (unrelated, "The capital city of Australia is"),
    ]:
        assert not miss.route.hit and miss.route.similarity < SCOPE_THRESHOLD
        assert miss.prompt == audit_prompt(question)
        assert miss.model is None
    assert other_office.route.fact_id == ITALY.fact_id  # the nearest entry is still reported


@pytest.mark.e2e
def test_counterfactual_model_spec_answers_hits_only(embedder: Embedder) -> None:
    serac = Serac([AMAZON], SeracConfig(counterfactual="hf:some/tiny-model"), embedder=embedder)
    hit, miss = serac.build(["The current CEO of Amazon is", "The capital city of Australia is"])
    assert hit.model == "hf:some/tiny-model" and miss.model is None
    info = serac.describe()
    assert info["counterfactual"] == "hf:some/tiny-model" and info["threshold"] == SCOPE_THRESHOLD
    assert info["label"] == SERAC_LABEL and "not the paper's trained SERAC" in SERAC_LABEL


def test_config_resolves_and_checks() -> None:
    assert SeracConfig().threshold == SCOPE_THRESHOLD
    assert SeracConfig(scope="nli:some/model").threshold == NLI_THRESHOLD
    assert SeracConfig(threshold=0.9).threshold == 0.9
    for bad in ({"scope": "cosine"}, {"scope": "nli"}, {"threshold": 1.5}, {"counterfactual": " "}):
        with pytest.raises(ValidationError):
            SeracConfig.model_validate(bad)
    with pytest.raises(ConfigError):
        Serac([], embedder=object())  # type: ignore[arg-type]


@pytest.mark.e2e
def test_threshold_is_the_documented_catalogue_choice(embedder: Embedder) -> None:
    choice = choose_threshold(embedder=embedder)
    assert choice.threshold == SCOPE_THRESHOLD
    assert choice.positives == choice.negatives == 520
    assert round(choice.true_positive_rate, 2) == 0.97 and round(choice.false_positive_rate, 2) == 0.47


class _OverlapNLI:
    """A deterministic local stand-in for an NLI model: entailment = share of the hypothesis's words in the premise."""

    model_id = "word-overlap"

    def entailment(self, pairs: list[tuple[str, str]]) -> list[float]:
        scores = []
        for premise, hypothesis in pairs:
            words = set(hypothesis.lower().split())
            scores.append(len(words & set(premise.lower().split())) / len(words))
        return scores


def test_nli_scope_uses_entailment_both_ways() -> None:
    serac = Serac([AMAZON, ITALY], SeracConfig(scope="nli:word-overlap"), nli=_OverlapNLI())  # type: ignore[arg-type]
    near, far = serac.route(["The CEO position at Amazon is held by", "The capital city of Australia is"])
    assert near.hit and near.fact_id == AMAZON.fact_id
    # backward: all 8 question words are in the key; forward: 8 of the key's 9 words are in the question
    assert near.similarity == pytest.approx(8 / 9)
    assert not far.hit and far.similarity < NLI_THRESHOLD
    assert serac.describe()["scope_model"] == "word-overlap"


def test_a_scope_model_that_cannot_be_had_is_refused_before_any_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chronoprobe.lenses.editing.serac import check_scope_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ConfigError, match=r"^--serac-scope nli:nobody/no-such-nli: not in the local hub cache"):
        check_scope_model("nli:nobody/no-such-nli")
    with pytest.raises(ConfigError, match=r"^--serac-scope embedding:nobody/no-such-embedder"):
        check_scope_model("embedding:nobody/no-such-embedder")
    check_scope_model("embedding")  # the packaged MiniLM
    (tmp_path / "local-nli").mkdir()
    check_scope_model(f"nli:{tmp_path / 'local-nli'}")  # a local folder is loaded as it is
