"""--sampler multinomial reproduces the samples of chronoprobe 0.1 exactly, on the real SmolLM2.

tests/assets/sampler_release_0_1.json holds what 0.1's code (before commit ec448bb) sampled for
these prompts and parameters, written by running that code itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.models.base import DecodingParams, Prompt

pytestmark = pytest.mark.slow

RELEASE_0_1 = Path(__file__).parents[1] / "assets" / "sampler_release_0_1.json"

PROMPTS = [
    Prompt.chat("Name the capital of France in one word.", fallback_text="The capital of France is"),
    Prompt.chat("Who wrote Hamlet? Answer with the name only.", fallback_text="Hamlet was written by"),
    Prompt.chat("Say hello.", fallback_text="Hello"),
    Prompt.chat(
        "Read this passage and answer. Passage: The Eiffel Tower was completed in 1889 for the World's Fair in Paris, "
        "and it was the tallest man-made structure in the world until 1930. Question: When was it completed?",
        fallback_text="It was completed in",
    ),
]
PARAMS = {
    "conflicts": DecodingParams(
        n=4, temperature=0.5, max_new_tokens=12, seed=10, token_logprobs=True, mean_distribution=True
    ),
    "label": DecodingParams(n=3, temperature=0.7, top_p=0.9, max_new_tokens=10, seed=3),
    "recency": DecodingParams(n=1, temperature=0.5, max_new_tokens=16, seed=0),
    "hot": DecodingParams(n=2, temperature=1.5, top_k=50, max_new_tokens=8, seed=5),
}


@pytest.fixture(scope="module")
def smollm2_multinomial():
    from chronoprobe.models.registry import BackendOptions, load_backend

    return load_backend("smollm2", BackendOptions(batch_size=4, sampler="multinomial"))


def token_ids(backend, params: DecodingParams) -> list[list[list[int]]]:
    return [[s.token_ids for s in g.samples] for g in backend.generate(PROMPTS, params)]


@pytest.mark.parametrize("name", list(PARAMS))
def test_multinomial_samples_are_those_of_release_0_1(smollm2_multinomial, name):
    expected = json.loads(RELEASE_0_1.read_text(encoding="utf-8"))["token_ids"][name]
    assert smollm2_multinomial.info.sampler == "multinomial"
    assert token_ids(smollm2_multinomial, PARAMS[name]) == expected


def test_the_default_sampler_draws_other_samples(smollm2):
    """Why the switch exists: the inverse-CDF draw changed 0.1's samples."""
    expected = json.loads(RELEASE_0_1.read_text(encoding="utf-8"))["token_ids"]["label"]
    assert smollm2.info.sampler == "inverse-cdf"
    assert token_ids(smollm2, PARAMS["label"]) != expected
