"""Clustering makes a true partition; batched and pair-by-pair clustering agree."""

from __future__ import annotations

import random
from collections.abc import Sequence

from chronoprobe.judges.base import Judge, cluster_many, cluster_pairwise
from chronoprobe.judges.exact import ExactJudge


class LengthJudge(Judge):
    """Non-transitive on purpose: equivalent iff lengths differ by at most one."""

    name = "length"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def equivalent(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        self.calls.append(len(pairs))
        return [abs(len(a) - len(b)) <= 1 for a, b in pairs]


def test_exact_judge_clusters_normalised_strings():
    ids = cluster_many([["Paris", "paris", "Lyon", "the Paris!", "Lyon"]], ExactJudge())
    assert ids == [[0, 0, 1, 0, 1]]


def test_first_matching_representative_wins_and_clusters_partition():
    judge = LengthJudge()
    # reps: "aaa"(3) -> c0; "aaaaa"(5) -> c1 (|5-3|>1); "aaaa"(4) matches c0 first (and c1) -> c0.
    ids = cluster_pairwise(["aaa", "aaaaa", "aaaa"], judge)
    assert ids == [0, 1, 0]
    assert cluster_many([["aaa", "aaaaa", "aaaa"]], LengthJudge()) == [[0, 1, 0]]


def test_batched_equals_pairwise_on_random_items():
    rng = random.Random(7)
    items = [["x" * rng.randint(1, 8) for _ in range(rng.randint(1, 10))] for _ in range(40)]
    judge = LengthJudge()
    batched = cluster_many(items, judge)
    assert batched == [cluster_pairwise(answers, LengthJudge()) for answers in items]
    for answers, ids in zip(items, batched, strict=True):
        assert len(ids) == len(answers)
        assert sorted(set(ids)) == list(range(max(ids) + 1))  # ids 0..K-1, each answer in exactly one
    # One judge call per answer position, not per pair.
    assert len(judge.calls) <= 10


def test_identical_strings_never_reach_the_judge_and_compare_only_with_reps():
    judge = LengthJudge()
    cluster_many([["a", "a", "a", "abcd", "abcd"]], judge)
    # "a" x3: no calls needed; "abcd": one comparison (with rep "a"); second "abcd": equal to rep 1,
    # but cluster 0 comes first, so exactly one comparison with rep "a".
    assert sum(judge.calls) == 2
