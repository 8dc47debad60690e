"""A KV cache that is written in place during decoding.

transformers' ``DynamicLayer`` appends each step's keys and values with
``torch.cat``, which copies the whole cache every step. With n samples per
prompt that cache is large (rows × prompt length), and the copies dominate
decoding on a CPU. ``preallocate`` swaps every plain dynamic layer for one whose
keys and values live in a buffer with room for the whole decode; a step then
writes one slot and attention reads a view. Repeating the cache for n samples
happens in the same copy.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

try:
    from transformers.cache_utils import DynamicLayer
except ImportError:  # transformers < 4.54 has no cache layers: preallocate() then changes nothing
    DynamicLayer = object  # type: ignore[assignment,misc]  # a stand-in base class where transformers has none


class BufferedLayer(DynamicLayer):
    """A ``DynamicLayer`` backed by a preallocated buffer; grows by doubling if a decode outruns it."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, *, repeats: int, capacity: int) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # transformers leaves DynamicLayer.__init__ unannotated
        length = keys.shape[2]
        self.device = keys.device
        self.length = length
        self._keys = self._fill(keys, repeats, max(capacity, length))
        self._values = self._fill(values, repeats, max(capacity, length))
        self._publish()
        self.is_initialized = True

    @staticmethod
    def _fill(states: torch.Tensor, repeats: int, capacity: int) -> torch.Tensor:
        batch, heads, length, width = states.shape
        buffer = states.new_empty((batch * repeats, heads, capacity, width))
        buffer.view(batch, repeats, heads, capacity, width)[:, :, :, :length] = states.unsqueeze(1)
        return buffer

    def _publish(self) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = self._keys[:, :, : self.length], self._values[:, :, : self.length]
        self.keys, self.values = keys, values
        return keys, values

    def _grow(self, needed: int) -> None:
        capacity = max(needed, 2 * self._keys.shape[2])
        for name in ("_keys", "_values"):
            old = getattr(self, name)
            new = old.new_empty((*old.shape[:2], capacity, old.shape[3]))
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        end = self.length + key_states.shape[-2]
        if end > self._keys.shape[2]:
            self._grow(end)
        self._keys[:, :, self.length : end] = key_states
        self._values[:, :, self.length : end] = value_states
        self.length = end
        return self._publish()

    def get_seq_length(self) -> int:
        return self.length

    def batch_repeat_interleave(self, repeats: int) -> None:
        self._keys = self._keys.repeat_interleave(repeats, dim=0)
        self._values = self._values.repeat_interleave(repeats, dim=0)
        self._publish()

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._keys = self._keys[indices, ...]
        self._values = self._values[indices, ...]
        self._publish()

    def crop(self, tokens_to_remove: int) -> None:
        if tokens_to_remove > 0:
            raise ValueError("crop takes a negative number of tokens to remove")
        self.length = max(self.length + tokens_to_remove, 0)
        self._publish()

    def reset(self) -> None:
        self.length = 0
        self._publish()


def plain_dynamic(cache: Any) -> bool:
    """Every layer of ``cache`` is a plain ``DynamicLayer`` (no sliding window, no linear attention)."""
    layers = getattr(cache, "layers", None) or []
    # DynamicLayer is object on transformers < 4.54, which has no cache layers
    return DynamicLayer is not object and bool(layers) and all(type(layer) is DynamicLayer for layer in layers)


def preallocate(cache: Any, *, repeats: int, extra_tokens: int) -> bool:
    """Repeat every row ``repeats`` times and leave room for ``extra_tokens`` more, in place.

    Returns False (and changes nothing) when the cache has layers of another kind
    (sliding windows, linear attention); the caller then repeats it the ordinary way.
    """
    if not plain_dynamic(cache) or not all(layer.is_initialized for layer in cache.layers):
        return False
    layers = cache.layers
    for index, layer in enumerate(layers):
        capacity = layer.keys.shape[2] + extra_tokens
        layers[index] = BufferedLayer(layer.keys, layer.values, repeats=repeats, capacity=capacity)
    return True


def cache_of(output: Any) -> Any:
    """The KV cache a forward pass returned (transformers >= 5.2x names it ``cache``)."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def cache_argument(model: Any) -> str:
    """The name under which ``model``'s forward takes a KV cache (``past_key_values`` before transformers 5.2x)."""

    from chronoprobe.models.loading import forward_of  # deferred: torch

    return "cache" if "cache" in inspect.signature(forward_of(model)).parameters else "past_key_values"
