"""The in-place KV cache holds exactly what transformers' concatenating cache holds."""

from __future__ import annotations

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

from chronoprobe.models.kv_buffer import BufferedLayer, preallocate


def grown_reference(prefill: torch.Tensor, steps: list[torch.Tensor], repeats: int) -> torch.Tensor:
    layer = DynamicLayer()
    layer.update(prefill, prefill)
    layer.batch_repeat_interleave(repeats)
    for step in steps:
        layer.update(step, step)
    return layer.keys


def test_repeat_and_updates_match_the_dynamic_layer_even_past_capacity():
    torch.manual_seed(0)
    prefill = torch.randn(2, 3, 5, 4)
    steps = [torch.randn(6, 3, 1, 4) for _ in range(7)]
    layer = BufferedLayer(prefill, prefill.clone(), repeats=3, capacity=8)  # 5 + 7 outruns 8: it must grow
    for step in steps:
        keys, values = layer.update(step, step.clone())
    expected = grown_reference(prefill, steps, repeats=3)
    assert torch.equal(keys, expected) and torch.equal(values, expected)
    assert layer.get_seq_length() == 12


def test_preallocate_swaps_plain_layers_and_leaves_others_alone():
    cache = DynamicCache()
    states = torch.randn(1, 2, 4, 8)
    cache.update(states, states, layer_idx=0)
    cache.update(states, states, layer_idx=1)
    assert preallocate(cache, repeats=2, extra_tokens=3)
    assert all(isinstance(layer, BufferedLayer) for layer in cache.layers)
    assert cache.get_seq_length() == 4 and cache.layers[0].keys.shape[0] == 2

    class Other(DynamicLayer):
        pass

    other = DynamicCache()
    other.update(states, states, layer_idx=0)
    other.layers[0].__class__ = Other
    assert not preallocate(other, repeats=2, extra_tokens=3)
    assert type(other.layers[0]) is Other
