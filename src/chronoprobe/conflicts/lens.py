"""The conflicts lens (DynamicQA and MuLan, either methodology) in the shared :class:`~chronoprobe.lens.Lens` shape."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, model_validator

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.conflicts import records
from chronoprobe.conflicts import run as conflicts_run
from chronoprobe.conflicts.prompts import PromptWording
from chronoprobe.conflicts.rows import ConflictsRow
from chronoprobe.judges import JudgeChoice
from chronoprobe.lens import Announce, Lens, ProgressFactory, RunRecipe, Summary, Workload
from chronoprobe.models.registry import ModelList, default_models
from chronoprobe.provenance import Provenance


class ConflictsConfig(conflicts_run.RunConfig):
    """A conflicts run: dataset, methodology, their options and the equivalence judge."""

    judge: str = "embedding"
    """Equivalence judge of the DynamicQA methodology: embedding[:<model>], nli[:<hf id>], exact."""
    judge_fallback: bool = False
    judge_device: str = "auto"
    models: ModelList = Field(default_factory=default_models)
    """The ``--model`` values, parsed (recorded as their redacted text)."""

    @model_validator(mode="before")
    @classmethod
    def _own_methodology(cls, data: Any) -> Any:
        """Without a methodology, a dataset goes through its own (as ``conflicts run`` does)."""
        if isinstance(data, dict) and data.get("methodology") is None and "dataset" in data:
            return {**data, "methodology": data["dataset"]}
        return data


def judge_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class ConflictsLens(Lens[ConflictsRow]):
    """Does context override the model's memory? Coherent persuasion (DynamicQA) or F1 and updates (MuLan)."""

    name = "conflicts"
    kind = "conflicts run"
    row_type = ConflictsRow
    config_type = ConflictsConfig
    config: ConflictsConfig
    question = "Does context override its memory?"
    about = "DynamicQA and MuLan: persuasion by context, per class of fact."
    sizes: ClassVar[dict[str, dict[str, Any]]] = {
        "quick": {"dataset": "dynamicqa", "limit": 12, "persuasion": {"topk_approximation": True}},
        "standard": {"dataset": "dynamicqa", "limit": 60, "persuasion": {"topk_approximation": True}},
        "full": {"dataset": "dynamicqa", "persuasion": {"topk_approximation": True}},
    }
    """DynamicQA through its own methodology: 4 facts per class, 20, or all of them. A backend without exact
    distributions (an OpenAI-compatible server) gives its top-k approximation instead, recorded as such; a local
    model gives the exact ones either way."""
    metric_patterns = (
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
        self.wording = PromptWording.from_file(self.config.prompt_file)  # a bad prompt file fails before any model
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
    def plain_words(cls, summary: Summary, model: str) -> list[str]:
        from chronoprobe.conflicts.words import sentences

        return sentences(summary, model)

    def setup(self, cache: CallCache, announce: Announce | None = None) -> None:
        if self.config.methodology != "dynamicqa" or self.judge is not None:
            return
        from chronoprobe.judges import load_judge

        with (announce or (lambda _: nullcontext()))(f"loading judge {self.config.judge}"):
            self.judge = load_judge(
                self.config.judge,
                cache=cache,
                device=judge_device(self.config.judge_device),
                allow_fallback=self.config.judge_fallback,
            )

    def check(self, model: CachedModel) -> None:
        conflicts_run.check_models(self.config, [model], self.judge)
        self._models.append(model)

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[ConflictsRow]:
        return conflicts_run.run_model(self.config, model, self.judge, self.inputs, self.wording, progress)

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[ConflictsRow]) -> Summary:
        summary = conflicts_run.summarise(self.config, models, rows, self.classes)
        gaps = conflicts_run.sweep_gaps(self.config, rows, summary, self.classes)
        return self.summary_from_detail({"classes": list(self.classes), "summary": summary, "gaps": gaps})

    @classmethod
    def summary_from_detail(cls, detail: dict[str, Any]) -> Summary:
        typed = records.read_detail(detail)
        headline: dict[str, dict[str, float | None]] = {}
        for spec, per_class in typed["summary"].items():
            headline[spec] = {}
            for name, values in per_class.items():
                for key in ("cp", "accuracy_context", "f1", "update_success"):
                    if isinstance(values.get(key), int | float):
                        headline[spec][f"{name}.{key}"] = values[key]
        return Summary(
            lens=cls.name,
            models=list(typed["summary"]),
            headline=headline,
            detail=detail,
            metrics=records.metrics(typed),
        )

    @classmethod
    def dataset_label(cls, summary: Summary, provenance: Provenance) -> str:
        return records.dataset(provenance)

    @classmethod
    def read_old_summary(cls, data: dict[str, Any], kind: str | None) -> tuple[str, Summary] | None:
        if kind != cls.kind and not ("classes" in data and "summary" in data):
            return None
        return cls.kind, cls.old_file_summary(data)

    def recipe(self) -> RunRecipe:
        decoding, seeds, judge, extra = conflicts_run.recipe(self.config, self._models, self.judge)
        return RunRecipe(decoding=decoding, seeds=seeds, judge=judge, extra=extra)

    def report(self, folder: Path, rows: Sequence[ConflictsRow], summary: Summary, provenance: Provenance) -> None:
        detail = records.read_detail(summary.detail)
        result = {"classes": detail["classes"], "summary": detail["summary"], "provenance": provenance.recorded()}
        if "gaps" in detail:
            result["gaps"] = detail["gaps"]
        conflicts_run.write_files(folder, self.config, rows, result, provenance)

    def run_label(self) -> str:
        return f"-{self.config.dataset}-{self.config.methodology}"
