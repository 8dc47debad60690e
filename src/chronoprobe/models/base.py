"""The one interface every model backend implements.

A caller builds :class:`Prompt` objects (an instruction for chat models plus an
optional completion prefix, or a bare text for base models), picks
:class:`DecodingParams`, and asks a backend for :class:`Generation` results.
Backends declare what they can do as :class:`Capability` flags; callers state
what they need with :func:`require` *before* any work starts.

Backends never talk to the cache themselves: :class:`chronoprobe.cache.CachedModel`
wraps any backend so every call goes through the one SQLite cache.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

import numpy as np
from annotated_types import Ge
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from chronoprobe.errors import CapabilityError
from chronoprobe.models.chat_dates import ChatDates

__all__ = [
    "DEFAULT_SAMPLER",
    "LOCAL_DECODER_CAPABILITIES",
    "MAX_NEW_TOKENS",
    "SAMPLERS",
    "UNKEYED_SAMPLER",
    "Backend",
    "BackendInfo",
    "Capability",
    "Capable",
    "DecodingParams",
    "Generation",
    "Message",
    "NewTokens",
    "Producer",
    "Prompt",
    "Sample",
    "Sampler",
    "render_with_tokenizer",
    "require",
]

Sampler = Literal["inverse-cdf", "multinomial"]
"""How the hf decode loop draws a sampled token (``models/sampling.py``)."""
SAMPLERS: tuple[Sampler, ...] = ("inverse-cdf", "multinomial")
DEFAULT_SAMPLER: Sampler = "inverse-cdf"
UNKEYED_SAMPLER: Sampler = "multinomial"
"""The sampler of releases before 0.2.0, whose cache keys named no sampler: its keys still name none,
so samples cached by those releases serve ``--sampler multinomial``."""


class Capability(enum.StrEnum):
    GENERATE = "generate"
    """Plain text generation."""
    SAMPLE_N = "sample_n"
    """n samples per prompt sharing one prompt forward pass."""
    TOKEN_LOGPROBS = "token_logprobs"
    """Log-probability of each generated token (full distribution, exact)."""
    TOPK_LOGPROBS = "topk_logprobs"
    """Only the top-k log-probabilities per position (API servers)."""
    MEAN_DISTRIBUTION = "mean_distribution"
    """Mean next-token distribution over a sample's generated positions."""
    FIRST_TOKEN_PROB = "first_token_prob"
    """Probability of the first answer token."""
    CHAT_TEMPLATE = "chat_template"
    """The backend can render chat messages with the model's template."""


LOCAL_DECODER_CAPABILITIES = frozenset(
    {
        Capability.GENERATE,
        Capability.SAMPLE_N,
        Capability.TOKEN_LOGPROBS,
        Capability.MEAN_DISTRIBUTION,
        Capability.FIRST_TOKEN_PROB,
        Capability.CHAT_TEMPLATE,
    }
)
"""What a backend that runs the decode loop itself offers: it sees the full logits of every step."""


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class Prompt(BaseModel):
    """What to send to a model, independent of how the backend renders it.

    ``messages`` is used when the backend applies a chat template; ``text`` is
    the bare prompt for base models (and for chat models with the template off).
    A prompt may give both; the backend picks by its chat-template setting.
    ``answer_prefix`` is appended after the rendered prompt in both cases
    (for example a sentence the model should complete).
    """

    model_config = ConfigDict(frozen=True)

    text: str | None = None
    messages: tuple[Message, ...] | None = None
    answer_prefix: str = ""

    @model_validator(mode="after")
    def _has_content(self) -> Prompt:
        if self.text is None and not self.messages:
            raise ValueError("a prompt needs text or messages")
        return self

    @classmethod
    def chat(
        cls, user: str, *, system: str | None = None, fallback_text: str | None = None, answer_prefix: str = ""
    ) -> Prompt:
        messages = ((Message(role="system", content=system),) if system else ()) + (Message(role="user", content=user),)
        return cls(messages=messages, text=fallback_text, answer_prefix=answer_prefix)


MAX_NEW_TOKENS = 4096
"""The most tokens one answer may ask for, on every backend."""


def _token_budget(value: int) -> int:
    if not 1 <= value <= MAX_NEW_TOKENS:
        raise ValueError(f"{value} new tokens is outside the allowed range, 1 to {MAX_NEW_TOKENS}")
    return value


NewTokens = Annotated[int, Ge(1), AfterValidator(_token_budget)]
"""A number of new tokens to generate, 1 to :data:`MAX_NEW_TOKENS`: the type of every ``max_new_tokens``
field (decoding and lens configs alike), so a value out of range is refused where the options are read
(``Ge(1)`` also tells a generated command its option's least value)."""


class DecodingParams(BaseModel):
    """Every parameter that changes what a model returns; all of it goes into the cache key."""

    model_config = ConfigDict(frozen=True)

    max_new_tokens: NewTokens = 20
    temperature: float = Field(0.0, ge=0.0)
    """0 means greedy decoding."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int | None = Field(None, ge=1)
    n: int = Field(1, ge=1, le=1024)
    seed: int = 0
    token_logprobs: bool = False
    mean_distribution: bool = False
    first_token_prob: bool = False
    stop: tuple[str, ...] = ()

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def needed_capabilities(self) -> set[Capability]:
        needed = {Capability.GENERATE}
        if self.n > 1:
            needed.add(Capability.SAMPLE_N)
        if self.token_logprobs:
            needed.add(Capability.TOKEN_LOGPROBS)
        if self.mean_distribution:
            needed.add(Capability.MEAN_DISTRIBUTION)
        if self.first_token_prob:
            needed.add(Capability.FIRST_TOKEN_PROB)
        return needed


class Sample(BaseModel):
    """One generated continuation."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    token_ids: list[int] = Field(default_factory=list)
    token_logprobs: list[float] | None = None
    finish_reason: Literal["stop", "length"] = "stop"
    first_token_prob: float | None = None
    tokens: list[str] | None = None
    """Each generated token's text as the server reports it (API backends, with log-probabilities)."""
    mean_distribution: np.ndarray | None = None
    """Mean of softmax(raw logits) over generated positions (EOS included), shape (vocab,)."""

    @property
    def mean_logprob(self) -> float | None:
        """Length-normalised log-likelihood of the sample."""
        if not self.token_logprobs:
            return None
        return float(sum(self.token_logprobs) / len(self.token_logprobs))


class Generation(BaseModel):
    """All samples for one prompt, plus the exact string the model saw."""

    rendered_prompt: str
    samples: list[Sample]

    @property
    def text(self) -> str:
        return self.samples[0].text


class BackendInfo(BaseModel):
    """What produced a result; recorded in every result file."""

    spec: str
    backend: str
    model_id: str
    revision: str
    dtype: str | None = None
    device: str | None = None
    batch_size: int | None = None
    chat_template: bool = False
    is_chat_model: bool = False
    extra: dict[str, str] = Field(default_factory=dict)
    name: str | None = None
    """Short display name for plots and tables (``--model NAME=SPEC``, else derived from the spec); not in cache keys."""
    edit: str | None = None
    """Set while the weights are edited: a hash of the method, its hyperparameters and the edits (in cache keys)."""
    sampler: str | None = None
    """How this backend draws sampled tokens (hf: ``inverse-cdf`` or ``multinomial``; None: the server's or
    library's own); in the cache keys of sampled calls, except ``multinomial`` (see :data:`UNKEYED_SAMPLER`)."""
    given_name: str | None = None
    """The NAME of ``--model NAME=SPEC``, when the user gave one; not in cache keys."""
    template_date: str | None = None
    """The day its chat template was told (YYYY-MM-DD; ``template``: none, the template kept its own, the
    machine's clock where it reads one); None where no chat template is rendered here (it is off, or a server
    renders it). Not in cache keys: the rendered prompt, which is, holds the date (models/chat_dates.py)."""
    template_takes_date: list[str] | None = None
    """What in its chat template takes or states a date (``date_string``, ``strftime_now``, ``Today Date``,
    ``Cutting Knowledge Date``); empty: nothing; None: unknown (a server's template, or an older release)."""

    def record_dates(self, dates: ChatDates) -> None:
        """Record what the chat template is told and what in it takes a date."""
        self.template_date = dates.told
        self.template_takes_date = list(dates.markers) if dates.markers is not None else None

    @property
    def label(self) -> str:
        """What rows, summaries and reports call this model: the name the user gave, else the spec."""
        return self.given_name or self.spec


class Producer(BaseModel):
    """What computed an answer: recorded with it in the call cache, so a rerun that finds it there can say."""

    model_config = ConfigDict(frozen=True)

    backend: str
    version: str | None = None
    """The library or server that computed it (``torch 2.5.1, transformers 4.57.1``)."""
    device: str | None = None
    dtype: str | None = None
    threads: int | None = None
    """The CPU threads it computed with; None off the CPU or where unknown (a server)."""
    batch_size: int | None = None
    """Prompts per batch."""
    engine: str | None = None
    """The engine that ran it (``ray`` ...), when not this process."""


class Backend(abc.ABC):
    """A model that turns prompts into generations."""

    capabilities: frozenset[Capability] = frozenset({Capability.GENERATE})
    batch_size: int = 1
    """Prompts per batch the default :meth:`plan_batches` plans: the backend's configuration, which its
    ``info.batch_size`` records (never read back from there)."""

    @property
    @abc.abstractmethod
    def info(self) -> BackendInfo: ...

    @abc.abstractmethod
    def render(self, prompt: Prompt) -> str:
        """The exact text the model will see (used in the cache key)."""

    @abc.abstractmethod
    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        """Generate for every prompt; results are in the same order as ``prompts``."""

    def plan_batches(self, rendered_prompts: Sequence[str], params: DecodingParams | None = None) -> list[list[int]]:
        """Split prompt indices into the batches the backend will run.

        Planned over the whole request, so a resumed run sees the same batches. ``params`` (the request's
        decoding, ``n`` included) lets a backend size its batches in rows rather than prompts.
        """
        size = max(1, self.batch_size)
        order = list(range(len(rendered_prompts)))
        return [order[i : i + size] for i in range(0, len(order), size)]

    def render_many(self, prompts: Sequence[Prompt]) -> list[str]:
        """:meth:`render` of every prompt, in order (a backend not yet loaded looks them up in one go)."""
        return [self.render(p) for p in prompts]

    def producer(self) -> Producer:
        """What computed the latest generations, as the call cache records it beside them."""
        info = self.info
        return Producer(backend=info.backend, device=info.device, dtype=info.dtype, batch_size=info.batch_size)

    def close(self) -> None:  # noqa: B027 - optional hook: most backends hold nothing to release
        """Release resources (threads, connections)."""


def render_with_tokenizer(
    tokenizer: Any, prompt: Prompt, *, chat_template: bool, dates: ChatDates | None = None
) -> str:
    """The text a local model sees: its chat template applied, or the bare prompt text.

    The one place a local backend (hf, gguf, the embedded models, llamacpp, vllm) renders a chat template.
    ``dates``: the day the template is told (its ``date_string`` and ``strftime_now``,
    :mod:`chronoprobe.models.chat_dates`); None leaves the template's own behaviour."""
    if chat_template and prompt.messages:
        messages = [m.model_dump() for m in prompt.messages]
        variables = dates.variables() if dates is not None else {}
        rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **variables)
        return str(rendered) + prompt.answer_prefix
    text = prompt.text if prompt.text is not None else "\n".join(m.content for m in prompt.messages or ())
    return text + prompt.answer_prefix


class Capable(Protocol):
    """What :func:`require` looks at: a backend, or a cached model (which answers without loading its backend)."""

    @property
    def info(self) -> BackendInfo: ...

    @property
    def capabilities(self) -> frozenset[Capability]: ...


def require(backend: Capable, needed: set[Capability] | DecodingParams, *, purpose: str) -> None:
    """Fail before any work if ``backend`` lacks a capability ``purpose`` needs."""
    wanted = needed.needed_capabilities() if isinstance(needed, DecodingParams) else set(needed)
    missing = sorted(c.value for c in wanted - set(backend.capabilities))
    if missing:
        raise CapabilityError(
            f"model {backend.info.spec}",
            f"{purpose} needs {', '.join(missing)}, which the {backend.info.backend} backend does not provide",
        )
