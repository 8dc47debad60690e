"""The conflicts lens (DynamicQA and MuLan, either methodology) in the shared :class:`~chronoprobe.contract.lens.Lens` shape."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.check_part import CheckPart
from chronoprobe.contract.lens import Lens, ModelLoader, ProgressFactory, RunRecipe, Summary, Workload
from chronoprobe.contract.sizing import Sizing
from chronoprobe.engines import Engine
from chronoprobe.judges import JudgeChoice, load_judge
from chronoprobe.lenses.conflicts import metric_records
from chronoprobe.lenses.conflicts import run as conflicts_run
from chronoprobe.lenses.conflicts.compare import comparable
from chronoprobe.lenses.conflicts.plain_words import sentences
from chronoprobe.lenses.conflicts.prompts import PromptWording
from chronoprobe.lenses.conflicts.rows import ConflictsRow
from chronoprobe.lenses.conflicts.run import Dataset
from chronoprobe.lenses.summary_layout import KeepsLayout
from chronoprobe.metrics.mulan import Fidelity
from chronoprobe.metrics.paired import Comparable
from chronoprobe.models.registry import ModelList, default_models
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import INTERNAL, SWITCH, Command
from chronoprobe.records.runlog import Run
from chronoprobe.renames import accept_renamed
from chronoprobe.reports.lens_card import CardPart
from chronoprobe.reports.metric_format import cell, unit_note
from chronoprobe.reports.plain_words import find

_SHORTCUTS: dict[str, tuple[tuple[str, str], ...]] = {
    "samples": (("persuasion", "n_samples"),),
    "temperature": (("persuasion", "temperature"), ("completion", "temperature")),
    "seed": (("persuasion", "seed"), ("completion", "seed")),
    "min_confidence": (("completion", "min_confidence"),),
    "fidelity": (("completion", "fidelity"),),
    "topk_approximation": (("persuasion", "topk_approximation"),),
}
"""Flat option -> the sub-config fields it sets (``persuasion`` for the DynamicQA methodology, ``completion`` for MuLan's)."""


def _fields(sub: Any) -> dict[str, Any]:
    return sub.model_dump() if isinstance(sub, BaseModel) else dict(sub or {})


class ConflictsConfig(conflicts_run.RunConfig):
    """A conflicts run: dataset, methodology, their options and the equivalence judge.

    The methodologies' own settings live in ``persuasion`` and ``completion``; the flat fields
    below (``samples`` ... ``topk_approximation``, the command's options) set them and are not
    recorded themselves.
    """

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    renamed_fields: ClassVar[dict[str, str]] = {
        "aliases": "aliases_file",
        "limit": "balanced_limit",
        "prompt_file": "wording",
    }
    """Keywords 0.1.0 released, accepted until 0.4.0 (:mod:`chronoprobe.renames`)."""
    cli: ClassVar[Command] = Command(
        help="Does context override the model's memory? DynamicQA and MuLan, each through either methodology.",
        renamed_options={"--aliases": "--aliases-file", "--limit": "--balanced-limit", "--prompt-file": "--wording"},
    )

    methodology: Dataset = Field(
        cast(Dataset, None)
    )  # never None once validated: _fold_options gives the dataset's own
    """dynamicqa (CP, SE, accuracy) or mulan (F1, update success); default: the dataset's own."""
    judge: str = "embedding"
    """Equivalence judge: embedding[:<model>] (offline default), nli[:<hf id>], exact."""
    judge_fallback: Annotated[bool, SWITCH] = False
    """If the NLI judge cannot be loaded, use the embedding judge (recorded)."""
    judge_device: Annotated[str, INTERNAL] = "auto"
    """Where the judge runs; auto: the run's device."""
    samples: int = Field(10, ge=1, exclude=True)
    """Samples drawn per input (DynamicQA methodology)."""
    temperature: float | None = Field(None, ge=0.0, exclude=True)
    """Sampling temperature (default: 0.5 for DynamicQA's methodology, 0 = greedy for MuLan's)."""
    seed: int | None = Field(None, ge=0, exclude=True)
    """Decoding seed (default: 10 for DynamicQA's methodology, 0 for MuLan's, where it also picks the memorised facts)."""
    min_confidence: float = Field(0.5, ge=0.0, le=1.0, exclude=True)
    """MuLan methodology: first-token confidence a memorised fact needs."""
    fidelity: Fidelity = Field("corrected", exclude=True)
    """MuLan methodology scoring: corrected (our fixes) or original (F1 truncation, first-token confidence and
    update success exactly as the original code; chronoprobe docs conflicts)."""
    topk_approximation: Annotated[bool, SWITCH] = Field(False, exclude=True)
    """Accept a backend's top-k approximation of the distributions CP needs."""
    models: ModelList = Field(default_factory=default_models)
    """The ``--model`` values, parsed (recorded as their redacted text)."""

    @model_validator(mode="before")
    @classmethod
    def _fold_options(cls, data: Any) -> Any:
        """Without a methodology, a dataset goes through its own; the flat options given set the sub-configs."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("methodology") is None and "dataset" in data:
            data["methodology"] = data["dataset"]
        subs = {"persuasion": _fields(data.get("persuasion")), "completion": _fields(data.get("completion"))}
        for flat, targets in _SHORTCUTS.items():
            if data.get(flat) is not None:
                for sub, field in targets:
                    subs[sub][field] = data[flat]
        return {**data, **subs}

    _renamed = accept_renamed()  # last: the validators above see the new names


CONSOLE = {"dynamicqa": (("cp", "CP"),), "mulan": (("f1", "F1"), ("update_success", "update success"))}
"""The numbers a class's console line shows under each methodology, and what it calls them."""


def headline(summary: Summary, model: str, group: str, method: str) -> str:
    """A class's headline numbers with their 95% interval and n, as check.md and the card show them."""
    parts = []
    for position, (name, label) in enumerate(CONSOLE.get(method, ())):
        found = find(summary, model, name, group)
        if found is None or (found.value is None and position > 0):
            continue
        parts.append(f"{label}{unit_note(found)} {cell(found)}")
    return ", ".join(parts) or "–"


def judge_device(device: str) -> str:
    if device != "auto":
        return device
    import torch  # deferred: torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class ConflictsLens(KeepsLayout, Lens[ConflictsRow]):
    """Does context override the model's memory? Coherent persuasion (DynamicQA) or F1 and updates (MuLan)."""

    name = "conflicts"
    kind = "conflicts run"
    row_type = ConflictsRow
    config_type = ConflictsConfig
    config: ConflictsConfig
    card = CardPart(
        question="Does context override its memory?",
        about="DynamicQA and MuLan: persuasion by context, per class of fact.",
        words=sentences,
    )
    checkup = CheckPart(
        # DynamicQA through its own methodology: 4 facts per class, 20, or all of them. A backend without exact
        # distributions (an OpenAI-compatible server) gives its top-k approximation instead, recorded as such; a local
        # model gives the exact ones either way.
        sizes={
            "quick": {"dataset": "dynamicqa", "balanced_limit": 12, "persuasion": {"topk_approximation": True}},
            "standard": {"dataset": "dynamicqa", "balanced_limit": 60, "persuasion": {"topk_approximation": True}},
            "full": {"dataset": "dynamicqa", "persuasion": {"topk_approximation": True}},
        },
        # How often it takes a context's answer, per class: a third of the balanced facts (``--balanced-limit``).
        sizing=Sizing(
            metric="persuaded_pct",
            option="limit",
            share=1 / 3,
            unit="facts",
            more="the whole DynamicQA set: `--budget full`",
        ),
        metric_patterns=(
            "cp",
            "cp_counterfactual",
            "cp_true_context",
            "accuracy_context",
            "accuracy_no_context",
            "accuracy_no_context_original",
            "persuaded_pct",
            "stubborn_pct",
            "se_context",
            "se_no_context",
            "f1",
            "confidence",
            "update_success",
            "f1_per_relation.*",
        ),
    )

    def __init__(self, config: ConflictsConfig, judge: JudgeChoice | None = None) -> None:
        super().__init__(config)
        self.judge = judge
        self.inputs: list[Any] = []
        self.classes: tuple[str, ...] = ()
        self.wording = PromptWording()
        self._models: list[CachedModel] = []

    def check_inputs(self) -> None:
        conflicts_run.check_inputs(self.config)

    def load(self) -> None:
        self.inputs, self.classes = conflicts_run.load_inputs(self.config)
        self.wording = PromptWording.from_file(self.config.wording)  # a bad prompt file fails before any model
        self.loaded = True

    def workload(self) -> Workload:
        """Three prompts per fact (no context, true context, counterfactual) of ten samples each; under
        MuLan's methodology a completion per query and at most an update for each."""
        if not self.loaded:
            self.load()
        if self.config.methodology == "dynamicqa":
            return Workload(items=len(self.inputs), unit="facts", calls=3 * len(self.inputs))
        return Workload(items=len(self.inputs), unit="queries", calls=2 * len(self.inputs), at_most=True)

    @classmethod
    def comparable(cls, run: Run, model: str) -> Comparable:
        """Per class: persuaded and stubborn per fact, accuracy, CP and semantic entropy per item (clustered on the
        fact) under DynamicQA's methodology; F1 and confidence per query, update success under MuLan's."""

        return comparable(run, model)

    def setup(self, cache: CallCache, load_model: ModelLoader) -> None:
        """The DynamicQA methodology's equivalence judge, on the run's ``--device`` unless ``judge_device`` names one."""
        if self.config.methodology != "dynamicqa" or self.judge is not None:
            return

        device = self.config.judge_device if self.config.judge_device != "auto" else load_model.options.value("device")
        device = judge_device(device)  # chosen (torch imported for "auto") before the load is announced
        with load_model.announce(f"loading judge {self.config.judge}"):
            self.judge = load_judge(
                self.config.judge, cache=cache, device=device, allow_fallback=self.config.judge_fallback
            )

    def check(self, model: CachedModel, engine: Engine) -> None:
        conflicts_run.check_models(self.config, [model], self.judge)
        self._models.append(model)

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[ConflictsRow]:
        return conflicts_run.run_model(self.config, model, self.judge, self.inputs, self.wording, progress)

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[ConflictsRow]) -> Summary:
        summary = conflicts_run.summarise(self.config, models, rows, self.classes)
        gaps = conflicts_run.sweep_gaps(self.config, rows, summary, self.classes)
        self.layout = {"classes": list(self.classes), "summary": summary, "gaps": gaps}
        extra = {"dataset": self.config.dataset, "methodology": self.config.methodology}  # as recipe() records them
        return metric_records.summary(self.layout, extra)

    def present(self, run: Run) -> list[str]:
        """The judge fallback if one was taken, then per model each class's headline numbers with their intervals."""
        lines = (
            [f"judge fallback: {self.judge.record}"] if self.judge is not None and self.judge.fallback_reason else []
        )
        seconds = run.provenance.seconds
        took = f" in {seconds:.0f} s" if isinstance(seconds, int | float) else ""
        lines.append(f"wrote {run.path}/report.md, summary.json, items.jsonl{took}")
        for spec, per_class in metric_records.read_detail(self._layout())["summary"].items():
            shown = ", ".join(f"{c}: " + headline(run.summary, spec, c, self.config.methodology) for c in per_class)
            lines.append(f"{spec}: {shown}")
        return lines

    def recipe(self) -> RunRecipe:
        decoding, seeds, judge, extra = conflicts_run.recipe(self.config, self._models, self.judge)
        return RunRecipe(decoding=decoding, seeds=seeds, judge=judge, extra=extra)

    def report(self, folder: Path, rows: Sequence[ConflictsRow], summary: Summary, provenance: Provenance) -> None:
        detail = metric_records.read_detail(self._layout())
        result = {"classes": detail["classes"], "summary": detail["summary"], "provenance": provenance.recorded()}
        if "gaps" in detail:
            result["gaps"] = detail["gaps"]
        conflicts_run.write_files(folder, self.config, rows, result, provenance)

    def run_label(self) -> str:
        return f"-{self.config.dataset}-{self.config.methodology}"
