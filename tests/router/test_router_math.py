"""The router's prediction math by hand: tokens, TF-IDF, softmax, the decision, and reading weights back."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from chronoprobe.datasets.recency_taxonomy import CLASSES, RecencyClass
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.router.decision import GateDecision, decide_from_probabilities
from chronoprobe.router.features import fit_vocabulary, ngrams, tfidf, tokens
from chronoprobe.router.model import RouterWeights, load_weights, save_weights, softmax
from chronoprobe.router.questions import parse_questions


def test_tokens_are_lower_cased_runs_of_two_word_characters() -> None:
    assert tokens("Who is the CEO of X, now?") == ["who", "is", "the", "ceo", "of", "now"]
    assert ngrams("Who is now", 2) == ["who", "is", "now", "who is", "is now"]


def test_idf_and_tfidf_by_hand() -> None:
    texts = ["price now", "price today", "capital"]
    vocabulary, idf = fit_vocabulary(texts, 1, 1)
    assert vocabulary == ["capital", "now", "price", "today"]
    # smoothed idf: ln((1 + 3) / (1 + df)) + 1
    assert idf == pytest.approx([math.log(4 / 2) + 1, math.log(4 / 2) + 1, math.log(4 / 3) + 1, math.log(4 / 2) + 1])
    index = {term: i for i, term in enumerate(vocabulary)}
    rows = tfidf(["price price now", "nothing known"], index, idf, 1)
    # "price" twice: 1 + ln 2 times its idf; "now" once: its idf; then scaled to unit length
    raw = np.array([0.0, idf[1], (1 + math.log(2)) * idf[2], 0.0])
    assert rows[0] == pytest.approx(raw / np.linalg.norm(raw))
    assert rows[1] == pytest.approx(np.zeros(4))


def test_softmax_by_hand_and_for_large_logits() -> None:
    out = softmax(np.array([[0.0, math.log(3.0)], [1000.0, 1000.0]]))
    assert out == pytest.approx(np.array([[0.25, 0.75], [0.5, 0.5]]))


def _tiny_weights() -> RouterWeights:
    """Two embedding dimensions and a one-word vocabulary ("now"), twelve classes."""
    coef = np.zeros((12, 3))
    coef[RecencyClass.A_DAY] = [0.0, 0.0, 2.0]  # "now" pushes towards A-Day
    coef[RecencyClass.NEVER] = [2.0, 0.0, 0.0]  # the first embedding dimension towards Never
    return RouterWeights(
        classes=CLASSES,
        vocabulary=("now",),
        longest_ngram=1,
        embedding_scale=1.0,
        tfidf_scale=1.0,
        embedding_model="test",
        coef=coef,
        intercept=np.zeros(12),
        idf=np.array([1.0]),
    )


def test_probabilities_by_hand() -> None:
    weights = _tiny_weights()
    features = weights.features(np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32), ["What is it now?", "Who?"])
    assert features == pytest.approx(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]))
    probabilities = weights.probabilities(features)
    # first row: logit 2 for A-Day, 0 for the eleven others
    assert probabilities[0, RecencyClass.A_DAY] == pytest.approx(math.e**2 / (math.e**2 + 11))
    assert probabilities[1, RecencyClass.NEVER] == pytest.approx(math.e**2 / (math.e**2 + 11))
    assert probabilities.sum(axis=1) == pytest.approx([1.0, 1.0])


def test_the_decision_sums_the_classes_up_to_the_threshold() -> None:
    probabilities = np.zeros(12)
    probabilities[[RecencyClass.A_DAY, RecencyClass.A_YEAR, RecencyClass.A_FEW_YEARS]] = [0.2, 0.25, 0.55]
    at_year = decide_from_probabilities("Q?", probabilities, RecencyClass.A_YEAR, 0.5)
    assert at_year.share_within_threshold == pytest.approx(0.45)
    assert not at_year.retrieve and at_year.predicted_class is RecencyClass.A_FEW_YEARS
    assert decide_from_probabilities("Q?", probabilities, RecencyClass.A_YEAR, 0.45).retrieve  # at the cut-off
    assert decide_from_probabilities("Q?", probabilities, RecencyClass.A_FEW_YEARS, 0.5).retrieve
    assert at_year.router == "trained" and at_year.cut_off == 0.5 and at_year.samples == 0
    assert at_year.distribution["A-Few-Years"] == pytest.approx(0.55) and len(at_year.distribution) == 12
    record = at_year.model_dump(mode="json")
    assert record["threshold"] == "A-Year" and record["predicted_class"] == "A-Few-Years"
    assert GateDecision.model_validate_json(at_year.model_dump_json()) == at_year


def test_weights_round_trip_and_refusals(tmp_path: Path) -> None:
    save_weights(tmp_path / "w", _tiny_weights())
    back = load_weights(tmp_path / "w")
    assert back.vocabulary == ("now",) and np.array_equal(back.coef, _tiny_weights().coef)
    with pytest.raises(ConfigError, match="no such folder"):
        load_weights(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"missing router\.json, coef\.npy"):
        load_weights(tmp_path / "empty")
    np.save(tmp_path / "w" / "idf.npy", np.ones(3))
    with pytest.raises(ConfigError, match="do not fit together"):
        load_weights(tmp_path / "w")


def test_the_shipped_weights_load_and_fit_the_taxonomy() -> None:
    weights = load_weights()
    assert weights.classes == CLASSES and weights.coef.shape == (12, 384 + len(weights.vocabulary))


def test_questions_from_text_and_jsonl() -> None:
    assert parse_questions("# a comment\nWho?\n\nWhat?\n", "f", jsonl=None) == ["Who?", "What?"]
    assert parse_questions('{"question": " Who? "}\n', "f", jsonl=None) == ["Who?"]
    with pytest.raises(DataError, match="f line 2"):
        parse_questions('{"question": "Who?"}\n{not json\n', "f", jsonl=None)
    with pytest.raises(DataError, match="holds no questions"):
        parse_questions("\n  \n", "f", jsonl=None)
