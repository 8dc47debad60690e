"""Grouping rows by length, and laying the groups' caches side by side (hand-built tensors)."""

from __future__ import annotations

import pytest
import torch

transformers_cache = pytest.importorskip("transformers.cache_utils")

from chronoprobe.models.prefill_groups import length_groups, merge, mergeable  # noqa: E402


def test_rows_join_a_group_when_close_to_its_longest():
    # 200 and 190 are within 80 %; 120 is not; 110 is within 16 tokens of 120; 10 starts a group
    assert length_groups([120, 200, 10, 190, 110]) == [[1, 3], [0, 4], [2]]
    assert length_groups([30, 20, 25]) == [[0, 2, 1]], "gaps under 16 tokens never split"
    assert length_groups([]) == []


def layer_cache(states: list[torch.Tensor]):  # type: ignore[no-untyped-def]
    cache = transformers_cache.DynamicCache()
    for index, s in enumerate(states):
        cache.update(s, s + 100, index)
    return cache


def test_merge_pads_between_prefix_and_suffix_and_restores_row_order():
    prefix = 2
    # group A: original rows 2 and 0, suffix width 3; group B: original row 1, suffix width 1
    keys_a = torch.arange(2 * 5, dtype=torch.float32).reshape(2, 1, 5, 1) + 1
    keys_b = torch.tensor([[[[7.0], [8.0], [9.0]]]])
    part_a = (
        torch.tensor([[2.0], [0.0]]),
        layer_cache([keys_a]),
        torch.ones(2, 5, dtype=torch.long),
        torch.tensor([[4], [4]]),
    )
    mask_b = torch.ones(1, 3, dtype=torch.long)
    part_b = (torch.tensor([[1.0]]), layer_cache([keys_b]), mask_b, torch.tensor([[2]]))
    assert mergeable(part_a[1]) and mergeable(part_b[1])
    logits, cache, attention, positions = merge([part_a, part_b], [[2, 0], [1]], prefix)
    assert logits[:, 0].tolist() == [0.0, 1.0, 2.0]
    assert positions[:, 0].tolist() == [4, 2, 4]
    assert attention.tolist() == [[1, 1, 1, 1, 1], [1, 1, 0, 0, 1], [1, 1, 1, 1, 1]]
    keys = cache.layers[0].keys[:, 0, :, 0]
    assert keys[1].tolist() == [7.0, 8.0, 0.0, 0.0, 9.0], "row 1: prefix, masked gap, its one suffix token"
    assert keys[0].tolist() == keys_a[1, 0, :, 0].tolist() and keys[2].tolist() == keys_a[0, 0, :, 0].tolist()
    assert cache.layers[0].values[1, 0, :, 0].tolist() == [107.0, 108.0, 0.0, 0.0, 109.0]
