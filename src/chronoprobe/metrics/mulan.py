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

from pydantic import BaseModel, ConfigDict

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)
ARTICLE_TOKENS = frozenset({"the", "a", "an"})


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop ASCII punctuation, drop articles, squeeze whitespace."""
    out = text.lower()
    out = "".join(ch for ch in out if ch not in _PUNCT)
    out = _ARTICLES.sub(" ", out)
    return " ".join(out.split())


def token_f1(prediction: str, gold: str, *, truncate: bool = False) -> float:
    """SQuAD token F1 between normalised token lists (multiset overlap).

    ``truncate``: first cut the prediction's normalised tokens to the gold's token
    count (the original MuLan code's behaviour). If either side has no tokens,
    F1 = 1.0 when both are empty, else 0.0.
    """
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if truncate:
        pred_tokens = pred_tokens[: len(gold_tokens)]
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
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
    truncate: bool = False,
) -> float:
    """max over every gold answer and alias of :func:`token_f1` (0.0 if there are none)."""
    candidates = [*golds, *aliases]
    if not candidates:
        return 0.0
    return max(token_f1(prediction, g, truncate=truncate) for g in candidates)


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
) -> float | None:
    """Probability of the first answer token.

    Walk the generated tokens from the start, skipping (1) special tokens (BOS/EOS,
    ``special[i]`` true) and whitespace-only tokens, then (2) at most one token that
    is, stripped and lower-cased, 'the', 'a' or 'an' (plus any special/whitespace
    tokens right after it). Return the probability of the next token, or None if
    nothing is left.
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
    return None


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

    ``scores`` maps (relation, template index) to the F1 of every fact under it.
    """
    best: dict[str, tuple[float, int]] = {}
    for (relation, template), values in sorted(scores.items()):
        mean = sum(values) / len(values) if values else -math.inf
        if relation not in best or mean > best[relation][0]:
            best[relation] = (mean, template)
    return {relation: template for relation, (_, template) in best.items()}


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


def pick_new_object(
    model_answer: str, candidates: Sequence[str], rng: random.Random
) -> str | None:
    """A random candidate (another subject's answer, same relation) sharing no word with the model's answer."""
    pool = sorted({c for c in candidates if c.strip() and shares_no_word(c, model_answer)})
    return rng.choice(pool) if pool else None


def update_succeeded(answer: str, new_object: str) -> bool:
    """The normalised answer's tokens begin with the normalised new object's tokens."""
    answer_tokens = normalize_answer(answer).split()
    object_tokens = normalize_answer(new_object).split()
    return bool(object_tokens) and answer_tokens[: len(object_tokens)] == object_tokens


def update_success_rate(answers: Sequence[str], new_objects: Sequence[str]) -> float:
    """Share of update prompts whose answer starts with the new object (NaN for none)."""
    if len(answers) != len(new_objects):
        raise ValueError("one new object per answer is needed")
    if not answers:
        return math.nan
    return sum(update_succeeded(a, o) for a, o in zip(answers, new_objects)) / len(answers)


def update_prompt(altered_fact: str, query: str) -> str:
    """'Imagine that <altered fact>. Then, <query>' (a trailing period on the fact is not doubled)."""
    fact = altered_fact.strip().rstrip(".").strip()
    return f"Imagine that {fact}. Then, {query.strip()}"
