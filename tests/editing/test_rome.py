"""ROME: the real SmolLM2 with DyKnow-derived defaults, and the Conv1D path on a tiny untrained GPT-2."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from pydantic import ValidationError
from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.lenses.editing.architectures import detect, get_module
from chronoprobe.lenses.editing.hooks import subject_last_index
from chronoprobe.lenses.editing.hparams import rome_hparams
from chronoprobe.lenses.editing.mom2 import load_corpus, second_moments
from chronoprobe.lenses.editing.rome import (
    _TEMPLATE_CACHE,
    apply_rome,
    apply_update,
    compute_rome_update,
    context_templates,
    read_keys,
    read_outputs,
)
from chronoprobe.lenses.editing.weights import WeightBackup, touched_modules

CORPUS = Path(__file__).resolve().parents[1] / "assets" / "editing" / "mom2_corpus.txt"
FRANCE = EditRequest(prompt="The capital of France is", subject="France", target="Rome")


def logprob(model, tokenizer, prompt: str, target: str) -> float:  # type: ignore[no-untyped-def]
    prompt_ids = tokenizer(prompt)["input_ids"]
    target_ids = tokenizer(" " + target, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt_ids + target_ids])).logits[0].log_softmax(-1)
    return sum(float(logits[len(prompt_ids) - 1 + j, t]) for j, t in enumerate(target_ids))


def snapshot(model) -> dict[str, torch.Tensor]:  # type: ignore[no-untyped-def]
    return {name: p.detach().clone() for name, p in model.named_parameters()}


def assert_same(model, saved: dict[str, torch.Tensor]) -> None:  # type: ignore[no-untyped-def]
    for name, p in model.named_parameters():
        assert torch.equal(p, saved[name]), name


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    return AutoTokenizer.from_pretrained(converted_gguf(smollm2_gguf())[0])


def tiny_gpt2(vocab_size: int) -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2, n_embd=32, n_head=2, n_positions=64, vocab_size=vocab_size, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(config)  # left in training mode: the editor must switch dropout off itself


def fast_overrides(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "fast.yaml"
    path.write_text("v_num_grad_steps: 4\ncontext_template_length_params: [[5, 5]]\n" + extra, encoding="utf-8")
    return path


def test_subject_not_in_prompt_is_rejected() -> None:
    with pytest.raises(ValidationError, match="is not in its prompt"):
        EditRequest(prompt="The capital of France is", subject="Germany", target="Berlin")


@pytest.mark.e2e
def test_subject_index_is_first_occurrence_after_offset(tokenizer) -> None:  # type: ignore[no-untyped-def]
    text = "France. The capital of France is"
    first = subject_last_index(tokenizer, text, "France", 0, True)
    assert first == len(tokenizer("France")["input_ids"]) - 1
    later = subject_last_index(tokenizer, text, "France", len("France. "), True)
    assert later == len(tokenizer("France. The capital of France")["input_ids"]) - 1


@pytest.mark.e2e
def test_context_templates_are_seeded(tokenizer) -> None:  # type: ignore[no-untyped-def]
    model = tiny_gpt2(len(tokenizer)).eval()
    first = context_templates(model, tokenizer, ((5, 10), (10, 10)), seed=3)
    assert len(first) == 21 and first[0] == "" and all(t.endswith(". ") for t in first[1:])
    assert first[1].startswith("The") and first[-1].startswith("You")
    assert context_templates(model, tokenizer, ((5, 10), (10, 10)), seed=3) is first  # once per (model, seed)
    _TEMPLATE_CACHE.clear()
    assert context_templates(model, tokenizer, ((5, 10), (10, 10)), seed=3) == first  # reproducible
    assert context_templates(model, tokenizer, ((5, 10), (10, 10)), seed=4) != first


@pytest.mark.e2e
@pytest.mark.parametrize("mom2_adjustment", [False, True])
def test_gpt2_conv1d_rank_one_update_hits_the_value(tmp_path: Path, tokenizer, mom2_adjustment: bool) -> None:  # type: ignore[no-untyped-def]
    model = tiny_gpt2(len(tokenizer))
    arch = detect(model)
    extra = f"mom2_adjustment: {str(mom2_adjustment).lower()}\n"
    hp = rome_hparams(arch, "tiny-gpt2", fast_overrides(tmp_path, extra))
    assert hp.layers == (1,)
    stats = None
    if mom2_adjustment:
        corpus = load_corpus(CORPUS)
        stats = second_moments(
            model, tokenizer, arch, hp.layers, corpus, revision="x", model_id="tiny", cache_dir=tmp_path
        )
    model.eval()
    templates = context_templates(model, tokenizer, hp.context_template_length_params, 0)
    update = compute_rome_update(model, tokenizer, arch, FRANCE, hp, templates, stats=stats)
    rewrite = arch.rewrite_name(1)
    before = get_module(model, rewrite).get_parameter("weight").detach().clone()
    apply_update(model, arch, update)
    after = get_module(model, rewrite).get_parameter("weight").detach()
    assert after.shape == before.shape == (128, 32)
    assert torch.allclose(after - before, torch.outer(update.left, update.right))  # [in, out] = u rᵀ
    # W'x = v*: the edited down-projection now emits the optimised value at the subject's last token
    out = read_outputs(model, tokenizer, rewrite, [(FRANCE.prompt, FRANCE.subject)], True)[0]
    assert torch.allclose(out, update.value.target, atol=1e-5 * float(update.value.target.norm()) + 1e-6)
    # u ∝ k̄ (DyKnow's runs) or u ∝ C⁻¹k̄ (the ROME paper), k̄ the key averaged over the templates
    items = [(prefix + FRANCE.prompt, FRANCE.subject, len(prefix)) for prefix in templates]
    mean_key = read_keys(model, tokenizer, rewrite, items, True).mean(dim=0).double()
    direction = update.left.double()
    if mom2_adjustment:
        assert stats is not None
        direction = stats.matrix(1).double() @ direction
        assert float(torch.nn.functional.cosine_similarity(update.left.double(), mean_key, dim=0)) < 0.99
    assert float(torch.nn.functional.cosine_similarity(direction, mean_key, dim=0)) > 0.9999


@pytest.mark.slow
def test_rome_default_hparams_on_smollm2(smollm2) -> None:  # type: ignore[no-untyped-def]
    model, tokenizer = smollm2.model, smollm2.tokenizer
    arch = detect(model, smollm2.info.model_id)
    hp = rome_hparams(arch, smollm2.info.model_id)  # DyKnow's Llama-2 values, layer 5 of 30
    saved = snapshot(model)
    backup = WeightBackup(model, touched_modules(arch, hp))
    try:
        assert logprob(model, tokenizer, FRANCE.prompt, "Paris") > logprob(model, tokenizer, FRANCE.prompt, "Rome")
        calls: list[tuple[int, int]] = []
        timings = apply_rome(model, tokenizer, [FRANCE], hp, progress=lambda d, t: calls.append((d, t)))
        assert calls == [(1, 1)] and len(timings) == 1 and timings[0].steps <= hp.v_num_grad_steps
        assert logprob(model, tokenizer, FRANCE.prompt, "Rome") > logprob(model, tokenizer, FRANCE.prompt, "Paris")
        assert not torch.equal(
            get_module(model, arch.rewrite_name(5)).get_parameter("weight"),
            saved["model.layers.5.mlp.down_proj.weight"],
        )
    finally:
        backup.restore()
    assert_same(model, saved)
