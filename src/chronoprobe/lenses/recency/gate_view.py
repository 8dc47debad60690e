"""What ``recency gate`` asks and says, below the command line: the questions to gate, each decision as
lines of text, and the measured routing quality of the model beside them.

The command prints the lines (a decision on stdout, so ``> file`` captures it; progress, notices and
warnings on stderr); a script that gates with :func:`~chronoprobe.lenses.recency.gate.recency_gate_many`
gets the same words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from rich.markup import escape

from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.recency.gate import GateSettings, read_gate_questions
from chronoprobe.lenses.recency.gate_check import gate_quality, not_measured
from chronoprobe.router.model import measured_figures

if TYPE_CHECKING:
    from chronoprobe.lenses.recency.gate import GateDecision
    from chronoprobe.lenses.recency.gate_check import GateQuality
    from chronoprobe.models.base import BackendInfo

__all__ = ["Shown", "asked_questions", "decision_lines", "measured_quality", "quality_lines", "router_line"]


class Shown(NamedTuple):
    """Lines to print, and whether they carry rich markup (else they are plain text, as they are)."""

    lines: list[str]
    markup: bool


def asked_questions(question: str | None, questions: Path | None) -> list[str]:
    """The questions to gate: the one given, or those of the ``--questions`` file; a ConfigError for both or neither."""

    if (question is None) == (questions is None):
        both = "give either one question or --questions FILE, not both"
        raise ConfigError(
            "QUESTION / --questions", both if question is not None else "give a question or --questions FILE"
        )
    if question is not None and not question.strip():
        raise ConfigError("QUESTION", "is empty")
    return read_gate_questions(questions) if questions is not None else [question or ""]


def decision_lines(
    decision: GateDecision, measured: GateQuality | None, model: str, *, as_json: bool, many: bool
) -> Shown:
    """One decision: JSON (one compact line when ``many``), a tab-separated line (``many``), or the verdict
    and why (rich markup)."""
    if as_json:
        record = decision.model_dump(mode="json")
        record["gate_quality"] = measured.model_dump(mode="json") if measured is not None else None
        return Shown([json.dumps(record, ensure_ascii=False, indent=None if many else 2)], markup=False)
    predicted = decision.predicted_class.label if decision.predicted_class is not None else "unknown"
    if many:  # plain tab-separated lines, easy to cut/grep
        return Shown(
            ["\t".join(["RETRIEVE" if decision.retrieve else "NO RETRIEVAL", predicted, decision.question])], False
        )
    verdict = "[bold red]RETRIEVE[/]" if decision.retrieve else "[bold green]NO RETRIEVAL[/]"
    lines = [
        f"{verdict}  predicted class: {predicted}  (threshold {decision.threshold.label}, {escape(model)})",
        f"why: {escape(decision.reason)}",
    ]
    if decision.router == "trained":
        top = sorted(decision.distribution.items(), key=lambda kv: -kv[1])[:3]
        lines.append("most likely classes: " + ", ".join(f"{k} {v:.0%}" for k, v in top))
    elif decision.distribution:
        shown = ", ".join(f"{k} {v:.0%}" for k, v in sorted(decision.distribution.items(), key=lambda kv: -kv[1]))
        unparseable = f"; {decision.unparseable} unparseable" if decision.unparseable else ""
        lines.append(
            f"distribution over {decision.samples - decision.unparseable} parsed samples: {shown}{unparseable}"
        )
    return Shown(lines, markup=True)


def measured_quality(
    info: BackendInfo, threshold: str, samples: int, temperature: float, seed: int, min_share: float
) -> GateQuality | None:
    """The gate's measured quality with this model and these settings (None: never measured)."""

    settings = GateSettings(samples=samples, temperature=temperature, seed=seed)
    return gate_quality(info, settings, RecencyClass.parse(threshold), min_share)


def quality_lines(measured: GateQuality | None, spec: str, context: str | None) -> tuple[str | None, list[str]]:
    """How well this model routes (rich markup; None when never measured), and the warnings: never measured,
    or measured as weak."""

    if measured is None:
        return None, [f"[yellow]warning[/]: {escape(not_measured(spec))}"]
    line = measured.line() + (" (measured without --context)" if context is not None else "")
    weak = [] if measured.useful else [f"[yellow]warning[/]: {escape(spec)} is {escape(measured.verdict())}"]
    return escape(line), weak


def router_line(weights: Path | None) -> str | None:
    """How well the trained router routes, from its manifest (None: the weights carry no manifest)."""

    figures = measured_figures(weights)
    if figures is None:
        return None
    gate, accuracy = figures.get("gate_balanced_accuracy"), figures.get("accuracy")
    if gate is None or accuracy is None:
        return None
    return (
        f"trained router, grouped 5-fold CV on RecencyQA: gate balanced accuracy {gate['value']:.2f} "
        f"[{gate['low']:.2f}, {gate['high']:.2f}], class accuracy {accuracy['value']:.2f} "
        f"[{accuracy['low']:.2f}, {accuracy['high']:.2f}] (docs/router.md; outside RecencyQA it may be lower)"
    )
