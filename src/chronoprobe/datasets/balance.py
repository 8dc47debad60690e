"""Take a few items spread over their classes, for ``--balanced-limit`` (conflicts, editing)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")


def take_balanced(items: Sequence[T], limit: int | None, class_of: Callable[[T], Hashable]) -> list[T]:
    """At most ``limit`` items, one class after another in turn (classes in order of first appearance,
    file order within a class), returned in their original order. ``None``: every item."""
    if limit is None:
        return list(items)
    queues: dict[Hashable, list[int]] = {}
    for index, item in enumerate(items):
        queues.setdefault(class_of(item), []).append(index)
    chosen: list[int] = []
    while len(chosen) < limit and any(queues.values()):
        for queue in queues.values():
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return [items[i] for i in sorted(chosen)]
