"""The llama.cpp backend on the real embedded SmolLM2 GGUF (skips, saying why, without llama-cpp-python)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from chronoprobe.cache import CachedModel, CallCache, sample_key
from chronoprobe.errors import ConfigError
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.registry import BackendOptions, load_backend

pytestmark = pytest.mark.e2e  # the real embedded SmolLM2 through llama.cpp

pytest.importorskip(
    "llama_cpp",
    reason="llama-cpp-python is not importable (not installed, or its build failed): pip install -e '.[llamacpp]'",
)

PROMPTS = [
    Prompt.chat("Name the capital of France in one word.", fallback_text="The capital of France is"),
    Prompt.chat("Who wrote Hamlet? Answer with the name only.", fallback_text="Hamlet was written by"),
    Prompt.chat("Who is the president of the United States?"),
    Prompt.chat("Say hello."),
    Prompt.chat("What is the capital of Japan? One word."),
]


@pytest.fixture(scope="module")
def llama():  # type: ignore[no-untyped-def]
    backend = load_backend("llamacpp:smollm2")
    yield backend
    backend.close()


def texts(model: CachedModel, prompts: list[Prompt], params: DecodingParams) -> list[list[str]]:
    return [[s.text for s in g.samples] for g in model.generate(prompts, params)]


@pytest.mark.slow
def test_answers_do_not_depend_on_the_batch(llama, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--batch-size 1 and the default give the same answers: the cache's resume assumes it."""
    greedy = DecodingParams(max_new_tokens=12)
    one = CachedModel(
        load_backend("llamacpp:smollm2", BackendOptions(batch_size=1)), CallCache(tmp_path / "one.sqlite")
    )
    default = CachedModel(llama, CallCache(tmp_path / "default.sqlite"))
    assert one.backend.plan_batches([one.backend.render(p) for p in PROMPTS], greedy) == [[i] for i in range(5)]
    assert texts(one, PROMPTS, greedy) == texts(default, PROMPTS, greedy)
    # alone, or after other prompts: the same answer
    assert llama.generate(PROMPTS[3:4], greedy)[0].text == default.generate(PROMPTS, greedy)[3].text
    assert llama.generate(PROMPTS[::-1], greedy)[::-1][0].text == llama.generate(PROMPTS[:1], greedy)[0].text


def test_kept_prefix_chunks_give_the_log_probs_of_a_fresh_run(llama) -> None:  # type: ignore[no-untyped-def]
    """A prompt run after one sharing its chat prefix equals, bit for bit, the same prompt run from an empty cache."""
    params = DecodingParams(max_new_tokens=8, token_logprobs=True)
    llama.generate([Prompt(text="Unrelated bare text.")], params)  # shares no chunk: the cache is cleared
    fresh = llama.generate(PROMPTS[2:3], params)[0].samples[0]
    after_neighbour = llama.generate(PROMPTS[3:5] + PROMPTS[2:3], params)[2].samples[0]
    assert len(llama.token_ids(llama.render(PROMPTS[2]))) > llama.prompt_chunk  # a whole chunk was kept
    assert (after_neighbour.token_ids, after_neighbour.token_logprobs) == (fresh.token_ids, fresh.token_logprobs)


def test_greedy_answers_are_sensible(llama) -> None:  # type: ignore[no-untyped-def]
    out = llama.generate(PROMPTS[:1], DecodingParams(max_new_tokens=8))
    assert "Paris" in out[0].text
    assert out[0].rendered_prompt.startswith("<|im_start|>") and out[0].rendered_prompt.endswith("assistant\n")


@pytest.mark.slow
def test_seeded_samples_repeat_and_do_not_depend_on_neighbours(llama) -> None:  # type: ignore[no-untyped-def]
    params = DecodingParams(n=4, temperature=1.0, max_new_tokens=8, seed=7)
    first = [[s.text for s in g.samples] for g in llama.generate(PROMPTS[:2], params)]
    again = [[s.text for s in g.samples] for g in llama.generate(PROMPTS[1:2], params)]
    assert first[1] == again[0]
    assert len(set(first[0])) > 1  # four different draws
    other_seed = [s.text for s in llama.generate(PROMPTS[:1], params.model_copy(update={"seed": 8}))[0].samples]
    assert other_seed != first[0]


def test_logprobs_first_token_and_distributions_come_from_the_decode(llama) -> None:  # type: ignore[no-untyped-def]
    params = DecodingParams(max_new_tokens=6, token_logprobs=True, first_token_prob=True, mean_distribution=True)
    sample = llama.generate(PROMPTS[:1], params)[0].samples[0]
    assert sample.token_logprobs is not None and len(sample.token_logprobs) == len(sample.token_ids)
    assert all(lp <= 0 for lp in sample.token_logprobs)
    assert sample.first_token_prob == pytest.approx(math.exp(sample.token_logprobs[0]))
    mean = sample.mean_distribution
    assert mean is not None and mean.shape == (llama.n_vocab,)
    assert float(mean.sum()) == pytest.approx(1.0, abs=1e-3)
    assert int(np.argmax(mean)) in sample.token_ids


def test_one_step_distribution_is_the_first_tokens(llama) -> None:  # type: ignore[no-untyped-def]
    """With one new token the mean distribution is the first step's: greedy took its top token, at its probability."""
    params = DecodingParams(max_new_tokens=1, first_token_prob=True, mean_distribution=True)
    sample = llama.generate(PROMPTS[1:2], params)[0].samples[0]
    assert sample.mean_distribution is not None
    assert sample.token_ids == [int(np.argmax(sample.mean_distribution))]
    assert sample.first_token_prob == pytest.approx(float(sample.mean_distribution.max()), rel=1e-5)


def test_cache_keys_carry_the_backend(llama) -> None:  # type: ignore[no-untyped-def]
    """The hf and llamacpp paths of one GGUF never serve each other's answers."""
    rendered = llama.render(PROMPTS[0])
    as_hf = llama.info.model_copy(update={"backend": "hf"})
    assert llama.info.backend == "llamacpp"
    assert sample_key(llama.info, rendered, DecodingParams(), 0) != sample_key(as_hf, rendered, DecodingParams(), 0)


def test_record_names_the_file_threads_and_library(llama) -> None:  # type: ignore[no-untyped-def]
    llama.generate(PROMPTS[:1], DecodingParams(max_new_tokens=2))
    info = llama.info
    assert info.revision.startswith("gguf-sha256:") and info.model_id.startswith("HuggingFaceTB/SmolLM2")
    assert info.extra["threads"] and info.extra["llama_cpp"]


def test_what_it_cannot_do_is_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"llama\.cpp runs the GGUF's own weights") as caught:
        load_backend("llamacpp:smollm2", BackendOptions(dtype="float16"))
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="does not exist"):
        load_backend("llamacpp:/nonexistent/model.gguf")


def test_a_prompt_longer_than_the_context_is_refused_before_work(llama) -> None:  # type: ignore[no-untyped-def]
    long = llama.render(Prompt(text="word " * (llama.n_ctx + 10)))
    with pytest.raises(ConfigError, match=r"does not fit llama\.cpp's context"):
        llama.plan_batches([long], DecodingParams())


@pytest.mark.slow
def test_the_gguf_template_is_searched_for_a_date_and_renders_as_transformers_does(llama, smollm2) -> None:  # type: ignore[no-untyped-def]
    """SmolLM2's template takes no date; the two paths render it alike and record the day they would tell."""
    assert (llama.info.template_date, llama.info.template_takes_date) == ("2023-12-18", [])
    assert [llama.render(p) for p in PROMPTS] == [smollm2.render(p) for p in PROMPTS]
    told = load_backend("llamacpp:smollm2", BackendOptions(template_date="2021-03-04"))
    try:
        assert told.info.template_date == "2021-03-04"
    finally:
        told.close()
