"""First-token confidence is the same rule on every backend: the hf path (token strings from
the backend), the vLLM path (a tokenizer), and an OpenAI-compatible server (token strings from
the response), here a real loopback server in front of a scripted backend."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.lenses.conflicts.completion import sample_confidence
from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Prompt,
    Sample,
)
from chronoprobe.models.openai_backend import OpenAIBackend, OpenAIConfig
from chronoprobe.testing.openai_server import OpenAIServer

VOCAB = {1: "<s>", 5: "The", 6: " Eiff", 7: "el Tower"}
PROBS = {5: 0.9, 6: 0.6, 7: 0.5}


class _Tokenizer:
    all_special_ids = (1,)

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(VOCAB[i] for i in ids)


class ScriptedBackend(Backend):
    """Always answers 'The Eiffel Tower' with fixed token probabilities."""

    capabilities = frozenset({Capability.GENERATE, Capability.TOKEN_LOGPROBS, Capability.FIRST_TOKEN_PROB})

    def __init__(self, name: str = "hf", with_token_strings: bool = True) -> None:
        self._info = BackendInfo(spec=name, backend=name, model_id="scripted", revision="1")
        self.tokenizer = _Tokenizer()
        if with_token_strings:
            self.token_strings = lambda ids: [VOCAB[i] for i in ids]

    @property
    def info(self) -> BackendInfo:
        return self._info

    def render(self, prompt: Prompt) -> str:
        return (prompt.text or "") + prompt.answer_prefix

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        ids = [5, 6, 7]
        lps = [math.log(PROBS[i]) for i in ids]
        return [
            Generation(
                rendered_prompt=self.render(p),
                samples=[Sample(text="The Eiffel Tower", token_ids=ids, token_logprobs=lps, first_token_prob=PROBS[5])],
            )
            for p in prompts
        ]


PARAMS = DecodingParams(max_new_tokens=5, token_logprobs=True, first_token_prob=True)


def _cached(backend: Backend, tmp_path: Path) -> CachedModel:
    return CachedModel(backend, CallCache(tmp_path / "c.sqlite"))


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(ScriptedBackend(), model_name="scripted") as running:
        yield running


def test_every_backend_skips_a_capitalised_article(server: OpenAIServer, tmp_path: Path):
    api = OpenAIBackend(OpenAIConfig(model="scripted", base_url=server.url, mode="completions", timeout_s=30))
    try:
        [api_generation] = api.generate([Prompt(text="Paris's landmark is")], PARAMS)
        api_sample = api_generation.samples[0]
        assert api_sample.tokens == ["The", " Eiff", "el Tower"]
        assert api_sample.first_token_prob == pytest.approx(0.9)  # p(first token), the backend's own field
        hf = ScriptedBackend("hf")
        vllm = ScriptedBackend("vllm", with_token_strings=False)
        hf_sample = hf.generate([Prompt(text="x")], PARAMS)[0].samples[0]
        # Corrected (default): "The" is skipped on every path.
        for backend, sample in ((hf, hf_sample), (vllm, hf_sample), (api, api_sample)):
            assert sample_confidence(_cached(backend, tmp_path), sample) == pytest.approx(0.6), backend.info.backend
        # Original: the HF path compares case-sensitively ("The" kept), the vLLM path lower-cases;
        # API models follow the vLLM path.
        assert sample_confidence(_cached(hf, tmp_path), hf_sample, "original") == pytest.approx(0.9)
        assert sample_confidence(_cached(vllm, tmp_path), hf_sample, "original") == pytest.approx(0.6)
        assert sample_confidence(_cached(api, tmp_path), api_sample, "original") == pytest.approx(0.6)
    finally:
        api.close()


def test_without_token_texts_only_an_unambiguous_first_token_is_used(tmp_path: Path):
    model = _cached(ScriptedBackend("openai", with_token_strings=False), tmp_path)
    del model.backend.tokenizer  # type: ignore[attr-defined]
    bare = Sample(text="Paris", token_logprobs=[math.log(0.7)], first_token_prob=0.7)
    assert sample_confidence(model, bare) == pytest.approx(0.7)
    article = Sample(text="The Hague", token_logprobs=[-0.1, -0.2], first_token_prob=0.9)
    assert sample_confidence(model, article) is None  # cannot tell which token follows the article
    assert sample_confidence(model, Sample(text="", token_logprobs=[])) == 0.0
