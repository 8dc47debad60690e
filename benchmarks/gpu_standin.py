"""Build a stand-in model: a real model's architecture and tokenizer with seeded random weights.

For benchmarks/gpu_check.sh on a GPU machine that cannot get the real weights (the device tool
carries at most 64 MiB per call; SmolLM2-135M is 94 MiB even as Q4_1 GGUF). The stand-in has the
real model's shapes, so prompts/s and memory are what the real model gives, and vLLM and hf can be
compared on it; its answers are noise, so audit scores from it mean nothing.

Usage: python benchmarks/gpu_standin.py SKELETON_DIR OUT_DIR [--seed 0] [--init-std 0.5]
SKELETON_DIR holds config.json and the tokenizer files (benchmarks/gpu_prepare.sh copies them).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "generation_config.json",
)


def build(skeleton: Path, out: Path, seed: int, init_std: float) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(skeleton)
    # The default init (std 0.02) gives near-flat next-token distributions, where bfloat16 rounding
    # alone flips greedy choices; a wider init makes choices clear-cut, as a trained model's mostly are.
    config.initializer_range = init_std
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    for name in TOKENIZER_FILES:
        if (skeleton / name).is_file():
            shutil.copy2(skeleton / name, out / name)
    (out / "chronoprobe-standin.json").write_text(
        json.dumps({"stand_in": True, "skeleton": str(skeleton), "seed": seed, "init_std": init_std})
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("skeleton", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-std", type=float, default=0.5)
    args = parser.parse_args()
    if not (args.skeleton / "config.json").is_file():
        raise SystemExit(f"gpu_standin: {args.skeleton} has no config.json")
    build(args.skeleton, args.out, args.seed, args.init_std)
    print(f"stand-in model (random weights, seed {args.seed}) written to {args.out}")


if __name__ == "__main__":
    main()
