"""A deterministic stand-in model: a real :class:`Backend` whose answers come from a function.

In the spirit of httpx's ``MockTransport``: the test (or smoke run) supplies a
handler ``handler(prompt, params)`` and gets a backend that goes through the
cache, capability checks, batching and every lens exactly like a real model::

    from chronoprobe.testing import MockBackend, MockReply

    backend = MockBackend(lambda prompt, params: "Lyon" if "Context:" in prompt else "Paris")

The handler receives the rendered prompt (a :class:`MockPrompt`, which is a ``str``
carrying the structured :class:`Prompt` as ``.prompt``) and the decoding parameters. It
returns the answer text, a :class:`MockReply` (to fix token log-probabilities or the mean
next-token distribution), or a list of ``params.n`` of those, one per sample.

What the mock derives when the reply does not say:

* **tokens**: the text split into words, each with its leading whitespace;
  ``max_new_tokens`` and ``stop`` cut the answer as a model's decoding would.
* **token ids**: a hash of each token into a vocabulary of ``vocab_size`` entries
  (id 0 is end-of-sequence); the token texts travel in ``Sample.tokens``.
* **log-probabilities**: ``log(prob)`` for every token (``prob`` from the reply, else the
  backend's ``token_prob``); ``first_token_prob`` is the first token's probability.
* **mean distribution**: at each generated position (end-of-sequence included) the chosen
  token's id gets its probability and the rest is spread evenly over the vocabulary; the
  mean over positions. Equal answers give equal distributions, different answers differ.

Backends built from ``--model mock:...`` specs: ``mock:echo`` (answers with the last line of
the request), ``mock:constant=<text>`` and any name given to :func:`register_mock`.
The cache keys a mock by its name: give different handlers different names.
"""

from __future__ import annotations

import math
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Self

import numpy as np

from chronoprobe.errors import ConfigError
from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Prompt,
    Sample,
    render_with_tokenizer,
    require,
)
from chronoprobe.models.builtin import MockOptions
from chronoprobe.models.chat_dates import AS_OF, ChatDates
from chronoprobe.models.defaults import MOCK_BATCH
from chronoprobe.models.jinja_template import JinjaChatTemplate
from chronoprobe.models.registry import ModelRequest

MOCK_CAPABILITIES: frozenset[Capability] = frozenset(Capability) - {Capability.TOPK_LOGPROBS}
"""What a mock offers unless told otherwise: everything a local model offers."""

EOS_ID = 0
_WORDS = re.compile(r"\s*\S+|\s+")


class MockPrompt(str):
    """The prompt text as the mock rendered it, with the structured prompt it came from."""

    prompt: Prompt

    def __new__(cls, rendered: str, prompt: Prompt) -> Self:
        made = super().__new__(cls, rendered)
        made.prompt = prompt
        return made

    @property
    def request(self) -> str:
        """What was asked: the last user message (or the bare text), without template or answer prefix."""
        users = [m.content for m in self.prompt.messages or () if m.role == "user"]
        if users:
            return users[-1]
        return self.prompt.text if self.prompt.text is not None else ""


@dataclass(frozen=True)
class MockReply:
    """One sample's answer with optional details; anything left ``None`` is derived (see the module doc)."""

    text: str
    tokens: Sequence[str] | None = None
    """The answer cut into tokens; they must join to ``text``."""
    logprobs: Sequence[float] | None = None
    """One log-probability per token."""
    prob: float | None = None
    """Probability of every token when ``logprobs`` is not given (default: the backend's ``token_prob``)."""
    distribution: Sequence[float] | np.ndarray | None = None
    """The sample's mean next-token distribution, returned as is (keep one length per run)."""
    finish_reason: Literal["stop", "length"] = "stop"


MockAnswer = str | MockReply
MockHandler = Callable[[MockPrompt, DecodingParams], MockAnswer | Sequence[MockAnswer]]


def split_tokens(text: str) -> list[str]:
    """Words with their leading whitespace (trailing whitespace is a token of its own)."""
    return _WORDS.findall(text)


def token_id(token: str, vocab_size: int) -> int:
    """A stable id in ``1 .. vocab_size - 1`` (0 is end-of-sequence)."""
    return 1 + zlib.crc32(token.encode("utf-8")) % (vocab_size - 1)


def mean_distribution(ids: Sequence[int], probs: Sequence[float], vocab_size: int, eos_prob: float) -> np.ndarray:
    """Mean over positions of: the position's token gets its probability, the rest is spread evenly."""
    positions = [*zip(ids, probs, strict=True), (EOS_ID, eos_prob)]
    total = np.zeros(vocab_size, dtype=np.float64)
    for index, p in positions:
        row = np.full(vocab_size, (1.0 - p) / (vocab_size - 1))
        row[index] = p
        total += row
    return (total / len(positions)).astype(np.float32)


def _cut(tokens: list[str], logprobs: list[float], params: DecodingParams) -> tuple[list[str], list[float], bool]:
    """Apply ``stop`` (cut before the first stop string) and ``max_new_tokens``; True when the length limit cut."""
    text = "".join(tokens)
    ends = [text.find(s) for s in params.stop if s and s in text]
    if ends:
        end = min(ends)
        kept_tokens: list[str] = []
        kept_logprobs: list[float] = []
        position = 0
        for token, logprob in zip(tokens, logprobs, strict=True):
            if position >= end:
                break
            piece = token[: end - position]
            kept_tokens.append(piece)
            kept_logprobs.append(logprob)
            position += len(token)
        tokens, logprobs = kept_tokens, kept_logprobs
    if len(tokens) > params.max_new_tokens:
        return tokens[: params.max_new_tokens], logprobs[: params.max_new_tokens], True
    return tokens, logprobs, False


class MockBackend(Backend):
    """A backend whose answers come from ``handler``; see the module doc for what it derives.

    ``capabilities`` restricts what it offers (to test refusals); requests that need more
    fail with the same CapabilityError a real backend gives. ``batches`` records the
    rendered prompts of every call that reached the backend (cache misses only).
    """

    def __init__(
        self,
        handler: MockHandler,
        *,
        name: str = "mock",
        capabilities: Iterable[Capability] | None = None,
        chat_template: bool = True,
        batch_size: int = MOCK_BATCH,
        vocab_size: int = 64,
        token_prob: float = 0.9,
        template: str | None = None,
        template_date: str = AS_OF,
    ) -> None:
        if not name:
            raise ConfigError("mock backend", "needs a name")
        if vocab_size < 2:
            raise ConfigError(f"mock backend {name}", "vocab_size must be at least 2")
        if not 0.0 < token_prob <= 1.0:
            raise ConfigError(f"mock backend {name}", "token_prob must be in (0, 1]")
        self.handler = handler
        self.batch_size = batch_size
        self.capabilities = frozenset(MOCK_CAPABILITIES if capabilities is None else capabilities)
        self.chat_template = chat_template
        self.vocab_size = vocab_size
        self.token_prob = token_prob
        self.batches: list[list[str]] = []
        self._lock = threading.Lock()
        self.template = JinjaChatTemplate(template) if template is not None else None
        """A chat template (jinja) to render with, as a real model's; None: the mock's own plain turns."""
        self.dates = ChatDates.of(template, template_date, used=chat_template)
        spec = name if name.startswith("mock:") else f"mock:{name}"
        handler_name = getattr(handler, "__qualname__", type(handler).__qualname__)
        self._info = BackendInfo(
            spec=spec,
            backend="mock",
            model_id=spec,
            revision="mock",
            batch_size=batch_size,
            chat_template=chat_template,
            is_chat_model=chat_template,
            extra={
                "mock": "deterministic stand-in, no model: answers come from a handler",
                "handler": f"{getattr(handler, '__module__', '?')}.{handler_name}",
            },
        )
        self._info.record_dates(self.dates)

    @property
    def info(self) -> BackendInfo:
        return self._info

    @property
    def calls(self) -> int:
        """Prompts that reached the backend."""
        return sum(len(batch) for batch in self.batches)

    def render(self, prompt: Prompt) -> str:
        if self.template is not None:
            return render_with_tokenizer(self.template, prompt, chat_template=self.chat_template, dates=self.dates)
        if self.chat_template and prompt.messages:
            turns = "".join(f"<|{m.role}|>\n{m.content}\n" for m in prompt.messages)
            return f"{turns}<|assistant|>\n{prompt.answer_prefix}"
        text = prompt.text if prompt.text is not None else "\n".join(m.content for m in prompt.messages or ())
        return text + prompt.answer_prefix

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        require(self, params, purpose="this request")
        rendered = [self.render(p) for p in prompts]
        with self._lock:
            self.batches.append(rendered)
        out = []
        for prompt, text in zip(prompts, rendered, strict=True):
            replies = self._replies(self.handler(MockPrompt(text, prompt), params), params.n)
            out.append(Generation(rendered_prompt=text, samples=[self._sample(r, params) for r in replies]))
        return out

    def _replies(self, answer: MockAnswer | Sequence[MockAnswer], n: int) -> list[MockReply]:
        if isinstance(answer, str | MockReply):
            answers: list[MockAnswer] = [answer] * n
        else:
            answers = list(answer)
            if len(answers) != n:
                raise ValueError(
                    f"mock handler {self._info.extra['handler']} returned {len(answers)} answers for n={n}"
                )
        replies = []
        for item in answers:
            if isinstance(item, str):
                item = MockReply(item)
            if not isinstance(item, MockReply):
                raise TypeError(f"mock handler returned {type(item).__name__}; expected str or MockReply")
            replies.append(item)
        return replies

    def _sample(self, reply: MockReply, params: DecodingParams) -> Sample:
        tokens = list(reply.tokens) if reply.tokens is not None else split_tokens(reply.text)
        if "".join(tokens) != reply.text:
            raise ValueError(f"mock reply tokens {tokens!r} do not join to its text {reply.text!r}")
        prob = reply.prob if reply.prob is not None else self.token_prob
        if reply.logprobs is not None:
            logprobs = [float(lp) for lp in reply.logprobs]
            if len(logprobs) != len(tokens):
                raise ValueError(f"mock reply has {len(logprobs)} log-probabilities for {len(tokens)} tokens")
        else:
            logprobs = [math.log(prob)] * len(tokens)
        tokens, logprobs, cut = _cut(tokens, logprobs, params)
        ids = [token_id(t, self.vocab_size) for t in tokens]
        distribution = None
        if params.mean_distribution:
            if reply.distribution is not None:
                distribution = np.asarray(reply.distribution, dtype=np.float32)
            else:
                probs = [math.exp(lp) for lp in logprobs]
                distribution = mean_distribution(ids, probs, self.vocab_size, self.token_prob)
        want_logprobs = params.token_logprobs or params.first_token_prob
        return Sample(
            text="".join(tokens),
            token_ids=ids,
            tokens=tokens,
            token_logprobs=logprobs if want_logprobs else None,
            finish_reason="length" if cut else reply.finish_reason,
            first_token_prob=math.exp(logprobs[0]) if params.first_token_prob and logprobs else None,
            mean_distribution=distribution,
        )


# -- named mocks for ``--model mock:<name>`` ------------------------------------

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_BUILT_IN = ("echo", "constant")
_REGISTRY: dict[str, tuple[MockHandler, dict[str, Any]]] = {}


def _echo(prompt: MockPrompt, params: DecodingParams) -> str:
    lines = [line for line in prompt.request.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def register_mock(name: str, handler: MockHandler, **options: Any) -> None:
    """Make ``--model mock:<name>`` (and ``load_backend("mock:<name>")``) serve ``handler`` in this process.

    ``options`` go to :class:`MockBackend` (``capabilities``, ``vocab_size``, ``token_prob``,
    ``chat_template``, ``template``: a jinja chat template to render with). Registering a name again replaces its handler; cached answers are keyed
    by the name, so use a fresh cache (or a new name) when the handler changes.
    """
    if not _NAME.fullmatch(name) or name in _BUILT_IN:
        raise ConfigError(f"mock name {name!r}", "must be letters, digits, '_', '.' or '-' and not echo or constant")
    unknown = set(options) - {"capabilities", "vocab_size", "token_prob", "chat_template", "template"}
    if unknown:
        raise ConfigError(f"mock name {name!r}", f"unknown options {sorted(unknown)}")
    _REGISTRY[name] = (handler, dict(options))


def unregister_mock(name: str) -> None:
    _REGISTRY.pop(name, None)


def registered_mocks() -> list[str]:
    return sorted(_REGISTRY)


def mock_from_spec(
    target: str, *, batch_size: int | None = None, chat_template: bool | None = None, template_date: str = AS_OF
) -> MockBackend:
    """The backend for ``mock:<target>``: ``echo``, ``constant=<text>`` or a registered name."""
    handler: MockHandler
    options: dict[str, Any] = {}
    if target == "echo":
        handler = _echo
    elif target.startswith("constant="):
        text = target.partition("=")[2]

        def constant(prompt: MockPrompt, params: DecodingParams) -> str:
            return text

        handler = constant
    elif target in _REGISTRY:
        handler, options = _REGISTRY[target]
        options = dict(options)
    else:
        known = ", ".join(["echo", "constant=<text>", *registered_mocks()])
        raise ConfigError(
            f"model spec 'mock:{target}'",
            f"no mock named {target!r}; known: {known} (chronoprobe.testing.register_mock adds one)",
        )
    if chat_template is not None:
        options["chat_template"] = chat_template
    if batch_size is not None:  # else the backend's own default
        options["batch_size"] = batch_size
    return MockBackend(handler, name=target, template_date=template_date, **options)


def load_mock(request: ModelRequest, options: MockOptions) -> MockBackend:
    """The ``mock:`` backend's loader, as its registration (``models/builtin.py``) names it: imported on use."""
    fixed = options.batch_size if isinstance(options.batch_size, int) else None  # auto: the stand-in's own
    return mock_from_spec(
        request.spec.target, chat_template=options.chat_template, template_date=options.template_date, batch_size=fixed
    )
