"""The hf backend on the real embedded SmolLM2-135M-Instruct."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from chronoprobe.errors import CapabilityError
from chronoprobe.models.base import (
    Capability,
    DecodingParams,
    Prompt,
    require,
)
from chronoprobe.testing import MockBackend

pytestmark = pytest.mark.slow

PROMPTS = [
    Prompt.chat("Name the capital of France in one word.", fallback_text="The capital of France is"),
    Prompt.chat("Who wrote Hamlet? Answer with the name only.", fallback_text="Hamlet was written by"),
    Prompt.chat("Say hello.", fallback_text="Hello"),
]


def reference_greedy(backend, prompt: Prompt, max_new_tokens: int) -> str:
    """transformers' own unbatched greedy generate(), the original pattern."""
    rendered = backend.render(prompt)
    encoded = backend.tokenizer(rendered, return_tensors="pt", add_special_tokens=not backend.use_chat_template)
    out = backend.model.generate(**encoded, max_new_tokens=max_new_tokens, do_sample=False)
    return backend.tokenizer.decode(out[0, encoded["input_ids"].shape[1] :], skip_special_tokens=True)


def test_batched_greedy_matches_unbatched_generate(smollm2):
    ours = smollm2.generate(PROMPTS, DecodingParams(max_new_tokens=12))
    for prompt, generation in zip(PROMPTS, ours, strict=True):
        assert generation.text == reference_greedy(smollm2, prompt, 12)


def test_chat_template_is_explicit_and_recorded(smollm2):
    rendered = smollm2.render(PROMPTS[0])
    assert rendered.startswith("<|im_start|>") and rendered.endswith("<|im_start|>assistant\n")
    assert smollm2.info.chat_template is True
    assert smollm2.info.is_chat_model is True


def test_n_samples_share_a_prompt_pass_and_are_seeded(smollm2):
    params = DecodingParams(n=4, temperature=1.0, max_new_tokens=8, seed=7, token_logprobs=True, mean_distribution=True)
    first = smollm2.generate(PROMPTS[:2], params)
    again = smollm2.generate(PROMPTS[:2], params)
    assert [[s.text for s in g.samples] for g in first] == [[s.text for s in g.samples] for g in again]
    assert all(len(g.samples) == 4 for g in first)
    vocab = smollm2.model.config.vocab_size
    for sample in first[0].samples:
        assert sample.mean_distribution is not None and sample.mean_distribution.shape == (vocab,)
        assert abs(float(sample.mean_distribution.sum()) - 1.0) < 1e-3
        assert len(sample.token_logprobs) == len(sample.token_ids)
        assert all(lp <= 0 for lp in sample.token_logprobs)


def test_mean_distribution_and_logprobs_match_a_full_forward_pass(smollm2):
    """Holds for every row of a batch whose shared prefix is run once (see HFBackend._prefill)."""
    params = DecodingParams(max_new_tokens=6, token_logprobs=True, mean_distribution=True)
    generations = smollm2.generate(PROMPTS, params)
    for prompt, generation in zip(PROMPTS, generations, strict=True):
        sample = generation.samples[0]
        prompt_ids = smollm2.tokenizer(smollm2.render(prompt), add_special_tokens=False)["input_ids"]
        ids = torch.tensor([prompt_ids + sample.token_ids])
        with torch.inference_mode():
            logits = smollm2.model(input_ids=ids).logits[0].float()
        positions = range(len(prompt_ids) - 1, len(prompt_ids) - 1 + len(sample.token_ids))
        probs = torch.stack([torch.softmax(logits[p], -1) for p in positions])
        expected_lps = [float(torch.log(probs[i, t])) for i, t in enumerate(sample.token_ids)]
        assert np.allclose(sample.mean_distribution, probs.mean(0).numpy(), atol=1e-4)
        assert np.allclose(sample.token_logprobs, expected_lps, atol=1e-3)


def test_shared_prefix_is_run_once(smollm2):
    from chronoprobe.models.hf import _common_prefix_length

    rows = smollm2._token_ids([smollm2.render(p) for p in PROMPTS])
    shared = _common_prefix_length(rows)
    assert shared >= 20, "the chat template's system prompt is common to all three prompts"
    assert all(row[:shared] == rows[0][:shared] for row in rows)
    assert _common_prefix_length([[1, 2, 3], [1, 2, 3]]) == 2, "every row keeps one token of its own"
    assert _common_prefix_length([[1, 2], [3, 4]]) == 0


def test_missing_capability_fails_before_work():
    text_only = MockBackend(lambda prompt, params: "", name="text-only", capabilities={Capability.GENERATE})
    with pytest.raises(CapabilityError) as err:
        require(text_only, DecodingParams(mean_distribution=True, n=3), purpose="coherent persuasion")
    assert "mean_distribution" in str(err.value) and "sample_n" in str(err.value)
    assert "\n" not in str(err.value)
    assert Capability.MEAN_DISTRIBUTION not in text_only.capabilities
    assert text_only.batches == []


def test_every_sample_of_a_repeated_cache_matches_a_full_forward_pass(smollm2):
    """n samples decode from one prompt pass copied into the in-place buffer (models/kv_buffer.py)."""
    params = DecodingParams(n=3, temperature=1.0, top_p=0.9, seed=3, max_new_tokens=6, token_logprobs=True)
    generations = smollm2.generate(PROMPTS[:2], params)
    for prompt, generation in zip(PROMPTS[:2], generations, strict=True):
        prompt_ids = smollm2.tokenizer(smollm2.render(prompt), add_special_tokens=False)["input_ids"]
        for sample in generation.samples:
            ids = torch.tensor([prompt_ids + sample.token_ids])
            with torch.inference_mode():
                logits = smollm2.model(input_ids=ids).logits[0].float()
            start = len(prompt_ids) - 1
            expected = [float(torch.log_softmax(logits[start + i], -1)[t]) for i, t in enumerate(sample.token_ids)]
            assert np.allclose(sample.token_logprobs, expected, atol=1e-3)


PASSAGE = (
    "Context: The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres tall "
    "and was the tallest man-made structure in the world until 1930, when the Chrysler Building in New York "
    "was finished. Gustave Eiffel's company designed and built it, and millions of people visit it every year. "
)
MIXED = [
    Prompt.chat(PASSAGE + "When was the Eiffel Tower completed?", fallback_text="The Eiffel Tower was completed in"),
    Prompt.chat("When was the Eiffel Tower completed?", fallback_text="The Eiffel Tower was completed in"),
    Prompt.chat("Say hello.", fallback_text="Hello"),
]


def decode_batch_sizes(backend, prompts, params):  # type: ignore[no-untyped-def]
    """(results, rows of every forward pass after the first decode step)."""
    sizes: list[int] = []
    handle = backend.model.register_forward_pre_hook(
        lambda _m, _a, kw: sizes.append(kw["input_ids"].shape[0]) if kw["input_ids"].shape[1] == 1 else None,
        with_kwargs=True,
    )
    try:
        return backend.generate(prompts, params), sizes
    finally:
        handle.remove()


def test_prompts_of_very_different_lengths_prefill_in_groups_exactly(smollm2):
    from chronoprobe.models.hf import _common_prefix_length
    from chronoprobe.models.prefill_groups import length_groups

    rows = smollm2._token_ids([smollm2.render(p) for p in MIXED])
    shared = _common_prefix_length(rows)
    assert len(length_groups([len(r) - shared for r in rows])) >= 2, "the passage row must run in its own group"
    params = DecodingParams(n=2, temperature=1.0, seed=5, max_new_tokens=6, token_logprobs=True, mean_distribution=True)
    generations = smollm2.generate(MIXED, params)
    for prompt, generation in zip(MIXED, generations, strict=True):
        prompt_ids = smollm2.tokenizer(smollm2.render(prompt), add_special_tokens=False)["input_ids"]
        for sample in generation.samples:
            with torch.inference_mode():
                logits = smollm2.model(input_ids=torch.tensor([prompt_ids + sample.token_ids])).logits[0].float()
            start = len(prompt_ids) - 1
            log_probs = torch.log_softmax(logits[start : start + len(sample.token_ids)], -1)
            expected = [float(log_probs[i, t]) for i, t in enumerate(sample.token_ids)]
            assert np.allclose(sample.token_logprobs, expected, atol=1e-3)
            assert np.allclose(sample.mean_distribution, log_probs.exp().mean(0).numpy(), atol=1e-4)
    greedy = DecodingParams(max_new_tokens=10)
    grouped = [g.text for g in smollm2.generate(MIXED, greedy)]
    smollm2.prefill_groups = False
    try:
        assert [g.text for g in smollm2.generate(MIXED, greedy)] == grouped
    finally:
        smollm2.prefill_groups = True


def test_finished_rows_leave_the_batch_and_change_no_sample(smollm2):
    params = DecodingParams(n=6, temperature=1.0, seed=11, max_new_tokens=24, token_logprobs=True)
    dropped, sizes = decode_batch_sizes(smollm2, PROMPTS, params)
    assert sizes and sizes[-1] < sizes[0] == 3 * 6, "rows that finished must have left the batch"
    smollm2.drop_finished_rows = False
    try:
        kept, full_sizes = decode_batch_sizes(smollm2, PROMPTS, params)
    finally:
        smollm2.drop_finished_rows = True
    assert set(full_sizes) == {18}
    for a, b in zip(dropped, kept, strict=True):
        assert [s.token_ids for s in a.samples] == [s.token_ids for s in b.samples]
        for x, y in zip(a.samples, b.samples, strict=True):
            assert np.allclose(x.token_logprobs, y.token_logprobs, atol=1e-4)
