"""Generation throughput of the outdated audit vs the original's pattern.

Both run in this process, on the same model and the same prompts (the first
--facts facts x 3 paraphrases of the shipped catalogue), greedy, 20 new tokens:

* baseline: one unbatched ``model.generate()`` call per prompt (the original's pattern);
* ours: the hf backend's batched, length-sorted decode loop (no cache involved).

Prints prompts/second for each, the speed-up ratio, and how many answers agree.
Usage: python benchmarks/outdated_throughput.py [--facts 32] [--batch-size 16] [--model smollm2]
"""

from __future__ import annotations

import argparse
import time

import torch

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.models.base import DecodingParams
from chronoprobe.models.registry import BackendOptions, load_backend
from chronoprobe.outdated.prompts import fact_prompts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--max-new-tokens", type=int, default=20)
    args = parser.parse_args()

    backend = load_backend(args.model, BackendOptions(batch_size=args.batch_size))
    prompts = [p for fact in load_catalogue()[: args.facts] for p in fact_prompts(fact)]
    params = DecodingParams(max_new_tokens=args.max_new_tokens)
    tokenizer, model = backend.tokenizer, backend.model

    # Warm-up both paths once so neither pays one-time costs inside the timing.
    backend.generate(prompts[:2], params)

    start = time.perf_counter()
    baseline = []
    with torch.inference_mode():
        for prompt in prompts:
            encoded = tokenizer(backend.render(prompt), return_tensors="pt", add_special_tokens=not backend.use_chat_template)
            out = model.generate(
                **encoded, max_new_tokens=args.max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
            )
            baseline.append(tokenizer.decode(out[0, encoded["input_ids"].shape[1] :], skip_special_tokens=True))
    baseline_s = time.perf_counter() - start

    start = time.perf_counter()
    ours = []
    for batch in backend.plan_batches([backend.render(p) for p in prompts]):
        for index, generation in zip(batch, backend.generate([prompts[i] for i in batch], params), strict=True):
            ours.append((index, generation.text))
    ours_s = time.perf_counter() - start
    ours_text = [text for _, text in sorted(ours)]

    agree = sum(a == b for a, b in zip(baseline, ours_text, strict=True))
    n = len(prompts)
    print(f"model {backend.info.model_id} on {backend.info.device}, {n} prompts, greedy, {args.max_new_tokens} new tokens")
    print(f"baseline (one generate() per prompt): {n / baseline_s:6.2f} prompts/s  ({baseline_s:.1f} s)")
    print(f"ours (batched, batch size {args.batch_size}):      {n / ours_s:6.2f} prompts/s  ({ours_s:.1f} s)")
    print(f"speed-up: {baseline_s / ours_s:.2f}x")
    print(f"identical answers: {agree}/{n}")


if __name__ == "__main__":
    main()
