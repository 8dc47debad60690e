"""The trained recency router against the LLM gate on the embedded model: questions per second and the
latency of one question, on one thread, in the same run.

Router: the shipped weights and the embedded MiniLM (loaded once, not timed in the rates); throughput at
batch 64 over ``--questions`` RecencyQA questions, and the median latency of one question routed alone.
LLM gate: ``recency gate --router llm`` on ``--model`` (default: the embedded SmolLM2), one greedy label per
question, a fresh call cache so every question is generated; the same two figures on ``--llm-questions``.

    python benchmarks/router_speed.py [--questions 256] [--llm-questions 8] [--model smollm2] [--single 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets.recencyqa import default_source, load_recencyqa, stratified_sample
from chronoprobe.lenses.recency.gate import recency_gate_many
from chronoprobe.models.registry import BackendOptions, load_backend
from chronoprobe.router.route import Router


def router_figures(questions: list[str], single: int) -> dict[str, float]:
    started = time.perf_counter()
    router = Router()
    router.route(questions[:1])  # loads the embedder; the rates below exclude the load
    load = time.perf_counter() - started
    started = time.perf_counter()
    for start in range(0, len(questions), 64):
        router.route(questions[start : start + 64])
    rate = len(questions) / (time.perf_counter() - started)
    latencies = []
    for question in questions[:single]:
        started = time.perf_counter()
        router.route([question])
        latencies.append(time.perf_counter() - started)
    return {"load_s": load, "per_s": rate, "one_ms": 1000 * statistics.median(latencies)}


def llm_figures(questions: list[str], spec: str, single: int) -> dict[str, float]:
    started = time.perf_counter()
    backend = load_backend(spec, BackendOptions())
    load = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        model = CachedModel(backend, CallCache(Path(tmp) / "calls.sqlite"))
        started = time.perf_counter()
        recency_gate_many(questions, model, samples=1, warn=False)
        rate = len(questions) / (time.perf_counter() - started)
        model = CachedModel(backend, CallCache(Path(tmp) / "single.sqlite"))
        latencies = []
        for question in questions[:single]:
            started = time.perf_counter()
            recency_gate_many([question], model, samples=1, warn=False)
            latencies.append(time.perf_counter() - started)
    return {"load_s": load, "per_s": rate, "one_ms": 1000 * statistics.median(latencies)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=256, help="questions the router routes (batches of 64)")
    parser.add_argument("--llm-questions", type=int, default=8, help="questions the LLM gate labels")
    parser.add_argument("--single", type=int, default=20, help="questions timed one at a time (median)")
    parser.add_argument("--model", default="smollm2", help="the LLM gate's model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    items = stratified_sample(load_recencyqa(default_source()), args.questions, seed=1)
    questions = [item.question for item in items]
    router = router_figures(questions, min(args.single, len(questions)))
    llm = llm_figures(questions[: args.llm_questions], args.model, min(args.single, args.llm_questions))
    print(f"one thread; router on {len(questions)} questions, LLM gate ({args.model}, 1 greedy label) on "
          f"{min(args.llm_questions, len(questions))}")
    print(f"{'gate':<22}{'load s':>8}{'questions/s':>13}{'one question ms':>17}")
    for name, found in (("trained router", router), (f"LLM gate {args.model}", llm)):
        print(f"{name:<22}{found['load_s']:>8.1f}{found['per_s']:>13.1f}{found['one_ms']:>17.1f}")
    print(f"router / LLM gate: {router['per_s'] / llm['per_s']:.0f}x the questions per second")


if __name__ == "__main__":
    main()
