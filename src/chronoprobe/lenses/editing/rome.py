"""ROME (Meng et al., 2022) as DyKnow ran it through EasyEdit: one rank-one update per fact.

Each edit reads a key at the subject's last token (the input of one layer's MLP down-projection),
optimises the value that layer's MLP should emit there so the model continues the prompt with
the new target, and writes the pair into the down-projection with a rank-one update. Edits are
applied one after another on the same model; each is computed on the already edited model.
"""

from __future__ import annotations

import inspect
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from pydantic import BaseModel, ConfigDict
from torch import nn

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.lenses.editing.architectures import Architecture, add_to_weight, detect, get_module
from chronoprobe.lenses.editing.hooks import (
    Batch,
    encode,
    model_device,
    pad_id,
    right_pad,
    run,
    subject_last_index,
    trace,
    tune_threads,
)
from chronoprobe.lenses.editing.hparams import EditHparams, RomeHparams, check_layers
from chronoprobe.lenses.editing.prefix import SplitBatch
from chronoprobe.models.kv_buffer import cache_argument, cache_of

if TYPE_CHECKING:
    from chronoprobe.lenses.editing.checkpoints import ValueStore
    from chronoprobe.lenses.editing.mom2 import SecondMoments

Progress = Callable[[int, int], None]

TEMPLATE_SEEDS = ("The", "Therefore", "Because", "I", "You")
_TOP_K = 5
_EARLY_STOP = 5e-2


class EditTiming(BaseModel):
    """What one edit (ROME) or one batch (MEMIT) cost."""

    model_config = ConfigDict(frozen=True)

    seconds: float
    steps: int
    """Value-optimisation forward passes (summed over the batch for MEMIT)."""
    loss: float
    """Final value-optimisation loss (the largest over the batch for MEMIT)."""
    requests: int = 1
    reused: int = 0
    """Value optimisations taken from an earlier (killed) run instead of computed."""


# (model) -> {(seed, length params): prefixes}; weak so a dropped model frees its entry.
_TEMPLATE_CACHE: weakref.WeakKeyDictionary[nn.Module, dict[tuple[int, tuple[tuple[int, int], ...]], list[str]]] = (
    weakref.WeakKeyDictionary()
)


def context_templates(
    model: nn.Module, tokenizer: Any, length_params: Sequence[Sequence[int]], seed: int = 0
) -> list[str]:
    """``""`` plus generated prefixes (each ending ``". "``) that the prompt is appended to.

    Top-k (5) sampling from "The", "Therefore", "Because", "I", "You": for each
    ``(length, count)`` pair, ``count // 5`` texts per seed word, ``length`` tokens long in
    total. The original sampled without a seed; here a ``torch.Generator`` seeded with
    ``seed`` makes the prefixes reproducible. They are generated once per (model, seed,
    lengths), the first time they are asked for, so later edits reuse the prefixes the
    unedited model produced, as in the original.
    """
    key = (seed, tuple((int(a), int(b)) for a, b in length_params))
    per_model = _TEMPLATE_CACHE.setdefault(model, {})
    if key in per_model:
        return per_model[key]
    generator = torch.Generator(device="cpu").manual_seed(seed)
    forward_params = inspect.signature(model.forward).parameters
    cache_kwarg = cache_argument(model)
    keep_last = {"logits_to_keep": 1} if "logits_to_keep" in forward_params else {}
    device = model_device(model)
    prefixes = [""]
    with torch.no_grad():
        for length, count in key[1]:
            per_word = max(1, count // len(TEMPLATE_SEEDS))
            starts = [encode(tokenizer, word, True) for word in TEMPLATE_SEEDS for _ in range(per_word)]
            # rows of equal start length are sampled together (the seed words are usually one token each)
            texts: dict[int, str] = {}
            for width in sorted({len(s) for s in starts}):
                members = [i for i, s in enumerate(starts) if len(s) == width]
                ids = torch.tensor([starts[i] for i in members], device=device)
                step_input, cache = ids, None
                while ids.shape[1] < length:
                    tune_threads(model)
                    kwargs: dict[str, Any] = {cache_kwarg: cache} if cache is not None else {}
                    output = model(input_ids=step_input, use_cache=True, **kwargs, **keep_last)
                    cache = cache_of(output)
                    top = torch.topk(output.logits[:, -1, :].float().cpu(), _TOP_K, dim=-1)
                    choice = torch.multinomial(torch.softmax(top.values, dim=-1), 1, generator=generator)
                    step_input = top.indices.gather(-1, choice).to(device)
                    ids = torch.cat([ids, step_input], dim=1)
                for i, row in zip(members, ids.tolist(), strict=True):
                    texts[i] = tokenizer.decode(row, skip_special_tokens=True)
            for i in range(len(starts)):
                prefixes.append(texts[i].replace("{", "").replace("}", "") + ". ")
    per_model[key] = prefixes
    return prefixes


def _target_ids(tokenizer: Any, target: str) -> list[int]:
    ids = encode(tokenizer, target if target.startswith(" ") else " " + target, False)
    if not ids:
        raise DataError(f"edit target {target!r}", "tokenizes to nothing")
    return ids


def read_keys(
    model: nn.Module,
    tokenizer: Any,
    module: str,
    items: Sequence[tuple[str, str, int]],
    add_special_tokens: bool,
) -> torch.Tensor:
    """Inputs of ``module`` at the subject's last token, one row per (text, subject, offset of the prompt).

    The subject is looked up from ``offset`` on (after any context prefix), so a prefix that
    happens to contain the subject does not move the key.
    """
    rows = [encode(tokenizer, text, add_special_tokens) for text, _, _ in items]
    lookups = [subject_last_index(tokenizer, text, subj, off, add_special_tokens) for text, subj, off in items]
    batch = right_pad(rows, pad_id(tokenizer), model_device(model))
    tune_threads(model)
    with torch.no_grad(), trace(model, inputs=[module], stop_after=module) as record:
        run(model, batch)
    hidden = record.inputs[module]
    index = torch.tensor([min(i, n - 1) for i, n in zip(lookups, batch.lengths, strict=True)], device=hidden.device)
    return hidden[torch.arange(len(rows), device=hidden.device), index].float()


def read_outputs(
    model: nn.Module, tokenizer: Any, module: str, prompts: Sequence[tuple[str, str]], add_special_tokens: bool
) -> torch.Tensor:
    """Outputs of ``module`` at the subject's last token of each (prompt, subject), as rows."""
    rows = [encode(tokenizer, prompt, add_special_tokens) for prompt, _ in prompts]
    lookups = [subject_last_index(tokenizer, p, s, 0, add_special_tokens) for p, s in prompts]
    batch = right_pad(rows, pad_id(tokenizer), model_device(model))
    with torch.no_grad(), trace(model, outputs=[module], stop_after=module) as record:
        run(model, batch)
    hidden = record.outputs[module]
    index = torch.tensor([min(i, n - 1) for i, n in zip(lookups, batch.lengths, strict=True)], device=hidden.device)
    return hidden[torch.arange(len(rows), device=hidden.device), index].float()


@dataclass(frozen=True)
class ValueResult:
    target: torch.Tensor
    """v* (ROME) or z (MEMIT): the output the hooked module should give at the subject's last token."""
    initial: torch.Tensor
    """o₀: that output before the edit."""
    steps: int
    loss: float


@dataclass
class _RowGroup:
    """Rows run together: with their prefixes cached (split at the lookup) or whole."""

    rows: list[int]
    """Global row indices, in local order."""
    runner: SplitBatch | Batch
    lookup_cols: list[int]
    """Each local row's lookup column in this group's coordinates."""
    shift: list[int]
    """Subtracted from a global column to get the local one."""
    row_index: torch.Tensor
    lookup_index: torch.Tensor
    pick_rows: torch.Tensor = field(default_factory=lambda: torch.empty(0, dtype=torch.long))
    pick_cols: torch.Tensor = field(default_factory=lambda: torch.empty(0, dtype=torch.long))

    @property
    def local(self) -> dict[int, int]:
        return {g: i for i, g in enumerate(self.rows)}

    def run(self, model: nn.Module) -> None:
        if isinstance(self.runner, SplitBatch):
            self.runner.run(model)
        else:
            run(model, self.runner)


def _row_groups(
    model: nn.Module,
    rows: list[list[int]],
    lookups: list[int],
    pad: int,
    device: torch.device,
    *,
    prefix_cache: bool,
) -> list[_RowGroup]:
    """Rows with tokens before their lookup share a prefix cache; the others (and all, without caching) run whole."""
    cached = [i for i, (r, k) in enumerate(zip(rows, lookups, strict=True)) if prefix_cache and 1 <= k < len(r)]
    whole = [i for i in range(len(rows)) if i not in cached]
    groups = []
    for members, split in ((cached, True), (whole, False)):
        if not members:
            continue
        runner: SplitBatch | Batch
        if split:
            runner = SplitBatch.build(model, [rows[i] for i in members], [lookups[i] for i in members], pad, device)
            shift = [lookups[i] for i in members]
        else:
            runner = right_pad([rows[i] for i in members], pad, device)
            shift = [0] * len(members)
        cols = [lookups[i] - s for i, s in zip(members, shift, strict=True)]
        groups.append(
            _RowGroup(
                rows=members,
                runner=runner,
                lookup_cols=cols,
                shift=shift,
                row_index=torch.arange(len(members), device=device),
                lookup_index=torch.tensor(cols, device=device),
            )
        )
    groups.sort(key=lambda g: 0 not in g.rows)  # o₀ is read from row 0: its group runs first
    return groups


def _pick_order(groups: list[_RowGroup], picks: list[tuple[int, int]]) -> torch.Tensor:
    """Give each group its (local row, local column) picks; the permutation back to ``picks`` order."""
    where = {}
    for g_index, group in enumerate(groups):
        for local, row in enumerate(group.rows):
            where[row] = (g_index, local)
    per_group: list[list[tuple[int, int, int]]] = [[] for _ in groups]
    for position, (row, col) in enumerate(picks):
        g_index, local = where[row]
        per_group[g_index].append((position, local, col - groups[g_index].shift[local]))
    flat = []
    for group, entries in zip(groups, per_group, strict=True):
        device = group.row_index.device
        group.pick_rows = torch.tensor([e[1] for e in entries], dtype=torch.long, device=device)
        group.pick_cols = torch.tensor([e[2] for e in entries], dtype=torch.long, device=device)
        flat += [e[0] for e in entries]
    order = torch.empty(len(flat), dtype=torch.long)
    order[torch.tensor(flat, dtype=torch.long)] = torch.arange(len(flat))
    return order.to(groups[0].row_index.device)


def optimise_value(
    model: nn.Module,
    tokenizer: Any,
    arch: Architecture,
    request: EditRequest,
    hp: EditHparams,
    templates: Sequence[str],
    module: str,
    *,
    add_special_tokens: bool,
    loss_layer: int | None = None,
    prefix_cache: bool = True,
) -> ValueResult:
    """Optimise δ added to ``module``'s output at the subject's last token (notes §2.1 step 4, §2.2 step 3).

    Loss: mean NLL of the target over the prompts (each template + prompt, teacher-forced),
    plus ``kl_factor`` · KL(P₀ ‖ P_δ) of the next token after the subject in "{subject} is a",
    plus ``v_weight_decay`` · ‖δ‖ / ‖o₀‖² (the original's non-squared norm over the squared one).
    ``loss_layer``: the block whose output gives the logits (through the final norm and the
    unembedding); None means the last block, i.e. the model's own logits (ROME).
    ``prefix_cache``: run the tokens before each row's lookup once (:mod:`chronoprobe.lenses.editing.prefix`);
    False runs every row whole at every step (the original pattern; same result).
    """
    device = model_device(model)
    value_rows = _value_rows(tokenizer, request, templates, add_special_tokens)
    groups = _row_groups(
        model, value_rows.rows, value_rows.lookups, pad_id(tokenizer), device, prefix_cache=prefix_cache
    )
    order = _pick_order(groups, value_rows.picks)
    delta = _Delta()
    # The logits come from the loss layer's output through the final norm and the unembedding,
    # at the labelled positions only; the forward pass stops after that block, which skips the
    # full-vocabulary projection of every position (for the last layer these are the model's logits).
    loss_module = arch.layer_name(arch.n_layers - 1 if loss_layer is None else loss_layer)
    objective = _Objective(
        final_norm=get_module(model, arch.final_norm),
        lm_head=get_module(model, arch.lm_head),
        label_ids=torch.tensor(value_rows.target * value_rows.n_rewrite, device=device),
        n_rewrite=value_rows.n_rewrite,
        target_length=len(value_rows.target),
        hp=hp,
    )
    optimiser: torch.optim.Optimizer | None = None
    steps = 0
    loss_value = float("inf")
    with torch.enable_grad():
        for step in range(hp.v_num_grad_steps):
            steps = step + 1
            tune_threads(model)
            gathered = []
            for group in groups:
                with trace(
                    model, edit_outputs={module: delta.adder(group)}, outputs=[loss_module], stop_after=loss_module
                ) as record:
                    group.run(model)
                gathered.append(record.outputs[loss_module][group.pick_rows, group.pick_cols])
            assert delta.delta is not None and delta.initial is not None
            loss = objective.loss(torch.cat(gathered)[order], delta.delta, delta.initial)
            loss_value = float(loss.detach())
            if loss_value < _EARLY_STOP or step == hp.v_num_grad_steps - 1:
                break
            if optimiser is None:
                optimiser = torch.optim.Adam([delta.delta], lr=hp.v_lr)
            optimiser.zero_grad()
            torch.autograd.backward(loss, inputs=[delta.delta])  # what loss.backward does; typed
            optimiser.step()
            delta.clamp(hp.clamp_norm_factor * delta.initial.norm())
    assert delta.delta is not None and delta.initial is not None
    return ValueResult(
        target=(delta.initial + delta.delta).detach(), initial=delta.initial, steps=steps, loss=loss_value
    )


@dataclass(frozen=True)
class _ValueRows:
    """The rows δ is optimised on: each template + prompt, teacher-forced on the target, then the KL row."""

    rows: list[list[int]]
    lookups: list[int]
    """Each row's subject-last-token column."""
    target: list[int]
    picks: list[tuple[int, int]]
    """What the loss reads, in order: each rewrite row's target positions, then the KL row's lookup."""

    @property
    def n_rewrite(self) -> int:
        return len(self.rows) - 1


def _value_rows(tokenizer: Any, request: EditRequest, templates: Sequence[str], add_special_tokens: bool) -> _ValueRows:
    target = _target_ids(tokenizer, request.target)
    rows: list[list[int]] = []
    lookups: list[int] = []
    label_positions: list[list[int]] = []
    for prefix in templates:
        text = prefix + request.prompt
        ids = encode(tokenizer, text, add_special_tokens)
        lookups.append(subject_last_index(tokenizer, text, request.subject, len(prefix), add_special_tokens))
        label_positions.append([len(ids) - 1 + j for j in range(len(target))])
        rows.append(ids + target[:-1])
    kl_text = f"{request.subject} is a"
    rows.append(encode(tokenizer, kl_text, True))
    lookups.append(subject_last_index(tokenizer, kl_text, request.subject, 0, True))
    n_rewrite = len(templates)
    picks = [(r, c) for r, positions in enumerate(label_positions) for c in positions] + [(n_rewrite, lookups[-1])]
    return _ValueRows(rows=rows, lookups=lookups, target=target, picks=picks)


@dataclass
class _Delta:
    """δ and o₀, both made at the first forward pass from the bare prompt (row 0) at its lookup."""

    delta: torch.Tensor | None = None
    initial: torch.Tensor | None = None

    def adder(self, group: _RowGroup) -> Callable[[torch.Tensor], torch.Tensor]:
        """The hook that adds δ to ``group``'s rows at their lookup columns."""

        def add_delta(output: torch.Tensor) -> torch.Tensor:
            if self.initial is None:
                local = group.local[0]
                self.initial = output[local, group.lookup_cols[local]].detach().float().clone()
                self.delta = torch.zeros_like(self.initial, requires_grad=True)
            assert self.delta is not None
            index = (group.row_index, group.lookup_index)
            return output.index_put(index, output[index] + self.delta.to(output.dtype))

        return add_delta

    def clamp(self, limit: torch.Tensor) -> None:
        """Scale δ back onto the ball of radius ``limit``."""
        assert self.delta is not None
        with torch.no_grad():
            norm = self.delta.norm()
            if norm > limit:
                self.delta.mul_(limit / norm)


@dataclass
class _Objective:
    """The loss of one step, from the loss layer's output at the picked positions (see :func:`optimise_value`)."""

    final_norm: nn.Module
    lm_head: nn.Module
    label_ids: torch.Tensor
    n_rewrite: int
    target_length: int
    hp: EditHparams
    kl_init: torch.Tensor | None = None
    """The KL row's log-probabilities at the first step: P₀."""

    def loss(self, hidden: torch.Tensor, delta: torch.Tensor, initial: torch.Tensor) -> torch.Tensor:
        n_labels = self.n_rewrite * self.target_length
        log_probs = torch.log_softmax(self.lm_head(self.final_norm(hidden)).float(), dim=-1)
        picked = log_probs[torch.arange(n_labels, device=self.label_ids.device), self.label_ids]
        nll = -picked.view(self.n_rewrite, self.target_length).mean(dim=1).mean()
        kl_log = log_probs[n_labels]
        if self.kl_init is None:
            self.kl_init = kl_log.detach().clone()
        kl = torch.sum(self.kl_init.exp() * (self.kl_init - kl_log))
        decay = self.hp.v_weight_decay * (delta.norm() / initial.norm() ** 2)
        loss: torch.Tensor = nll + self.hp.kl_factor * kl + decay
        return loss


@dataclass(frozen=True)
class RomeUpdate:
    layer: int
    left: torch.Tensor
    """u: the key direction (unit norm), size d_in."""
    right: torch.Tensor
    """r = (v* − y) / (x·u), size d_out; the update is ΔW = r uᵀ in [out, in] layout."""
    key: torch.Tensor
    """x: the down-projection input at the subject's last token of the bare prompt."""
    value: ValueResult


def compute_rome_update(
    model: nn.Module,
    tokenizer: Any,
    arch: Architecture,
    request: EditRequest,
    hp: RomeHparams,
    templates: Sequence[str],
    *,
    add_special_tokens: bool = True,
    stats: SecondMoments | None = None,
    value: ValueResult | None = None,
) -> RomeUpdate:
    """One ROME edit's rank-one update, computed on the model as it is now (nothing is changed).

    ``value``: v* already optimised on this same model state (a resumed run); else it is optimised here.
    """
    layer = hp.layers[0]
    rewrite = arch.rewrite_name(layer)
    items = [(prefix + request.prompt, request.subject, len(prefix)) for prefix in templates]
    keys = read_keys(model, tokenizer, rewrite, items, add_special_tokens)
    left = keys.mean(dim=0)
    if hp.mom2_adjustment:
        if stats is None:
            raise ConfigError("ROME hparams", "mom2_adjustment is on but no second-moment statistics were given")
        moment = stats.matrix(layer).to(device=left.device, dtype=torch.float64)
        try:
            left = torch.linalg.solve(moment, left.double()).float()
        except RuntimeError as exc:  # torch.linalg.LinAlgError
            raise DataError("mom2 statistics", f"the second moment at layer {layer} is singular") from exc
    left = left / left.norm()
    if value is None:
        value = optimise_value(
            model, tokenizer, arch, request, hp, templates, arch.mlp_name(layer), add_special_tokens=add_special_tokens
        )
    bare = [(request.prompt, request.subject)]
    key = read_keys(model, tokenizer, rewrite, [(request.prompt, request.subject, 0)], add_special_tokens)[0]
    current = read_outputs(model, tokenizer, rewrite, bare, add_special_tokens)[0]
    right = (value.target - current) / torch.dot(key, left)
    return RomeUpdate(layer=layer, left=left, right=right, key=key, value=value)


def apply_update(model: nn.Module, arch: Architecture, update: RomeUpdate) -> None:
    module = get_module(model, arch.rewrite_name(update.layer))
    add_to_weight(module, torch.outer(update.right, update.left), conv1d=arch.conv1d)


def apply_rome(
    model: nn.Module,
    tokenizer: Any,
    requests: Sequence[EditRequest],
    hp: RomeHparams,
    *,
    seed: int = 0,
    add_special_tokens: bool = True,
    stats: SecondMoments | None = None,
    progress: Progress | None = None,
    values: ValueStore | None = None,
) -> list[EditTiming]:
    """Apply ROME edits one after another, in place; one :class:`EditTiming` per request.

    ``add_special_tokens``: False for prompts already rendered with a chat template (they hold
    their special tokens). ``stats``: second moments, needed only with ``mom2_adjustment``.
    ``values``: where each edit's optimised value is kept, so a killed run resumes edit by edit
    (:mod:`chronoprobe.lenses.editing.checkpoints`); a reused edit reports its first run's seconds.
    """
    arch = detect(model)
    check_layers(hp, arch, "ROME hparams")
    if len(hp.layers) != 1:
        raise ConfigError("ROME hparams", f"ROME edits one layer; got layers {list(hp.layers)}")
    was_training = model.training
    model.eval()
    try:
        templates = context_templates(model, tokenizer, hp.context_template_length_params, seed)
        timings: list[EditTiming] = []
        for done, request in enumerate(requests, start=1):
            started = time.perf_counter()
            stored = values.get(request, model_device(model)) if values is not None else None
            resumed = None
            if stored is not None:
                resumed = ValueResult(
                    target=stored.target, initial=stored.initial, steps=stored.steps, loss=stored.loss
                )
            update = compute_rome_update(
                model,
                tokenizer,
                arch,
                request,
                hp,
                templates,
                add_special_tokens=add_special_tokens,
                stats=stats,
                value=resumed,
            )
            seconds = stored.seconds if stored is not None else time.perf_counter() - started
            if values is not None and stored is None:
                value = update.value
                values.put(request, value.target, value.initial, steps=value.steps, loss=value.loss, seconds=seconds)
            apply_update(model, arch, update)
            if values is not None:
                values.advance([request])
            timings.append(
                EditTiming(
                    seconds=seconds, steps=update.value.steps, loss=update.value.loss, reused=int(stored is not None)
                )
            )
            if progress is not None:
                progress(done, len(requests))
        return timings
    finally:
        model.train(was_training)
