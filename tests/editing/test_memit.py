"""MEMIT: one batch of two edits on the real SmolLM2, statistics cold then cached, exact restore."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.lenses.editing.architectures import detect
from chronoprobe.lenses.editing.hparams import memit_hparams
from chronoprobe.lenses.editing.memit import apply_memit
from chronoprobe.lenses.editing.mom2 import load_corpus, second_moments
from chronoprobe.lenses.editing.weights import WeightBackup, touched_modules

CORPUS = Path(__file__).resolve().parents[1] / "assets" / "editing" / "mom2_corpus.txt"
REQUESTS = [
    EditRequest(prompt="The capital of France is", subject="France", target="Rome"),
    EditRequest(prompt="The Eiffel Tower is located in the city of", subject="Eiffel Tower", target="London"),
]
OLD = ["Paris", "Paris"]


def logprob(model, tokenizer, prompt: str, target: str) -> float:  # type: ignore[no-untyped-def]
    prompt_ids = tokenizer(prompt)["input_ids"]
    target_ids = tokenizer(" " + target, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt_ids + target_ids])).logits[0].log_softmax(-1)
    return sum(float(logits[len(prompt_ids) - 1 + j, t]) for j, t in enumerate(target_ids))


@pytest.mark.slow
def test_memit_batch_of_two_on_smollm2(smollm2, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, tokenizer, info = smollm2.model, smollm2.tokenizer, smollm2.info
    arch = detect(model, info.model_id)
    hp = memit_hparams(arch, info.model_id)
    assert hp.layers == (4, 5, 6, 7, 8)
    corpus = load_corpus(CORPUS)
    stats = second_moments(
        model, tokenizer, arch, hp.layers, corpus, revision=info.revision, model_id=info.model_id, cache_dir=tmp_path
    )
    assert all(not stats.records[layer].from_cache for layer in hp.layers)
    cached = second_moments(
        model, tokenizer, arch, hp.layers, corpus, revision=info.revision, model_id=info.model_id, cache_dir=tmp_path
    )
    for layer in hp.layers:
        assert cached.records[layer].from_cache and cached.records[layer].cache_file == stats.records[layer].cache_file
        assert torch.equal(cached.matrix(layer), stats.matrix(layer))
    assert cached.describe()["documents"] == 20 and cached.describe()["tokens"] > 1000

    saved = {name: p.detach().clone() for name, p in model.named_parameters()}
    backup = WeightBackup(model, touched_modules(arch, hp))
    try:
        for request, old in zip(REQUESTS, OLD, strict=True):
            assert logprob(model, tokenizer, request.prompt, old) > logprob(
                model, tokenizer, request.prompt, request.target
            )
        timing = apply_memit(model, tokenizer, REQUESTS, hp, cached)
        assert timing.requests == 2
        for request, old in zip(REQUESTS, OLD, strict=True):
            assert logprob(model, tokenizer, request.prompt, request.target) > logprob(
                model, tokenizer, request.prompt, old
            )
    finally:
        backup.restore()
    for name, p in model.named_parameters():
        assert torch.equal(p, saved[name]), name
