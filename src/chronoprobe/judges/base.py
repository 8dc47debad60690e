"""Equivalence judges and the clustering they drive.

A judge decides whether two answers mean the same thing. :func:`cluster_many`
turns each item's answers into a true partition (Kuhn et al.): answers are taken
in order, and each joins the first existing cluster whose *representative* (its
first member) it is equivalent to, or opens a new cluster. Comparisons for many
items are made in one batch per step, so a model-backed judge runs batched.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence


class Judge(abc.ABC):
    """Decides semantic equivalence of answer pairs, many pairs per call."""

    name: str
    """What produced the clusters, recorded in every result (e.g. ``nli:microsoft/deberta-large-mnli``)."""

    @abc.abstractmethod
    def equivalent(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """For each (a, b): are a and b equivalent (bidirectionally)?"""

    def describe(self) -> dict[str, object]:
        return {"name": self.name}


def cluster_many(answer_lists: Sequence[Sequence[str]], judge: Judge) -> list[list[int]]:
    """Cluster ids (0, 1, ... in order of first appearance) for every item's answers.

    Identical strings are equivalent without asking the judge. Each answer is
    compared only with the current clusters' representatives; all comparisons of
    one step (answer j of every item) go to the judge as one batch.
    """
    reps: list[list[str]] = [[] for _ in answer_lists]
    ids: list[list[int]] = [[] for _ in answer_lists]
    longest = max((len(a) for a in answer_lists), default=0)
    for j in range(longest):
        pending: list[tuple[int, int]] = []  # (item, cluster) comparisons to ask the judge
        pairs: list[tuple[str, str]] = []
        exact: dict[int, int] = {}
        for item, answers in enumerate(answer_lists):
            if j >= len(answers):
                continue
            answer = answers[j]
            hit = next((c for c, rep in enumerate(reps[item]) if rep == answer), None)
            if hit is not None:
                exact[item] = hit
            # Only clusters before an identical representative can come first.
            for c in range(hit if hit is not None else len(reps[item])):
                pending.append((item, c))
                pairs.append((answer, reps[item][c]))
        verdicts = judge.equivalent(pairs) if pairs else []
        first_match: dict[int, int] = {}
        for (item, c), same in zip(pending, verdicts, strict=True):
            if same and item not in first_match:
                first_match[item] = c
        for item, answers in enumerate(answer_lists):
            if j >= len(answers):
                continue
            cluster = first_match.get(item, exact.get(item, -1))
            if cluster < 0:
                reps[item].append(answers[j])
                cluster = len(reps[item]) - 1
            ids[item].append(cluster)
    return ids


def cluster_pairwise(answers: Sequence[str], judge: Judge) -> list[int]:
    """The same partition as :func:`cluster_many`, asking the judge one pair at a time
    (the original code's pattern; used by the speed benchmark and tests)."""
    reps: list[str] = []
    ids: list[int] = []
    for answer in answers:
        found = -1
        for c, rep in enumerate(reps):
            if rep == answer or judge.equivalent([(answer, rep)])[0]:
                found = c
                break
        if found < 0:
            reps.append(answer)
            found = len(reps) - 1
        ids.append(found)
    return ids
