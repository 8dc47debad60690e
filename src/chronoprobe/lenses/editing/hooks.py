"""Forward hooks and token bookkeeping shared by ROME, MEMIT and the covariance statistics.

Everything here pads on the RIGHT and records each row's positions explicitly, so no position
depends on a padding convention (EasyEdit assumed right padding without saying so).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from chronoprobe.lenses.editing.architectures import get_module
from chronoprobe.threads import AdaptiveThreads


class StopForward(Exception):
    """Raised from a hook to end a forward pass once the deepest needed layer has run."""


@dataclass
class Trace:
    inputs: dict[str, torch.Tensor] = field(default_factory=dict)
    """First positional input of each traced module."""
    outputs: dict[str, torch.Tensor] = field(default_factory=dict)
    """Output of each traced module (the first element when the module returns a tuple)."""


OutputEdit = Callable[[torch.Tensor], torch.Tensor]


def _first(output: Any) -> torch.Tensor:
    tensor = output[0] if isinstance(output, tuple) else output
    assert isinstance(tensor, torch.Tensor)
    return tensor


@contextmanager
def trace(
    model: nn.Module,
    *,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    edit_outputs: dict[str, OutputEdit] | None = None,
    stop_after: str | None = None,
) -> Iterator[Trace]:
    """Record module inputs/outputs, rewrite module outputs, or stop after one module.

    An edit function gets the module's output tensor and returns the replacement; the
    recorded output (if traced too) is the edited one.
    """
    record = Trace()
    handles = []
    edits = edit_outputs or {}
    names = set(inputs) | set(outputs) | set(edits) | ({stop_after} if stop_after else set())
    for name in names:
        module = get_module(model, name)

        def hook(_module: nn.Module, args: tuple[Any, ...], output: Any, name: str = name) -> Any:
            if name in inputs:
                record.inputs[name] = args[0]
            result = output
            if name in edits:
                edited = edits[name](_first(output))
                result = (edited, *output[1:]) if isinstance(output, tuple) else edited
            if name in outputs:
                record.outputs[name] = _first(result)
            if name == stop_after:
                raise StopForward
            return result

        handles.append(module.register_forward_hook(hook))
    try:
        yield record
    finally:
        for handle in handles:
            handle.remove()


@dataclass(frozen=True)
class Batch:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    lengths: list[int]


def right_pad(rows: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> Batch:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(list(row), dtype=torch.long)
        mask[i, : len(row)] = 1
    return Batch(ids.to(device), mask.to(device), [len(r) for r in rows])


def run(model: nn.Module, batch: Batch) -> None:
    """One forward pass over ``batch``, ending quietly where a ``stop_after`` hook raises StopForward."""
    with suppress(StopForward):
        model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)


def pad_id(tokenizer: Any) -> int:
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return int(candidate)
    return 0


def encode(tokenizer: Any, text: str, add_special_tokens: bool) -> list[int]:
    return [int(i) for i in tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]]


def subject_last_index(tokenizer: Any, text: str, subject: str, offset: int, add_special_tokens: bool) -> int:
    """Index of the subject's last token in ``text``'s tokens, for the subject's FIRST occurrence at or after ``offset``.

    Found the way ROME does: tokenize the text up to the end of the subject and take the
    last position. The first occurrence is the convention: a prompt that repeats the
    subject is edited at its first mention (in a chat prompt the system text comes first,
    so a subject named there would be the one used; DyKnow's prompts name it once).
    """
    start = text.find(subject, offset)
    if start < 0:
        raise ValueError(f"subject {subject!r} is not in {text!r}")
    prefix = encode(tokenizer, text[: start + len(subject)], add_special_tokens)
    return len(prefix) - 1


def model_device(model: nn.Module) -> torch.device:
    return next(model.parameters()).device


_THREADS: AdaptiveThreads | None = None


def tune_threads(model: nn.Module) -> None:
    """On CPU, set torch's thread count by chronoprobe's policy (see chronoprobe.threads).

    Call before each burst of work (an optimisation step, a statistics batch): with one core
    taken by another process, two spinning torch threads ran ROME's steps ~15x slower.
    """
    global _THREADS
    if model_device(model).type != "cpu":
        return
    if _THREADS is None:
        _THREADS = AdaptiveThreads()
    _THREADS.adjust()
