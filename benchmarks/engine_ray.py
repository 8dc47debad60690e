"""The local engine against Ray with 2 workers (``--workers``): same model, same prompts, same run, fresh caches.

Both sides run the outdated lens (``--limit`` facts, three paraphrases each) through
``chronoprobe.run`` with an empty call cache, so every prompt reaches the model. Ray runs on a
cluster started here (``ray.init``, timed apart) with a pool of 2 actors, each loading the model
once. Prints prompts/s for both, their ratio, the time until the first batch came back (for Ray:
actor start and model load) and checks that the rows are identical. Usage:

    python benchmarks/engine_ray.py [--model smollm2] [--facts 10] [--batch-size 4] [--cpus 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import chronoprobe as cp
from chronoprobe.engines import Engine, LocalEngine


def timed(engine: Engine, args: argparse.Namespace, folder: Path, name: str) -> tuple[cp.Run, float, float]:
    """(the run, seconds in all, seconds until the first batch was back)."""
    ticks: list[float] = []

    def progress(description: str, total: int) -> Any:
        return lambda k: ticks.append(time.perf_counter())

    started = time.perf_counter()
    run = cp.run(
        "outdated",
        model=args.model,
        limit=args.facts,
        batch_size=args.batch_size,
        out=folder / name,
        cache=folder / f"{name}.sqlite",
        engine=engine,
        progress=progress,
    )
    return run, time.perf_counter() - started, (ticks[0] - started) if ticks else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--facts", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs the local Ray cluster may use")
    parser.add_argument("--workers", type=int, default=2, help="actors in Ray's pool, each loading the model once")
    args = parser.parse_args()

    import ray

    from chronoprobe.engines.ray_engine import RayEngine

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        local, local_s, local_first = timed(LocalEngine(), args, folder, "local")
        began = time.perf_counter()
        ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
        init_s = time.perf_counter() - began
        try:
            remote, ray_s, ray_first = timed(RayEngine(workers=args.workers), args, folder, "ray")
        finally:
            ray.shutdown()
    prompts = len(local.rows)
    same = [r.model_dump() for r in local.rows] == [r.model_dump() for r in remote.rows]
    print(f"model {args.model}, {prompts} prompts, batch size {args.batch_size}, load average at start {load:.2f}")
    print(f"{'engine':<16}{'seconds':>9}{'prompts/s':>11}{'first batch s':>15}")
    print(f"{'local':<16}{local_s:>9.1f}{prompts / local_s:>11.2f}{local_first:>15.1f}")
    print(f"{f'ray, {args.workers} workers':<16}{ray_s:>9.1f}{prompts / ray_s:>11.2f}{ray_first:>15.1f}")
    print(f"ray cluster start (ray.init, not in the Ray row): {init_s:.1f} s")
    print(f"ray / local prompts/s: {local_s / ray_s:.2f}x; rows identical: {same}")


if __name__ == "__main__":
    main()
