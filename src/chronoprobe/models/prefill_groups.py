"""Prefill in groups of similar length, then one KV cache for the whole batch.

A batch that mixes a bare question (50 tokens) with the same question after a
passage (200 tokens) would pad every short row to the longest. Running rows of
similar length together and laying the groups' caches side by side, with the
gaps masked, computes only real positions. Keys are stored after the rotary
embedding, so a row's cached keys stay valid wherever its positions sit in the
padded layout.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from chronoprobe.models.kv_buffer import plain_dynamic

GROUP_RATIO = 0.8
"""A row joins the current group if it is at least this fraction of the group's longest row."""

MIN_GAP = 16
"""...and always if it is shorter by fewer tokens than this: small gaps are not worth another forward."""

Prefilled = tuple[torch.Tensor, Any, torch.Tensor, torch.Tensor]
"""(last logits, KV cache, attention mask, last positions) of a group's rows."""


def length_groups(lengths: Sequence[int]) -> list[list[int]]:
    """Row indices grouped longest first; within a group, rows are padded to its longest."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    for index in order:
        if groups:
            longest = lengths[groups[-1][0]]
            if lengths[index] >= GROUP_RATIO * longest or longest - lengths[index] < MIN_GAP:
                groups[-1].append(index)
                continue
        groups.append([index])
    return groups


mergeable = plain_dynamic
"""Only plain dynamic layers are laid side by side."""


def repeated(prefix_cache: Any, rows: int, *, keep_original: bool) -> Any:
    """The shared prefix's cache, once per row; ``keep_original`` leaves ``prefix_cache`` itself as it was."""
    cache = copy.deepcopy(prefix_cache) if keep_original else prefix_cache
    cache.batch_repeat_interleave(rows)
    return cache


def _padded(states: torch.Tensor, prefix: int, width: int) -> torch.Tensor:
    """Insert masked zeros between the prefix and a group's (left-padded) suffixes, up to ``width``."""
    rows, heads, length, dim = states.shape
    out = states.new_zeros((rows, heads, prefix + width, dim))
    out[:, :, :prefix] = states[:, :, :prefix]
    out[:, :, prefix + width - (length - prefix) :] = states[:, :, prefix:]
    return out


def merge(parts: Sequence[Prefilled], groups: Sequence[Sequence[int]], prefix: int) -> Prefilled:
    """One batch, in the original row order, from groups prefilled separately after a shared ``prefix``."""
    width = max(part[2].shape[1] for part in parts) - prefix
    order = torch.tensor([i for group in groups for i in group])
    back = torch.argsort(order).to(parts[0][0].device)

    def stacked(tensors: list[torch.Tensor]) -> torch.Tensor:
        return torch.cat(tensors, dim=0).index_select(0, back)

    logits = stacked([part[0] for part in parts])
    positions = stacked([part[3] for part in parts])
    attention = stacked([_padded(part[2][:, None, :, None], prefix, width)[:, 0, :, 0] for part in parts])
    cache = parts[0][1]
    for index, layer in enumerate(cache.layers):
        layer.keys = stacked([_padded(part[1].layers[index].keys, prefix, width) for part in parts])
        layer.values = stacked([_padded(part[1].layers[index].values, prefix, width) for part in parts])
    return logits, cache, attention, positions
