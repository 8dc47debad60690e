"""The recency lens's tools: ``recency label`` (new questions labelled the RecencyQA way, :mod:`.label`),
``recency gate`` (does a question need retrieval, :mod:`.gate`) and ``recency gate-check`` (how well a model
routes with the gate, :mod:`.gate_check`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from rich.text import Text

from chronoprobe import io
from chronoprobe.contract.lens import RunRecipe
from chronoprobe.contract.tool import Answer, Tool, ToolContext, config_error
from chronoprobe.datasets.recency_taxonomy import RecencyClass, parse_label
from chronoprobe.datasets.recencyqa import RecencyItem, describe_source, load_recencyqa, write_recencyqa
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.recency.gate import recency_gate_many
from chronoprobe.lenses.recency.gate_check import Found, GateCheck, GateQuality, heldout_split, measure, quality, save
from chronoprobe.lenses.recency.gate_rule import DEFAULT_SAMPLES, DEFAULT_TEMPERATURE, GateDecision, GateSettings
from chronoprobe.lenses.recency.gate_view import (
    asked_questions,
    decision_lines,
    measured_quality,
    quality_lines,
    router_line,
)
from chronoprobe.lenses.recency.label import LabelConfig, LabelReport, QuestionIn, label_dataset, read_questions
from chronoprobe.lenses.recency.lens import default_data
from chronoprobe.lenses.recency.route_tool import ROUTER_LABEL
from chronoprobe.models.base import BackendInfo
from chronoprobe.models.registry import ModelList, ModelRequest, default_models
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import SWITCH, Cli, Command
from chronoprobe.records.publish import Output, RecordedFile
from chronoprobe.router.model import load_weights
from chronoprobe.router.route import Router

__all__ = [
    "LABELLED",
    "GateCheckResult",
    "GateCheckTool",
    "GateCheckToolConfig",
    "GateResult",
    "GateTool",
    "GateToolConfig",
    "LabelResult",
    "LabelTool",
    "LabelToolConfig",
]

LABELLED = RecordedFile(
    suffix=".report.json",
    keys=frozenset({"report", "provenance"}),
    what="a dataset written by `chronoprobe recency label`",
    record_name="report",
)
"""A labelled dataset is ours when its report sits beside it."""

PROMPT_KINDS = ("label", "label_with_context", "stationarity", "context_generation")
ROUTERS = ("trained", "llm")


class LabelToolConfig(BaseModel):
    """``chronoprobe recency label``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(omit_model_options=("engine",))

    questions: Annotated[Path, Cli(argument="QUESTIONS")]
    """JSONL file, one {"question": ...} per line (q_id, source, hop_type optional)."""
    out: Path = Path("recency_dataset.json")
    """Where to write the dataset, in RecencyQA JSON format (its report beside it). An earlier dataset this
    command wrote is replaced; any other file is refused, never overwritten."""
    labeller: str = "smollm2"
    """Model spec that samples labels and writes and verifies contexts."""
    voter: tuple[str, ...] = ()
    """Stationarity voter model spec (repeatable, up to 3; default: the labeller)."""
    samples: int = Field(13, ge=1)
    """Samples drawn per question for its label (paper: 13)."""
    temperature: float = Field(0.7, ge=0.0)
    """Sampling temperature of the label samples (paper: 0.7, top_p 0.9)."""
    candidates: int = Field(3, ge=1)
    """Context candidates per (question, label) and round."""
    verify_samples: int = Field(13, ge=1)
    """Relabellings that must all agree to verify a context (paper: 13)."""
    context_rounds: int = Field(3, ge=1)
    """Context generation rounds per (question, label) before giving up."""
    require_verified: Annotated[bool, SWITCH] = False
    """Drop questions with an unverified label context (paper behaviour)."""
    retries: bool = True
    """Redraw unparseable label samples at temperature 0.3, then 0."""
    label_max_new_tokens: int = Field(32, ge=1)
    """Tokens per label sample."""
    vote_max_new_tokens: int = Field(32, ge=1)
    """Tokens per stationarity vote."""
    context_max_new_tokens: int = Field(60, ge=1)
    """Tokens per generated context."""
    seed: int = Field(0, ge=0)
    """Decoding seed of the samples."""
    label_prompt: Path | None = None
    """Labelling prompt file (e.g. the original recency_labeling_prompt.txt)."""
    verify_prompt: Path | None = None
    """Relabelling-with-context prompt file ({question}, {context})."""
    stationarity_prompt: Path | None = None
    """Stationarity prompt file ({question}, {label})."""
    context_prompt: Path | None = None
    """Context generation prompt file ({question}, {label})."""

    @field_validator("voter")
    @classmethod
    def _at_most_three(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) > 3:
            raise ValueError(f"at most three voters, got {len(value)}")
        return value

    def label_config(self) -> LabelConfig:
        """The labelling pipeline's settings; a value it refuses is one ConfigError naming the option."""
        try:
            return LabelConfig(
                samples=self.samples,
                temperature=self.temperature,
                candidates=self.candidates,
                verify_samples=self.verify_samples,
                max_context_rounds=self.context_rounds,
                require_verified=self.require_verified,
                seed=self.seed,
                retry_temperatures=(0.3, 0.0) if self.retries else (),
                label_max_new_tokens=self.label_max_new_tokens,
                vote_max_new_tokens=self.vote_max_new_tokens,
                context_max_new_tokens=self.context_max_new_tokens,
                label_prompt=self.label_prompt,
                verify_prompt=self.verify_prompt,
                stationarity_prompt=self.stationarity_prompt,
                context_prompt=self.context_prompt,
            )
        except ValidationError as exc:
            raise config_error(exc, {"max_context_rounds": "--context-rounds"}, "recency label") from None


class LabelResult(BaseModel):
    """What ``recency label`` wrote: the dataset's items, the labelling report and the provenance."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    report_path: Path
    items: list[RecencyItem]
    report: LabelReport
    provenance: Provenance


class LabelTool(Tool[LabelResult]):
    """Label new questions the RecencyQA way: 13 samples, stationarity votes + rules, verified contexts."""

    name = "recency.label"
    command = "recency label"
    config_type = LabelToolConfig
    model_options = True
    config: LabelToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self.settings = self.config.label_config()
        self._questions: list[QuestionIn] = []
        self._specs: tuple[str, list[str]] = (self.config.labeller, list(self.config.voter))
        """The labeller's spec and the voters' (as loaded, once ``run`` loaded them)."""

    def output(self) -> Output:
        return Output("--out", self.config.out, LABELLED)

    def load(self) -> None:

        for kind in PROMPT_KINDS:
            self.settings.template(kind)  # bad prompt files fail before any model loads
        self._questions = read_questions(self.config.questions)

    def run(self, context: ToolContext) -> LabelResult:

        config = self.config
        specs = list(dict.fromkeys([config.labeller, *config.voter]))
        loaded = dict(zip(specs, context.load_models(specs), strict=True))
        labeller = loaded[config.labeller]
        voters = [loaded[v] for v in config.voter] or [labeller]
        with context.progress() as ticks:
            items, report = label_dataset(self._questions, labeller, voters, self.settings, progress=ticks)
        self._specs = (labeller.info.spec, [v.info.spec for v in voters])
        return LabelResult(
            path=config.out,
            report_path=LABELLED.record(config.out),
            items=items,
            report=report,
            provenance=context.provenance(self.recipe()),
        )

    def recipe(self) -> RunRecipe:
        labeller, voters = self._specs
        return RunRecipe(
            decoding=self.settings.model_dump(mode="json"),
            seeds=[self.config.seed],
            extra={"questions_file": str(self.config.questions), "labeller": labeller, "voters": voters},
        )

    def write(self, folder: Path, result: LabelResult) -> None:

        write_recencyqa(folder / result.path.name, result.items)
        record = {
            "report": result.report.model_dump(mode="json"),
            "provenance": result.provenance.model_dump(mode="json"),
        }
        io.write_json_atomic(folder / result.report_path.name, record)

    def present(self, result: LabelResult) -> list[str]:
        report = result.report
        return [
            f"{report.questions} questions: {report.kept} kept ({report.stationary} stationary, "
            f"{report.non_stationary} non-stationary), {len(report.discarded_rule4)} discarded by rule 4, "
            f"{len(report.unlabelled)} unlabelled, {len(report.dropped_unverified)} dropped unverified, "
            f"{len(report.dropped_no_context)} without any context",
            f"contexts: {report.context_targets_verified}/{report.context_targets} labels verified "
            f"({report.candidates_verified}/{report.candidates_generated} candidates, "
            f"{report.context_rounds_used} round(s)); label samples unparseable: "
            f"{report.samples_unparseable_first_pass} first pass, {report.samples_unparseable_final} after "
            f"{report.samples_redrawn} redraws",
            f"dataset: {result.path}  report: {result.report_path}",
        ]


def _recency_class(value: str) -> str:
    """A threshold: one of the recency classes."""

    if parse_label(value) is None:
        raise ValueError(f"{value!r} is not a recency class (e.g. A-Few-Months, A-Year)")
    return value


class GateToolConfig(BaseModel):
    """``chronoprobe recency gate``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(omit_model_options=("engine",))

    question: Annotated[str | None, Cli(argument="QUESTION")] = None
    """The question to route (or use --questions FILE)."""
    questions: Path | None = None
    """Text file, one question per line, or JSONL with a "question" field: gate them all with one model load."""
    router: str | None = None
    """Which gate decides: trained (the classifier shipped with chronoprobe, no generation) or llm (the model
    prompted); default: trained, or llm when --model is given."""
    models: ModelList = ()
    """The model spec that routes with --router llm (one; default: the embedded SmolLM2)."""
    weights: Path | None = None
    """Folder of router weights written by scripts/train_router.py --out DIR (default: the weights shipped
    with chronoprobe), for --router trained."""
    threshold: str = "A-Year"
    """Retrieve when the answer may change within this recency class or sooner."""
    samples: int = Field(DEFAULT_SAMPLES, ge=1)
    """Samples drawn per question by the LLM gate (1 = one greedy answer; more gives a distribution)."""
    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0.0)
    """Sampling temperature when samples > 1."""
    min_share: float = 0.5
    """The probability cut-off: retrieve when P(the answer changes within the threshold) is at least this (for
    the LLM gate, the share of samples)."""
    context: str | None = None
    """Situation in which the question is asked."""
    seed: int = Field(0, ge=0)
    """Decoding seed (when samples > 1)."""
    json_: Annotated[bool, SWITCH] = False
    """Print the decision as JSON (one compact record per line with --questions)."""

    _a_class = field_validator("threshold")(_recency_class)

    @field_validator("min_share")
    @classmethod
    def _a_share(cls, value: float) -> float:
        if not 0 < value <= 1:
            raise ValueError(f"{value} is not a share in (0, 1]")
        return value

    @field_validator("models")
    @classmethod
    def _one_model(cls, value: tuple[ModelRequest, ...]) -> tuple[ModelRequest, ...]:
        if len(value) > 1:
            raise ValueError("the gate uses one model")
        return value

    @field_validator("router")
    @classmethod
    def _a_router(cls, value: str | None) -> str | None:
        if value is not None and value not in ROUTERS:
            raise ValueError(f"{value!r} is not a router: {' or '.join(ROUTERS)}")
        return value

    @property
    def chosen_router(self) -> str:
        """The gate that decides: the one asked, else trained unless a model was given."""
        return self.router or ("llm" if self.models else "trained")

    def llm_models(self) -> tuple[ModelRequest, ...]:
        """The model the LLM gate asks (none for the trained router)."""
        return (self.models or default_models()) if self.chosen_router == "llm" else ()


class GateResult(BaseModel):
    """What ``recency gate`` decided, per question, and how well its model was measured to route (None: never)."""

    decisions: list[GateDecision]
    quality: GateQuality | None
    info: BackendInfo | None
    """The model that routed (None: the trained router)."""


class GateTool(Tool[GateResult]):
    """Say whether QUESTION needs retrieval (its answer may change within the threshold), and why.

    The decision goes to stdout (so `> file` captures it); progress and notices go to stderr.
    """

    name = "recency.gate"
    command = "recency gate"
    config_type = GateToolConfig
    takes_model = True
    model_options = True
    config: GateToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._asked: list[str] = []

    def requested_models(self) -> tuple[ModelRequest, ...]:
        return self.config.llm_models()

    def check_inputs(self) -> None:

        if self.config.chosen_router == "trained" and self.config.context is not None:
            raise ConfigError(
                "--context", "the trained router reads the question alone; give --router llm for a context"
            )

    def load(self) -> None:

        if self.config.chosen_router == "trained":
            load_weights(self.config.weights)  # a missing folder fails before the embedder loads
        self._asked = asked_questions(self.config.question, self.config.questions)

    def run(self, context: ToolContext) -> GateResult:

        config = self.config
        if config.chosen_router == "trained":
            router = Router(config.weights)
            with context.announce("loading the embedding model"):
                router.embedder  # noqa: B018  (loads it under the announcement)
            return GateResult(
                decisions=router.route(self._asked, config.threshold, config.min_share), quality=None, info=None
            )
        [model] = context.load_models(config.llm_models())

        def ask(progress: Callable[[int], None] | None = None) -> list[GateDecision]:
            return recency_gate_many(  # warn=False: the gate's quality is said on the command's own lines
                self._asked,
                model,
                config.threshold,
                config.samples,
                context=config.context,
                temperature=config.temperature,
                min_share=config.min_share,
                seed=config.seed,
                warn=False,
                progress=progress,
            )

        if len(self._asked) == 1:  # one question: no progress bar, so stderr stays empty
            decisions = ask()
        else:
            with context.progress() as ticks:
                decisions = ask(ticks("recency gate", len(self._asked)) if ticks is not None else None)
        measured = measured_quality(
            model.info, config.threshold, config.samples, config.temperature, config.seed, config.min_share
        )
        return GateResult(decisions=decisions, quality=measured, info=model.info)

    @property
    def _many(self) -> bool:
        """Gating a --questions file: a line per decision, the quality on stderr."""
        return self.config.questions is not None

    def answer(self, result: GateResult) -> Sequence[Answer]:
        """The decisions (the command's output), then, under a single decision, the model's measured quality."""

        config = self.config
        label = result.info.label if result.info is not None else ROUTER_LABEL
        shown: list[Answer] = []
        for decision in result.decisions:
            lines = decision_lines(decision, result.quality, label, as_json=config.json_, many=self._many)
            shown.extend(Text.from_markup(line) if lines.markup else line for line in lines.lines)
        if result.info is None:
            return shown
        quality, _ = quality_lines(result.quality, result.info.spec, config.context)
        if quality is not None and not (config.json_ or self._many):
            shown.append(Text.from_markup(quality))
        return shown

    def present(self, result: GateResult) -> list[str]:
        """The measured quality, with --json or --questions, and the warnings (never measured, or weak)."""

        if result.info is None:
            line = router_line(self.config.weights)
            return [line] if line else []
        quality, warnings = quality_lines(result.quality, result.info.spec, self.config.context)
        above = [quality] if quality is not None and (self.config.json_ or self._many) else []
        return [*above, *warnings]


class GateCheckToolConfig(BaseModel):
    """``chronoprobe recency gate-check``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(omit_model_options=("engine",))

    models: ModelList = Field(default_factory=default_models)
    """The model spec to measure (one; default: the embedded SmolLM2)."""
    samples: int = Field(DEFAULT_SAMPLES, ge=1)
    """Samples drawn per question, as `recency gate --samples` will ask."""
    temperature: float = Field(DEFAULT_TEMPERATURE, ge=0.0)
    """Sampling temperature when samples > 1, as `recency gate --temperature`."""
    seed: int = Field(0, ge=0)
    """Decoding seed, as `recency gate --seed`."""
    threshold: str = "A-Year"
    """Score the decisions at this recency class (any threshold reads the same measurement)."""
    min_share: float = Field(0.5, gt=0.0, le=1.0)
    """Score the decisions at this share of samples, as `recency gate`."""
    data: Path | None = None
    """Where the data comes from: a RecencyQA JSON file, or hf:<owner>/<repo> (default: the copy shipped with
    chronoprobe)."""
    limit: int | None = Field(None, ge=1)
    """Only the first N held-out questions (a random subset), for a quick look."""

    _a_class = field_validator("threshold")(_recency_class)

    @field_validator("models")
    @classmethod
    def _one_model(cls, value: tuple[ModelRequest, ...]) -> tuple[ModelRequest, ...]:
        if len(value) != 1:
            raise ValueError("measure one model at a time")
        return value


class GateCheckResult(BaseModel):
    """The measurement ``recency gate-check`` kept, where, and how well the model routes at the threshold."""

    check: GateCheck
    path: Path
    quality: GateQuality


class GateCheckTool(Tool[GateCheckResult]):
    """Measure how well a model routes with `recency gate`, on a held-out RecencyQA split, and keep the result.

    The measurement goes where the gate reads it, ``$CHRONOPROBE_HOME/gate_checks/`` (keyed by the model
    and the gate's settings), not to a path of the user's: no output to claim.
    """

    name = "recency.gate-check"
    command = "recency gate-check"
    config_type = GateCheckToolConfig
    takes_model = True
    model_options = True
    config: GateCheckToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._pool: list[RecencyItem] = []
        self._source: str | Path = ""

    def load(self) -> None:

        self._source = self.config.data or default_data()
        self._pool = load_recencyqa(self._source)

    def run(self, context: ToolContext) -> GateCheckResult:

        config = self.config
        count = len(heldout_split(self._pool)[: config.limit])
        settings = GateSettings(samples=config.samples, temperature=config.temperature, seed=config.seed)
        [model] = context.load_models(config.models)
        with context.progress() as ticks:
            advance = ticks("gate check", count) if ticks is not None else None
            check = measure(
                model, self._pool, settings, dataset=describe_source(self._source), limit=config.limit, progress=advance
            )
        path = save(check)
        measured = quality(
            Found(check=check, path=path, exact=True), RecencyClass.parse(config.threshold), config.min_share
        )
        return GateCheckResult(check=check, path=path, quality=measured)

    def answer(self, result: GateCheckResult) -> list[str]:
        """The measurement, and what it says of the model: the command's output."""
        return [result.quality.line(), f"{result.check.spec} is {result.quality.verdict()}"]

    def present(self, result: GateCheckResult) -> list[str]:
        spec = result.check.spec
        return [f"kept in {result.path}; `recency gate --model {spec}` reads it"]
