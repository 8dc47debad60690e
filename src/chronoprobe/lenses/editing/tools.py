"""The editing lens's tools: ``editing dataset`` (DyKnow's editing dataset from an audit, :mod:`.dataset`)
and ``editing score`` (generations in DyKnow's editing layout, scored: :mod:`.score`)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from chronoprobe import io
from chronoprobe.contract.lens import RunRecipe
from chronoprobe.contract.tool import Tool, ToolContext
from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.dataset import (
    BUILD_RECORD_SUFFIX,
    BuildRecord,
    BuiltDataset,
    Selection,
    build_from_run,
    build_record_path,
    check_run_folder,
    count_lines,
    fact_notes_line,
    read_dataset,
    write_dataset,
)
from chronoprobe.lenses.editing.score import (
    SCORE_KIND,
    EditingScoreSummary,
    Labels,
    scores_summary,
    scoring_extra,
    write_scores,
)
from chronoprobe.metrics.editing import ALL
from chronoprobe.records.fields import Command
from chronoprobe.records.publish import Output, RecordedFile, ResultFolder

__all__ = [
    "DATASET",
    "DEFAULT_DATASET",
    "DatasetResult",
    "DatasetTool",
    "DatasetToolConfig",
    "ScoreTool",
    "ScoreToolConfig",
]

DEFAULT_DATASET = Path("editing_dataset.json")
DATASET = RecordedFile(
    suffix=BUILD_RECORD_SUFFIX,
    keys=frozenset({"sha256"}),
    what="a dataset written by `chronoprobe editing dataset` (or it was changed since)",
    record_name="build record",
    checksum=True,
)
"""A dataset is ours when its build record's checksum matches it (a dataset changed by hand is not)."""


class DatasetToolConfig(BaseModel):
    """``chronoprobe editing dataset``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(renamed_options={"--model": "--for-model"})

    from_: Path | None = None
    """An `outdated run` folder (run.json + items.jsonl) to build from."""
    for_model: str | None = None
    """The model of the run to build for (needed when it has several)."""
    select: Selection = "outdated"
    """outdated: the facts to edit (no up-to-date answer, one outdated at least, none ambiguous: DyKnow's rule,
    as the audit report counts them); not-up-to-date: every fact with no up-to-date answer."""
    out: Path | None = None
    """Where to write the dataset (default editing_dataset.json; with --from). An earlier dataset this command
    wrote is replaced; any other file is refused, never overwritten."""
    dataset: Path | None = None
    """Read an editing_dataset.json (DyKnow's or ours) and summarise it."""


class DatasetResult(BaseModel):
    """What ``editing dataset`` built (and where it wrote it), or the dataset it read."""

    records: list[EditRecord]
    source: str
    """What the records came from, as the console names it."""
    built: BuiltDataset | None = None
    """None: a dataset read (``--dataset``), not built."""
    path: Path | None = None
    """Where the built dataset was written."""


class DatasetTool(Tool[DatasetResult]):
    """Build DyKnow's editing_dataset.json from an outdated audit, or summarise one (--dataset)."""

    name = "editing.dataset"
    command = "editing dataset"
    config_type = DatasetToolConfig
    config: DatasetToolConfig

    @property
    def target(self) -> Path:
        return self.config.out or DEFAULT_DATASET

    def check_inputs(self) -> None:
        config = self.config
        if (config.from_ is None) == (config.dataset is None):
            raise ConfigError("--from/--dataset", "give one of them: a run folder to build from, or a dataset to read")
        if config.dataset is not None and (config.out is not None or config.for_model is not None):
            raise ConfigError("--out/--for-model", "only with --from")
        if config.from_ is not None:
            check_run_folder(config.from_)  # a parent of run folders is named as one, before any output is judged

    def output(self) -> Output | None:
        return Output("--out", self.target, DATASET) if self.config.from_ is not None else None

    def run(self, context: ToolContext) -> DatasetResult:
        config = self.config
        if config.dataset is not None:
            return DatasetResult(records=read_dataset(config.dataset), source=str(config.dataset))
        assert config.from_ is not None
        built = build_from_run(config.from_, model=config.for_model, select=config.select)
        per_fact = set(built.fact_notes.values())
        for note in built.notes:
            if note not in per_fact:
                context.notice(f"[yellow]note[/]: {note}")
        line = fact_notes_line(len(built.fact_notes), "", "the build record")
        if line is not None:
            context.notice(line)
        for fact, why in built.skipped.items():
            context.notice(f"[yellow]skipped[/] {fact}: {why}")
        if not built.records:
            raise ConfigError(
                f"--from {config.from_}",
                f"no facts to edit for {built.model} with --select {config.select}"
                + (" (try --select not-up-to-date)" if config.select == "outdated" else ""),
            )
        source = f"{config.from_} ({built.model}, --select {config.select})"
        return DatasetResult(records=built.records, source=source, built=built, path=self.target)

    def write(self, folder: Path, result: DatasetResult) -> None:

        assert result.built is not None
        write_dataset(folder / self.target.name, result.built.records)
        record = BuildRecord.of(result.built)
        io.write_json_atomic(folder / build_record_path(self.target).name, record.model_dump(mode="json"))

    def present(self, result: DatasetResult) -> list[str]:
        if result.built is None:
            return count_lines(result.records, result.source)
        built = result.built
        lines = count_lines(result.records, result.source, built.select, len(built.skipped))
        return [*lines, f"dataset: {self.target}  build record: {build_record_path(self.target)}"]


class ScoreToolConfig(BaseModel):
    """``chronoprobe editing score``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(renamed_options={"--model": "--only-model"})

    generations: Path
    """DyKnow's root (models_editing/results and RAG/) or its results folder:
    <METHOD>/<single_edits|batch_editing>/<model>/<category>_answers.json."""
    dataset: Path
    """The editing_dataset.json the answers were made for, or a folder with one per model."""
    out: Path
    """Where to write scores.json and report.md (a folder)."""
    labels: Labels = "ours"
    """ours: re-classify every answer; original: DyKnow's labels from <category>_analysis.json."""
    only_model: tuple[str, ...] = ()
    """Only these models: their folders (repeatable; default: all)."""


class ScoreTool(Tool[EditingScoreSummary]):
    """Efficacy, paraphrase success, their harmonic mean (Table 3) and the soft constraint (Table 7)."""

    name = "editing.score"
    command = "editing score"
    config_type = ScoreToolConfig
    config: ScoreToolConfig

    def output(self) -> Output:
        return Output("--out", self.config.out, ResultFolder(SCORE_KIND))

    def recipe(self) -> RunRecipe:
        config = self.config
        return RunRecipe(decoding={}, seeds=[], extra=scoring_extra(config.generations, config.dataset, config.labels))

    def run(self, context: ToolContext) -> EditingScoreSummary:
        config = self.config
        provenance = context.provenance(self.recipe())
        return scores_summary(
            config.generations, config.dataset, provenance, labels=config.labels, models=config.only_model or None
        )

    def write(self, folder: Path, result: EditingScoreSummary) -> None:
        write_scores(folder, result)

    def present(self, result: EditingScoreSummary) -> list[str]:

        lines = []
        for name, methods in result.models.items():
            for method, scores in methods.items():
                everything = scores.groups[ALL]
                lines.append(
                    f"[bold]{name}[/] {method} ({everything.facts} facts): HM {everything.harmonic_mean.format_pct()}  "
                    f"E {everything.efficacy.format_pct()}  P {everything.paraphrase.format_pct()}  "
                    f"soft {everything.soft_constraint.format_pct()}"
                )
                if scores.missing:
                    lines.append(f"  [yellow]{len(scores.missing)} fact(s) without every answer, left out[/]")
        for folder, why in {**result.unlabelled, **result.no_dataset}.items():
            lines.append(f"[yellow]not scored[/] {folder}: {why}")
        return [*lines, f"scores.json and report.md in {self.config.out}"]
