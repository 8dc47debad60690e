"""``chronoprobe recency route``: the trained router's decision for each question, with no generation.

The decisions are the records ``recency gate`` writes (:class:`~chronoprobe.router.decision.GateDecision`),
so ``--json`` output from either reads the same downstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from rich.text import Text

from chronoprobe.contract.tool import Answer, Tool, ToolContext
from chronoprobe.datasets.recency_taxonomy import parse_label
from chronoprobe.lenses.recency.gate_view import asked_questions, decision_lines, router_line
from chronoprobe.records.fields import SWITCH, Cli
from chronoprobe.router.decision import GateDecision
from chronoprobe.router.model import RouterWeights, load_weights
from chronoprobe.router.route import Router

__all__ = ["RouteResult", "RouteTool", "RouteToolConfig"]

ROUTER_LABEL = "trained router"


class RouteToolConfig(BaseModel):
    """``chronoprobe recency route``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    question: Annotated[str | None, Cli(argument="QUESTION")] = None
    """The question to route (or use --questions FILE)."""
    questions: Path | None = None
    """Text file, one question per line, or JSONL with a "question" field (- reads standard input): route
    them all with one load."""
    threshold: str = "A-Year"
    """Retrieve when the answer may change within this recency class or sooner."""
    min_share: float = Field(0.5, gt=0.0, le=1.0)
    """The probability cut-off: retrieve when P(the answer changes within the threshold) is at least this (for
    the LLM gate, the share of samples)."""
    weights: Path | None = None
    """Folder of router weights written by scripts/train_router.py --out DIR (default: the weights shipped
    with chronoprobe)."""
    json_: Annotated[bool, SWITCH] = False
    """Print the decision as JSON (one compact record per line with --questions)."""

    @field_validator("threshold")
    @classmethod
    def _a_class(cls, value: str) -> str:
        if parse_label(value) is None:
            raise ValueError(f"{value!r} is not a recency class (e.g. A-Few-Months, A-Year)")
        return value


class RouteResult(BaseModel):
    """The trained router's decisions, in the order the questions came."""

    decisions: list[GateDecision]


class RouteTool(Tool[RouteResult]):
    """Say whether each question needs retrieval, from the trained router (milliseconds a question, no model
    generation): the class probabilities, P(change within the threshold) and the decision.

    The decisions go to stdout (so `> file` captures them); notices go to stderr.
    """

    name = "recency.route"
    command = "recency route"
    config_type = RouteToolConfig
    config: RouteToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._asked: list[str] = []
        self._weights: RouterWeights | None = None

    def load(self) -> None:

        self._weights = load_weights(self.config.weights)  # a missing folder fails before the embedder loads
        self._asked = asked_questions(self.config.question, self.config.questions)

    def run(self, context: ToolContext) -> RouteResult:

        router = Router(self._weights or load_weights(self.config.weights))
        with context.announce("loading the embedding model"):
            router.embedder  # noqa: B018  (loads it under the announcement)
        return RouteResult(decisions=router.route(self._asked, self.config.threshold, self.config.min_share))

    def answer(self, result: RouteResult) -> Sequence[Answer]:
        """The decisions: the command's output."""

        many = self.config.questions is not None
        shown: list[Answer] = []
        for decision in result.decisions:
            lines = decision_lines(decision, None, ROUTER_LABEL, as_json=self.config.json_, many=many)
            shown.extend(Text.from_markup(line) if lines.markup else line for line in lines.lines)
        return shown

    def present(self, result: RouteResult) -> list[str]:
        """How well the router was measured to route (its manifest's grouped-CV figures)."""

        line = router_line(self.config.weights)
        return [line] if line else []
