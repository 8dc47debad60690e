"""The router's text features in numpy: word n-gram TF-IDF over a fixed vocabulary.

Training (``scripts/train_router.py``) and prediction use these same functions, so the features a
shipped weight matrix expects are exactly the ones computed at routing time. Tokens are runs of two or
more word characters, lower-cased (scikit-learn's default pattern); n-grams join tokens with one space.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


def tokens(text: str) -> list[str]:
    """The lower-cased word tokens of ``text`` (two or more word characters each)."""
    return _TOKEN.findall(text.lower())


def ngrams(text: str, longest: int) -> list[str]:
    """Every word n-gram of ``text`` from 1 to ``longest`` words, in order of length then position."""
    words = tokens(text)
    found: list[str] = []
    for n in range(1, longest + 1):
        found += [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]
    return found


def document_frequencies(texts: Sequence[str], longest: int) -> Counter[str]:
    """In how many texts each n-gram occurs."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(ngrams(text, longest)))
    return counts


def fit_vocabulary(texts: Sequence[str], longest: int, min_count: int) -> tuple[list[str], np.ndarray]:
    """The n-grams in at least ``min_count`` texts (sorted) and their smoothed idf, ln((1+n)/(1+df)) + 1."""
    counts = document_frequencies(texts, longest)
    vocabulary = sorted(term for term, df in counts.items() if df >= min_count)
    df = np.array([counts[term] for term in vocabulary], dtype=np.float64)
    idf = np.log((1 + len(texts)) / (1 + df)) + 1
    return vocabulary, idf


def tfidf(texts: Sequence[str], index: Mapping[str, int], idf: np.ndarray, longest: int) -> np.ndarray:
    """Rows of sublinear TF-IDF, 1 + ln(count) times idf, each scaled to unit length (zero rows stay zero)."""
    matrix = np.zeros((len(texts), len(idf)), dtype=np.float64)
    for row, text in enumerate(texts):
        counted = Counter(term for term in ngrams(text, longest) if term in index)
        for term, count in counted.items():
            matrix[row, index[term]] = (1 + np.log(count)) * idf[index[term]]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)
