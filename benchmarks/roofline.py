"""How close the hf backend's decode loop runs to this machine's matrix-multiply peak.

The peak is not a data-sheet figure: it is what ``torch.mm`` achieves here, in this run, on the
model's own weight matrices, at the row counts of every forward pass the workload made (prefill
and decode alike), with the same dtype and thread settings. Decode passes with few rows are
bound by memory bandwidth, and the peak meets that limit as the model does. The workload is a real
one, unchanged: the outdated audit (greedy, 20 new tokens, the shipped catalogue's prompts) or
the conflicts CP step (n sampled answers per input, with and without context).

Figures per workload and decode strategy, all from the same run:

* useful FLOP/s: the FLOPs spent on real positions (prompt tokens, a shared prefix once, generated
  tokens up to each answer's end; not padding, not rows that already finished), divided by the
  wall time of the call;
* roofline ratio: useful FLOP/s over the torch.mm peak at those shapes;
* where the time went: prefill forwards, decode forwards, and everything outside a forward
  (sampling, the distribution sums, tokenising, Python);
* where the FLOPs went: padding in prefill, finished rows carried through decode.

``--strategy`` picks the decode loop: ``both`` (default) runs the previous loop (every row to
the longest answer, one padded prefill) and the current one (finished rows dropped, prefill
grouped by length) on the same prompts and checks that the greedy answers are identical.
Usage:

    python benchmarks/roofline.py [--model smollm2] [--workload audit,conflicts] [--facts 30]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch

from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.hf import HFBackend
from chronoprobe.models.registry import BackendOptions, load_backend


@dataclass
class Forward:
    rows: int
    tokens: int  # positions run per row (padded)
    past: int  # cached positions before this call
    seconds: float
    real_tokens: int  # tokens that are not padding (prefill) or belong to unfinished rows (decode)
    logits_positions: int  # positions the LM head ran on, per row


@dataclass
class Trace:
    forwards: list[Forward] = field(default_factory=list)
    wall: float = 0.0


@dataclass(frozen=True)
class Shapes:
    """The linear layers one token passes through, as (in, out) pairs, plus the attention widths."""

    body: list[tuple[int, int]]
    head: tuple[int, int]
    layers: int
    hidden: int  # query width = heads × head dim

    def linear_flops(self, rows: int, tokens: int, logits_positions: int) -> float:
        body = sum(2 * i * o for i, o in self.body) * rows * tokens
        return body + 2 * self.head[0] * self.head[1] * rows * logits_positions

    def attention_flops(self, rows: int, tokens: int, past: int) -> float:
        # scores and weighted sum: 2 matmuls of (tokens × hidden) by (hidden × keys), keys ≈ past + tokens
        keys = past + (tokens + 1) / 2
        return 4 * self.layers * self.hidden * rows * tokens * keys


def model_shapes(model: torch.nn.Module) -> Shapes:
    body, head = [], None
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            pair = (module.in_features, module.out_features)
            if name.endswith("lm_head"):
                head = pair
            else:
                body.append(pair)
    config: Any = model.config
    if head is None:
        head = (config.hidden_size, config.vocab_size)
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return Shapes(body, head, config.num_hidden_layers, heads * head_dim)


@contextmanager
def traced(backend: HFBackend, trace: Trace) -> Iterator[None]:
    """Time every top-level forward and note its shape and how many of its positions are real."""
    model = backend.model
    state: dict[str, Any] = {}
    pad_id = int(backend.tokenizer.pad_token_id)

    def before(_module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        state["start"] = time.perf_counter()
        state["kwargs"] = kwargs

    def after(_module: Any, _args: Any, _output: Any) -> None:
        seconds = time.perf_counter() - state["start"]
        kwargs = state["kwargs"]
        ids = kwargs["input_ids"]
        mask = kwargs.get("attention_mask")
        rows, tokens = ids.shape
        past = 0 if mask is None else mask.shape[1] - tokens
        if tokens == 1 and past > 0:  # a decode step: finished rows are fed the pad token
            real = int((ids != pad_id).sum())
        elif mask is not None:
            real = int(mask[:, -tokens:].sum())
        else:
            real = rows * tokens
        keep = kwargs.get("logits_to_keep", 0)
        trace.forwards.append(Forward(rows, tokens, past, seconds, real, keep if keep else tokens))

    handles = [
        model.register_forward_pre_hook(before, with_kwargs=True),
        model.register_forward_hook(after),
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


COMPUTE_BOUND_ROWS = 512
"""From this many rows a pass is compute-bound: timing a slice of the weights (SLICE_BYTES) suffices."""
SLICE_BYTES = 96 * 2**20


class Peak:
    """torch.mm FLOP/s over the model's own weight matrices, in the layout ``nn.Linear`` uses them.

    Every weight is read from memory as the real forward reads it, so small-row (decode) passes
    meet the same memory-bandwidth limit the model meets.
    """

    def __init__(self, model: torch.nn.Module) -> None:
        linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
        self.body = [m.weight.detach() for n, m in linears if not n.endswith("lm_head")]
        heads = [m.weight.detach() for n, m in linears if n.endswith("lm_head")]
        self.head = heads[0] if heads else model.get_input_embeddings().weight.detach()
        self._memo: dict[tuple[int, bool], tuple[float, float]] = {}

    def _time(self, rows: int, weights: Sequence[torch.Tensor]) -> tuple[float, float]:
        inputs = {w.shape[1]: torch.randn(rows, w.shape[1], dtype=w.dtype) for w in weights}
        repeats = 2 if rows < COMPUTE_BOUND_ROWS else 1
        torch.mm(inputs[weights[0].shape[1]], weights[0].t())  # warm-up
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            for w in weights:
                torch.mm(inputs[w.shape[1]], w.t())
            best = min(best, time.perf_counter() - start)
        return sum(2.0 * rows * w.shape[0] * w.shape[1] for w in weights), best

    def seconds_and_flops(self, rows: int, head: bool) -> tuple[float, float]:
        key = (rows, head)
        if key not in self._memo:
            if head:
                flops, seconds = self._time(rows, [self.head])
            elif rows < COMPUTE_BOUND_ROWS:
                flops, seconds = self._time(rows, self.body)
            else:
                taken, size = [], 0
                for w in self.body:
                    taken.append(w)
                    size += w.numel() * w.element_size()
                    if size >= SLICE_BYTES:
                        break
                part_flops, part_seconds = self._time(rows, taken)
                flops = sum(2.0 * rows * w.shape[0] * w.shape[1] for w in self.body)
                seconds = part_seconds * flops / part_flops
            self._memo[key] = (seconds, flops)
        return self._memo[key]

    def over(self, trace: Trace) -> float:
        """Peak FLOP/s for this trace: its forwards' linear FLOPs over torch.mm's time for them."""
        total_flops = total_seconds = 0.0
        for f in trace.forwards:
            for rows, head in ((f.rows * f.tokens, False), (f.rows * f.logits_positions, True)):
                seconds, flops = self.seconds_and_flops(rows, head)
                total_flops += flops
                total_seconds += seconds
        return total_flops / total_seconds


@dataclass(frozen=True)
class Figures:
    wall: float
    prefill: float
    decode: float
    outside: float
    useful_flops: float
    computed_flops: float
    prefill_padding: float  # share of prefill positions that were padding
    decode_idle: float  # share of decode row-steps spent on finished rows
    peak: float

    @property
    def achieved(self) -> float:
        return self.useful_flops / self.wall

    @property
    def ratio(self) -> float:
        return self.achieved / self.peak


def figures(trace: Trace, shapes: Shapes, peak: Peak) -> Figures:
    prefill = [f for f in trace.forwards if not (f.tokens == 1 and f.past > 0)]
    decode = [f for f in trace.forwards if f.tokens == 1 and f.past > 0]
    each = [
        shapes.linear_flops(f.rows, f.tokens, f.logits_positions) + shapes.attention_flops(f.rows, f.tokens, f.past)
        for f in trace.forwards
    ]
    computed = sum(each)
    # useful: the share of each forward's positions that are real (not padding, not a finished row)
    useful_flops = sum(
        flops * f.real_tokens / (f.rows * f.tokens) for flops, f in zip(each, trace.forwards, strict=True)
    )
    prefill_positions = sum(f.rows * f.tokens for f in prefill) or 1
    decode_positions = sum(f.rows for f in decode) or 1
    return Figures(
        wall=trace.wall,
        prefill=sum(f.seconds for f in prefill),
        decode=sum(f.seconds for f in decode),
        outside=trace.wall - sum(f.seconds for f in trace.forwards),
        useful_flops=useful_flops,
        computed_flops=computed,
        prefill_padding=1 - sum(f.real_tokens for f in prefill) / prefill_positions,
        decode_idle=1 - sum(f.real_tokens for f in decode) / decode_positions,
        peak=peak.over(trace),
    )


def run_workload(
    backend: HFBackend, prompts: list[Prompt], params: DecodingParams, shapes: Shapes, peak: Peak
) -> tuple[Figures, list[list[str]]]:
    rendered = [backend.render(p) for p in prompts]
    trace = Trace()
    texts: list[list[str]] = [[] for _ in prompts]
    with traced(backend, trace):
        start = time.perf_counter()
        for batch in backend.plan_batches(rendered):
            for index, generation in zip(batch, backend.generate([prompts[i] for i in batch], params), strict=True):
                texts[index] = [s.text for s in generation.samples]
        trace.wall = time.perf_counter() - start
    return figures(trace, shapes, peak), texts


def audit_workload(facts: int) -> tuple[list[Prompt], DecodingParams]:
    from chronoprobe.knowledge.catalogue import load_catalogue
    from chronoprobe.lenses.outdated.audit import AuditConfig
    from chronoprobe.lenses.outdated.prompts import fact_prompts

    prompts = [p for fact in load_catalogue()[:facts] for p in fact_prompts(fact)]
    return prompts, AuditConfig().decoding()


def conflicts_workload(facts: int) -> tuple[list[Prompt], DecodingParams]:
    from chronoprobe.datasets.dynamicqa import default_source, expand, load_dynamicqa, take_balanced
    from chronoprobe.lenses.conflicts.persuasion import PersuasionConfig
    from chronoprobe.lenses.conflicts.prompts import PromptWording, qa_prompt

    wording = PromptWording()
    chosen = take_balanced(load_dynamicqa(default_source(), classes=("static", "temporal")), facts)
    prompts = [
        p
        for f in chosen
        for p in [qa_prompt(wording, f.question)] + [qa_prompt(wording, it.question, it.context) for it in expand(f)]
    ]
    return prompts, PersuasionConfig().decoding()


def report(label: str, f: Figures) -> None:
    g = 1e9
    print(
        f"  {label:<9} wall {f.wall:6.1f} s | prefill {f.prefill / f.wall:4.0%}  decode {f.decode / f.wall:4.0%}  "
        f"outside forwards {f.outside / f.wall:4.0%} | padding {f.prefill_padding:4.0%} of prefill positions, "
        f"finished rows {f.decode_idle:4.0%} of decode row-steps"
    )
    print(
        f"  {'':<9} useful {f.achieved / g:6.1f} GFLOP/s of torch.mm peak {f.peak / g:6.1f} GFLOP/s at these shapes: "
        f"roofline ratio {f.ratio:.2f} (FLOPs computed / useful {f.computed_flops / f.useful_flops:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--workload", default="audit,conflicts")
    parser.add_argument("--facts", type=int, default=0, help="0: 30 audit facts, 4 conflicts facts")
    parser.add_argument("--batch-size", type=lambda v: v if v == "auto" else int(v), default=16)
    parser.add_argument("--strategy", choices=("both", "previous", "current"), default="both")
    args = parser.parse_args()

    backend = load_backend(args.model, BackendOptions(batch_size=args.batch_size))
    if not isinstance(backend, HFBackend):
        raise SystemExit("roofline: needs an hf-backend model")
    shapes = model_shapes(backend.model)
    peak = Peak(backend.model)
    strategies = ["previous", "current"] if args.strategy == "both" else [args.strategy]
    print(
        f"model {args.model} ({backend.torch_dtype}), torch threads {torch.get_num_threads()}, "
        f"{len(shapes.body)} body linears + LM head {shapes.head}"
    )
    for workload in args.workload.split(","):
        builder = {"audit": audit_workload, "conflicts": conflicts_workload}[workload]
        prompts, params = builder(args.facts or (30 if workload == "audit" else 4))
        backend.generate(prompts[:1], params.model_copy(update={"max_new_tokens": 2}))  # warm-up
        print(f"{workload}: {len(prompts)} prompts × {params.n} samples, {params.max_new_tokens} new tokens")
        outputs = {}
        results = {}
        for strategy in strategies:
            backend.prefill_groups = backend.drop_finished_rows = strategy == "current"
            results[strategy], outputs[strategy] = run_workload(backend, prompts, params, shapes, peak)
            report(strategy, results[strategy])
        if len(strategies) == 2:
            before, after = results["previous"], results["current"]
            print(
                f"  current vs previous: {before.wall / after.wall:.2f}x faster; roofline ratio "
                f"{before.ratio:.2f} -> {after.ratio:.2f}"
            )
            if params.greedy:
                same = outputs["previous"] == outputs["current"]
                print(f"  greedy answers identical: {same}")


if __name__ == "__main__":
    main()
