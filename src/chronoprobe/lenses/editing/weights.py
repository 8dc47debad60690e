"""Exact copies of the weights an editor changes, to undo its edits bit for bit."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

import torch
from torch import nn

from chronoprobe.lenses.editing.architectures import Architecture, get_module
from chronoprobe.lenses.editing.hparams import EditHparams


def touched_modules(arch: Architecture, hp: EditHparams) -> list[str]:
    """The down-projections ROME/MEMIT rewrite with these hyperparameters."""
    return [arch.rewrite_name(layer) for layer in sorted(set(hp.layers))]


class WeightBackup:
    """Copies every parameter of ``module_names`` now; :meth:`restore` puts them back exactly.

    As a context manager it restores on exit (also after an error).
    """

    def __init__(self, model: nn.Module, module_names: Sequence[str]) -> None:
        self._saved: list[tuple[torch.Tensor, torch.Tensor]] = []
        for name in module_names:
            for parameter in get_module(model, name).parameters():
                self._saved.append((parameter, parameter.detach().clone()))

    def restore(self) -> None:
        with torch.no_grad():
            for parameter, copy in self._saved:
                parameter.copy_(copy)

    def __enter__(self) -> WeightBackup:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.restore()
