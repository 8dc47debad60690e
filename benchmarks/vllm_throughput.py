"""Prompts/s of our vllm backend against vLLM's own offline ``LLM.generate``, same prompts, same run.

Both paths share one ``vllm.LLM`` engine and the same ``SamplingParams`` (the ones our backend
builds), on the outdated audit's prompts (--facts facts x 3 paraphrases, default all 130):

* ours: ``VLLMBackend.generate(prompts, params)``, rendering each prompt with the chat template
  and turning vLLM's outputs into our ``Generation`` records (what every lens calls);
* vLLM: ``llm.generate(rendered_prompts, sampling_params)`` on the prompts already rendered.

Two decoding settings: the audit's (greedy, 20 new tokens) and Coherent Persuasion's sampling
(n=10, temperature 0.5, token log-probabilities). After one warm-up of each path, the paths
alternate --repeats times and the fastest run of each counts. Prints both rates and their
ratio; the goal is ours >= --min-ratio (0.7) of vLLM's own.

Exit codes: 0 measured and the goal met; 1 measured, but below --min-ratio; 3 cannot run here
(no CUDA GPU or no vLLM; the message says which).
Usage: python benchmarks/vllm_throughput.py --model-dir DIR [--facts 130] [--repeats 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

CANNOT_RUN = 3


def why_not_here() -> str | None:
    """Why this machine cannot run the benchmark, or None."""
    reasons = []
    if importlib.util.find_spec("vllm") is None:
        reasons.append("vLLM is not installed (pip install 'chronoprobe[vllm]')")
    import torch

    if not torch.cuda.is_available():
        reasons.append("no CUDA GPU (torch.cuda.is_available() is False)")
    return "; ".join(reasons) or None


def default_model_dir() -> Path:
    configured = os.environ.get("CHRONOPROBE_GPU_MODEL")
    if configured:
        return Path(configured)
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    return converted_gguf(smollm2_gguf())[0]


def timed(call: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def measure(backend: Any, prompts: list[Any], params: Any, repeats: int) -> dict[str, Any]:
    rendered = [backend.render(p) for p in prompts]
    sampling = backend._sampling_params(params)  # exactly what our backend sends, so both do the same work

    def ours() -> list[list[list[int]]]:
        return [[s.token_ids for s in g.samples] for g in backend.generate(prompts, params)]

    def theirs() -> list[list[list[int]]]:
        outputs = backend.llm.generate(rendered, sampling, use_tqdm=False)
        return [[list(c.token_ids) for c in o.outputs] for o in outputs]

    ours()
    theirs()
    ours_s, theirs_s = [], []
    same = 0
    for _ in range(repeats):
        t_ours, ids_ours = timed(ours)
        t_theirs, ids_theirs = timed(theirs)
        ours_s.append(t_ours)
        theirs_s.append(t_theirs)
        same = sum(a == b for a, b in zip(ids_ours, ids_theirs, strict=True))
    n = len(prompts)
    best_ours, best_theirs = min(ours_s), min(theirs_s)
    return {
        "prompts": n,
        "ours_prompts_per_s": n / best_ours,
        "vllm_prompts_per_s": n / best_theirs,
        "ratio": best_theirs / best_ours,
        "ours_s": ours_s,
        "vllm_s": theirs_s,
        "same_token_ids": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model-dir",
        type=Path,
        default=None,
        help="transformers folder (default: $CHRONOPROBE_GPU_MODEL, else the embedded SmolLM2)",
    )
    parser.add_argument("--facts", type=int, default=130)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-ratio", type=float, default=0.7)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5)
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()

    reason = why_not_here()
    if reason:
        print(f"vllm_throughput: cannot run here: {reason}", file=sys.stderr)
        raise SystemExit(CANNOT_RUN)

    import vllm

    from chronoprobe.knowledge.catalogue import load_catalogue
    from chronoprobe.lenses.outdated.prompts import fact_prompts
    from chronoprobe.models.base import DecodingParams
    from chronoprobe.models.vllm_backend import VLLMBackend, VLLMConfig

    model_dir = args.model_dir or default_model_dir()
    backend = VLLMBackend(
        VLLMConfig(model=str(model_dir), gpu_memory_utilization=args.gpu_memory_utilization, spec=f"vllm:{model_dir}")
    )
    prompts = [p for fact in load_catalogue()[: args.facts] for p in fact_prompts(fact)]
    settings = {
        "audit (greedy, 20 tokens)": DecodingParams(max_new_tokens=20),
        "CP sampling (n=10, T=0.5, logprobs)": DecodingParams(
            n=10, temperature=0.5, max_new_tokens=20, seed=10, token_logprobs=True
        ),
    }
    print(
        f"vLLM {vllm.__version__}, model {model_dir}, {len(prompts)} audit prompts, "
        f"fastest of {args.repeats} runs per path"
    )
    results: dict[str, Any] = {"vllm": vllm.__version__, "model": str(model_dir), "settings": {}}
    worst = float("inf")
    for name, params in settings.items():
        result = measure(backend, prompts, params, args.repeats)
        results["settings"][name] = result
        worst = min(worst, result["ratio"])
        print(
            f"  {name:38s} ours {result['ours_prompts_per_s']:8.1f} prompts/s   "
            f"vLLM LLM.generate {result['vllm_prompts_per_s']:8.1f} prompts/s   "
            f"ratio {result['ratio']:.2f}   same token ids {result['same_token_ids']}/{result['prompts']}"
        )
    met = worst >= args.min_ratio
    results["goal"] = {"min_ratio": args.min_ratio, "worst_ratio": worst, "met": met}
    print(f"goal: ours >= {args.min_ratio:.0%} of vLLM's own: {'met' if met else 'NOT met'} (worst ratio {worst:.2f})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
