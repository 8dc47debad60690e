from __future__ import annotations

import numpy as np

from chronoprobe.cache import CachedModel, CallCache, sample_key
from chronoprobe.models.base import BackendInfo, Capability, DecodingParams, Prompt
from chronoprobe.testing import MockBackend, MockPrompt, MockReply


def reversed_echo(prompt: MockPrompt, params: DecodingParams) -> list[MockReply]:
    """The answer is a function of the prompt, seed and sample index."""
    return [
        MockReply(f"{prompt[::-1]}#{params.seed}#{i}", distribution=np.full(3, i, dtype=np.float32))
        for i in range(params.n)
    ]


def echo_backend(batch_size: int = 2) -> MockBackend:
    return MockBackend(
        reversed_echo,
        name="echo",
        batch_size=batch_size,
        capabilities={Capability.GENERATE, Capability.SAMPLE_N, Capability.MEAN_DISTRIBUTION},
    )


def test_second_call_is_served_from_cache(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    backend = echo_backend()
    model = CachedModel(backend, cache)
    prompts = [Prompt(text=t) for t in ["ab", "cd", "ef"]]
    first = model.generate(prompts, DecodingParams(n=2, temperature=1.0, mean_distribution=True))
    assert model.calls_made == 3
    second = model.generate(prompts, DecodingParams(n=2, temperature=1.0, mean_distribution=True))
    assert model.calls_made == 3, "cached prompts must not reach the backend"
    assert [g.text for g in first] == [g.text for g in second] == ["ba#0#0", "dc#0#0", "fe#0#0"]
    assert np.array_equal(second[1].samples[1].mean_distribution, np.full(3, 1, dtype=np.float32))


def test_key_covers_model_prompt_params_seed_and_index():
    info = BackendInfo(spec="m", backend="hf", model_id="m", revision="a")
    base = sample_key(info, "p", DecodingParams(), 0)
    assert base == sample_key(info, "p", DecodingParams(), 0)
    variants = [
        sample_key(info.model_copy(update={"revision": "b"}), "p", DecodingParams(), 0),
        sample_key(info.model_copy(update={"model_id": "n"}), "p", DecodingParams(), 0),
        sample_key(info.model_copy(update={"dtype": "bfloat16"}), "p", DecodingParams(), 0),
        sample_key(info, "p ", DecodingParams(), 0),
        sample_key(info, "p", DecodingParams(seed=1), 0),
        sample_key(info, "p", DecodingParams(temperature=0.5), 0),
        sample_key(info, "p", DecodingParams(top_p=0.9), 0),
        sample_key(info, "p", DecodingParams(max_new_tokens=21), 0),
        sample_key(info, "p", DecodingParams(stop=("\n",)), 0),
        sample_key(info, "p", DecodingParams(), 1),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_the_sampler_is_in_sampled_keys_only():
    """A new way of drawing samples must not reuse old samples; greedy answers are unaffected."""
    info = BackendInfo(spec="m", backend="hf", model_id="m", revision="a")
    new = info.model_copy(update={"sampler": "inverse-cdf"})
    greedy, sampled = DecodingParams(), DecodingParams(temperature=0.5, n=3)
    assert sample_key(new, "p", greedy, 0) == sample_key(info, "p", greedy, 0)
    assert sample_key(new, "p", sampled, 0) != sample_key(info, "p", sampled, 0)


def test_multinomial_keys_are_those_of_releases_before_0_2():
    """--sampler multinomial draws as 0.1 did and finds the samples 0.1 cached (keys computed by 0.1's code)."""
    info = BackendInfo(
        spec="smollm2",
        backend="hf",
        model_id="HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)",
        revision="gguf-sha256:0123456789abcdef",
        dtype="float32",
        chat_template=True,
    )
    prompt = "<|im_start|>user\nSay hello.<|im_end|>\n"
    sampled = DecodingParams(temperature=0.5, n=10, seed=10, max_new_tokens=20)
    release_0_1_key = "b6aa7583d873d046f759696c008c25ba30c1295bee6bcd86cb09eab08096fd83"
    multinomial = info.model_copy(update={"sampler": "multinomial"})
    assert sample_key(multinomial, prompt, sampled, 3) == release_0_1_key
    assert sample_key(info.model_copy(update={"sampler": "inverse-cdf"}), prompt, sampled, 3) != release_0_1_key


def test_batches_are_planned_over_the_whole_request(tmp_path):
    """A resumed request feeds the backend the same batch composition as a fresh one."""
    cache = CallCache(tmp_path / "c.sqlite")
    prompts = [Prompt(text=t) for t in ["a", "b", "c", "d", "e"]]
    params = DecodingParams()
    partial = echo_backend()
    CachedModel(partial, cache).generate(prompts[:2], params)  # as if killed after the first batch
    resumed = echo_backend()
    CachedModel(resumed, cache).generate(prompts, params)
    assert resumed.batches == [["c", "d"], ["e"]]


def test_cache_survives_reopen(tmp_path):
    path = tmp_path / "c.sqlite"
    CachedModel(echo_backend(), CallCache(path)).generate([Prompt(text="x")], DecodingParams())
    reopened = CallCache(path)
    assert reopened.count() == 1
    mode = reopened._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
