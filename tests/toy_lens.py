"""A fifth question that lives only in tests/: does the model say a year in its answer?

It proves that a lens is a plug-in that needs only the core (a config, a row, load, run, metrics from the rows,
a report): registered through the LENSES table or a ``chronoprobe.lenses`` entry point, it runs through
``chronoprobe.run``, ``chronoprobe results``, ``chronoprobe card`` and ``chronoprobe check`` without any change to
those modules. ``toy_parts.py`` gives it the optional parts (the card's words, ``check``'s sizes, ``compare``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from chronoprobe.cache import CachedModel
from chronoprobe.contract.lens import Lens, ProgressFactory, Summary
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

    def load(self) -> None:
        self.loaded = True

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

    def report(self, folder: Path, rows: Sequence[ToyRow], summary: Summary, provenance: Provenance) -> None:
        lines = [f"- {key}: {value['year_pct']}% of answers name a year" for key, value in summary.headline.items()]
        (folder / "report.md").write_text("# Toy lens\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
