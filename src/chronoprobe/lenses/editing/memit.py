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
from typing import Any

import torch
from torch import nn

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.errors import DataError
from chronoprobe.lenses.editing.architectures import add_to_weight, detect, get_module
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
        layers = sorted(hp.layers)
        z_module = arch.layer_name(layers[-1])
        values = []
        saved_seconds = 0.0  # reused values: their first run's time replaces the moment it took to load them
        reused = 0
        for done, request in enumerate(requests, start=1):
            begun = time.perf_counter()
            stored = store.get(request, model_device(model)) if store is not None else None
            if stored is not None:
                values.append(
                    ValueResult(target=stored.target, initial=stored.initial, steps=stored.steps, loss=stored.loss)
                )
                saved_seconds += stored.seconds - (time.perf_counter() - begun)
                reused += 1
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
                values.append(value)
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
        targets = torch.stack([v.target for v in values])  # [N, d_model]
        prepare = getattr(stats, "prepare", None)
        if callable(prepare):
            prepare(layers)  # one pass over the corpus for every layer not cached yet
        bare = [(r.prompt, r.subject) for r in requests]
        items = [(prefix + r.prompt, r.subject, len(prefix)) for r in requests for prefix in templates]
        for i, layer in enumerate(layers):
            rewrite = arch.rewrite_name(layer)
            # k = ½ (bare-prompt key + mean of the context-template keys), on the model as edited so far
            keys = read_keys(model, tokenizer, rewrite, items, add_special_tokens).view(
                len(requests), len(templates), -1
            )
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
    finally:
        model.train(was_training)
    if store is not None:
        store.advance(requests)
    return EditTiming(
        seconds=time.perf_counter() - started + saved_seconds,
        steps=sum(v.steps for v in values),
        loss=max(v.loss for v in values),
        requests=len(requests),
        reused=reused,
    )
