"""The recency lens (RecencyQA ``recency eval``) in the shared :class:`~chronoprobe.contract.lens.Lens` shape."""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from chronoprobe.cache import CachedModel
from chronoprobe.contract.check_part import CheckPart
from chronoprobe.contract.lens import Lens, ProgressFactory, RunRecipe, Summary, Workload
from chronoprobe.contract.sizing import Sizing
from chronoprobe.datasets.recencyqa import default_source, describe_source, load_recencyqa, stratified_sample
from chronoprobe.datasets.sources import SHARED_DATA_ENV
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.recency import metric_records
from chronoprobe.lenses.recency.compare import comparable
from chronoprobe.lenses.recency.evaluate import EvalConfig, build_items, evaluate, resolve_templates
from chronoprobe.lenses.recency.outputs import write_eval_files
from chronoprobe.lenses.recency.plain_words import sentences
from chronoprobe.lenses.recency.router_beside import router_beside
from chronoprobe.lenses.recency.rows import RecencyRow
from chronoprobe.lenses.recency.summary import summarise
from chronoprobe.lenses.summary_layout import KeepsLayout
from chronoprobe.metrics.paired import Comparable
from chronoprobe.metrics.records import ALL
from chronoprobe.models.registry import ModelList, default_models
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import Command
from chronoprobe.records.runlog import Metric, Run
from chronoprobe.reports.lens_card import CardPart
from chronoprobe.reports.metric_format import cell, unit_note
from chronoprobe.version import SHIMS_REMOVED_IN

DATA_ENV = SHARED_DATA_ENV
LEGACY_DATA_ENV = "CHRONOPROBE_RECENCYQA"
LEGACY_NOTE = (
    f"{LEGACY_DATA_ENV} is deprecated and removed in {SHIMS_REMOVED_IN}: pass --data, or set {SHARED_DATA_ENV} to a folder "
    "holding recencyqa/RecencyQA.json (without either, the shipped copy is used)"
)


def legacy_data() -> str | None:
    """The file ``$CHRONOPROBE_RECENCYQA`` names, if set (0.1.0's variable; honoured until 0.4.0)."""
    return os.environ.get(LEGACY_DATA_ENV) or None


def default_data() -> str:
    """$CHRONOPROBE_RECENCYQA (deprecated), else $CHRONOPROBE_SHARED_DATA/recencyqa/RecencyQA.json, else the shipped copy."""
    legacy = legacy_data()
    if legacy:
        warnings.warn(LEGACY_NOTE, DeprecationWarning, stacklevel=2)
        return legacy

    return str(default_source())


class RecencyRunConfig(EvalConfig):
    """An evaluation's config plus where its questions come from."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(
        help="Does the model know how fresh an answer must be? Recency classes of RecencyQA: run (or eval), label, gate.",
        aliases={"eval": "The same as `recency run` (its first name, kept)."},
        renamed_options={"--context": "--context-mode"},  # --context is the gate's text
    )

    data: Path | None = None
    """Where the data comes from: a RecencyQA JSON file (or .json.gz), or hf:<owner>/<repo> for the hub (default:
    the copy shipped with chronoprobe, or $CHRONOPROBE_SHARED_DATA/recencyqa)."""
    sample: int | None = Field(None, ge=1)
    """Stratified sample of N questions (stationarity × majority label)."""
    sample_seed: int = Field(0, ge=0)
    """Seed of the stratified sample."""
    models: ModelList = Field(default_factory=default_models)
    """The ``--model`` values, parsed (recorded as their redacted text)."""


class RecencyLens(KeepsLayout, Lens[RecencyRow]):
    """Classify each question's recency class, with and without its contexts."""

    name = "recency"
    kind = "recency eval"
    row_type = RecencyRow
    config_type = RecencyRunConfig
    config: RecencyRunConfig
    card = CardPart(
        question="Does it know how fresh an answer must be?",
        about="RecencyQA: the update interval a question needs.",
        words=sentences,
    )
    checkup = CheckPart(
        # A stratified sample zero-shot (with and without context), or every question under the paper's three
        # strategies.
        sizes={
            "quick": {"sample": 40, "strategy": ("zero-shot",)},
            "standard": {"sample": 200, "strategy": ("zero-shot",)},
            "full": {"strategy": ("zero-shot", "few-shot", "cot")},
        },
        # How often a retrieval gate on its answer decides as the labels would, over the sampled questions.
        sizing=Sizing(metric="zero-shot.without.gate_agreement", option="sample", unit="questions", measured=True),
        metric_patterns=(
            "*.*.accuracy",
            "*.*.tolerant_accuracy",
            "*.*.macro_f1",
            "*.*.tolerant_f1",
            "*.*.unparseable_rate",
            "*.*.gate_agreement",
            "*.*.f1",
            "*.accuracy_delta_pct",
            "*.f1_delta_pct",
            "*.rl1_accuracy",
            "*.rl2_accuracy",
            "*.transition_accuracy",
            "*.all_contexts_right",
        ),
    )

    def __init__(self, config: RecencyRunConfig) -> None:
        super().__init__(config)
        self.source = ""
        self.pool: list[Any] = []
        self.questions: list[Any] = []

    def load(self) -> None:

        for name in self.config.strategy:
            resolve_templates(self.config, name)  # bad prompt files fail before any model loads
        data = self.config.data or default_data()
        self.pool = load_recencyqa(data)
        self.source = describe_source(data)
        self.questions = stratified_sample(self.pool, self.config.sample, self.config.sample_seed)
        if not self.questions:
            raise ConfigError("--sample", "selects no questions")
        if self.config.sample is not None and self.config.sample > len(self.pool):
            self.notes.append(
                f"--sample {self.config.sample}: the data holds {len(self.pool)} questions, so all {len(self.pool)} "
                "are asked"
            )
        self.loaded = True

    def notices(self) -> list[str]:
        legacy = [f"note: {LEGACY_NOTE}"] if self.config.data is None and legacy_data() else []
        return [*legacy, *super().notices()]

    def present(self, run: Run) -> list[str]:
        """Per model, strategy and context: n, accuracy, F1 (strict and tolerant) and the unparseable share, with intervals."""
        lines = []
        for entry in metric_records.read_detail(self._layout())["runs"]:
            found = {
                m.name.rsplit(".", 1)[-1]: m
                for m in run.summary.metrics
                if m.model == entry["model"]
                and m.group == ALL
                and m.name.count(".") == 2
                and m.name.startswith(f"{entry['strategy']}.{entry['context_mode']}.")
            }

            def shown(name: str, found: dict[str, Metric] = found) -> str:
                return cell(found[name], with_n=False) if name in found else "–"

            scale = "; accuracy and F1 on 0–1" if "accuracy" in found and unit_note(found["accuracy"]) else ""
            lines.append(
                f"{entry['model']} {entry['strategy']}, {entry['context_mode']} context: n={entry['n']} "
                f"acc {shown('accuracy')}  tol. acc {shown('tolerant_accuracy')}  F1 {shown('macro_f1')}  "
                f"tol. F1 {shown('tolerant_f1')}  unparseable {entry['unparseable']} "
                f"({shown('unparseable_rate')}) (95% intervals{scale})"
            )
        return lines

    def workload(self) -> Workload:
        """One prompt per question without context and one per context, for each strategy."""

        if not self.loaded:
            self.load()
        per_strategy = sum(len(build_items(self.questions, mode)) for mode in self.config.modes)
        return Workload(items=len(self.questions), unit="questions", calls=per_strategy * len(self.config.strategy))

    @classmethod
    def comparable(cls, run: Run, model: str) -> Comparable:
        """Per strategy and context mode, over every question and per stationarity: each answer's accuracy,
        tolerant accuracy, unparseable flag, gate agreement and confusion cell (clustered on the question)."""

        return comparable(run, model)

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[RecencyRow]:

        rows = evaluate(self.questions, model, self.config, pool=self.pool, progress=progress)
        return [RecencyRow(**row) for row in rows]

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[RecencyRow]) -> Summary:

        self.layout = summarise(rows, self.config.tolerance)
        self.layout["router"] = router_beside(rows)
        summary = metric_records.summary(self.layout, {"dataset": self.source})  # as recipe() records it
        for model in models:  # a model without rows still shows up
            summary.headline.setdefault(model.info.label, {})
        summary.models = [m.info.label for m in models]
        return summary

    def recipe(self) -> RunRecipe:
        config = self.config
        return RunRecipe(
            decoding={s: config.decoding(s).model_dump(mode="json") for s in config.strategy},
            seeds=[config.seed, config.sample_seed],
            extra={
                "dataset": self.source,
                "questions": len(self.questions),
                "pool": len(self.pool),
                "sample": config.sample,
                "sample_seed": config.sample_seed,
                "context": config.context_mode,
                "prompt_files": [str(p) for p in config.prompt_file],
                "answer_prefix": config.answer_prefix,
            },
        )

    def report(self, folder: Path, rows: Sequence[RecencyRow], summary: Summary, provenance: Provenance) -> None:

        detail = copy.deepcopy(self._layout())  # the files add plot names and provenance to their copy
        write_eval_files(folder, [r.model_dump(mode="json") for r in rows], detail, provenance.recorded())
