"""Prompts per second of the embedded models side by side, on the outdated audit's prompts, in one run.

Each model in turn (default: SmolLM2 then Gemma 3 270M, loaded in this process, the hf backend as a run
loads it) answers the first ``--facts`` facts x 3 paraphrases of the shipped catalogue, greedy, 20 new tokens,
as ``outdated run`` asks them (no call cache). Per model it prints prompts/s, the answer tokens per prompt
(a base model that never says it is done runs every answer to the limit), the vocabulary, and what the
vocabulary head alone costs: one projection of the batch's last hidden states to every token, timed on its
own, times the decode steps. ``--samples N`` asks the conflicts lens's way instead (N sampled answers per
prompt at temperature 0.5, with each sample's mean next-token distribution). docs/scale.md explains the
difference. Usage:

    python benchmarks/embedded_speed.py [--model smollm2 --model gemma3-270m] [--facts 4] [--samples 0]
"""

from __future__ import annotations

import argparse
import gc
import time

import torch

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.lenses.outdated.prompts import fact_prompts
from chronoprobe.models.base import DecodingParams
from chronoprobe.models.registry import BackendOptions, load_backend


def head_seconds(model: torch.nn.Module, rows: int, repeats: int = 3) -> float:
    """One vocabulary projection of ``rows`` hidden states, timed alone."""
    head = model.get_output_embeddings()
    hidden = torch.randn(rows, head.weight.shape[1], dtype=head.weight.dtype, device=head.weight.device)
    with torch.inference_mode():
        head(hidden)
        started = time.perf_counter()
        for _ in range(repeats):
            head(hidden)
    return (time.perf_counter() - started) / repeats


def measure(spec: str, facts: int, samples: int) -> dict[str, float | int | str]:
    backend = load_backend(spec, BackendOptions())
    prompts = [p for fact in load_catalogue()[:facts] for p in fact_prompts(fact)]
    if samples:
        params = DecodingParams(
            n=samples, temperature=0.5, max_new_tokens=20, seed=10, token_logprobs=True, mean_distribution=True
        )
    else:
        params = DecodingParams(max_new_tokens=20, temperature=0.0, seed=0)
    backend.generate(prompts[:1], params.model_copy(update={"max_new_tokens": 2}))  # warm up
    started = time.perf_counter()
    answers = backend.generate(prompts, params)
    seconds = time.perf_counter() - started
    tokens = [len(s.token_ids) for g in answers for s in g.samples]
    rows = len(prompts) * params.n
    steps = max(tokens)  # at most; finished rows leave the batch
    model = backend.model  # type: ignore[attr-defined]  # the hf backend's transformers model
    head = head_seconds(model, min(rows, 64)) * steps * max(1, rows // 64)
    vocabulary = int(model.get_output_embeddings().weight.shape[0])
    result: dict[str, float | int | str] = {
        "model": spec,
        "vocabulary": vocabulary,
        "prompts": len(prompts),
        "prompts_per_s": len(prompts) / seconds,
        "tokens_per_answer": sum(tokens) / len(tokens),
        "seconds": seconds,
        "head_share": min(1.0, head / seconds),
    }
    del backend, model, answers
    gc.collect()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", help="model spec (repeatable; default: smollm2 and gemma3-270m)")
    parser.add_argument("--facts", type=int, default=4)
    parser.add_argument("--samples", type=int, default=0, help="sampled answers per prompt (0: greedy, one)")
    args = parser.parse_args()
    results = [measure(spec, args.facts, args.samples) for spec in args.model or ["smollm2", "gemma3-270m"]]
    print(f"{'model':>24s} {'vocab':>8s} {'prompts':>7s} {'prompts/s':>9s} {'tokens/answer':>13s} {'head share':>10s}")
    for r in results:
        print(
            f"{r['model']!s:>24.24s} {r['vocabulary']:>8d} {r['prompts']:>7d} {r['prompts_per_s']:>9.2f} "
            f"{r['tokens_per_answer']:>13.1f} {r['head_share']:>9.0%}"
        )
    if len(results) > 1:
        first, last = results[0], results[-1]
        print(
            f"{first['model']} / {last['model']}: {float(first['prompts_per_s']) / float(last['prompts_per_s']):.1f}x"
        )


if __name__ == "__main__":
    main()
