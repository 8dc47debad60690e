"""What an editing run is: which facts, which methods, how they are applied and measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, field_validator, model_validator

from chronoprobe.models.base import DecodingParams, NewTokens
from chronoprobe.models.registry import ModelList, ModelRequest, default_models, parse_model
from chronoprobe.outdated.prompts import CHAT_INSTRUCTION

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
    return value if value == "base-with-context" or isinstance(value, ModelRequest) else parse_model(value)


Counterfactual = Annotated[
    Literal["base-with-context"] | ModelRequest, BeforeValidator(_counterfactual), PlainSerializer(str, return_type=str)
]
"""``base-with-context``, or a ``--model`` value (parsed once, recorded as its redacted text)."""


class EditingConfig(BaseModel):
    """Everything that determines an editing run's results."""

    model_config = ConfigDict(frozen=True)

    models: ModelList = Field(default_factory=default_models)
    """The ``--model`` values, parsed (recorded as their redacted text)."""
    from_run: Path | None = None
    """An ``outdated run`` folder: the facts this model got wrong are edited."""
    dataset: Path | None = None
    """Or a DyKnow ``editing_dataset.json`` (ours or theirs)."""
    select: Selection = "outdated"
    """With ``from_run``: ``outdated``, the facts to edit (DyKnow's rule, the audit report's count);
    ``not-up-to-date``, every fact with no up-to-date answer; or ``auto``, the facts to edit, and every fact that
    is not up-to-date when fewer than ``min_facts`` are facts to edit (the default before 0.2.0)."""
    min_facts: int = Field(10, ge=1)
    limit: int | None = Field(None, ge=1)
    """Only N facts, spread over Table 3's groups (file order within each group)."""
    methods: tuple[Method, ...] = METHODS
    mode: Mode | None = None
    """``single`` (one edit at a time) or ``batch`` (all at once); default per method as DyKnow ran it."""
    scaling: tuple[float, ...] = ()
    """Also edit these fractions of the (seed-42 shuffled) facts, for the scaling curve (DyKnow Figure 3)."""
    locality: bool = True
    """Re-run the whole audit on each edited model and count verdicts that changed on facts not edited."""
    fluency: bool = True
    fluency_tokens: NewTokens = 100
    hparams: Path | None = None
    """A YAML/JSON file overriding ROME/MEMIT hyperparameters (EasyEdit's key names)."""
    stats_corpus: Path | None = None
    """Text corpus for MEMIT's second-moment statistics (default: the shipped Wikipedia paragraphs)."""
    stats_documents: int | None = Field(None, ge=1)
    save_edited: Path | None = None
    """Write each weight-edited model here (safetensors); otherwise edited weights never leave the process."""
    prompts_file: Path | None = None
    """JSON file with the IKE / RAG / SERAC prompt templates to use instead of ours."""
    serac_threshold: float | None = Field(None, gt=0.0, le=1.0)
    serac_scope: str = "embedding"
    """SERAC*'s scope classifier: ``embedding`` (the packaged MiniLM), ``embedding:<model>`` or ``nli:<model>``."""
    serac_counterfactual: Counterfactual = "base-with-context"
    """Who answers in-scope questions: the edited model itself with the edit in context, or another model spec."""
    seed: int = 0
    max_new_tokens: NewTokens = 20
    instruction: str = CHAT_INSTRUCTION
    facts_file: Path | None = None
    """Catalogue for the locality audit when editing from a dataset file (default: the shipped one)."""
    snapshot: str | None = None

    @field_validator("scaling")
    @classmethod
    def _fractions(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        for fraction in value:
            if not 0.0 < fraction <= 1.0:
                raise ValueError(f"scaling fraction {fraction} is not in (0, 1]")
        return tuple(sorted(set(value)))

    @field_validator("methods")
    @classmethod
    def _some_methods(cls, value: tuple[Method, ...]) -> tuple[Method, ...]:
        if not value:
            raise ValueError("no methods given")
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _one_source(self) -> EditingConfig:
        if (self.from_run is None) == (self.dataset is None):
            raise ValueError(
                "give the facts to edit: from_run (an outdated run folder) or dataset (a file), one of them"
            )
        if "serac" in self.methods:
            from chronoprobe.editing.serac import SeracConfig

            SeracConfig(
                scope=self.serac_scope, threshold=self.serac_threshold, counterfactual=str(self.serac_counterfactual)
            )
        if self.mode == "batch" and "rome" in self.methods:
            raise ValueError("ROME edits one fact at a time: --mode batch cannot apply to it (leave --mode out)")
        if "{sentence}" not in self.instruction:
            raise ValueError("instruction must contain {sentence}")
        return self

    def mode_of(self, method: str) -> Mode:
        return self.mode or DEFAULT_MODE.get(method, "single")

    def decoding(self) -> DecodingParams:
        return DecodingParams(max_new_tokens=self.max_new_tokens, temperature=0.0, seed=self.seed)

    def fluency_decoding(self) -> DecodingParams:
        return DecodingParams(max_new_tokens=self.fluency_tokens, temperature=0.0, seed=self.seed)
