"""DyKnow's editing measures (Table 3 and Table 7) and EasyEdit's fluency measure. Pure functions, no I/O.

Per group of facts (Politicians, Teams, Positions, and "All"), over the N facts edited:

- efficacy E: share of facts whose edit-prompt answer is up to date;
- paraphrase P: up-to-date answers on the paraphrase prompts / (paraphrases x N), pooled
  (DyKnow has 2 paraphrases per fact, so count / 2N);
- harmonic mean HM = 2EP / (E + P), 0 when both are 0 (Table 3);
- soft constraint: share of facts with any scored prompt up to date (Table 7).

Each value is an :class:`~chronoprobe.metrics.uncertainty.Estimate` (a fraction in [0, 1])
with n and a 95% interval: Wilson for E and the soft constraint; for P, Wilson over the 2N
paraphrase answers at the effective size their clustering on facts leaves (a fact's two answers
often agree; :func:`~chronoprobe.metrics.uncertainty.wilson_clustered`); a seeded percentile
bootstrap over facts for HM.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronoprobe.datasets.editing_records import GROUPS, EditRecord
from chronoprobe.metrics.dyknow import Verdict
from chronoprobe.metrics.uncertainty import SEED, Estimate, bootstrap, wilson, wilson_clustered

ALL = "All"
UP_TO_DATE: Verdict = "up-to-date"


class EditScores(BaseModel):
    """The measures over one group of edited facts."""

    model_config = ConfigDict(frozen=True)

    facts: int
    efficacy: Estimate
    paraphrase: Estimate
    harmonic_mean: Estimate
    soft_constraint: Estimate


def harmonic_mean(efficacy: float, paraphrase: float) -> float:
    """2EP / (E + P); 0 when both are 0."""
    total = efficacy + paraphrase
    return 0.0 if total == 0 else 2.0 * efficacy * paraphrase / total


def score_facts(
    records: Sequence[EditRecord], verdicts: Mapping[str, Mapping[str, Verdict]], *, seed: int = SEED
) -> EditScores:
    """E, P, HM and soft constraint over ``records``; ``verdicts[fact_id][kind]`` must cover every scored kind."""
    edit = np.zeros(len(records))
    hits = np.zeros(len(records))
    asked = np.zeros(len(records))
    soft = 0
    for i, record in enumerate(records):
        got = verdicts[record.fact_id]
        missing = [kind for kind in record.scored_types if kind not in got]
        if missing:
            raise ValueError(f"{record.fact_id}: no verdict for {', '.join(missing)}")
        edit[i] = got[record.prompt_type] == UP_TO_DATE
        hits[i] = sum(got[kind] == UP_TO_DATE for kind in record.paraphrase_types)
        asked[i] = len(record.paraphrase_types)
        soft += any(got[kind] == UP_TO_DATE for kind in record.scored_types)
    n = len(records)
    efficacy = wilson(int(edit.sum()), n)
    answers = [(i, k < hits[i]) for i in range(n) for k in range(int(asked[i]))]
    paraphrase = wilson_clustered([hit for _, hit in answers], [records[i].fact_id for i, _ in answers])
    point = None
    if efficacy.value is not None and paraphrase.value is not None:
        point = harmonic_mean(efficacy.value, paraphrase.value)

    def resampled(idx: np.ndarray) -> np.ndarray:
        e = edit[idx].mean(axis=1)
        p = hits[idx].sum(axis=1) / np.maximum(asked[idx].sum(axis=1), 1)
        total = e + p
        return np.where(total > 0, 2 * e * p / np.where(total > 0, total, 1), 0.0)

    return EditScores(
        facts=n,
        efficacy=efficacy,
        paraphrase=paraphrase,
        harmonic_mean=bootstrap(n, resampled, point, seed=seed),
        soft_constraint=wilson(soft, n),
    )


def editing_scores(
    records: Sequence[EditRecord], verdicts: Mapping[str, Mapping[str, Verdict]], *, seed: int = SEED
) -> dict[str, EditScores]:
    """:func:`score_facts` per Table 3 group (Politicians, Teams, Positions) and over all facts ("All")."""
    result: dict[str, EditScores] = {
        group: score_facts([r for r in records if r.group == group], verdicts, seed=seed) for group in GROUPS
    }
    result[ALL] = score_facts(records, verdicts, seed=seed)
    return result


# --- fluency ------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+(?:[-'\u2019]\w+)*|[^\w\s]")
NGRAM_ORDERS = (2, 3)
NGRAM_WEIGHTS = (2 / 3, 4 / 3)


def word_tokens(text: str) -> list[str]:
    """Words (with inner hyphens and apostrophes) and single punctuation marks.

    EasyEdit tokenises with ``nltk.word_tokenize`` (Penn Treebank rules); we use this regex
    instead, to avoid the NLTK dependency and its data download. They differ on contractions
    ("don't" is one token here, "do" + "n't" there), on quotes (NLTK rewrites them as `` and '')
    and on runs of punctuation ("..." is three tokens here, one there), so entropies can differ
    slightly from EasyEdit's on such texts; on plain words and sentence punctuation they agree.
    """
    return _WORD.findall(text)


def _entropy_bits(counts: Iterable[int]) -> float:
    values = np.asarray(list(counts), dtype=np.float64)
    if values.size == 0:
        return 0.0
    shares = values / values.sum()
    return float(-(shares * np.log2(shares)).sum())


def text_ngram_entropy(text: str) -> float:
    """One text's score: the entropy in bits of its 2-gram and 3-gram frequency distributions,
    weighted 2/3 and 4/3, averaged (EasyEdit's ``compute_n_gram_entropy``). A text too short to
    have any n-grams of an order contributes 0 for that order."""
    tokens = word_tokens(text)
    weighted = []
    for order, weight in zip(NGRAM_ORDERS, NGRAM_WEIGHTS, strict=True):
        grams = Counter(tuple(tokens[i : i + order]) for i in range(len(tokens) - order + 1))
        weighted.append(weight * _entropy_bits(grams.values()))
    return sum(weighted) / len(weighted)


def ngram_entropy(texts: Iterable[str]) -> float:
    """EasyEdit's fluency measure: the mean of :func:`text_ngram_entropy` over ``texts`` (nan when there are none)."""
    scores = [text_ngram_entropy(t) for t in texts]
    return sum(scores) / len(scores) if scores else math.nan
