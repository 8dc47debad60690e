"""The editing measures on hand-computed cases: E, P, HM, soft constraint per group, and n-gram entropy."""

from __future__ import annotations

import math

import pytest

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.metrics.dyknow import Verdict
from chronoprobe.metrics.editing import (
    ALL,
    editing_scores,
    harmonic_mean,
    ngram_entropy,
    score_facts,
    text_ngram_entropy,
    word_tokens,
)


def country(element: str) -> EditRecord:
    office = f"President of {element}"
    questions = {
        "generic": f"The head of state of {element} is",
        "contextualized": f"The country {element} has as its {office}",
        "rephrased_1": f"The {office} is",
        "rephrased_2": f"The position of the {office} is currently held by",
    }
    return EditRecord(
        prompt=questions["rephrased_2"],
        target="New Person",
        subject=office,
        domain="countries_byGDP",
        element=element,
        attribute=office,
        prompt_type="rephrased_2",
        questions=questions,
        answers=[
            "New Person |S: +2022-01-01T00:00:00Z",
            "Old Person |S: +2015-01-01T00:00:00Z |E: +2021-12-31T00:00:00Z",
        ],
    )


def athlete(name: str) -> EditRecord:
    questions = {
        "generic": f"The current team of {name} is",
        "contextualized": f"The football team {name} currently plays for is",
        "rephrased_1": f"{name} is currently playing for",
        "rephrased_2": f"The current football club of {name} is",
    }
    return EditRecord(
        prompt=questions["rephrased_1"],
        target="New FC",
        subject=name,
        domain="athletes_byPayment",
        element=name,
        prompt_type="rephrased_1",
        questions=questions,
        answers=["New FC |S: +2023-01-00T00:00:00Z", "Old FC |S: +2019-00-00T00:00:00Z |E: +2022-00-00T00:00:00Z"],
    )


RECORDS = [country("Aland"), country("Borduria"), athlete("Carl Player")]
VERDICTS: dict[str, dict[str, Verdict]] = {  # edit prompt first, then the two paraphrases
    "countries_byGDP/Aland/President of Aland": {
        "rephrased_2": "up-to-date",
        "contextualized": "up-to-date",
        "rephrased_1": "outdated",
    },
    "countries_byGDP/Borduria/President of Borduria": {
        "rephrased_2": "outdated",
        "contextualized": "up-to-date",
        "rephrased_1": "up-to-date",
    },
    "athletes_byPayment/Carl Player": {
        "rephrased_1": "irrelevant",
        "contextualized": "irrelevant",
        "rephrased_2": "outdated",
        "generic": "up-to-date",  # never counts
    },
}


def test_measures_per_group_match_the_hand_computation() -> None:
    scores = editing_scores(RECORDS, VERDICTS)
    politicians, teams, positions, everything = (scores[g] for g in ("Politicians", "Teams", "Positions", ALL))
    # Politicians: E = 1/2, P = 3/4 (pooled over 2 x 2 answers), HM = 2 * 0.5 * 0.75 / 1.25 = 0.6, SC = 2/2
    assert politicians.facts == 2
    assert politicians.efficacy.value == pytest.approx(0.5) and politicians.efficacy.n == 2
    assert politicians.paraphrase.value == pytest.approx(0.75) and politicians.paraphrase.n == 4
    assert politicians.harmonic_mean.value == pytest.approx(0.6)
    assert politicians.soft_constraint.value == pytest.approx(1.0)
    # Teams: nothing up to date (the generic answer is ignored): all 0, HM 0 by definition
    assert (teams.efficacy.value, teams.paraphrase.value, teams.harmonic_mean.value) == (0.0, 0.0, 0.0)
    assert teams.soft_constraint.value == 0.0
    # no Positions facts: no values
    assert positions.facts == 0 and positions.efficacy.value is None and positions.harmonic_mean.value is None
    # All: E = 1/3, P = 3/6, HM = 2 (1/3)(1/2) / (5/6) = 0.4, SC = 2/3
    assert everything.efficacy.value == pytest.approx(1 / 3)
    assert everything.paraphrase.value == pytest.approx(0.5) and everything.paraphrase.n == 6
    assert everything.harmonic_mean.value == pytest.approx(0.4)
    assert everything.soft_constraint.value == pytest.approx(2 / 3)


def test_intervals_are_wilson_and_a_seeded_bootstrap() -> None:
    everything = editing_scores(RECORDS, VERDICTS)[ALL]
    assert everything.efficacy.method == "wilson" and everything.soft_constraint.method == "wilson"
    # Wilson for 1 of 3 at 95%: [0.0615, 0.7923]
    assert everything.efficacy.ci_low == pytest.approx(0.0615, abs=1e-4)
    assert everything.efficacy.ci_high == pytest.approx(0.7923, abs=1e-4)
    hm = everything.harmonic_mean
    assert hm.method == "bootstrap" and hm.n == 3
    assert hm.ci_low is not None and hm.ci_high is not None and hm.ci_low <= hm.value <= hm.ci_high  # type: ignore[operator]
    assert editing_scores(RECORDS, VERDICTS)[ALL].harmonic_mean == hm  # seeded: the same every time


def test_harmonic_mean_is_zero_when_both_are_zero() -> None:
    assert harmonic_mean(0.0, 0.0) == 0.0
    assert harmonic_mean(1.0, 0.5) == pytest.approx(2 / 3)


def test_a_missing_scored_verdict_is_refused() -> None:
    with pytest.raises(ValueError, match="rephrased_1"):
        score_facts([RECORDS[0]], {RECORDS[0].fact_id: {"rephrased_2": "up-to-date", "contextualized": "outdated"}})


def test_ngram_entropy_by_hand() -> None:
    # "a b a b": 2-grams ab, ba, ab -> shares 2/3, 1/3 -> H2 = 0.918296 bits; 3-grams aba, bab -> H3 = 1 bit
    h2 = -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    expected = (2 / 3 * h2 + 4 / 3 * 1.0) / 2
    assert text_ngram_entropy("a b a b") == pytest.approx(expected)
    # "x y": one 2-gram (0 bits) and no 3-gram (0): 0
    assert text_ngram_entropy("x y") == 0.0
    assert ngram_entropy(["a b a b", "x y"]) == pytest.approx(expected / 2)
    assert math.isnan(ngram_entropy([]))


def test_word_tokens_split_words_and_punctuation() -> None:
    assert word_tokens("Al-Nassr FC, isn't it?") == ["Al-Nassr", "FC", ",", "isn't", "it", "?"]
