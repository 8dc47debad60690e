"""A fifth question that lives only in tests/: does the model say a year in its answer?

It proves that a lens is a plug-in: registered through the LENSES table or a
``chronoprobe.lenses`` entry point, it runs through ``chronoprobe.run``, ``chronoprobe results``
and ``chronoprobe card`` without any change to those modules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from chronoprobe.cache import CachedModel
from chronoprobe.contract.lens import Lens, ProgressFactory, RunRecipe, Summary, Workload
from chronoprobe.contract.runlog import Run
from chronoprobe.metrics.paired import Comparable, ItemOutcomes
from chronoprobe.metrics.records import ALL, from_estimate
from chronoprobe.metrics.uncertainty import wilson_from_flags
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.provenance import Provenance

QUESTIONS = ("When did the last election take place?", "In which year was the euro introduced?", "What is 2 + 2?")


class ToyConfig(BaseModel):
    limit: int = 3


class ToyRow(BaseModel):
    model: str
    question: str
    answer: str
    says_a_year: bool


class ToyLens(Lens[ToyRow]):
    """Ask a few questions, count the answers that name a year."""

    name = "toy"
    kind = "toy run"
    row_type = ToyRow
    config_type = ToyConfig
    config: ToyConfig
    question = "Does it name a year?"
    about = "A toy lens from the tests: the share of answers with a four-digit year."
    sizes: ClassVar[dict[str, dict[str, Any]]] = {"quick": {"limit": 2}, "standard": {"limit": 3}, "full": {"limit": 3}}
    metric_patterns = ("year_pct",)

    def load(self) -> None:
        self.loaded = True

    def workload(self) -> Workload:
        return Workload(items=self.config.limit, unit="questions", calls=self.config.limit)

    @classmethod
    def plain_words(cls, summary: Summary, model: str) -> list[str]:
        from chronoprobe.reports.plain_words import find, quote

        found = find(summary, model, "year_pct")
        return [f"Years: it names a year in {quote(found)} of its answers."] if found else []

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[ToyRow]:
        asked = QUESTIONS[: self.config.limit]
        answers = model.generate([Prompt(text=q) for q in asked], DecodingParams(max_new_tokens=8))
        return [
            ToyRow(model=model.info.label, question=q, answer=a.text, says_a_year=bool(re.search(r"\b\d{4}\b", a.text)))
            for q, a in zip(asked, answers, strict=True)
        ]

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[ToyRow]) -> Summary:
        shares = {
            m.info.label: wilson_from_flags(
                [r.says_a_year for r in rows if r.model == m.info.label], scale=100.0
            ).to_json()
            for m in models
        }
        metrics = [from_estimate(key, ALL, "year_pct", estimate, headline=True) for key, estimate in shares.items()]
        headline = {key: {"year_pct": estimate["value"]} for key, estimate in shares.items()}
        return Summary(lens=self.name, models=list(shares), headline=headline, metrics=metrics)

    @classmethod
    def comparable(cls, run: Run, model: str) -> Comparable:
        """What a plug-in declares to be compared paired (``chronoprobe compare``): per question, whether the
        answer names a year; the questions are its items."""
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

    def report(self, folder: Path, rows: Sequence[ToyRow], summary: Summary, provenance: Provenance) -> None:
        lines = [f"- {key}: {value['year_pct']}% of answers name a year" for key, value in summary.headline.items()]
        (folder / "report.md").write_text("# Toy lens\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
