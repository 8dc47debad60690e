"""CP + semantic entropy: the original pattern vs our pipeline, same model, same items, same run.

Original pattern: one ``model.generate(num_return_sequences=n, do_sample=True, output_logits=True)``
per input, per-sample distributions computed on the CPU from the returned per-step logits, and
clustering that asks the judge about one pair at a time.
Ours: :class:`CachedModel.generate` (batched, shared prompt pass, distributions accumulated on the
device) and batched clustering (:func:`cluster_many`); timed twice, with the hf decode loop as it
was (every row decoded to the longest answer of its batch, one padded prefill) and as it is now
(finished rows leave the batch, prefill grouped by length).

The script also feeds each side's samples through the other side's clustering and metric code and
checks the values are identical. Usage:

    python benchmarks/conflicts_speed.py [--model smollm2] [--facts 4] [--samples 10] [--data DIR]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets.dynamicqa import default_source, expand, load_dynamicqa, take_balanced
from chronoprobe.judges.base import Judge, cluster_many, cluster_pairwise
from chronoprobe.judges.embedding import EmbeddingJudge
from chronoprobe.lenses.conflicts.persuasion import PersuasionConfig
from chronoprobe.lenses.conflicts.prompts import PromptWording, qa_prompt
from chronoprobe.metrics import conflicts as m
from chronoprobe.models.registry import BackendOptions, load_backend

Samples = tuple[list[str], list[np.ndarray], list[float]]  # texts, distributions, length-normalised logliks


def original_generate(backend, rendered: str, config: PersuasionConfig) -> Samples:  # type: ignore[no-untyped-def]
    tokenizer, model = backend.tokenizer, backend.model
    encoded = tokenizer(rendered, return_tensors="pt", add_special_tokens=not backend.use_chat_template).to(
        backend.device
    )
    torch.manual_seed(config.seed)
    with torch.inference_mode():
        out = model.generate(
            **encoded,
            do_sample=True,
            temperature=config.temperature,
            top_p=config.top_p,
            top_k=0,
            max_new_tokens=config.max_new_tokens,
            num_return_sequences=config.n_samples,
            output_logits=True,
            return_dict_in_generate=True,
            pad_token_id=tokenizer.pad_token_id,
        )
    generated = out.sequences[:, encoded["input_ids"].shape[1] :].cpu()
    logits = torch.stack(out.logits, dim=1).float().cpu()  # (n, steps, vocab): every position kept
    eos = set(backend.eos_ids)
    texts, dists, logliks = [], [], []
    for row in range(generated.shape[0]):
        ids = generated[row].tolist()
        length = next((i + 1 for i, t in enumerate(ids) if t in eos), len(ids))
        probs = torch.softmax(logits[row, :length], dim=-1)
        dists.append(probs.mean(dim=0).numpy())
        chosen = torch.log_softmax(logits[row, :length], dim=-1).gather(-1, torch.tensor(ids[:length]).unsqueeze(-1))
        logliks.append(float(chosen.mean()))
        text_ids = ids[: length - 1] if ids[length - 1] in eos else ids[:length]
        texts.append(tokenizer.decode(text_ids, skip_special_tokens=True).strip())
    return texts, dists, logliks


def metrics_for_fact(
    base: Samples, contexts: list[Samples], base_ids: list[int], ctx_ids: list[list[int]]
) -> list[float]:
    values = [m.semantic_entropy(base[2], base_ids)]
    for sample, ids in zip(contexts, ctx_ids, strict=True):
        values.append(m.coherent_persuasion_from_samples(sample[1], ids, base[1], base_ids))
        values.append(m.semantic_entropy(sample[2], ids))
    return values


def pairwise_side(facts_samples: list[tuple[Samples, list[Samples]]], judge: Judge) -> list[list[float]]:
    out = []
    for base, contexts in facts_samples:
        base_ids = cluster_pairwise(base[0], judge)
        out.append(metrics_for_fact(base, contexts, base_ids, [cluster_pairwise(c[0], judge) for c in contexts]))
    return out


def batched_side(facts_samples: list[tuple[Samples, list[Samples]]], judge: Judge) -> list[list[float]]:
    lists = [s[0] for base, contexts in facts_samples for s in (base, *contexts)]
    ids = iter(cluster_many(lists, judge))
    out = []
    for base, contexts in facts_samples:
        base_ids = next(ids)
        out.append(metrics_for_fact(base, contexts, base_ids, [next(ids) for _ in contexts]))
    return out


def same(a: list[list[float]], b: list[list[float]]) -> bool:
    return all(
        math.isclose(x, y, rel_tol=0, abs_tol=0) or (math.isnan(x) and math.isnan(y))
        for xs, ys in zip(a, b, strict=True)
        for x, y in zip(xs, ys, strict=True)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--facts", type=int, default=4)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--data", default=None)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    config = PersuasionConfig(n_samples=args.samples)
    wording = PromptWording()
    facts = take_balanced(load_dynamicqa(args.data or default_source(), classes=("static", "temporal")), args.facts)
    backend = load_backend(args.model, BackendOptions(batch_size=args.batch_size))
    prompts_per_fact = [
        [qa_prompt(wording, f.question)] + [qa_prompt(wording, it.question, it.context) for it in expand(f)]
        for f in facts
    ]
    n_inputs = sum(len(p) for p in prompts_per_fact)

    # Original pattern: per-input generate, CPU distributions, per-pair judge calls (uncached embedder).
    start = time.perf_counter()
    original_samples = []
    for prompts in prompts_per_fact:
        samples = [original_generate(backend, backend.render(p), config) for p in prompts]
        original_samples.append((samples[0], samples[1:]))
    original_sampling = time.perf_counter() - start
    original_values = pairwise_side(original_samples, EmbeddingJudge())
    original_s = time.perf_counter() - start

    # Ours: one cached batched call for every input, batched clustering (fresh cache: no free hits).
    # First with the decode loop as it was before finished rows left the batch and prefill was
    # grouped by length, then as it is now.
    timings: dict[str, tuple[float, float]] = {}
    our_values: list[list[float]] = []
    our_samples: list[tuple[Samples, list[Samples]]] = []
    for loop in ("previous", "current"):
        backend.prefill_groups = backend.drop_finished_rows = loop == "current"
        with tempfile.TemporaryDirectory() as tmp:
            cache = CallCache(Path(tmp) / "calls.sqlite")
            model = CachedModel(backend, cache)
            judge = EmbeddingJudge(cache=cache)
            start = time.perf_counter()
            flat = [p for prompts in prompts_per_fact for p in prompts]
            generations = model.generate(flat, config.decoding())
            sampling_s = time.perf_counter() - start
            it = iter(generations)
            our_samples = []
            for prompts in prompts_per_fact:
                gens = [next(it) for _ in prompts]
                packed = [
                    (
                        [s.text.strip() for s in g.samples],
                        [s.mean_distribution for s in g.samples],
                        [m.length_normalised_loglik(s.token_logprobs or [0.0]) for s in g.samples],
                    )
                    for g in gens
                ]
                our_samples.append((packed[0], packed[1:]))
            our_values = batched_side(our_samples, judge)
            timings[loop] = (time.perf_counter() - start, sampling_s)
    ours_s, ours_sampling = timings["current"]

    # Identical samples -> identical metrics, whichever clustering/metric path computes them.
    cross_ours = pairwise_side(our_samples, EmbeddingJudge())
    cross_original = batched_side(original_samples, EmbeddingJudge())
    identical = same(our_values, cross_ours) and same(original_values, cross_original)
    print(
        f"model {args.model}, {len(facts)} facts, {n_inputs} inputs x {args.samples} samples, torch threads {torch.get_num_threads()}"
    )
    for label, total, sampling in (
        ("original pattern", original_s, original_sampling),
        ("ours, previous decode loop", *timings["previous"]),
        ("ours", ours_s, ours_sampling),
    ):
        print(
            f"{label + ':':<27} {total:.1f} s  ({n_inputs / total:.3f} inputs/s); sampling with distributions "
            f"{sampling:.1f} s ({sampling / total:.0%}), clustering and metrics {total - sampling:.1f} s"
        )
    print(
        f"speed-up: {original_s / ours_s:.2f}x items/s "
        f"(with the previous decode loop: {original_s / timings['previous'][0]:.2f}x)"
    )
    print(f"metric values identical given identical samples: {identical}")
    if not identical:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
