"""MEMIT (Meng et al., 2023) as DyKnow ran it through EasyEdit: many facts in one update.

For each request, a target z for the residual stream after the last edited layer is optimised
(as ROME's value, but on the block output). The difference between z and the current output is
then spread over the edited layers, each layer taking an equal share of what is left, through a
least-squares update of its down-projection regularised by the corpus second moment C:
ΔW = R Kᵀ (λC + K Kᵀ)⁻¹, solved in float64. All requests go into one update; a caller that wants
sequential ("single") edits calls this once per request.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.errors import DataError
from chronoprobe.lenses.editing.architectures import Architecture, add_to_weight, detect, get_module
from chronoprobe.lenses.editing.checkpoints import ValueStore
from chronoprobe.lenses.editing.hooks import model_device
from chronoprobe.lenses.editing.hparams import MemitHparams, check_layers
from chronoprobe.lenses.editing.mom2 import SecondMoments
from chronoprobe.lenses.editing.rome import (
    EditTiming,
    Progress,
    ValueResult,
    context_templates,
    optimise_value,
    read_keys,
    read_outputs,
)


def apply_memit(
    model: nn.Module,
    tokenizer: Any,
    requests: Sequence[EditRequest],
    hp: MemitHparams,
    stats: SecondMoments,
    *,
    seed: int = 0,
    add_special_tokens: bool = True,
    progress: Progress | None = None,
    store: ValueStore | None = None,
) -> EditTiming:
    """Apply all ``requests`` in one MEMIT update, in place.

    ``progress(done, total)`` is called after each request's target is optimised.
    ``add_special_tokens``: False for prompts already rendered with a chat template.
    ``store``: keeps each request's optimised z, so a killed run resumes request by request.
    """
    arch = detect(model)
    check_layers(hp, arch, "MEMIT hparams")
    if not requests:
        return EditTiming(seconds=0.0, steps=0, loss=0.0, requests=0)
    started = time.perf_counter()
    was_training = model.training
    model.eval()
    try:
        templates = context_templates(model, tokenizer, hp.context_template_length_params, seed)
        z_module = arch.layer_name(sorted(hp.layers)[-1])
        found = _target_values(
            model, tokenizer, arch, requests, hp, templates, z_module, add_special_tokens, progress, store
        )
        _spread_over_layers(model, tokenizer, arch, requests, hp, stats, templates, z_module, found, add_special_tokens)
    finally:
        model.train(was_training)
    if store is not None:
        store.advance(requests)
    return EditTiming(
        seconds=time.perf_counter() - started + found.saved_seconds,
        steps=sum(v.steps for v in found.values),
        loss=max(v.loss for v in found.values),
        requests=len(requests),
        reused=found.reused,
    )


@dataclass
class _TargetValues:
    """Each request's optimised z, with what the value store gave back."""

    values: list[ValueResult]
    saved_seconds: float = 0.0
    """Reused values: their first run's time replaces the moment it took to load them."""
    reused: int = 0


def _target_values(
    model: nn.Module,
    tokenizer: Any,
    arch: Architecture,
    requests: Sequence[EditRequest],
    hp: MemitHparams,
    templates: list[str],
    z_module: str,
    add_special_tokens: bool,
    progress: Progress | None,
    store: ValueStore | None,
) -> _TargetValues:
    """The target value of every request at the last edited layer, from ``store`` where it holds one."""
    found = _TargetValues(values=[])
    for done, request in enumerate(requests, start=1):
        begun = time.perf_counter()
        stored = store.get(request, model_device(model)) if store is not None else None
        if stored is not None:
            found.values.append(
                ValueResult(target=stored.target, initial=stored.initial, steps=stored.steps, loss=stored.loss)
            )
            found.saved_seconds += stored.seconds - (time.perf_counter() - begun)
            found.reused += 1
        else:
            value = optimise_value(
                model,
                tokenizer,
                arch,
                request,
                hp,
                templates,
                z_module,
                add_special_tokens=add_special_tokens,
                loss_layer=hp.v_loss_layer,
            )
            found.values.append(value)
            if store is not None:
                store.put(
                    request,
                    value.target,
                    value.initial,
                    steps=value.steps,
                    loss=value.loss,
                    seconds=time.perf_counter() - begun,
                )
        if progress is not None:
            progress(done, len(requests))
    return found


def _spread_over_layers(
    model: nn.Module,
    tokenizer: Any,
    arch: Architecture,
    requests: Sequence[EditRequest],
    hp: MemitHparams,
    stats: SecondMoments,
    templates: list[str],
    z_module: str,
    found: _TargetValues,
    add_special_tokens: bool,
) -> None:
    """Spread the residual to the targets over the edited layers, one least-squares update per layer."""
    layers = sorted(hp.layers)
    targets = torch.stack([v.target for v in found.values])  # [N, d_model]
    prepare = getattr(stats, "prepare", None)
    if callable(prepare):
        prepare(layers)  # one pass over the corpus for every layer not cached yet
    bare = [(r.prompt, r.subject) for r in requests]
    items = [(prefix + r.prompt, r.subject, len(prefix)) for r in requests for prefix in templates]
    for i, layer in enumerate(layers):
        rewrite = arch.rewrite_name(layer)
        # k = ½ (bare-prompt key + mean of the context-template keys), on the model as edited so far
        keys = read_keys(model, tokenizer, rewrite, items, add_special_tokens).view(len(requests), len(templates), -1)
        k = keys[:, 0] if len(templates) == 1 else 0.5 * (keys[:, 0] + keys[:, 1:].mean(dim=1))
        current = read_outputs(model, tokenizer, z_module, bare, add_special_tokens)
        residual = (targets - current) / (len(layers) - i)
        moment = stats.matrix(layer).to(device=k.device, dtype=torch.float64)
        k64 = k.double().T  # [d_in, N]
        system = hp.mom2_update_weight * moment + k64 @ k64.T
        try:
            adjusted = torch.linalg.solve(system, k64)  # (λC + KKᵀ)⁻¹ K
        except RuntimeError as exc:  # torch.linalg.LinAlgError
            raise DataError("mom2 statistics", f"λC + KKᵀ at layer {layer} is singular") from exc
        update = residual.double().T @ adjusted.T  # [d_out, d_in]
        add_to_weight(get_module(model, rewrite), update, conv1d=arch.conv1d)
