"""``exact``: two answers are equivalent iff their SQuAD-normalised strings are equal."""

from __future__ import annotations

from collections.abc import Sequence

from chronoprobe.judges.base import Judge
from chronoprobe.metrics.mulan import normalize_answer


class ExactJudge(Judge):
    name = "exact"

    def equivalent(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        return [normalize_answer(a) == normalize_answer(b) for a, b in pairs]
