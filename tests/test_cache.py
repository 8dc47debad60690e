from __future__ import annotations

import json
import sqlite3
import time

import numpy as np

from chronoprobe.cache import CachedModel, CallCache, sample_key
from chronoprobe.models.base import BackendInfo, Capability, DecodingParams, Producer, Prompt
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


# --- what produced each answer, and caches of other releases ------------------------------------------

GREEDY_KEY_0_2_0 = "80b5cdf0552fce8e41c27b75ab735e41fc2923bd13cbeb00dee8c0370b8ce9a3"
OLD_SCHEMA = """
CREATE TABLE calls (key TEXT PRIMARY KEY, namespace TEXT NOT NULL, payload TEXT NOT NULL, array BLOB, created REAL NOT NULL);
CREATE TABLE speed (subject TEXT PRIMARY KEY, count INTEGER NOT NULL, seconds REAL NOT NULL);
"""
"""The 0.2.0 schema, as that release created it."""
OLD_INSERT = "INSERT OR REPLACE INTO calls (key, namespace, payload, array, created) VALUES (?,?,?,?,?)"
OLD_SELECT = "SELECT key, payload, array FROM calls WHERE key IN (?)"


def test_each_answer_is_stored_with_its_producer_and_a_rerun_reports_it(tmp_path):
    prompts = [Prompt(text=t) for t in ["ab", "cd", "ef"]]
    params = DecodingParams(n=2, temperature=1.0)
    first = CachedModel(echo_backend(), CallCache(tmp_path / "c.sqlite"))
    first.generate(prompts, params)
    assert (first.tally.answers, first.tally.from_cache) == (6, 0)

    again = CachedModel(echo_backend(batch_size=3), CallCache(tmp_path / "c.sqlite"))
    again.generate(prompts[:2], params)
    assert (again.tally.answers, again.tally.from_cache, again.calls_made) == (4, 4, 0)
    [source] = again.tally.sources
    assert source.answers == 4
    assert source.producer == Producer(backend="mock", batch_size=2)  # the first model's batches
    assert abs(source.first_written - time.time()) < 60


def test_a_cache_of_an_earlier_release_is_migrated_in_place_and_still_served(tmp_path):
    path = tmp_path / "old.sqlite"
    backend = echo_backend()
    key = sample_key(backend.info, "ab", DecodingParams(), 0)
    with sqlite3.connect(path) as old:
        old.executescript(OLD_SCHEMA)
        old.execute(OLD_INSERT, (key, "model:echo", json.dumps({"text": "from 0.2.0"}), None, 1_700_000_000.0))

    model = CachedModel(backend, CallCache(path))
    [served] = model.generate([Prompt(text="ab")], DecodingParams())
    assert served.text == "from 0.2.0" and model.calls_made == 0
    [source] = model.tally.sources
    assert source.producer is None and source.first_written == 1_700_000_000.0  # written before producers were kept
    with sqlite3.connect(path) as migrated:
        columns = [row[1] for row in migrated.execute("PRAGMA table_info(calls)")]
        assert columns == ["key", "namespace", "payload", "array", "created", "producer"]  # only added to


def test_the_earlier_release_still_reads_and_writes_a_new_cache(tmp_path):
    """0.2.0's own statements against a cache this release wrote: its answers read, its writes served back."""
    path = tmp_path / "new.sqlite"
    model = CachedModel(echo_backend(), CallCache(path))
    model.generate([Prompt(text="ab")], DecodingParams())
    key = sample_key(model.info, "ab", DecodingParams(), 0)
    with sqlite3.connect(path) as old:
        [(found, payload, _)] = old.execute(OLD_SELECT, (key,)).fetchall()
        assert found == key and json.loads(payload)["text"] == "ba#0#0"
        other = sample_key(model.info, "cd", DecodingParams(), 0)
        old.execute(OLD_INSERT, (other, "model:echo", json.dumps({"text": "by 0.2.0"}), None, time.time()))
    again = CachedModel(echo_backend(), CallCache(path))
    assert [g.text for g in again.generate([Prompt(text="cd")], DecodingParams())] == ["by 0.2.0"]


def test_greedy_keys_are_those_of_earlier_releases():
    """A greedy key of the default model, as 0.2.0 computed it: caches written before producers still serve."""
    info = BackendInfo(
        spec="smollm2",
        backend="hf",
        model_id="HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)",
        revision="gguf-sha256:b179c9523d0e6a0f",
        dtype="float32",
        chat_template=True,
        sampler="inverse-cdf",
    )
    key = sample_key(info, "<|im_start|>user\nWho?<|im_end|>\n", DecodingParams(max_new_tokens=20), 0)
    assert key == GREEDY_KEY_0_2_0


def test_an_answer_once_cached_stays_the_answer_when_its_batch_runs_again(tmp_path):
    """A batch that misses one prompt runs whole; the prompts it held that were cached keep their cached answer,
    in what this call returns and in the cache (a sampled answer depends on its batch: here, on the call count)."""
    drawn = iter(range(100))

    def drifting(prompt: MockPrompt, params: DecodingParams) -> list[MockReply]:
        return [MockReply(f"{prompt}#{next(drawn)}") for _ in range(params.n)]

    model = CachedModel(MockBackend(drifting, name="drift", batch_size=2), CallCache(tmp_path / "c.sqlite"))
    params = DecodingParams(temperature=1.0)
    [alone] = model.generate([Prompt(text="a")], params)
    both = model.generate([Prompt(text="a"), Prompt(text="b")], params)
    again = model.generate([Prompt(text="a"), Prompt(text="b")], params)
    assert alone.text == "a#0"
    assert [g.text for g in both] == [g.text for g in again] == ["a#0", "b#2"]


def test_the_tally_counts_every_answer_asked_for_once_served_or_computed(tmp_path):
    """A batch that misses one prompt runs whole: its cached prompt counts as served, the other as computed, and
    the two add up to what was asked (before, the served one inside a rerun batch was not counted at all)."""
    cache = CallCache(tmp_path / "c.sqlite")
    params = DecodingParams(n=2, temperature=1.0)
    CachedModel(echo_backend(), cache).generate([Prompt(text="a")], params)
    model = CachedModel(echo_backend(batch_size=2), cache)
    model.generate([Prompt(text="a"), Prompt(text="b")], params)
    assert (model.tally.answers, model.tally.from_cache, model.tally.computed) == (4, 2, 2)
    model.generate([Prompt(text="a"), Prompt(text="b"), Prompt(text="c")], params)  # a, b served whole; c run
    assert (model.tally.answers, model.tally.from_cache, model.tally.computed) == (10, 6, 4)
