"""ROME and MEMIT applied to a loaded transformers model, and undone bit-exactly afterwards."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronoprobe.cache import CallCache, stable_hash
from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.checkpoints import ValueStore
from chronoprobe.lenses.editing.config import EditingConfig
from chronoprobe.lenses.editing.passages import stats_corpus_path
from chronoprobe.lenses.editing.rome import EditTiming
from chronoprobe.models.base import Backend


@dataclass
class WeightPlan:
    """One weight edit, fully described before any weight changes (so its hash can key the cache)."""

    method: str
    mode: str
    requests: list[EditRequest]
    hp: Any
    arch: Any
    add_special_tokens: bool
    seed: int
    edit_hash: str
    chain_base: str
    """What every value depends on besides the edits (the checkpoints' chain starts here)."""
    hparams: dict[str, Any]
    hparams_source: str
    stats: dict[str, Any] | None
    corpus: Any = None


def _hf(backend: Backend) -> Any:
    from chronoprobe.models.hf import HFBackend  # deferred: torch, transformers

    assert isinstance(backend, HFBackend), "checked by check_backend"
    return backend


def check_model(config: EditingConfig, backend: Backend) -> None:
    """The architecture is supported and the hyperparameters fit it (one-line errors, before any work)."""
    hf = _hf(backend)
    from chronoprobe.lenses.editing.architectures import detect  # deferred: torch
    from chronoprobe.lenses.editing.hparams import memit_hparams, rome_hparams  # deferred: torch

    arch = detect(hf.model, hf.info.model_id)
    if "rome" in config.method:
        rome_hparams(arch, hf.info.model_id, config.hparams)
    if "memit" in config.method:
        memit_hparams(arch, hf.info.model_id, config.hparams)


def _stats_identity(config: EditingConfig, tools: Any) -> tuple[Any, dict[str, Any]]:
    from chronoprobe.lenses.editing.mom2 import load_corpus  # deferred: torch

    path = config.stats_corpus or stats_corpus_path()
    corpus = load_corpus(path)
    if config.stats_documents is not None:
        corpus = corpus.limited(config.stats_documents)
    return corpus, corpus.describe()


def plan(
    config: EditingConfig, method: str, backend: Backend, requests: Sequence[EditRequest], tools: Any
) -> WeightPlan:
    """The edit's hyperparameters, statistics corpus and hash."""
    hf = _hf(backend)
    from chronoprobe.lenses.editing.architectures import detect  # deferred: torch
    from chronoprobe.lenses.editing.hparams import memit_hparams, rome_hparams  # deferred: torch

    arch = detect(hf.model, hf.info.model_id)
    hp = (rome_hparams if method == "rome" else memit_hparams)(arch, hf.info.model_id, config.hparams)
    corpus, stats = None, None
    if method == "memit" or getattr(hp, "mom2_adjustment", False):
        corpus, stats = _stats_identity(config, tools)
    hparams = hp.model_dump(mode="json")
    mode = config.mode_of(method)
    if method == "rome" and mode == "batch":
        raise ConfigError("--mode batch", "ROME edits one fact at a time; use --mode single (or leave it out)")
    identity = {
        "method": method,
        "mode": mode,
        "hparams": hparams,
        "seed": config.template_seed,
        "base": {"model": hf.info.model_id, "revision": hf.info.revision, "dtype": hf.info.dtype},
        "chat_template": hf.info.chat_template,
        "stats": stats,
    }
    edit_hash = stable_hash({**identity, "edits": [r.model_dump() for r in requests]})
    return WeightPlan(
        method=method,
        mode=mode,
        requests=list(requests),
        hp=hp,
        arch=arch,
        add_special_tokens=not hf.info.chat_template,
        seed=config.template_seed,
        edit_hash=edit_hash,
        chain_base=stable_hash(identity),
        hparams=hparams,
        hparams_source=getattr(hp, "source", "") or "",
        stats=stats,
        corpus=corpus,
    )


def _apply(
    plan: WeightPlan, hf: Any, values: ValueStore, tick: Callable[[int], None] | None = None
) -> list[EditTiming]:
    """Apply the edit in place; one timing per edit (ROME), per batch (MEMIT) or per single MEMIT edit."""
    model, tokenizer = hf.model, hf.tokenizer
    stats = None
    if plan.corpus is not None:
        from chronoprobe.lenses.editing.mom2 import second_moments  # deferred: torch

        stats = second_moments(
            model,
            tokenizer,
            plan.arch,
            plan.hp.layers,
            plan.corpus,
            revision=hf.info.revision,
            model_id=hf.info.model_id,
            n_samples=plan.hp.mom2_n_samples,
        )
        plan.stats = {**(plan.stats or {}), **stats.describe()}
    if plan.method == "rome":
        from chronoprobe.lenses.editing.rome import apply_rome  # deferred: torch, transformers

        timings = apply_rome(
            model,
            tokenizer,
            plan.requests,
            plan.hp,
            seed=plan.seed,
            add_special_tokens=plan.add_special_tokens,
            stats=stats,
            progress=(lambda done, total: tick(1)) if tick else None,
            values=values,
        )
        return timings
    from chronoprobe.lenses.editing.memit import apply_memit  # deferred: torch, transformers

    assert stats is not None
    batches = [plan.requests] if plan.mode == "batch" else [[r] for r in plan.requests]
    timings = []
    for batch in batches:
        timing = apply_memit(
            model,
            tokenizer,
            batch,
            plan.hp,
            stats,
            seed=plan.seed,
            add_special_tokens=plan.add_special_tokens,
            progress=(lambda done, total: tick(1)) if tick else None,
            store=values,
        )
        timings.append(timing)
    return timings


@contextmanager
def edited(
    plan: WeightPlan,
    backend: Backend,
    cache: CallCache,
    *,
    save_to: Path | None = None,
    tick: Callable[[int], None] | None = None,
) -> Iterator[list[EditTiming]]:
    """The model with the edit applied; its touched weights are copied first and restored exactly on exit.

    Each optimised value is kept in ``cache`` as it is computed, so a killed run redoes only the
    edits it had not finished.
    """
    hf = _hf(backend)
    from chronoprobe.lenses.editing.weights import WeightBackup, touched_modules  # deferred: torch

    backup = WeightBackup(hf.model, touched_modules(plan.arch, plan.hp))
    try:
        timings = _apply(plan, hf, ValueStore(cache, plan.chain_base), tick)
        if save_to is not None:
            save_to.mkdir(parents=True, exist_ok=True)
            hf.model.save_pretrained(save_to)
            hf.tokenizer.save_pretrained(save_to)
        yield timings
    finally:
        backup.restore()
