"""MuLan-style metrics: token F1 with aliases, first-token confidence, memorised-fact
selection with class balancing, update success.

All functions are pure; the formulas are written out in ``docs/conflicts.md``.
"""

from __future__ import annotations

import math
import random
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
ARTICLE_TOKENS = frozenset({"the", "a", "an"})

Fidelity = Literal["corrected", "original"]
"""``original``: every MuLan number exactly as the original code computes it;
``corrected``: our fixes where the original is buggy (each listed in chronoprobe docs conflicts)."""

Truncation = Literal["none", "tokens", "characters"]


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop ASCII punctuation, drop articles, squeeze whitespace."""
    out = text.lower()
    out = "".join(ch for ch in out if ch not in _PUNCT)
    out = _ARTICLES.sub(" ", out)
    return " ".join(out.split())


def f1_truncation(fidelity: Fidelity) -> Truncation:
    """The original cuts the prediction by characters; ours cuts whole tokens."""
    return "characters" if fidelity == "original" else "tokens"


def token_f1(prediction: str, gold: str, *, truncate: Truncation = "none") -> float:
    """SQuAD token F1 between normalised token lists (multiset overlap).

    ``truncate``: ``"characters"`` cuts the normalised prediction string to the length of
    the normalised gold string and then tokenises (the original MuLan code, so "Parisian
    city" scores 1 against "Paris"); ``"tokens"`` cuts the prediction's tokens to the
    gold's token count; ``"none"`` keeps everything. No common token gives 0, also when
    both sides are empty: a target that normalises to nothing ("The A", "...") matches
    no prediction.
    """
    pred_text = normalize_answer(prediction)
    gold_text = normalize_answer(gold)
    gold_tokens = gold_text.split()
    if truncate == "characters":
        pred_text = pred_text[: len(gold_text)]
    pred_tokens = pred_text.split()
    if truncate == "tokens":
        pred_tokens = pred_tokens[: len(gold_tokens)]
    common = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred_tokens)
    recall = common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_with_aliases(
    prediction: str,
    golds: Sequence[str],
    aliases: Iterable[str] = (),
    *,
    truncate: Truncation = "none",
) -> float:
    """max over every gold answer and alias of :func:`token_f1` (0.0 if there are none)."""
    candidates = [*golds, *aliases]
    if not candidates:
        return 0.0
    return max(token_f1(prediction, g, truncate=truncate) for g in candidates)


def is_empty_prediction(prediction: str) -> bool:
    """An empty prediction is left out of F1 means (the original skips it)."""
    return not prediction.strip()


def weighted_type_mean(per_relation: Mapping[str, tuple[float, int]]) -> float:
    """Per-type mean of per-relation scores weighted by example counts: sum(s_r * n_r) / sum(n_r)."""
    total = sum(n for _, n in per_relation.values())
    if total == 0:
        return math.nan
    return sum(score * n for score, n in per_relation.values()) / total


def first_token_confidence(
    tokens: Sequence[str],
    probabilities: Sequence[float],
    special: Sequence[bool] | None = None,
) -> float:
    """Probability of the first answer token (our corrected rule).

    Walk the generated tokens from the start, skipping (1) special tokens (BOS/EOS,
    ``special[i]`` true) and whitespace-only tokens, then (2) at most one token that
    is, stripped and lower-cased, 'the', 'a' or 'an' (plus any special/whitespace
    tokens right after it). Return the probability of the next token, or 0.0 if
    nothing is left (an empty generation, or only an article), as the original does.
    """
    if len(tokens) != len(probabilities):
        raise ValueError("one probability per token is needed")
    flags = list(special) if special is not None else [False] * len(tokens)
    i = 0
    skipped_article = False
    while i < len(tokens):
        word = tokens[i].strip().lower()
        if flags[i] or not word:
            i += 1
            continue
        if not skipped_article and word in ARTICLE_TOKENS:
            skipped_article = True
            i += 1
            continue
        return float(probabilities[i])
    return 0.0


def first_token_confidence_original(
    tokens: Sequence[str],
    probabilities: Sequence[float],
    special: Sequence[bool] | None = None,
    *,
    case_sensitive: bool = True,
) -> float:
    """The original's rule (fact_mutability ``get_scores``).

    Drop special tokens, then a final token that is exactly "."; nothing left gives 0.
    Split the remaining text into words: if the first word is 'the', 'a' or 'an' (compared
    as is when ``case_sensitive``, the original's HF path, so "The" is not skipped; lower-
    cased otherwise, its vLLM path), return the second remaining token's probability (0 if
    the answer is only the article), else the first token's. Whitespace tokens count.
    """
    if len(tokens) != len(probabilities):
        raise ValueError("one probability per token is needed")
    flags = list(special) if special is not None else [False] * len(tokens)
    kept = [(t, float(p)) for t, p, f in zip(tokens, probabilities, flags, strict=True) if not f]
    if kept and kept[-1][0] == ".":
        kept.pop()
    words = "".join(t for t, _ in kept).split()
    if not words:
        return 0.0
    first = words[0] if case_sensitive else words[0].lower()
    if first in ARTICLE_TOKENS:
        return kept[1][1] if len(words) > 1 and len(kept) > 1 else 0.0
    return kept[0][1]


class FactScore(BaseModel):
    """One fact's best-template outcome, the input to memorised-fact selection."""

    model_config = ConfigDict(frozen=True)

    fact_id: str
    fact_class: str
    relation: str
    f1: float
    confidence: float | None


def best_template_per_relation(scores: Mapping[tuple[str, int], Sequence[float]]) -> dict[str, int]:
    """For each relation, the template index with the highest mean F1 (ties: lowest index).

    ``scores`` maps (relation, template index) to the F1 of every fact under it. Means
    are compared exactly, as fractions, so a tie is a tie: F1 values are ratios of
    small integers (2·common / (|pred| + |gold|)), recovered from their floats by
    :func:`_exact`, and float rounding of the sums cannot pick a higher index.
    """
    best: dict[str, tuple[Fraction | None, int]] = {}
    for (relation, template), values in sorted(scores.items()):
        mean = sum((_exact(v) for v in values), Fraction(0)) / len(values) if values else None
        if relation not in best:
            best[relation] = (mean, template)
            continue
        current = best[relation][0]
        if mean is not None and (current is None or mean > current):
            best[relation] = (mean, template)
    return {relation: template for relation, (_, template) in best.items()}


_MAX_DENOMINATOR = 10**6


def _exact(value: float) -> Fraction:
    """The simplest fraction within float precision of ``value`` (denominator <= 10^6)."""
    return Fraction(value).limit_denominator(_MAX_DENOMINATOR)


def is_memorised(score: FactScore, min_confidence: float = 0.5) -> bool:
    """F1 == 1 and first-token confidence >= min_confidence."""
    return score.f1 >= 1.0 - 1e-9 and score.confidence is not None and score.confidence >= min_confidence


def select_memorised(
    scores: Sequence[FactScore], *, seed: int = 0, min_confidence: float = 0.5, per_class: int | None = None
) -> list[FactScore]:
    """Memorised facts, balanced to the same count per class and spread across relations.

    n = min over classes of the memorised count (or ``per_class`` if smaller). Within a
    class, facts are grouped by relation; each relation's facts are shuffled with
    ``random.Random(seed)`` (relations in sorted order, facts first sorted by id); then
    relations are visited round-robin (sorted order), one fact each, until n are taken.
    Output: classes in sorted order, each in pick order.
    """
    memorised = [s for s in scores if is_memorised(s, min_confidence)]
    by_class: dict[str, list[FactScore]] = {}
    for s in memorised:
        by_class.setdefault(s.fact_class, []).append(s)
    if not by_class:
        return []
    n = min(len(v) for v in by_class.values())
    if per_class is not None:
        n = min(n, per_class)
    rng = random.Random(seed)
    chosen: list[FactScore] = []
    for fact_class in sorted(by_class):
        by_relation: dict[str, list[FactScore]] = {}
        for s in sorted(by_class[fact_class], key=lambda s: s.fact_id):
            by_relation.setdefault(s.relation, []).append(s)
        queues = []
        for relation in sorted(by_relation):
            facts = list(by_relation[relation])
            rng.shuffle(facts)
            queues.append(facts)
        picked: list[FactScore] = []
        while len(picked) < n:
            for queue in queues:
                if queue and len(picked) < n:
                    picked.append(queue.pop(0))
        chosen.extend(picked)
    return chosen


def shares_no_word(a: str, b: str) -> bool:
    """True iff the SQuAD-normalised token sets of a and b are disjoint."""
    return not (set(normalize_answer(a).split()) & set(normalize_answer(b).split()))


def pick_new_object(model_answer: str, candidates: Sequence[str], rng: random.Random) -> str | None:
    """A random candidate (another subject's answer, same relation) sharing no word with the model's answer."""
    pool = sorted({c for c in candidates if c.strip() and shares_no_word(c, model_answer)})
    return rng.choice(pool) if pool else None


def update_succeeded(answer: str, new_object: str, *, fidelity: Fidelity = "corrected") -> bool:
    """Corrected: the normalised answer's tokens begin with the normalised new object's tokens.
    Original: ``answer.startswith(new_object)`` on the raw strings (case-sensitive, so
    "Lyonnais" counts for "Lyon" and "lyon" does not)."""
    if fidelity == "original":
        return answer.startswith(new_object)
    answer_tokens = normalize_answer(answer).split()
    object_tokens = normalize_answer(new_object).split()
    return bool(object_tokens) and answer_tokens[: len(object_tokens)] == object_tokens


def update_success_rate(
    answers: Sequence[str], new_objects: Sequence[str], *, fidelity: Fidelity = "corrected"
) -> float:
    """Share of update prompts whose answer starts with the new object (NaN for none)."""
    if len(answers) != len(new_objects):
        raise ValueError("one new object per answer is needed")
    if not answers:
        return math.nan
    return sum(update_succeeded(a, o, fidelity=fidelity) for a, o in zip(answers, new_objects, strict=True)) / len(
        answers
    )


def update_prompt(altered_fact: str, query: str) -> str:
    """'Imagine that <altered fact>. Then, <query>' (a trailing period on the fact is not doubled)."""
    fact = altered_fact.strip().rstrip(".").strip()
    return f"Imagine that {fact}. Then, {query.strip()}"
