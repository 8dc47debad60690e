"""llama.cpp backend (``llamacpp:<path.gguf>``): any GGUF file, run without dequantising it.

What it is for is memory: llama.cpp keeps the file's quantised weights, so a model needs about its
file size in RAM, where the ``gguf:`` path (transformers) needs four bytes per parameter.

Every prompt is decoded as its own sequence in one fixed layout: the prompt runs in chunks of
:data:`PROMPT_CHUNK` tokens counted from its first token, then one token per step. llama.cpp's
answers change with how prompts share a decode (the same prompts decoded one by one and sixteen at
a time agreed on 260 of 390 answers), so prompts never share a decode: a prompt's answer depends on
the prompt alone, as our cache assumes (``cache.py``), and ``--batch-size`` only sets how many
prompts go to the cache in one transaction. The one thing kept between prompts is the KV cache of
whole chunks the next prompt shares with the previous one, computed in the very layout the next
prompt would use.

Log-probabilities, the first token's probability and the mean next-token distribution come from
the logits of this decode (one row per step), not from ``logits_all`` completions.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronoprobe import threads
from chronoprobe.errors import ConfigError
from chronoprobe.models.base import (
    LOCAL_DECODER_CAPABILITIES,
    Backend,
    BackendInfo,
    DecodingParams,
    Generation,
    Producer,
    Prompt,
    Sample,
    render_with_tokenizer,
)
from chronoprobe.models.chat_dates import AS_OF, ChatDates
from chronoprobe.models.defaults import LLAMACPP_BATCH
from chronoprobe.models.embedded import gguf_digest
from chronoprobe.models.jinja_template import JinjaChatTemplate

INSTALL = "pip install 'chronoprobe[llamacpp]'"
PROMPT_CHUNK = 32
"""Prompt tokens per decode call. The chunks are counted from the prompt's start, so their layout is the
prompt's own, and whole chunks shared with the previous prompt can be kept (:meth:`LlamaCppBackend._prefill`)."""
DEFAULT_CONTEXT = 4096
"""Context window (prompt plus answer); longer prompts are refused before any decode."""


class LlamaCppConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    spec: str
    batch_size: int = LLAMACPP_BATCH
    """Prompts per generate call (each still decoded alone): how many answers one cache transaction stores."""
    chat_template: bool | None = None
    template_date: str = AS_OF
    """The day the chat template is told (models/chat_dates.py)."""
    context: int = DEFAULT_CONTEXT
    model_id: str | None = None
    """What results call the model; the file's name when None."""


def import_llama_cpp(where: str) -> Any:
    """The llama_cpp module, with OpenMP threads told to sleep while they wait (unless the user chose)."""
    if threads.policy_label() != "torch":
        # llama.cpp's OpenMP threads otherwise spin at every barrier and stall when other processes are busy.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp  # deferred: llama-cpp-python (an extra)
    except ImportError as exc:
        raise ConfigError(
            where, f"llama-cpp-python is not installed or failed to load ({exc}); run {INSTALL}"
        ) from None
    return llama_cpp


def open_llama(llama_cpp: Any, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(**kwargs)`` with llama.cpp's extra weight buffers (repacking, AMX) turned off.

    On this project's machines (AMX-capable CPUs in a VM) the AMX buffers crash the first decode
    with a segmentation fault, in llama-cpp-python's own ``create_completion`` too; plain CPU
    buffers run. ``Llama`` exposes no switch, so its default model parameters are wrapped while it loads.
    """
    low_level: Any = sys.modules["llama_cpp.llama_cpp"]
    original = low_level.llama_model_default_params

    def without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = without_extra_buffers
    try:
        return llama_cpp.Llama(**kwargs)
    finally:
        low_level.llama_model_default_params = original


class LlamaCppBackend(Backend):
    capabilities = LOCAL_DECODER_CAPABILITIES

    def __init__(self, config: LlamaCppConfig) -> None:
        self.config = config
        self.prompt_chunk = PROMPT_CHUNK
        self._prompt_in_cache: list[int] = []
        """The prompt whose KV cache the context holds (its decode's tokens follow it there)."""
        where = f"model spec {config.spec!r}"
        path = Path(config.path).expanduser()
        if not path.is_file():
            raise ConfigError(where, f"GGUF file {path} does not exist")
        llama_cpp = import_llama_cpp(where)
        self._lib = llama_cpp
        self.cpu_threads = _LlamaThreads()
        try:
            self.llm = open_llama(
                llama_cpp,
                model_path=str(path),
                n_ctx=config.context,
                n_batch=512,
                n_ubatch=512,
                n_threads=self.cpu_threads.cores,
                logits_all=False,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ConfigError(where, f"llama.cpp could not load {path.name}: {exc}") from None
        self.n_ctx = int(self.llm.n_ctx())
        self.n_vocab = int(self.llm.n_vocab())
        self._vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        template = self.llm.metadata.get("tokenizer.chat_template")
        self.has_chat_template = bool(template)
        self.use_chat_template = self.has_chat_template if config.chat_template is None else config.chat_template
        if self.use_chat_template and not self.has_chat_template:
            raise ConfigError(where, "--chat-template on, but the GGUF file has no chat template")
        self._template = (
            JinjaChatTemplate(
                template, bos=self._token_text(self.llm.token_bos()), eos=self._token_text(self.llm.token_eos())
            )
            if template
            else None
        )
        self.dates = ChatDates.of(template, config.template_date, used=self.use_chat_template)
        self._info = BackendInfo(
            spec=config.spec,
            backend="llamacpp",
            model_id=config.model_id or path.name,
            revision=f"gguf-sha256:{gguf_digest(path)[:16]}",  # a changed file never serves old answers
            dtype=_file_type(self.llm.metadata),
            device="cpu",
            batch_size=config.batch_size,
            chat_template=self.use_chat_template,
            is_chat_model=self.has_chat_template,
            extra={"llama_cpp": str(getattr(llama_cpp, "__version__", "unknown")), "context": str(self.n_ctx)},
        )
        self._info.record_dates(self.dates)

    def _token_text(self, token: int) -> str:
        if token < 0:
            return ""
        return bytes(self.llm.detokenize([token], special=True)).decode("utf-8", errors="replace")

    @property
    def info(self) -> BackendInfo:
        return self._info

    def render(self, prompt: Prompt) -> str:
        return render_with_tokenizer(self._template, prompt, chat_template=self.use_chat_template, dates=self.dates)

    def producer(self) -> Producer:
        version = f"llama-cpp-python {getattr(self._lib, '__version__', 'unknown')}"
        return super().producer().model_copy(update={"version": version, "threads": self.cpu_threads.current})

    def token_ids(self, rendered: str) -> list[int]:
        # A rendered chat template already holds its special tokens, as in the hf backend.
        return list(self.llm.tokenize(rendered.encode("utf-8"), add_bos=not self.use_chat_template, special=True))

    def plan_batches(self, rendered_prompts: Sequence[str], params: DecodingParams | None = None) -> list[list[int]]:
        """Fixed-size batches in request order; refuses, before any decode, a prompt the context cannot hold."""
        room = self.n_ctx - (params.max_new_tokens if params is not None else 0)
        for rendered in rendered_prompts:
            length = len(self.token_ids(rendered))
            if length > room:
                raise ConfigError(
                    f"model {self._info.spec}",
                    f"a prompt of {length} tokens plus the answer does not fit llama.cpp's context of {self.n_ctx} tokens",
                )
        return super().plan_batches(rendered_prompts, params)

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        used = self.cpu_threads.adjust(self._lib, self.llm.ctx)
        self._info.extra["threads"] = ",".join(str(n) for n in sorted(used))
        generations = []
        for prompt in prompts:
            rendered = self.render(prompt)
            generations.append(
                Generation(rendered_prompt=rendered, samples=self._decode(self.token_ids(rendered), params))
            )
        return generations

    def _prefill(self, token_ids: Sequence[int]) -> np.ndarray:
        """Run the prompt in its fixed chunks; the logits after its last token.

        Whole chunks the previous prompt ran with the same tokens are kept: their KV cache was
        computed in the same layout, so it is the one this prompt would compute (bit for bit,
        checked on the audit's prompts in every order).
        """
        reused = self._reusable_tokens(token_ids)
        memory = self._lib.llama_get_memory(self.llm.ctx)
        if reused:
            self._lib.llama_memory_seq_rm(memory, 0, reused, -1)
        else:
            self._lib.llama_memory_clear(memory, True)
        self.llm.reset()
        self.llm.n_tokens = reused
        for start in range(reused, len(token_ids), self.prompt_chunk):
            self.llm.eval(list(token_ids[start : start + self.prompt_chunk]))
        self._prompt_in_cache = list(token_ids)
        return self._last_logits()

    def _reusable_tokens(self, token_ids: Sequence[int]) -> int:
        """Tokens of whole chunks this prompt shares with the one whose KV cache is held (at least one token is run)."""
        shared = 0
        for held, wanted in zip(self._prompt_in_cache, token_ids[:-1], strict=False):
            if held != wanted:
                break
            shared += 1
        return shared // self.prompt_chunk * self.prompt_chunk

    def _last_logits(self) -> np.ndarray:
        pointer = self._lib.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).astype(np.float32, copy=True)

    def _decode(self, token_ids: Sequence[int], params: DecodingParams) -> list[Sample]:
        """The prompt runs once; each of the n samples continues from its KV cache with its own random stream."""
        prompt_logits = self._prefill(token_ids)
        prompt_length = len(token_ids)
        samples = []
        for index in range(params.n):
            if index:
                self._lib.llama_memory_seq_rm(self._lib.llama_get_memory(self.llm.ctx), 0, prompt_length, -1)
                self.llm.n_tokens = prompt_length
            rng = np.random.default_rng([params.seed, index]) if not params.greedy else None
            samples.append(self._continue(prompt_logits, params, rng))
        return samples

    def _continue(self, logits: np.ndarray, params: DecodingParams, rng: np.random.Generator | None) -> Sample:
        ids: list[int] = []
        logprobs: list[float] = []
        dist_sum = np.zeros(self.n_vocab, dtype=np.float64) if params.mean_distribution else None
        hit_eos = False
        for step in range(params.max_new_tokens):
            log_probs = _log_softmax(logits)
            token = pick_token(logits, params, None if rng is None else float(rng.random()))
            if dist_sum is not None:
                dist_sum += np.exp(log_probs)
            ids.append(token)
            logprobs.append(float(log_probs[token]))
            if self._lib.llama_vocab_is_eog(self._vocab, token):
                hit_eos = True
                break
            if step == params.max_new_tokens - 1:
                break
            self.llm.eval([token])
            logits = self._last_logits()
        return self._sample(ids, logprobs, hit_eos, dist_sum, params)

    def _sample(
        self, ids: list[int], logprobs: list[float], hit_eos: bool, dist_sum: np.ndarray | None, params: DecodingParams
    ) -> Sample:
        text_ids = ids[:-1] if hit_eos else ids
        text = bytes(self.llm.detokenize(text_ids, special=False)).decode("utf-8", errors="replace")
        finish: Literal["stop", "length"] = "stop" if hit_eos else "length"
        if params.stop:
            cut = min((text.find(s) for s in params.stop if s in text), default=-1)
            if cut >= 0:
                text, finish = text[:cut], "stop"
        mean = None if dist_sum is None else (dist_sum / max(1, len(ids))).astype(np.float32)
        return Sample(
            text=text,
            token_ids=ids,
            token_logprobs=logprobs if params.token_logprobs or params.first_token_prob else None,
            finish_reason=finish,
            first_token_prob=math.exp(logprobs[0]) if params.first_token_prob and logprobs else None,
            mean_distribution=mean,
        )

    def token_strings(self, token_ids: Sequence[int]) -> list[str]:
        """Decoded text of each token, for metrics that look at individual tokens."""
        return [self._token_text(t) for t in token_ids]

    def close(self) -> None:
        self.llm.close()


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - float(logits.max())
    result: np.ndarray = shifted - math.log(float(np.exp(shifted).sum()))
    return result


def pick_token(logits: np.ndarray, params: DecodingParams, uniform: float | None) -> int:
    """Greedy, or one draw by inverse CDF over the temperature-, top-k- and top-p-filtered distribution."""
    if params.greedy or uniform is None:
        return int(np.argmax(logits))
    scores = logits.astype(np.float64) / params.temperature
    order = np.argsort(-scores, kind="stable")
    if params.top_k is not None:
        order = order[: params.top_k]
    weights = np.exp(scores[order] - scores[order[0]])
    weights /= weights.sum()
    if params.top_p < 1.0:
        cumulative = np.cumsum(weights)
        keep = (cumulative - weights) < params.top_p  # up to and including the token that reaches top_p
        weights = weights * keep
    cumulative = np.cumsum(weights)
    position = int(np.searchsorted(cumulative, uniform * cumulative[-1], side="right"))
    return int(order[min(position, len(order) - 1)])


def _file_type(metadata: dict[str, str]) -> str:
    """The GGUF's weight type as llama.cpp names it (``general.file_type``), for the record."""
    return f"gguf-ftype-{metadata['general.file_type']}" if "general.file_type" in metadata else "gguf"


class _LlamaThreads:
    """llama.cpp's thread count: every usable core, or ``CHRONOPROBE_CPU_THREADS=<n>``.

    Unlike torch's (chronoprobe.threads), it does not step down when other processes are busy: with
    OpenMP's passive waiting, a decode step on this 2-core machine at load 9.6 took 59 ms with two
    threads and 159 ms with one, since the scheduler shares the cores per thread.
    """

    def __init__(self) -> None:
        self.mode = threads.policy()
        self.cores = threads.usable_cores()
        self.current = int(self.mode) if self.mode.isdigit() else self.cores
        self.used: set[int] = set()

    def adjust(self, lib: Any, ctx: Any) -> set[int]:
        lib.llama_set_n_threads(ctx, self.current, self.current)
        self.used.add(self.current)
        return self.used
