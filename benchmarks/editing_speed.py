"""ROME and MEMIT cost on one model: seconds per edit, per batch, and for the covariance statistics.

Measured in one run, on the same model and facts:

* context prefixes: generated once per (model, seed), timed on their own;
* ROME: seconds per edit over --rome-edits sequential edits (DyKnow's defaults, scaled by depth);
* MEMIT: seconds for one batch of --batch edits, and per edit against ROME's per edit;
* mom2 statistics for MEMIT's layers: cold (computed, the pass stopped after the deepest layer)
  vs cached (read from the .npz), and the baseline of the original's pattern, a full forward pass
  over every layer collecting the same inputs.

The weights are restored after each method. Usage:

    python benchmarks/editing_speed.py [--model smollm2] [--batch 4] [--rome-edits 2] [--corpus FILE]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.lenses.editing.architectures import detect
from chronoprobe.lenses.editing.hooks import model_device, pad_id, right_pad, run, trace, tune_threads
from chronoprobe.lenses.editing.hparams import memit_hparams, rome_hparams
from chronoprobe.lenses.editing.memit import apply_memit
from chronoprobe.lenses.editing.mom2 import Mom2Stats, load_corpus, second_moments
from chronoprobe.lenses.editing.rome import apply_rome, context_templates, optimise_value
from chronoprobe.lenses.editing.weights import WeightBackup, touched_modules
from chronoprobe.models.registry import BackendOptions, load_backend

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "assets" / "editing" / "mom2_corpus.txt"
FACTS = [
    EditRequest(prompt="The capital of France is", subject="France", target="Rome"),
    EditRequest(prompt="The Eiffel Tower is located in the city of", subject="Eiffel Tower", target="London"),
    EditRequest(prompt="The author of Harry Potter is", subject="Harry Potter", target="Stephen King"),
    EditRequest(prompt="Apple's CEO is", subject="Apple", target="Satya Nadella"),
    EditRequest(prompt="The largest planet in the solar system is", subject="solar system", target="Saturn"),
    EditRequest(prompt="The Mona Lisa was painted by", subject="Mona Lisa", target="Pablo Picasso"),
]


def full_forward_stats(stats: Mom2Stats, layers: list[int]) -> float:
    """The original's pattern: the whole model runs for every batch; the same inputs are collected."""
    model = stats.model
    names = [stats.arch.rewrite_name(layer) for layer in layers]
    started = time.perf_counter()
    sums = {name: torch.zeros(0) for name in names}
    for rows in stats._batches():
        tune_threads(model)
        batch = right_pad(rows, pad_id(stats.tokenizer), model_device(model))
        with torch.no_grad(), trace(model, inputs=names) as record:
            run(model, batch)
        mask = batch.attention_mask.bool()
        for name in names:
            x = record.inputs[name][mask].float()
            product = (x.T @ x).double()
            sums[name] = product if sums[name].numel() == 0 else sums[name] + product
    return time.perf_counter() - started


def compare_prefix_cache(backend: Any, arch: Any, hp: Any, steps: int) -> None:
    """ROME's value optimisation on an audit prompt as a chat model sees it: every row whole vs cached prefixes."""
    from chronoprobe.lenses.outdated.prompts import audit_prompt

    rendered = backend.render(audit_prompt("The person currently serving as CEO of Apple is"))
    request = EditRequest(prompt=rendered, subject="Apple", target="Tim Cook")
    fixed = hp.model_copy(update={"v_num_grad_steps": steps})
    templates = context_templates(backend.model, backend.tokenizer, hp.context_template_length_params, 0)
    seconds = {}
    for cached in (False, True):
        started = time.perf_counter()
        optimise_value(
            backend.model, backend.tokenizer, arch, request, fixed, templates, arch.mlp_name(hp.layers[0]),
            add_special_tokens=not backend.info.chat_template, prefix_cache=cached,
        )  # fmt: skip
        seconds[cached] = time.perf_counter() - started
    print(f"ROME value optimisation, {steps} steps on a chat-rendered audit prompt:")
    print(f"  every row whole (original pattern):       {seconds[False]:7.2f} s")
    print(f"  prefix before the subject cached:         {seconds[True]:7.2f} s  "
          f"({seconds[False] / seconds[True]:.1f}x faster)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--batch", type=int, default=4, help="MEMIT batch size")
    parser.add_argument("--rome-edits", type=int, default=2, help="sequential ROME edits to time")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="statistics corpus (.txt or .jsonl)")
    parser.add_argument("--steps", type=int, default=5, help="optimisation steps for the prefix-cache comparison")
    args = parser.parse_args()
    if not 1 <= args.batch <= len(FACTS) or not 1 <= args.rome_edits <= len(FACTS):
        parser.error(f"--batch and --rome-edits must be between 1 and {len(FACTS)}")

    backend = load_backend(args.model, BackendOptions())
    model, tokenizer, info = backend.model, backend.tokenizer, backend.info  # type: ignore[attr-defined]
    arch = detect(model, info.model_id)
    rome_hp = rome_hparams(arch, info.model_id)
    memit_hp = memit_hparams(arch, info.model_id)
    corpus = load_corpus(args.corpus)
    print(f"{info.model_id} ({arch.n_layers} layers, {info.dtype}, {info.device}); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"ROME {rome_hp.source}: layer {list(rome_hp.layers)}; MEMIT layers {list(memit_hp.layers)}")

    started = time.perf_counter()
    context_templates(model, tokenizer, rome_hp.context_template_length_params, 0)
    context_templates(model, tokenizer, memit_hp.context_template_length_params, 0)
    print(f"context prefixes (21 + 6, once per model):  {time.perf_counter() - started:7.2f} s")
    compare_prefix_cache(backend, arch, rome_hp, args.steps)

    with tempfile.TemporaryDirectory() as cache_dir:
        started = time.perf_counter()
        stats = second_moments(
            model, tokenizer, arch, memit_hp.layers, corpus, revision=info.revision, model_id=info.model_id,
            cache_dir=Path(cache_dir),
        )  # fmt: skip
        cold = time.perf_counter() - started
        started = time.perf_counter()
        cached = second_moments(
            model, tokenizer, arch, memit_hp.layers, corpus, revision=info.revision, model_id=info.model_id,
            cache_dir=Path(cache_dir),
        )  # fmt: skip
        warm = time.perf_counter() - started
        full = full_forward_stats(stats, list(memit_hp.layers))
        described = stats.describe()
        print(f"mom2 stats, {described['documents']} documents, {described['tokens']} tokens, "
              f"{len(memit_hp.layers)} layers:")  # fmt: skip
        print(f"  full forward (original pattern):          {full:7.2f} s")
        print(f"  cold, stopped after layer {max(memit_hp.layers):<2}:            {cold:7.2f} s  "
              f"({full / cold:.1f}x faster than the full forward)")  # fmt: skip
        print(f"  cached (.npz):                            {warm:7.3f} s  ({cold / warm:.0f}x faster than cold)")

        with WeightBackup(model, touched_modules(arch, rome_hp)):
            timings = apply_rome(model, tokenizer, FACTS[: args.rome_edits], rome_hp)
        per_rome = sum(t.seconds for t in timings) / len(timings)
        steps = [t.steps for t in timings]
        print(f"ROME, {len(timings)} sequential edits:               {per_rome:7.2f} s per edit (steps {steps})")

        with WeightBackup(model, touched_modules(arch, memit_hp)):
            timing = apply_memit(model, tokenizer, FACTS[: args.batch], memit_hp, cached)
        print(f"MEMIT, one batch of {args.batch}:                   {timing.seconds:7.2f} s per batch, "
              f"{timing.seconds / args.batch:.2f} s per edit ({per_rome / (timing.seconds / args.batch):.2f}x ROME's "
              f"speed per edit)")  # fmt: skip


if __name__ == "__main__":
    main()
