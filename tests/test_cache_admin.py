"""The call cache's stored arrays (both layouts, bit for bit), its sizes per namespace and its prune.

The real-model tests (``e2e``) take SmolLM2's own next-token distributions, as the conflicts lens asks for them,
and show that CP and every other number built from them is unchanged through the cache, in the old layout
and the new."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.cache_admin import (
    decode_array,
    encode_array,
    encode_array_before_0_4,
    file_bytes,
    in_use_path,
    prune,
    usage,
)
from chronoprobe.errors import ConfigError
from chronoprobe.metrics import conflicts as m
from chronoprobe.models.base import DecodingParams, Prompt

ARRAYS = [
    np.array([0.5, 0.25, 0.125, 0.125], dtype=np.float32),
    np.array([1e-30, 3.4e38, np.nan, -0.0, np.inf], dtype=np.float32),
    np.arange(12, dtype=np.int64).reshape(3, 4),
    np.arange(12, dtype=np.float64).reshape(3, 4).T,  # not contiguous
    np.zeros((0,), dtype=np.float32),
    np.zeros((2, 0, 3), dtype=np.float16),
    np.array(3.5),
    np.array([True, False]),
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: f"{a.dtype}{a.shape}")
@pytest.mark.parametrize("encode", [encode_array, encode_array_before_0_4])
def test_an_array_comes_back_bit_for_bit_from_either_layout(array, encode) -> None:
    back = decode_array(encode(array))
    assert back is not None
    assert back.dtype == array.dtype
    assert back.shape == (array.shape if encode is encode_array else np.ascontiguousarray(array).shape)
    assert back.tobytes() == np.ascontiguousarray(array).tobytes()


def test_no_array_is_none_in_both_directions() -> None:
    assert encode_array(None) is None and decode_array(None) is None


def test_the_new_layout_is_smaller_on_a_distribution() -> None:
    logits = np.random.default_rng(0).normal(0, 3, 49_152)
    distribution = (np.exp(logits) / np.exp(logits).sum()).astype(np.float32)
    new, old = encode_array(distribution), encode_array_before_0_4(distribution)
    assert new is not None and old is not None
    assert len(new) < 0.97 * len(old)


def _old_cache(path: Path, rows: list[tuple[str, str, np.ndarray | None, float]]) -> None:
    """A cache with arrays in the layout releases before 0.4 wrote."""
    CallCache(path).close()
    with sqlite3.connect(path) as connection:
        connection.executemany(
            "INSERT INTO calls (key, namespace, payload, array, created) VALUES (?,?,?,?,?)",
            [(key, space, '{"text": "x"}', encode_array_before_0_4(array), when) for key, space, array, when in rows],
        )


def test_a_cache_written_by_the_old_code_is_read_bit_for_bit(tmp_path: Path) -> None:
    distribution = np.random.default_rng(1).dirichlet(np.ones(1000)).astype(np.float32)
    _old_cache(tmp_path / "c.sqlite", [("k", "model:m", distribution, time.time())])
    cache = CallCache(tmp_path / "c.sqlite")
    cache.put_many("model:m", [("new", {"text": "y"}, distribution)])
    found = cache.get_many(["k", "new"])
    cache.close()
    assert found["k"][1] is not None and found["k"][1].tobytes() == distribution.tobytes()
    assert found["new"][1] is not None and found["new"][1].tobytes() == distribution.tobytes()


def test_usage_counts_calls_and_bytes_per_namespace(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    a = np.ones(10, dtype=np.float32)
    _old_cache(path, [("1", "model:m", a, 100.0), ("2", "model:m", None, 200.0), ("3", "embedding:e", a, 300.0)])
    found = {space.namespace: space for space in usage(path)}
    assert sorted(found) == ["embedding:e", "model:m"]
    assert (found["model:m"].calls, found["model:m"].model, found["embedding:e"].model) == (2, "m", None)
    assert found["model:m"].array_bytes == len(encode_array_before_0_4(a) or b"")
    assert found["model:m"].payload_bytes == 2 * len('{"text": "x"}')
    assert (found["model:m"].oldest, found["model:m"].newest) == (100.0, 200.0)
    assert file_bytes(path) >= path.stat().st_size > 0


def test_prune_by_model_namespace_and_age(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    now = time.time()
    old, new = now - 10 * 86400, now
    _old_cache(
        path,
        [("1", "model:m", None, old), ("2", "model:m", None, new), ("3", "model:n", None, old), ("4", "j", None, old)],
    )
    assert prune(path, models=["m"], older_than_days=5, dry_run=True).calls == 1
    assert len({s.namespace for s in usage(path)}) == 3  # a dry run removes nothing
    assert prune(path, models=["m"], older_than_days=5).calls == 1
    assert prune(path, namespaces=["j"]).namespaces == ["j"]
    assert prune(path, older_than_days=5).calls == 1  # model:n's old call
    assert [(s.namespace, s.calls) for s in usage(path)] == [("model:m", 1)]


def _hold_open(path: str, ready: multiprocessing.synchronize.Event, done: multiprocessing.synchronize.Event) -> None:
    cache = CallCache(path)
    ready.set()
    done.wait(30)
    cache.close()


def test_prune_is_refused_while_another_process_has_the_cache_open(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    _old_cache(path, [("1", "model:m", None, 0.0)])
    context = multiprocessing.get_context("spawn")
    ready, done = context.Event(), context.Event()
    holder = context.Process(target=_hold_open, args=(str(path), ready, done))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(ConfigError, match="another chronoprobe process has it open"):
            prune(path, models=["m"])
    finally:
        done.set()
        holder.join(30)
    assert prune(path, models=["m"]).calls == 1
    assert in_use_path(path).exists()


def test_this_process_own_open_cache_keeps_a_prune_out_too(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    _old_cache(path, [("1", "model:m", None, 0.0)])
    cache = CallCache(path)  # flock locks are per open file: a second open in one process is kept out as well
    with pytest.raises(ConfigError, match="has it open"):
        prune(path, models=["m"])
    cache.close()
    assert prune(path, models=["m"]).calls == 1


@pytest.mark.e2e
def test_coherent_persuasion_is_unchanged_through_the_cache_on_smollm2(smollm2, tmp_path: Path) -> None:
    """SmolLM2's own distributions: stored in the new layout, or in the old one, every number built from them
    (cluster means, each KL, CP) is the same to the last bit, which is well inside the 1e-6 asked."""
    _same_numbers_through_the_cache(smollm2, tmp_path)


@pytest.mark.e2e
@pytest.mark.slow
def test_coherent_persuasion_is_unchanged_through_the_cache_on_gemma(tmp_path: Path) -> None:
    """The same on Gemma 3 270M's 262,144-token distributions (a minute or more on two cores)."""
    from chronoprobe.models.registry import BackendOptions, load_backend  # deferred: torch and transformers

    _same_numbers_through_the_cache(load_backend("gemma3-270m", BackendOptions(batch_size=4)), tmp_path)


def _same_numbers_through_the_cache(backend, tmp_path: Path) -> None:
    params = DecodingParams(
        n=3, temperature=0.5, max_new_tokens=6, seed=10, token_logprobs=True, mean_distribution=True
    )
    prompts = [Prompt(text="What is the capital of France?"), Prompt(text="Paris is the capital of which country?")]
    cache = CallCache(tmp_path / "c.sqlite")
    fresh = CachedModel(backend, cache).generate(prompts, params)  # computed now (in memory) and stored
    served = CachedModel(backend, cache).generate(prompts, params)
    cache.close()
    originals = [[s.mean_distribution for s in g.samples] for g in fresh]
    read_back = [[s.mean_distribution for s in g.samples] for g in served]
    old_layout = [[decode_array(encode_array_before_0_4(d)) for d in row] for row in originals]
    for candidate in (read_back, old_layout):
        for row, original_row in zip(candidate, originals, strict=True):
            for got, want in zip(row, original_row, strict=True):
                assert got is not None and want is not None
                assert got.dtype == want.dtype == np.float32 and got.tobytes() == want.tobytes()
        ids = [0, 1, 0]
        for a, b in ((0, 1), (1, 0)):
            want_kl = m.kl_divergence(m.cluster_distribution(originals[a]), m.cluster_distribution(originals[b]))
            got_kl = m.kl_divergence(m.cluster_distribution(candidate[a]), m.cluster_distribution(candidate[b]))
            assert got_kl == pytest.approx(want_kl, rel=1e-6) and got_kl == want_kl
        want_cp = m.coherent_persuasion_from_samples(originals[0], ids, originals[1], ids)
        got_cp = m.coherent_persuasion_from_samples(candidate[0], ids, candidate[1], ids)
        assert np.isfinite(want_cp) and want_cp > 0 and got_cp == want_cp


@pytest.mark.e2e
def test_the_cache_commands_show_and_prune_the_cache_they_are_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_driver import run_main  # the CLI's main(): the e2e tier

    path = tmp_path / "c.sqlite"
    _old_cache(path, [("1", "model:m", np.ones(100, dtype=np.float32), time.time()), ("2", "judge:j", None, 0.0)])
    shown = run_main(monkeypatch, capsys, "cache", "info", "--cache", str(path), columns=200)
    assert shown.code == 0, shown.err
    assert str(path) in shown.out and "model:m" in shown.out and "judge:j" in shown.out
    dry = run_main(monkeypatch, capsys, "cache", "prune", "--cache", str(path), "--older-than", "1", "--dry-run")
    assert dry.code == 0 and "would remove 1 calls" in dry.out and "judge:j" in dry.out, dry.err
    assert len(usage(path)) == 2
    pruned = run_main(monkeypatch, capsys, "cache", "prune", "--cache", str(path), "--model-id", "m")
    assert pruned.code == 0 and "removed 1 calls" in pruned.out, pruned.err
    assert [space.namespace for space in usage(path)] == ["judge:j"]
