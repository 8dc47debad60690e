"""The toy lens (``toy_lens.py``) with every optional part a plug-in may give: its words on the card and in
``check``'s paragraph, its sizes for ``check``, its plan line, and its items for ``compare``."""

from __future__ import annotations

from chronoprobe.contract.check_part import CheckPart
from chronoprobe.contract.lens import RunRecipe, Summary, Workload
from chronoprobe.metrics.paired import Comparable, ItemOutcomes
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Run
from chronoprobe.reports.lens_card import CardPart
from chronoprobe.reports.plain_words import find, quote
from toy_lens import ToyLens


def words(summary: Summary, model: str) -> list[str]:
    found = find(summary, model, "year_pct")
    return [f"Years: it names a year in {quote(found)} of its answers."] if found else []


class FullToyLens(ToyLens):  # type: ignore[misc]  # toy_lens is imported by file name, untyped here
    """Ask a few questions, count the answers that name a year (with the card, check and compare parts)."""

    card = CardPart(
        question="Does it name a year?",
        about="A toy lens from the tests: the share of answers with a four-digit year.",
        words=words,
    )
    checkup = CheckPart(
        sizes={"quick": {"limit": 2}, "standard": {"limit": 3}, "full": {"limit": 3}}, metric_patterns=("year_pct",)
    )

    def workload(self) -> Workload:
        return Workload(items=self.config.limit, unit="questions", calls=self.config.limit)

    @classmethod
    def comparable(cls, run: Run, model: str) -> Comparable:
        """Per question, whether the answer names a year; the questions are its items."""
        values = {row.question: float(row.says_a_year) for row in run.rows if row.model == model}
        outcome = ItemOutcomes(
            metric="year_pct",
            group=ALL,
            kind="rate",
            values=values,
            scale=100.0,
            unit="questions",
            phrase="names a year",
        )
        return Comparable(source="toy questions", outcomes=[outcome])

    def recipe(self) -> RunRecipe:
        return RunRecipe(decoding={"max_new_tokens": 8}, seeds=[0], extra={"dataset": "toy questions"})
