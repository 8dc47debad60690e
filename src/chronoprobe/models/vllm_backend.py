"""vLLM backend (optional extra: ``pip install 'chronoprobe[vllm]'``, needs a GPU).

vLLM runs the whole request list itself (continuous batching), so one
``generate`` call is one wave. It reports the log-probability of each chosen
token (exact, from the raw logits) but not full next-token distributions, so
it does not claim MEAN_DISTRIBUTION.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from chronoprobe.errors import ConfigError
from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Producer,
    Prompt,
    Sample,
    render_with_tokenizer,
)
from chronoprobe.models.chat_dates import AS_OF, ChatDates
from chronoprobe.models.defaults import VLLM_BATCH


class VLLMConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    revision: str = "main"
    dtype: str = "auto"
    batch_size: int = VLLM_BATCH
    chat_template: bool | None = None
    template_date: str = AS_OF
    """The day the chat template is told (models/chat_dates.py)."""
    trust_remote_code: bool = False
    gpu_memory_utilization: float = 0.85
    spec: str | None = None


class VLLMBackend(Backend):
    capabilities = frozenset(
        {
            Capability.GENERATE,
            Capability.SAMPLE_N,
            Capability.TOKEN_LOGPROBS,
            Capability.FIRST_TOKEN_PROB,
            Capability.CHAT_TEMPLATE,
        }
    )

    def __init__(self, config: VLLMConfig) -> None:
        try:
            import vllm  # deferred: vllm (an extra)
        except ImportError:
            raise ConfigError(
                f"model spec {config.spec or config.model!r}",
                "the vllm backend needs the optional extra: pip install 'chronoprobe[vllm]' (and a GPU)",
            ) from None
        self.config = config
        self.batch_size = config.batch_size
        self._vllm = vllm
        self.llm = vllm.LLM(
            model=config.model,
            revision=config.revision,
            dtype=config.dtype,
            trust_remote_code=config.trust_remote_code,
            gpu_memory_utilization=config.gpu_memory_utilization,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.has_chat_template = bool(getattr(self.tokenizer, "chat_template", None))
        self.use_chat_template = self.has_chat_template if config.chat_template is None else config.chat_template
        if self.use_chat_template and not self.has_chat_template:
            raise ConfigError(
                f"model spec {config.spec or config.model!r}", "--chat-template on, but the tokenizer has none"
            )
        self._info = BackendInfo(
            spec=config.spec or f"vllm:{config.model}",
            backend="vllm",
            model_id=config.model,
            revision=config.revision,
            dtype=config.dtype,
            device="cuda",
            batch_size=config.batch_size,
            chat_template=self.use_chat_template,
            is_chat_model=self.has_chat_template,
            extra={"vllm": getattr(vllm, "__version__", "unknown")},
        )
        self.dates = ChatDates.of(
            getattr(self.tokenizer, "chat_template", None), config.template_date, used=self.use_chat_template
        )
        self._info.record_dates(self.dates)

    @property
    def info(self) -> BackendInfo:
        return self._info

    def render(self, prompt: Prompt) -> str:
        return render_with_tokenizer(self.tokenizer, prompt, chat_template=self.use_chat_template, dates=self.dates)

    def producer(self) -> Producer:
        return super().producer().model_copy(update={"version": f"vllm {self._info.extra.get('vllm', 'unknown')}"})

    def _sampling_params(self, params: DecodingParams) -> Any:
        kwargs: dict[str, Any] = {
            "n": params.n,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_new_tokens,
            "seed": params.seed,
            "stop": list(params.stop) or None,
        }
        if params.top_k is not None:
            kwargs["top_k"] = params.top_k
        if params.token_logprobs or params.first_token_prob:
            kwargs["logprobs"] = 1
        return self._vllm.SamplingParams(**kwargs)

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        rendered = [self.render(p) for p in prompts]
        outputs = self.llm.generate(rendered, self._sampling_params(params), use_tqdm=False)
        want_logprobs = params.token_logprobs or params.first_token_prob
        generations = []
        for text_in, output in zip(rendered, outputs, strict=True):
            samples = []
            for completion in output.outputs:
                ids = list(completion.token_ids)
                lps = None
                if want_logprobs and completion.logprobs is not None:
                    lps = [float(step[token].logprob) for step, token in zip(completion.logprobs, ids, strict=False)]
                finish: Literal["stop", "length"] = "length" if completion.finish_reason == "length" else "stop"
                samples.append(
                    Sample(
                        text=completion.text,
                        token_ids=ids,
                        token_logprobs=lps,
                        finish_reason=finish,
                        first_token_prob=math.exp(lps[0]) if params.first_token_prob and lps else None,
                    )
                )
            generations.append(Generation(rendered_prompt=text_in, samples=samples))
        return generations
