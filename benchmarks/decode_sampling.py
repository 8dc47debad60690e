"""n-sample decoding on the hf backend: transformers' growing KV cache and a full-sort top-p
(the previous decode loop) against the in-place cache (models/kv_buffer.py) and the partial-sort
top-p (models/sampling.py). Same model, same prompts, same run.

The workload is the labelling pipeline's verification step: relabelling prompts with a context,
13 samples each, temperature 0.7, top_p 0.9. The script also checks that the cache swap changes
nothing: with the same sampler, both caches give the same samples. Usage:

    python benchmarks/decode_sampling.py [--model smollm2] [--prompts 8] [--samples 13] [--tokens 32]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from chronoprobe.lenses.recency.prompts import builtin
from chronoprobe.models import hf, sampling
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.registry import BackendOptions, load_backend

QUESTIONS = Path(__file__).resolve().parents[1] / "tests" / "assets" / "recency_questions.jsonl"
CONTEXT = (
    "As of March 2024 the figure is published in the company's quarterly filing, which is revised "
    "every three months and was last updated two weeks ago."
)


def full_sort_pick(logits: torch.Tensor, params: DecodingParams, uniforms: torch.Tensor | None) -> torch.Tensor:
    """The previous top-p: sort the whole vocabulary for every row and step (then the same inverse-CDF draw)."""
    if params.greedy:
        return logits.argmax(dim=-1)
    scores = logits / params.temperature
    if params.top_p < 1.0:
        sorted_scores, sorted_idx = torch.sort(scores, descending=True, dim=-1)
        sorted_probs = torch.softmax(sorted_scores, dim=-1)
        drop = sorted_probs.cumsum(dim=-1) - sorted_probs >= params.top_p
        sorted_scores = sorted_scores.masked_fill(drop, float("-inf"))
        scores = torch.full_like(scores, float("-inf")).scatter(-1, sorted_idx, sorted_scores)
    assert uniforms is not None
    return sampling._inverse_cdf(torch.softmax(scores, dim=-1), uniforms)


@contextmanager
def decode_with(*, in_place_cache: bool, pick: Callable[..., torch.Tensor]) -> Iterator[None]:
    saved = hf.preallocate, hf.pick_tokens
    hf.pick_tokens = pick
    if not in_place_cache:
        hf.preallocate = lambda cache, **_: False
    try:
        yield
    finally:
        hf.preallocate, hf.pick_tokens = saved


def questions(count: int) -> list[str]:
    rows = [json.loads(line)["question"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return (rows * (count // len(rows) + 1))[:count]


def timed(backend, prompts: list[Prompt], params: DecodingParams) -> tuple[float, float, list[list[str]]]:  # type: ignore[no-untyped-def]
    before, start = os.times(), time.perf_counter()
    generations = backend.generate(prompts, params)
    after = os.times()
    return time.perf_counter() - start, after.system - before.system, [[s.text for s in g.samples] for g in generations]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--samples", type=int, default=13)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()

    backend = load_backend(args.model, BackendOptions(batch_size=args.prompts))
    template = builtin("label_with_context")
    prompts = [template.fill(question=q, context=CONTEXT) for q in questions(args.prompts)]
    params = DecodingParams(n=args.samples, temperature=0.7, top_p=0.9, seed=0, max_new_tokens=args.tokens)
    backend.generate(prompts[:1], DecodingParams(max_new_tokens=2))  # warm-up

    runs = {}
    for name, in_place, pick in [
        ("previous: growing cache + full sort", False, full_sort_pick),
        ("in-place cache + full sort", True, full_sort_pick),
        ("in-place cache + partial top-p (ours)", True, hf.pick_tokens),
    ]:
        with decode_with(in_place_cache=in_place, pick=pick):
            runs[name] = timed(backend, prompts, params)

    rows = args.prompts * args.samples
    print(
        f"{args.prompts} prompts × {args.samples} samples = {rows} rows, {args.tokens} new tokens, "
        f"{torch.get_num_threads()} threads, model {backend.info.model_id}"
    )
    baseline = next(iter(runs.values()))[0]
    for name, (wall, system, _) in runs.items():
        print(f"  {name:40s} {wall:7.1f} s  ({baseline / wall:4.2f}× the previous loop; kernel CPU {system:5.1f} s)")
    texts = [t for _, _, t in runs.values()]
    same = sum(a == b for ga, gb in zip(texts[0], texts[1], strict=True) for a, b in zip(ga, gb, strict=True))
    print(f"  same sampler, either cache: {same}/{rows} samples identical")


if __name__ == "__main__":
    main()
