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
from collections.abc import Callable
from pathlib import Path

import torch

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets.recencyqa import default_source, load_recencyqa, stratified_sample
from chronoprobe.lenses.recency.gate import recency_gate_many
from chronoprobe.models.registry import BackendOptions, load_backend
from chronoprobe.router.route import Router


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds for ``work`` (on one thread, CPU time is what an idle core
    would take; wall time is what a loaded machine gave)."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def _figures(load: float, questions: list[str], batch: Callable[[list[str]], object], single: int) -> dict[str, float]:
    wall, cpu = _timed(lambda: batch(questions))
    alone = [_timed(lambda q=q: batch([q])) for q in questions[:single]]
    return {
        "load_s": load,
        "per_s": len(questions) / wall,
        "per_cpu_s": len(questions) / cpu,
        "one_ms": 1000 * statistics.median(w for w, _ in alone),
        "one_cpu_ms": 1000 * statistics.median(c for _, c in alone),
    }


def router_figures(questions: list[str], single: int) -> dict[str, float]:
    router = Router()
    load, _ = _timed(lambda: router.route(questions[:1]))  # loads the embedder; the rates exclude the load

    def batches(chunk: list[str]) -> None:
        for start in range(0, len(chunk), 64):
            router.route(chunk[start : start + 64])

    return _figures(load, questions, batches, single)


def llm_figures(questions: list[str], spec: str, single: int) -> dict[str, float]:
    backend = None

    def load() -> None:
        nonlocal backend
        backend = load_backend(spec, BackendOptions())

    loading, _ = _timed(load)
    assert backend is not None
    with tempfile.TemporaryDirectory() as tmp:
        caches = iter(range(1_000_000))

        def gate(chunk: list[str]) -> None:  # a fresh cache each call: every question is generated
            model = CachedModel(backend, CallCache(Path(tmp) / f"calls{next(caches)}.sqlite"))
            recency_gate_many(chunk, model, samples=1, warn=False)

        return _figures(loading, questions, gate, single)


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
    print(
        f"one thread; router on {len(questions)} questions, LLM gate ({args.model}, 1 greedy label) on "
        f"{min(args.llm_questions, len(questions))}"
    )
    print("wall: what this machine gave now; CPU: this process's CPU time (one thread: an idle core's wall time)")
    print(f"{'gate':<22}{'load s':>8}{'q/s wall':>10}{'q/s CPU':>10}{'one q ms wall':>15}{'one q ms CPU':>14}")
    for name, found in (("trained router", router), (f"LLM gate {args.model}", llm)):
        print(
            f"{name:<22}{found['load_s']:>8.1f}{found['per_s']:>10.3g}{found['per_cpu_s']:>10.3g}"
            f"{found['one_ms']:>15.4g}{found['one_cpu_ms']:>14.4g}"
        )
    print(f"router / LLM gate: {router['per_cpu_s'] / llm['per_cpu_s']:.0f}x the questions per CPU second")


if __name__ == "__main__":
    main()
