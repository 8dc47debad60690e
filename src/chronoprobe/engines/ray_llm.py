"""``vllm:`` specs under ``--engine ray``: Ray Data LLM's vLLM processor instead of our actor pool.

Needs a GPU cluster with ``ray[llm]`` and vLLM installed; nothing here runs in CI (no GPU), so
every import is guarded and a missing piece is a one-line error. The driver renders the prompts
(chat template applied), so the processor's own chat-template stage is off. vLLM seeds each
request from ``SamplingParams.seed``, so outputs do not depend on how requests are batched.
Only plain generation is offered (text, token ids, finish reason): lenses that need
log-probabilities or distributions are refused before any request.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

from chronoprobe.engines.base import ModelSource
from chronoprobe.engines.ray_errors import user_error
from chronoprobe.errors import CapabilityError, ChronoprobeError, ConfigError
from chronoprobe.models.base import Backend, DecodingParams, Generation, Prompt, Sample
from chronoprobe.models.builtin import VLLMOptions, vllm_config


def sampling_params(params: DecodingParams) -> dict[str, Any]:
    """vLLM sampling parameters for one request, as the vllm backend sets them."""
    chosen: dict[str, Any] = {
        "n": params.n,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "max_tokens": params.max_new_tokens,
        "seed": params.seed,
    }
    if params.stop:
        chosen["stop"] = list(params.stop)
    if params.top_k is not None:
        chosen["top_k"] = params.top_k
    return chosen


def vllm_batches(
    label: str,
    workers: int | None,
    backend: Backend,
    source: ModelSource,
    batches: Sequence[Sequence[Prompt]],
    params: DecodingParams,
) -> Iterator[tuple[int, list[Generation]]]:
    """Run ``batches`` through the processor; ``label``: the engine as the user named it, ``workers``: its concurrency."""
    where = f"--engine {label} with {backend.info.spec}"
    if params.n != 1 or params.token_logprobs or params.mean_distribution or params.first_token_prob:
        raise CapabilityError(
            where, "Ray Data LLM's vLLM processor gives one plain sample per prompt; use --engine local for this lens"
        )
    try:
        import ray  # deferred: ray (an extra)
        from ray.data.llm import build_processor, vLLMEngineProcessorConfig  # deferred: ray (an extra)
    except ImportError as exc:
        raise ConfigError(where, f"needs Ray Data LLM and vLLM: pip install 'ray[llm]' vllm ({exc})") from None

    vllm = vllm_config(source.request, source.options.for_backend(VLLMOptions))  # what the vllm backend would run
    config = vLLMEngineProcessorConfig(
        model_source=vllm.model,
        engine_kwargs={"revision": vllm.revision, "dtype": vllm.dtype, "trust_remote_code": vllm.trust_remote_code},
        concurrency=workers or max(1, int(ray.cluster_resources().get("GPU", 1))),
        batch_size=vllm.batch_size,
        chat_template_stage=False,  # the driver rendered the template into the prompt
    )
    chosen = sampling_params(params)
    processor = build_processor(
        config,
        preprocess=lambda row: {
            "position": row["position"],
            "slot": row["slot"],
            "prompt": row["prompt"],
            "sampling_params": chosen,
        },
        postprocess=lambda row: {
            "position": row["position"],
            "slot": row["slot"],
            "text": row["generated_text"],
            "token_ids": list(row.get("generated_tokens") or []),
            "finish": str(row.get("finish_reason") or "stop"),
        },
    )
    rows = [
        {"position": b, "slot": s, "prompt": backend.render(prompt)}
        for b, batch in enumerate(batches)
        for s, prompt in enumerate(batch)
    ]
    done: dict[int, list[Generation | None]] = {b: [None] * len(batch) for b, batch in enumerate(batches)}
    try:
        for row in processor(ray.data.from_items(rows)).iter_rows():
            b, s = int(row["position"]), int(row["slot"])
            finish: Literal["stop", "length"] = "length" if row["finish"] == "length" else "stop"
            sample = Sample(text=str(row["text"]), token_ids=[int(t) for t in row["token_ids"]], finish_reason=finish)
            done[b][s] = Generation(rendered_prompt=backend.render(batches[b][s]), samples=[sample])
            if all(g is not None for g in done[b]):
                yield b, [g for g in done.pop(b) if g is not None]
    except ChronoprobeError:
        raise
    except Exception as exc:
        raise user_error(exc, label) from None
