from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chronoprobe.cache import CachedModel, CallCache, sample_key
from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Prompt,
    Sample,
)


class EchoBackend(Backend):
    """A deterministic stand-in model: the answer is a function of the prompt and seed."""

    capabilities = frozenset({Capability.GENERATE, Capability.SAMPLE_N, Capability.MEAN_DISTRIBUTION})

    def __init__(self, batch_size: int = 2) -> None:
        self.batches: list[list[str]] = []
        self._info = BackendInfo(spec="echo", backend="echo", model_id="echo", revision="r1", batch_size=batch_size)

    @property
    def info(self) -> BackendInfo:
        return self._info

    def render(self, prompt: Prompt) -> str:
        return (prompt.text or "") + prompt.answer_prefix

    def generate(self, prompts: Sequence[Prompt], params: DecodingParams) -> list[Generation]:
        rendered = [self.render(p) for p in prompts]
        self.batches.append(rendered)
        return [
            Generation(
                rendered_prompt=r,
                samples=[
                    Sample(text=f"{r[::-1]}#{params.seed}#{i}", mean_distribution=np.full(3, i, dtype=np.float32))
                    for i in range(params.n)
                ],
            )
            for r in rendered
        ]


def test_second_call_is_served_from_cache(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    backend = EchoBackend()
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


def test_batches_are_planned_over_the_whole_request(tmp_path):
    """A resumed request feeds the backend the same batch composition as a fresh one."""
    cache = CallCache(tmp_path / "c.sqlite")
    prompts = [Prompt(text=t) for t in ["a", "b", "c", "d", "e"]]
    params = DecodingParams()
    partial = EchoBackend()
    CachedModel(partial, cache).generate(prompts[:2], params)  # as if killed after the first batch
    resumed = EchoBackend()
    CachedModel(resumed, cache).generate(prompts, params)
    assert resumed.batches == [["c", "d"], ["e"]]


def test_cache_survives_reopen(tmp_path):
    path = tmp_path / "c.sqlite"
    CachedModel(EchoBackend(), CallCache(path)).generate([Prompt(text="x")], DecodingParams())
    reopened = CallCache(path)
    assert reopened.count() == 1
    mode = reopened._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
