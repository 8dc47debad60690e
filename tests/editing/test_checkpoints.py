"""A killed ROME/MEMIT run resumes edit by edit and ends where an uninterrupted run ends."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from chronoprobe.cache import CallCache
from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.lenses.editing.architectures import detect, get_module, rewrite_weight
from chronoprobe.lenses.editing.checkpoints import ValueStore
from chronoprobe.lenses.editing.hparams import memit_hparams, rome_hparams
from chronoprobe.lenses.editing.memit import apply_memit
from chronoprobe.lenses.editing.mom2 import load_corpus, second_moments
from chronoprobe.lenses.editing.rome import apply_rome
from chronoprobe.lenses.editing.weights import WeightBackup, touched_modules
from chronoprobe.models.registry import BackendOptions, load_backend

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "editing"
EDITS = [
    EditRequest(prompt="The capital of France is", subject="France", target="Rome"),
    EditRequest(prompt="The Eiffel Tower is located in the city of", subject="Eiffel Tower", target="London"),
]


@pytest.fixture(scope="module")
def smollm2():  # type: ignore[no-untyped-def]
    return load_backend("smollm2", BackendOptions())


def _weights(model: torch.nn.Module, names: list[str]) -> list[torch.Tensor]:
    return [rewrite_weight(get_module(model, name)).detach().clone() for name in names]


@pytest.mark.slow
def test_rome_resumes_after_the_edits_it_finished(smollm2, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, tokenizer = smollm2.model, smollm2.tokenizer
    arch = detect(model, smollm2.info.model_id)
    hp = rome_hparams(arch, smollm2.info.model_id).model_copy(update={"v_num_grad_steps": 3})
    names = touched_modules(arch, hp)
    cache = CallCache(tmp_path / "calls.sqlite")
    with WeightBackup(model, names):  # uninterrupted, no store
        apply_rome(model, tokenizer, EDITS, hp)
        uninterrupted = _weights(model, names)
    with WeightBackup(model, names):  # "killed" after the first edit
        first = apply_rome(model, tokenizer, EDITS[:1], hp, values=ValueStore(cache, "base"))
    with WeightBackup(model, names):  # the rerun: the first edit's value comes back, the second is computed
        store = ValueStore(cache, "base")
        resumed = apply_rome(model, tokenizer, EDITS, hp, values=store)
        after = _weights(model, names)
    assert [t.reused for t in resumed] == [1, 0] and store.reused == 1
    assert resumed[0].seconds == first[0].seconds  # the first run's time, not the moment it took to reload
    for mine, theirs in zip(after, uninterrupted, strict=True):
        assert torch.allclose(mine, theirs, atol=1e-5)
    # another base (other settings or model) never picks up these values
    assert ValueStore(cache, "other").get(EDITS[0], torch.device("cpu")) is None


@pytest.mark.slow
def test_memit_reuses_each_requests_value(smollm2, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, tokenizer = smollm2.model, smollm2.tokenizer
    arch = detect(model, smollm2.info.model_id)
    hp = memit_hparams(arch, smollm2.info.model_id).model_copy(update={"v_num_grad_steps": 3})
    stats = second_moments(
        model,
        tokenizer,
        arch,
        hp.layers,
        load_corpus(ASSETS / "mom2_corpus.txt").limited(3),
        revision=smollm2.info.revision,
        model_id=smollm2.info.model_id,
        cache_dir=tmp_path / "stats",
    )
    names = touched_modules(arch, hp)
    cache = CallCache(tmp_path / "calls.sqlite")
    with WeightBackup(model, names):
        apply_memit(model, tokenizer, EDITS, hp, stats, store=ValueStore(cache, "base"))
        uninterrupted = _weights(model, names)
    with WeightBackup(model, names):
        timing = apply_memit(model, tokenizer, EDITS, hp, stats, store=ValueStore(cache, "base"))
        again = _weights(model, names)
    assert timing.reused == 2
    for mine, theirs in zip(again, uninterrupted, strict=True):
        assert torch.allclose(mine, theirs, atol=1e-5)
