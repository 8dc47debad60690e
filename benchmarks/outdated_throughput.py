"""Generation throughput of the outdated audit vs the original's pattern, idle and under load.

Both paths run on the same model and the same prompts (the first --facts facts
x 3 paraphrases of the shipped catalogue), greedy, 20 new tokens:

* baseline: one unbatched ``model.generate()`` call per prompt (the original's pattern);
* ours: the hf backend's batched, length-sorted decode loop (no cache involved).

Each measurement runs in a fresh worker process, once with the machine as it is
("idle": nothing added by this script) and once while this script keeps
--load busy-loop processes running (default: one per usable core; each exits on
its own after --load-timeout seconds, so none can outlive the run). Two CPU
thread settings are compared, because OpenMP reads its settings when torch is
imported:

* torch: torch's defaults (``CHRONOPROBE_CPU_THREADS=torch``): one thread per core, spin-waiting;
* auto:  chronoprobe's default (see ``chronoprobe.threads``): passive waiting, and only the cores
         other processes leave free.

Prints, per phase and setting, prompts/second of both paths, the speed-up of ours over the
baseline in the same conditions, and how many answers agree.
Usage: python benchmarks/outdated_throughput.py [--facts 8] [--batch-size 16] [--model smollm2]
       [--phases idle,loaded] [--settings torch,auto] [--load N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BUSY_LOOP = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


def worker(args: argparse.Namespace) -> None:
    """Time both paths in this process and print one JSON line."""
    import torch

    from chronoprobe.knowledge.catalogue import load_catalogue
    from chronoprobe.lenses.outdated.prompts import fact_prompts
    from chronoprobe.models.base import DecodingParams
    from chronoprobe.models.registry import BackendOptions, load_backend

    backend = load_backend(args.model, BackendOptions(batch_size=args.batch_size))
    prompts = [p for fact in load_catalogue()[: args.facts] for p in fact_prompts(fact)]
    params = DecodingParams(max_new_tokens=args.max_new_tokens)
    tokenizer, model = backend.tokenizer, backend.model
    backend.generate(prompts[:2], params)  # warm-up, so neither path pays one-time costs inside the timing

    result: dict[str, object] = {
        "prompts": len(prompts),
        "model": backend.info.model_id,
        "device": backend.info.device,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(libgomp default)"),
    }
    baseline: list[str] = []
    if not args.skip_baseline:
        start = time.perf_counter()
        with torch.inference_mode():
            for prompt in prompts:
                if backend.cpu_threads is not None:  # the same thread policy as ours, for a fair comparison
                    backend.cpu_threads.adjust()
                encoded = tokenizer(
                    backend.render(prompt), return_tensors="pt", add_special_tokens=not backend.use_chat_template
                )
                out = model.generate(
                    **encoded, max_new_tokens=args.max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
                )
                baseline.append(tokenizer.decode(out[0, encoded["input_ids"].shape[1] :], skip_special_tokens=True))
        result["baseline_s"] = time.perf_counter() - start

    start = time.perf_counter()
    ours = []
    threads_used = set()
    for batch in backend.plan_batches([backend.render(p) for p in prompts]):
        for index, generation in zip(batch, backend.generate([prompts[i] for i in batch], params), strict=True):
            ours.append((index, generation.text))
        threads_used.add(torch.get_num_threads())
    result["ours_s"] = time.perf_counter() - start
    result["ours_threads"] = sorted(threads_used)
    if baseline:
        ours_text = [text for _, text in sorted(ours)]
        result["identical"] = sum(a == b for a, b in zip(baseline, ours_text, strict=True))
    print(json.dumps(result), flush=True)


def run_worker(args: argparse.Namespace, setting: str, skip_baseline: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["CHRONOPROBE_CPU_THREADS"] = setting
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--facts",
        str(args.facts),
        "--batch-size",
        str(args.batch_size),
        "--model",
        args.model,
        "--max-new-tokens",
        str(args.max_new_tokens),
    ] + (["--skip-baseline"] if skip_baseline else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.load_timeout)
    if done.returncode != 0:
        raise SystemExit(f"worker ({setting}) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(args: argparse.Namespace, phase: str) -> dict[str, dict[str, object]]:
    load: list[subprocess.Popen[bytes]] = []
    if phase == "loaded":
        load = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(args.load_timeout)]) for _ in range(args.load)]
        time.sleep(1.0)
    try:
        return {setting: run_worker(args, setting, skip_baseline=args.skip_baseline) for setting in args.settings}
    finally:
        for process in load:
            process.kill()
            process.wait()


def report(phase: str, results: dict[str, dict[str, object]], load: int) -> None:
    first = next(iter(results.values()))
    n = int(first["prompts"])  # type: ignore[arg-type]
    extra = f", {load} busy-loop processes added" if phase == "loaded" else ", nothing added"
    print(f"{phase} ({os.getloadavg()[0]:.1f} load average now{extra}):")
    for setting, result in results.items():
        ours = float(result["ours_s"])  # type: ignore[arg-type]
        line = (
            f"  {setting:5s} threads: ours {n / ours:6.2f} prompts/s ({ours:6.1f} s, threads {result['ours_threads']})"
        )
        if "baseline_s" in result:
            baseline = float(result["baseline_s"])  # type: ignore[arg-type]
            line += (
                f"  baseline {n / baseline:6.2f} prompts/s ({baseline:6.1f} s)  speed-up {baseline / ours:5.2f}x"
                f"  identical {result['identical']}/{n}"
            )
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--phases", default="idle,loaded", help="comma-separated: idle, loaded")
    parser.add_argument("--settings", default="torch,auto", help="comma-separated CHRONOPROBE_CPU_THREADS values")
    parser.add_argument(
        "--load", type=int, default=None, help="busy-loop processes in the loaded phase (default: cores)"
    )
    parser.add_argument("--load-timeout", type=float, default=900.0, help="seconds after which load and workers stop")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip-baseline", action="store_true", help="time only the batched path")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    from chronoprobe.threads import usable_cores

    args.load = args.load if args.load is not None else usable_cores()
    args.settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    print(
        f"{args.model}, first {args.facts} facts x 3 paraphrases, greedy, {args.max_new_tokens} new tokens, "
        f"batch size {args.batch_size}, {usable_cores()} usable cores"
    )
    for phase in [p.strip() for p in args.phases.split(",") if p.strip()]:
        if phase not in {"idle", "loaded"}:
            raise SystemExit(f"unknown phase {phase!r}; use idle and/or loaded")
        report(phase, measure(args, phase), args.load)


if __name__ == "__main__":
    main()
