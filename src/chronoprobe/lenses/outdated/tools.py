"""The outdated lens's tool: ``outdated score``, judging generations that already exist (no model calls).

:class:`ScoreTool` judges a DyKnow answers folder (:mod:`.score`); the command also reads harness
logs (inspect, lm-eval), which ``integrations`` adds to it
(:class:`chronoprobe.integrations.harness_scoring.HarnessScoreTool`, what ``outdated.score`` names).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from chronoprobe.contract.lens import RunRecipe
from chronoprobe.contract.tool import Tool, ToolContext
from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.snapshot import SnapshotRef
from chronoprobe.knowledge.types import FactAnswers
from chronoprobe.lenses.outdated.cutoffs import parse_cutoffs, parse_deployed_at
from chronoprobe.lenses.outdated.knowledge_report import knowledge_console_lines
from chronoprobe.lenses.outdated.score import (
    SCORE_KIND,
    Judged,
    ScoreSummary,
    judge_generations,
    load_scoring_inputs,
    score_recipe,
    write_scores,
)
from chronoprobe.records.fields import TEXT_PATH
from chronoprobe.records.publish import Output, ResultFolder
from chronoprobe.values import PastDate

__all__ = ["ScoreTool", "ScoreToolConfig", "score_lines"]

VERDICT_ORDER = ("up-to-date", "outdated", "irrelevant", "ambiguous")


class ScoreToolConfig(BaseModel):
    """``chronoprobe outdated score``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    generations: Path
    """Folder of <category>_answers.json files (DyKnow layout: subject, optional attribute, then answers and
    questions), or a harness log: an inspect .eval log (or folder of them), lm-eval --log_samples output
    (chronoprobe docs harnesses)."""
    out: Path
    """Where to write the answer sheets, classifications.jsonl and summary.json (a run folder, for a harness log)."""
    gold: Path | None = None
    """An original grc_generated.json to judge against (its 2023-12-18 answers)."""
    snapshot: Annotated[SnapshotRef | None, TEXT_PATH] = None
    """Snapshot name or file to judge against (default: shipped 2023-12-18)."""
    aliases: bool = False
    """Also match Wikidata aliases (off reproduces the paper)."""
    as_of: PastDate | None = None
    """Judge against what was current on this date (YYYY-MM-DD) instead of now."""
    cutoff: tuple[str, ...] = ()
    """A model's published knowledge cutoff, NAME=YYYY-MM (repeatable; NAME as in --model NAME=SPEC, or the
    spec): a marker on the knowledge-date plot and a row in results."""
    deployed_at: str | None = None
    """Forecast staleness for a model shipped on this date (YYYY-MM or YYYY-MM-DD): the share of what it knows
    that is stale then, 6 and 12 months later."""

    @field_validator("deployed_at")
    @classmethod
    def _a_month(cls, value: str | None) -> str | None:

        return parse_deployed_at(value)

    @model_validator(mode="after")
    def _one_gold(self) -> ScoreToolConfig:
        if self.gold is not None and self.snapshot is not None:
            raise ConfigError("--gold/--snapshot", "give one of them, not both")
        return self


class ScoreTool(Tool[ScoreSummary]):
    """Judge existing generations: up-to-date / outdated / irrelevant / ambiguous per answer; date the model's knowledge."""

    name = "outdated.score"
    command = "outdated score"
    config_type = ScoreToolConfig
    config: ScoreToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._cutoffs: dict[str, str] = {}
        self._files: list[Path] = []
        self._gold: dict[str, FactAnswers] = {}
        self._gold_description: dict[str, Any] = {}
        self._judged: Judged | None = None

    def check_inputs(self) -> None:

        generations = self.config.generations  # the scored model is named after its folder
        self._cutoffs = parse_cutoffs(self.config.cutoff, [[generations.name]])

    def output(self) -> Output:
        return Output("--out", self.config.out, ResultFolder(SCORE_KIND))

    def load(self) -> None:
        config = self.config
        gold = config.gold if config.gold is not None else config.snapshot
        self._files, self._gold, self._gold_description = load_scoring_inputs(
            config.generations, gold, deployed_at=config.deployed_at
        )

    def recipe(self) -> RunRecipe:
        config = self.config
        recorded = score_recipe(config.generations, self._files, self._gold_description, config.aliases, config.as_of)
        return RunRecipe(decoding={}, seeds=[], snapshot=recorded["snapshot"], extra=recorded["extra"])

    def run(self, context: ToolContext) -> ScoreSummary:
        config = self.config
        self._judged = judge_generations(
            config.generations,
            self._files,
            self._gold,
            self._gold_description,
            context.provenance(self.recipe()),
            use_aliases=config.aliases,
            as_of=config.as_of,
            cutoff=self._cutoffs.get(config.generations.name),
            deployed_at=config.deployed_at,
        )
        return self._judged.summary

    def write(self, folder: Path, result: ScoreSummary) -> None:
        assert self._judged is not None and self._judged.summary is result
        write_scores(folder, self._judged)

    def present(self, result: ScoreSummary) -> list[str]:
        return score_lines(result, self.config.out)


def score_lines(summary: ScoreSummary, out: Path) -> list[str]:
    """The console's lines: the verdict shares per category with their intervals, the knowledge date."""

    lines = []
    for category, result in {**summary.categories, "all": summary.overall}.items():
        soft, ci = result.soft_constraint, result.estimates
        assert ci is not None  # always set by judge_generations
        shares = "  ".join(
            f"{v} {100 * soft[v]:.1f}% {ci.soft_constraint[v].interval(1, 100.0)}" for v in VERDICT_ORDER
        )
        lines.append(
            f"[bold]{category}[/] ({result.facts} facts): {shares}  "
            f"inconsistent {100 * result.inconsistency:.1f}% {ci.inconsistency.interval(1, 100.0)} "
            "(95% Wilson intervals)"
        )
    if summary.no_gold:
        lines.append(
            f"[yellow]no gold[/] answer for {len(summary.no_gold)} fact(s): left out of every rate "
            "(listed as no_gold in summary.json)"
        )
    lines += knowledge_console_lines(summary.model, summary.knowledge_date)
    return [*lines, f"answer sheets, summary.json and report.md in {out}"]
