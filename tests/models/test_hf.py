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
