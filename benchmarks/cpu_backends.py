"""CPU paths for a GGUF model, side by side: speed, memory and agreement on the outdated audit.

The audit's prompts (every fact with gold x 3 paraphrases, rendered as the audit renders them),
greedy, 20 new tokens, no call cache. Each path runs in a fresh worker process, in turn, for
--rounds rounds, so that the machine's load falls on all of them alike:

* torch16:       our hf backend (``gguf:`` path, float32 torch weights) at --batch-size 16;
* torch:         our hf backend at the default batch (64 rows per greedy batch, within free memory);
* torch-fixed:   as torch, with CHRONOPROBE_CPU_THREADS fixed at the machine's cores (the thread
                 policy's baseline: the policy must not lose clearly to it);
* torch-adaptive: as torch, with CHRONOPROBE_CPU_THREADS=adaptive (the cores other processes leave
                 free: the default before 0.2.0);
* llamacpp:      our llama.cpp backend (one sequence per prompt, fixed layout; threads: the cores);
* direct:        llama-cpp-python used directly, one ``create_completion`` per prompt (what a user writes).

Prints per path the median prompts/s and tokens/s over the rounds, peak RSS of the worker, the
1-minute load average at each run's start, and how many answers and verdicts agree with torch16.
Usage: python benchmarks/cpu_backends.py [--model smollm2|gemma3-270m] [--rounds 2] [--facts N]
       [--paths torch16,torch,torch-fixed,torch-adaptive,llamacpp,direct]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PATHS = ("torch16", "torch", "torch-fixed", "torch-adaptive", "llamacpp", "direct")
NEW_TOKENS = 20


def audit_prompts(facts: int | None) -> tuple[list[Any], list[tuple[Any, int]], Any]:
    """The audit's prompts for the shipped catalogue and snapshot, with the fact and paraphrase of each."""
    from chronoprobe.lenses.outdated.audit import AuditConfig, facts_without_gold, load_gold
    from chronoprobe.lenses.outdated.prompts import fact_prompts

    config = AuditConfig(limit=facts)
    all_facts, snapshot = load_gold(config)
    skipped = facts_without_gold(all_facts, snapshot)
    prompts, owners = [], []
    for fact in all_facts:
        if fact.fact_id in skipped:
            continue
        for index, prompt in enumerate(fact_prompts(fact, config.instruction)):
            prompts.append(prompt)
            owners.append((fact, index))
    return prompts, owners, snapshot


def verdicts(owners: list[tuple[Any, int]], snapshot: Any, answers: list[str]) -> list[str]:
    from chronoprobe.metrics.dyknow import classify_response

    return [
        str(
            classify_response(
                text, snapshot.answers[fact.fact_id], prompt=fact.templates[i], subject=fact.subject
            ).verdict
        )
        for (fact, i), text in zip(owners, answers, strict=True)
    ]


def run_ours(spec: str, batch_size: int | None, prompts: list[Any]) -> tuple[list[str], int, dict[str, str]]:
    from chronoprobe.models.base import DecodingParams
    from chronoprobe.models.registry import BackendOptions, load_backend

    backend = load_backend(spec, BackendOptions(batch_size=batch_size))
    params = DecodingParams(max_new_tokens=NEW_TOKENS)
    backend.generate(prompts[:2], params)  # warm-up: one-time costs stay out of the timing
    answers: list[str] = [""] * len(prompts)
    tokens = 0
    start = time.perf_counter()
    for batch in backend.plan_batches([backend.render(p) for p in prompts], params):
        for index, generation in zip(batch, backend.generate([prompts[i] for i in batch], params), strict=True):
            answers[index] = generation.text
            tokens += len(generation.samples[0].token_ids)
    seconds = time.perf_counter() - start
    threads = backend.info.extra.get("threads") or _torch_threads()
    return answers, tokens, {"seconds": f"{seconds}", "batch": str(backend.info.batch_size), "threads": threads}


def _torch_threads() -> str:
    from chronoprobe.threads import counts_since

    return ",".join(str(n) for n in counts_since(None))


def run_direct(spec: str, prompts: list[Any]) -> tuple[list[str], int, dict[str, str]]:
    """llama-cpp-python as a user calls it: one create_completion per rendered prompt."""
    from chronoprobe.models.llamacpp_backend import import_llama_cpp, open_llama
    from chronoprobe.models.registry import BackendOptions, load_backend

    ours = load_backend(spec, BackendOptions())  # only for the file's path and the audit's rendering
    rendered = [ours.render(p) for p in prompts]
    path = ours.config.path
    ours.close()
    llama_cpp = import_llama_cpp("benchmark")
    llm = open_llama(llama_cpp, model_path=path, n_ctx=2048, verbose=False)  # its defaults, AMX buffers off
    llm.create_completion(rendered[0], max_tokens=2, temperature=0.0)
    answers, tokens = [], 0
    start = time.perf_counter()
    for text in rendered:
        out = llm.create_completion(text, max_tokens=NEW_TOKENS, temperature=0.0)
        answers.append(out["choices"][0]["text"])
        tokens += int(out["usage"]["completion_tokens"])
    seconds = time.perf_counter() - start
    return answers, tokens, {"seconds": f"{seconds}", "batch": "1", "threads": str(llm.n_threads)}


def worker(path: str, model: str, facts: int | None) -> None:
    prompts, owners, snapshot = audit_prompts(facts)
    torch_spec, llama_spec = model, f"llamacpp:{model}"
    if path == "direct":
        answers, tokens, meta = run_direct(llama_spec, prompts)
    else:
        spec = llama_spec if path.startswith("llamacpp") else torch_spec
        answers, tokens, meta = run_ours(spec, 16 if path == "torch16" else None, prompts)
    import resource

    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # this worker's peak resident memory
    result = {"answers": answers, "verdicts": verdicts(owners, snapshot, answers), "tokens": tokens, "rss_kib": rss_kib}
    print(json.dumps({**result, **meta}))


def run_worker(args: argparse.Namespace, path: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in {"OMP_WAIT_POLICY", "CHRONOPROBE_CPU_THREADS"}}
    if path.endswith("-fixed"):
        env["CHRONOPROBE_CPU_THREADS"] = str(os.cpu_count() or 1)
    if path.endswith("-adaptive"):
        env["CHRONOPROBE_CPU_THREADS"] = "adaptive"
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", path, "--model", args.model]
    command += ["--facts", str(args.facts)] if args.facts else []
    load = os.getloadavg()[0]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"worker {path} failed:\n{stderr[-2000:]}")
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    result["load"] = load
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2", help="an embedded model: smollm2 or gemma3-270m")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--facts", type=int, default=None, help="only the first N facts (default: all)")
    parser.add_argument("--paths", default=",".join(PATHS))
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, default=None, help="also write every run's numbers here")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.model, args.facts)
        return
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = set(paths) - set(PATHS)
    if unknown:
        raise SystemExit(f"unknown path(s) {sorted(unknown)}; known: {', '.join(PATHS)}")
    runs: dict[str, list[dict[str, Any]]] = {p: [] for p in paths}
    for round_index in range(args.rounds):
        for path in paths:
            result = run_worker(args, path)
            runs[path].append(result)
            n = len(result["answers"])
            print(
                f"round {round_index + 1} {path:15s} {n / float(result['seconds']):6.2f} prompts/s  "
                f"load {result['load']:.1f}  rss {result['rss_kib'] / 2**20:.2f} GiB",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(runs))
    print_table(args, runs)


def print_table(args: argparse.Namespace, runs: dict[str, list[dict[str, Any]]]) -> None:
    reference = next(iter(runs.values()))[0]
    n = len(reference["answers"])
    print(
        f"\n{args.model}: {n} audit prompts, greedy, {NEW_TOKENS} new tokens, {os.cpu_count()} cores, "
        f"{args.rounds} round(s); agreement with {next(iter(runs))} (first round)\n"
    )
    print(
        "| path | batch | threads | prompts/s | tokens/s | peak RSS | load avg (1 min) | answers agree | verdicts agree |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for path, results in runs.items():
        speed = statistics.median(len(r["answers"]) / float(r["seconds"]) for r in results)
        tokens = statistics.median(r["tokens"] / float(r["seconds"]) for r in results)
        rss = max(r["rss_kib"] for r in results) / 2**20
        loads = ", ".join(f"{r['load']:.1f}" for r in results)
        first = results[0]
        same = sum(a == b for a, b in zip(first["answers"], reference["answers"], strict=True))
        verdicts_same = sum(a == b for a, b in zip(first["verdicts"], reference["verdicts"], strict=True))
        stable = all(r["answers"] == first["answers"] for r in results)
        print(
            f"| {path} | {first['batch']} | {first['threads']} | {speed:.2f} | {tokens:.1f} | {rss:.2f} GiB | {loads} "
            f"| {same}/{n}{'' if stable else ' (rounds differ)'} | {verdicts_same}/{n} |"
        )


if __name__ == "__main__":
    main()
