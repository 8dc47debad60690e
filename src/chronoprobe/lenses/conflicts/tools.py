"""The conflicts lens's tool: ``conflicts contexts``, natural contexts for MuLan facts (:mod:`.contexts`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from chronoprobe import io
from chronoprobe.cache import CachedModel
from chronoprobe.contract.lens import RunRecipe
from chronoprobe.contract.tool import Tool, ToolContext
from chronoprobe.datasets import mulan as ml
from chronoprobe.datasets.mulan import MulanQuery
from chronoprobe.judges.embedding import Embedder
from chronoprobe.judges.nli import NLIModel
from chronoprobe.lenses.conflicts.contexts import ContextRow, ContextsConfig, build_contexts
from chronoprobe.lenses.conflicts.lens import judge_device
from chronoprobe.lenses.conflicts.prompts import PromptWording
from chronoprobe.lenses.conflicts.run import MULAN_ALIASES, MULAN_TEMPLATES, mulan_inputs
from chronoprobe.lenses.conflicts.sources import Input, check_inputs, shared_path
from chronoprobe.models.base import NewTokens
from chronoprobe.models.registry import ModelList, ModelRequest, default_models
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import SWITCH, TEXT_PATH, Command
from chronoprobe.records.publish import Output, RecordedFile

__all__ = ["CONTEXTS", "ContextsResult", "ContextsTool", "ContextsToolConfig"]

CONTEXTS = RecordedFile(
    suffix=".provenance.json",
    keys=frozenset({"command", "packages", "models"}),
    what="a contexts file written by `chronoprobe conflicts contexts`",
    record_name="provenance",
)
"""A contexts file is ours when its provenance sits beside it."""


Entailment = Callable[[Sequence[tuple[str, str]]], list[float]]
Embed = Callable[[Sequence[str]], np.ndarray]


class ContextsToolConfig(BaseModel):
    """``chronoprobe conflicts contexts``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    cli: ClassVar[Command] = Command(
        omit_model_options=("engine", "sampler"),
        renamed_options={
            "--aliases": "--aliases-file",
            "--limit": "--balanced-limit",
            "--prompt-file": "--wording",
            "--seed": "--sample-seed",
        },
    )

    models: ModelList = Field(default_factory=default_models)
    """The generator model spec (one; default: the embedded SmolLM2)."""
    data: Path | None = None
    """Where the data comes from: a MuLan queries JSONL (default: the hub id coastalcph/fm_queries)."""
    aliases_file: Path | None = None
    """MuLan aliases (JSON map or fm_aliases JSONL)."""
    templates: Path | None = None
    """MuLan clean.json templates."""
    nli: Annotated[str, TEXT_PATH] = "microsoft/deberta-large-mnli"
    """NLI model (hub id or folder) for the entailment filter."""
    no_nli_filter: Annotated[bool, SWITCH] = False
    """Keep every passage that mentions the object (recorded)."""
    min_entailment: float = Field(0.95, ge=0.0, le=1.0)
    """Keep passages whose entailment probability is at least this."""
    per_class: int = Field(2500, ge=1)
    """Facts sampled per class."""
    sample_seed: int = Field(0, ge=0)
    """Seed of the per-class sample."""
    max_new_tokens: NewTokens = 120
    """Tokens to generate per passage."""
    balanced_limit: int | None = Field(None, ge=1)
    """At most N facts in total (not per class), spread evenly over the classes."""
    wording: Path | None = None
    """JSON file replacing our prompt wording (key passage)."""
    out: Path = Path("results/conflicts/mulan_contexts.jsonl")
    """Where to write the contexts JSONL (a provenance JSON is written next to it). An earlier contexts file this
    command wrote is replaced; any other file is refused, never overwritten."""

    @field_validator("models")
    @classmethod
    def _one_generator(cls, value: tuple[ModelRequest, ...]) -> tuple[ModelRequest, ...]:
        if len(value) != 1:
            raise ValueError("contexts takes exactly one generator model")
        return value


class ContextsResult(BaseModel):
    """What ``conflicts contexts`` wrote: the kept rows, why the others were dropped, and the provenance."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    rows: list[ContextRow]
    dropped: dict[str, int]
    provenance: Provenance


class ContextsTool(Tool[ContextsResult]):
    """Write Wikipedia-style contexts for MuLan facts (generate, NLI-filter, swap the object, subsample)."""

    name = "conflicts.contexts"
    command = "conflicts contexts"
    config_type = ContextsToolConfig
    model_options = True
    takes_model = True
    config: ContextsToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._queries: list[MulanQuery] = []
        self._pool: list[MulanQuery] = []
        self._templates: dict[str, list[str]] = {}
        self._aliases: dict[str, list[str]] = {}
        self._wording = PromptWording()
        self._settings = ContextsConfig()
        self._record: dict[str, Any] = {}

    def check_inputs(self) -> None:

        config = self.config
        extra = [Input("--wording", config.wording)] if config.wording is not None else []
        check_inputs([*mulan_inputs(config.data, config.templates, config.aliases_file), *extra], self.command)

    def output(self) -> Output:
        return Output("--out", self.config.out, CONTEXTS)

    def load(self) -> None:

        config = self.config
        self._wording = PromptWording.from_file(config.wording)  # a bad prompt file fails before any model loads
        self._settings = ContextsConfig(
            min_entailment=None if config.no_nli_filter else config.min_entailment,
            per_class=config.per_class,
            seed=config.sample_seed,
            max_new_tokens=config.max_new_tokens,
        )
        self._pool = ml.load_queries(config.data or ml.QUERIES_HUB_ID)
        self._queries = ml.take_balanced_facts(self._pool, config.balanced_limit)
        self._templates = ml.load_templates(config.templates or shared_path(MULAN_TEMPLATES, "--templates"))
        self._aliases = ml.load_aliases(config.aliases_file or shared_path(MULAN_ALIASES, "--aliases-file"))

    def run(self, context: ToolContext) -> ContextsResult:

        config = self.config
        device = judge_device(context.options.value("device"))
        entail = None
        nli_record = "none (--no-nli-filter)"
        if not config.no_nli_filter:
            with context.announce(f"loading NLI model {config.nli}"):
                nli_model = NLIModel(config.nli, cache=context.cache, device=device)
            entail = nli_model.entailment
            nli_record = f"nli:{nli_model.model_id}@{nli_model.revision} entailment >= {config.min_entailment}"
        embedder = Embedder(cache=context.cache, device=device)
        [generator] = context.load_models(config.models)
        rows, dropped = self._build(generator, entail, embedder.embed, context)
        self._record = {"judge": nli_record, "embedding": embedder.model_id, "dropped": dropped, "kept": len(rows)}
        return ContextsResult(path=config.out, rows=rows, dropped=dropped, provenance=context.provenance(self.recipe()))

    def _build(
        self, generator: CachedModel, entail: Entailment | None, embed: Embed, context: ToolContext
    ) -> tuple[list[ContextRow], dict[str, int]]:
        with context.progress() as ticks:
            advance = ticks("passages", len({q.fact_id for q in self._queries})) if ticks is not None else None
            return build_contexts(
                self._queries,
                self._templates,
                self._aliases,
                generator,
                entail,
                embed,
                self._settings,
                self._wording,
                advance,
                pool=self._pool,
            )

    def recipe(self) -> RunRecipe:
        record = self._record
        return RunRecipe(
            decoding={"max_new_tokens": self._settings.max_new_tokens, "temperature": 0.0},
            seeds=[self.config.sample_seed],
            judge=record.get("judge"),
            extra={
                "embedding": record.get("embedding"),
                "dropped": record.get("dropped"),
                "kept": record.get("kept"),
                "per_class": self.config.per_class,
            },
        )

    def write(self, folder: Path, result: ContextsResult) -> None:

        out = self.config.out
        io.write_jsonl_atomic(folder / out.name, [row.model_dump(mode="json") for row in result.rows])
        io.write_json_atomic(folder / CONTEXTS.record(out).name, result.provenance.model_dump(mode="json"))

    def present(self, result: ContextsResult) -> list[str]:
        return [f"wrote {len(result.rows)} contexts to {result.path} (dropped: {result.dropped})"]
