"""What an editing run is: which facts, which methods, how they are applied and measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, field_validator, model_validator

from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.serac import SeracConfig
from chronoprobe.lenses.outdated.prompts import CHAT_INSTRUCTION
from chronoprobe.models.base import DecodingParams, NewTokens
from chronoprobe.models.registry import ModelList, ModelRequest, default_models, parse_model
from chronoprobe.records.fields import INTERNAL, OUTPUT, Cli, Command
from chronoprobe.renames import accept_renamed
from chronoprobe.values import comma_list

Method = Literal["rome", "memit", "serac", "ike", "ike-null", "rag-gold", "rag-retrieved", "rag-noisy"]
METHODS: tuple[Method, ...] = ("rome", "memit", "serac", "ike", "ike-null", "rag-gold", "rag-retrieved", "rag-noisy")
WEIGHT_METHODS: frozenset[str] = frozenset({"rome", "memit"})
"""Methods that change the model's weights: only a local transformers model can run them."""
PROMPT_METHODS: tuple[str, ...] = tuple(m for m in METHODS if m not in WEIGHT_METHODS)

Mode = Literal["single", "batch"]
DEFAULT_MODE: dict[str, Mode] = {"rome": "single", "memit": "batch", "serac": "batch"}
"""How DyKnow's Table 3 applied each method: ROME one edit after another, MEMIT and SERAC all at once."""

COLUMN: dict[str, str] = {
    "rome": "ROME",
    "memit": "MEMIT",
    "serac": "SERAC*",
    "ike-null": "IKE",
    "ike": "IKE (fact given)",
    "rag-retrieved": "RAG retrieved",
    "rag-gold": "RAG gold",
    "rag-noisy": "RAG noisy",
}
"""Table column per method. "IKE" is what DyKnow's Table 3 reports (the realistic-null run); SERAC* is our stand-in."""

Selection = Literal["auto", "outdated", "not-up-to-date"]


def _counterfactual(value: Any) -> Any:
    return value if value == "base-with-context" else parse_model(value)


Counterfactual = Annotated[
    Literal["base-with-context"] | ModelRequest, BeforeValidator(_counterfactual), PlainSerializer(str, return_type=str)
]
"""``base-with-context``, or a ``--model`` value (parsed once, recorded as its redacted text)."""


class EditingConfig(BaseModel):
    """Everything that determines an editing run's results (each field's docstring is its option's help)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    renamed_fields: ClassVar[dict[str, str]] = {
        "from_run": "from_",
        "methods": "method",
        "limit": "balanced_limit",
        "prompts_file": "wording",
        "seed": "template_seed",
        "facts_file": "facts",
    }
    """Keywords 0.1.0 released, accepted until 0.4.0 (:mod:`chronoprobe.renames`)."""
    cli: ClassVar[Command] = Command(
        help="Can it be fixed? Edit the facts an audit found wrong, build DyKnow's editing dataset, score edited models.",
        omit_model_options=(
            "device_map",
            "quantize",
            "sampler",
        ),  # weights edited in place on one device, greedy answers
        renamed_options={"--seed": "--template-seed", "--limit": "--balanced-limit", "--prompts": "--wording"},
    )

    models: ModelList = Field(default_factory=default_models)
    """The ``--model`` values, parsed (recorded as their redacted text)."""
    from_: Path | None = None
    """An `outdated run` folder: edit the facts this model got wrong."""
    dataset: Path | None = None
    """Or an editing_dataset.json (DyKnow's or ours) to edit."""
    method: tuple[Method, ...] = METHODS
    """Comma-separated (or repeated): rome, memit, serac, ike, ike-null, rag-gold, rag-retrieved, rag-noisy
    (default: all)."""
    mode: Mode | None = None
    """single (one edit after another) or batch (all at once); default per method as DyKnow ran it (ROME single,
    MEMIT and SERAC batch)."""
    scaling: tuple[float, ...] = ()
    """Also edit these fractions of the (seed-42 shuffled) facts together, e.g. 0.25,0.5,0.75,1 (Figure 3)."""
    select: Selection = "outdated"
    """With --from: outdated (the facts to edit: DyKnow's rule, as the audit report counts them), not-up-to-date
    (every fact with no up-to-date answer), or auto (outdated; not-up-to-date when fewer than 10 facts are
    outdated, the default before 0.2.0)."""
    min_facts: Annotated[int, INTERNAL] = Field(10, ge=1)
    """With ``select="auto"``: fewer facts to edit than this, and every fact that is not up-to-date qualifies."""
    balanced_limit: int | None = Field(None, ge=1)
    """At most N facts in total, spread evenly over Politicians, Teams and Positions (file order within each)."""
    locality: bool = True
    """Re-run the whole audit on each edited model."""
    fluency: bool = True
    """Generate 100 tokens per edit prompt for n-gram entropy."""
    fluency_tokens: Annotated[NewTokens, INTERNAL] = 100
    hparams: Path | None = None
    """YAML/JSON overriding ROME/MEMIT hyperparameters (EasyEdit's key names)."""
    stats_corpus: Path | None = None
    """Text corpus for MEMIT's statistics: .txt (one document per line) or .jsonl ({'text': ...}) (default: the
    shipped Wikipedia paragraphs)."""
    stats_documents: int | None = Field(None, ge=1)
    """Use at most N documents of the statistics corpus."""
    save_edited: Annotated[Path | None, OUTPUT] = None
    """Write each weight-edited model here (safetensors); otherwise edited weights stay in memory."""
    wording: Path | None = None
    """JSON file with the IKE / RAG / SERAC prompt templates to use instead of ours."""
    serac_threshold: float | None = Field(None, gt=0.0, le=1.0)
    """SERAC scope threshold (cosine similarity, default 0.77)."""
    serac_scope: str = "embedding"
    """SERAC* scope classifier: embedding (the packaged MiniLM), embedding:<model> or nli:<hf id>."""
    serac_counterfactual: Counterfactual = "base-with-context"
    """Who answers SERAC*'s in-scope questions: base-with-context (the model itself, edit in context) or another
    model spec (loaded with the run's --dtype, --device ...)."""
    template_seed: int = 0
    """Seed of ROME/MEMIT's context templates (also the greedy decoding's recorded seed, as before the rename)."""
    max_new_tokens: NewTokens = 20
    """Tokens to generate per answer."""
    instruction: Annotated[str, INTERNAL] = CHAT_INSTRUCTION
    facts: Annotated[Path | None, INTERNAL] = None
    """Catalogue for the locality audit when editing from a dataset file (default: the shipped one)."""
    snapshot: Annotated[str | None, Cli(internal=True, text_path=True)] = None

    @field_validator("method", mode="before")
    @classmethod
    def _method_list(cls, value: Any) -> Any:
        """``"ike,rag-gold"`` or ``["rome", "ike,rag-gold"]``: every method named, in order."""
        if not isinstance(value, str | list | tuple):
            return value
        named = comma_list(value)
        unknown = [v for v in named if v not in METHODS]
        if unknown:
            raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
        return tuple(named)

    @field_validator("scaling", mode="before")
    @classmethod
    def _fraction_list(cls, value: Any) -> Any:
        """``"0.25,0.5"`` or ``["0.25", 0.5]``: the fractions as numbers."""
        if not isinstance(value, str | list | tuple):
            return value
        fractions = []
        for part in comma_list(value):
            try:
                fractions.append(float(part))
            except (TypeError, ValueError):
                raise ValueError(f"{part!r} is not a number (give fractions like 0.25,0.5,0.75,1)") from None
        return tuple(fractions)

    @field_validator("scaling")
    @classmethod
    def _fractions(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        for fraction in value:
            if not 0.0 < fraction <= 1.0:
                raise ValueError(f"{fraction} is not in (0, 1]")
        return tuple(sorted(set(value)))

    @field_validator("method")
    @classmethod
    def _some_methods(cls, value: tuple[Method, ...]) -> tuple[Method, ...]:
        if not value:
            raise ValueError("no methods given")
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _one_source(self) -> EditingConfig:
        if (self.from_ is None) == (self.dataset is None):
            raise ConfigError(
                "--from/--dataset",
                "give the facts to edit: from_ (an outdated run folder, --from) or dataset (a file, --dataset), one of them",
            )
        if "serac" in self.method:
            SeracConfig(
                scope=self.serac_scope, threshold=self.serac_threshold, counterfactual=str(self.serac_counterfactual)
            )
        if self.mode == "batch" and "rome" in self.method:
            raise ValueError("ROME edits one fact at a time: --mode batch cannot apply to it (leave --mode out)")
        if "{sentence}" not in self.instruction:
            raise ValueError("instruction must contain {sentence}")
        return self

    def mode_of(self, method: str) -> Mode:
        return self.mode or DEFAULT_MODE.get(method, "single")

    def decoding(self) -> DecodingParams:
        return DecodingParams(max_new_tokens=self.max_new_tokens, temperature=0.0, seed=self.template_seed)

    def fluency_decoding(self) -> DecodingParams:
        return DecodingParams(max_new_tokens=self.fluency_tokens, temperature=0.0, seed=self.template_seed)

    _renamed = accept_renamed()  # last: the validators above see the new names
