"""Run the tokens before the edit position once, and only the rest at every optimisation step.

ROME and MEMIT optimise a vector added to one module's output at the subject's last token. The
tokens before that position never see the vector, so their keys and values are the same at
every step: they are computed once (no gradient) and each step runs only the subject's last
token onwards against that cache. For a chat-rendered prompt (system text, instruction, then the
subject near the end) this is most of the sequence. The result is the same computation as a full
forward pass; ``tests/editing/test_prefix.py`` checks the two agree.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from chronoprobe.lenses.editing.hooks import StopForward
from chronoprobe.models.kv_buffer import cache_argument, cache_of


@dataclass
class SplitBatch:
    """Rows split at ``splits[i]``: columns before it are cached, the rest run each step (right-padded)."""

    suffix_ids: torch.Tensor
    attention: torch.Tensor
    """Prefix mask (left-padded) then suffix mask (right-padded)."""
    positions: torch.Tensor
    splits: list[int]
    cache: Any
    cache_kwarg: str

    @classmethod
    def build(
        cls, model: nn.Module, rows: Sequence[Sequence[int]], splits: Sequence[int], pad_id: int, device: torch.device
    ) -> SplitBatch:
        if any(s < 1 or s >= len(r) for r, s in zip(rows, splits, strict=True)):
            raise ValueError("every row needs at least one token before and one from its split")
        width = max(splits)
        prefix = torch.full((len(rows), width), pad_id, dtype=torch.long)
        prefix_mask = torch.zeros((len(rows), width), dtype=torch.long)
        tails = [list(r[s:]) for r, s in zip(rows, splits, strict=True)]
        tail_width = max(len(t) for t in tails)
        suffix = torch.full((len(rows), tail_width), pad_id, dtype=torch.long)
        suffix_mask = torch.zeros((len(rows), tail_width), dtype=torch.long)
        positions = torch.zeros((len(rows), tail_width), dtype=torch.long)
        for i, (row, split) in enumerate(zip(rows, splits, strict=True)):
            prefix[i, width - split :] = torch.tensor(list(row[:split]), dtype=torch.long)
            prefix_mask[i, width - split :] = 1
            suffix[i, : len(tails[i])] = torch.tensor(tails[i], dtype=torch.long)
            suffix_mask[i, : len(tails[i])] = 1
            positions[i] = split + torch.arange(tail_width)
        prefix, prefix_mask = prefix.to(device), prefix_mask.to(device)
        prefix_positions = (prefix_mask.cumsum(-1) - 1).clamp(min=0)
        with torch.no_grad():
            out = model(input_ids=prefix, attention_mask=prefix_mask, position_ids=prefix_positions, use_cache=True)
        return cls(
            suffix_ids=suffix.to(device),
            attention=torch.cat([prefix_mask, suffix_mask.to(device)], dim=-1),
            positions=positions.to(device),
            splits=list(splits),
            cache=cache_of(out),
            cache_kwarg=cache_argument(model),
        )

    def run(self, model: nn.Module) -> None:
        """One pass over the suffixes against a fresh copy of the prefix cache (a stop hook may end it early)."""
        cache = copy.deepcopy(self.cache)  # the pass appends to the cache; the prefix must stay as computed
        with suppress(StopForward):
            model(
                input_ids=self.suffix_ids,
                attention_mask=self.attention,
                position_ids=self.positions,
                use_cache=True,
                **{self.cache_kwarg: cache},
            )
