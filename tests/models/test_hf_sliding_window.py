"""The decode loop on a model whose KV cache has sliding-window layers (the embedded Gemma 3 270M)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from chronoprobe.models import embedded
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.registry import BackendOptions, load_backend

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not embedded.gemma3_available(), reason="Gemma 3 270M packages not installed (./setup.sh installs them)"
    ),
]

PASSAGE = "Context: " + "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. " * 6
PROMPTS = [
    Prompt(text=PASSAGE + "Question: When was the Eiffel Tower completed? Answer:"),
    Prompt(text="Question: When was the Eiffel Tower completed? Answer:"),
    Prompt(text="The capital of France is"),
]


def test_mixed_lengths_fall_back_to_one_prefill_and_stay_exact():
    backend = load_backend("gemma3-270m", BackendOptions(batch_size=8))
    params = DecodingParams(n=3, temperature=1.0, seed=3, max_new_tokens=8, token_logprobs=True)
    generations = backend.generate(PROMPTS, params)
    assert backend._caches_merge is False, "sliding-window layers cannot be laid side by side"
    for prompt, generation in zip(PROMPTS, generations, strict=True):
        ids = backend.tokenizer(backend.render(prompt))["input_ids"]
        for sample in generation.samples:
            with torch.inference_mode():
                logits = backend.model(input_ids=torch.tensor([ids + sample.token_ids])).logits[0].float()
            start = len(ids) - 1
            expected = [float(torch.log_softmax(logits[start + i], -1)[t]) for i, t in enumerate(sample.token_ids)]
            assert np.allclose(sample.token_logprobs, expected, atol=1e-3)
    backend.drop_finished_rows = backend.prefill_groups = False
    again = backend.generate(PROMPTS, params)
    assert [[s.token_ids for s in g.samples] for g in again] == [[s.token_ids for s in g.samples] for g in generations]
