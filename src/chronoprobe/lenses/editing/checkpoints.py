"""Optimised edit values kept in the call cache, so a killed ROME/MEMIT run resumes edit by edit.

The expensive part of an edit is the value optimisation (ROME's v*, MEMIT's z). Its result
depends on the request and on the model as it is when the edit is computed: the base model, the
method's settings and every edit applied before it. :class:`ValueStore` keys each value by a
chain hash over exactly that, so a resumed run reuses the values of the edits it finished and
recomputes the cheap rest (keys, the rank-one or least-squares update) on the model it rebuilds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from chronoprobe.cache import CallCache, stable_hash
from chronoprobe.datasets.editing_records import EditRequest

NAMESPACE = "editing-values"


@dataclass(frozen=True)
class StoredValue:
    target: torch.Tensor
    initial: torch.Tensor
    steps: int
    loss: float
    seconds: float
    """How long the value took when it was first computed."""


class ValueStore:
    """Edit values for one method run; ``advance`` after each applied edit (or batch) moves the chain on."""

    def __init__(self, cache: CallCache, base: str) -> None:
        self.cache = cache
        self.chain = base
        self.reused = 0

    def _key(self, request: EditRequest) -> str:
        return stable_hash({"edit-value": self.chain, "request": request.model_dump()})

    def get(self, request: EditRequest, device: torch.device) -> StoredValue | None:
        found = self.cache.get_many([self._key(request)]).get(self._key(request))
        if found is None or found[1] is None:
            return None
        payload, array = found
        both = torch.from_numpy(np.array(array, dtype=np.float32)).to(device)
        half = int(payload["dim"])
        self.reused += 1
        return StoredValue(
            target=both[:half],
            initial=both[half:],
            steps=int(payload["steps"]),
            loss=float(payload["loss"]),
            seconds=float(payload["seconds"]),
        )

    def put(
        self,
        request: EditRequest,
        target: torch.Tensor,
        initial: torch.Tensor,
        *,
        steps: int,
        loss: float,
        seconds: float,
    ) -> None:
        both = torch.cat([target.detach().float().cpu(), initial.detach().float().cpu()]).numpy()
        payload = {"dim": int(target.numel()), "steps": steps, "loss": loss, "seconds": seconds}
        self.cache.put_many(NAMESPACE, [(self._key(request), payload, both)])

    def advance(self, applied: Sequence[EditRequest]) -> None:
        """The model now also carries ``applied``: later values are keyed on that."""
        self.chain = stable_hash({"after": self.chain, "edits": [r.model_dump() for r in applied]})
