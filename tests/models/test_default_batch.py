"""The default batch counts rows: greedy requests batch more prompts, sampled ones keep 16."""

from __future__ import annotations

import pytest

from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.models.hf import DEFAULT_BATCH_ROWS, SAMPLED_BATCH_PROMPTS, default_batch_prompts
from chronoprobe.models.registry import BackendOptions, load_backend


def test_greedy_batches_fill_the_row_budget() -> None:
    assert default_batch_prompts(DecodingParams(), fitting_rows=64) == 64
    assert default_batch_prompts(None, fitting_rows=64) == 64


def test_free_memory_caps_the_greedy_batch() -> None:
    assert default_batch_prompts(DecodingParams(), fitting_rows=8) == 8
    assert default_batch_prompts(DecodingParams(), fitting_rows=1) == 1


def test_greedy_rows_count_samples() -> None:
    assert default_batch_prompts(DecodingParams(n=4), fitting_rows=64) == 16
    assert default_batch_prompts(DecodingParams(n=100), fitting_rows=64) == 1


def test_sampled_batches_keep_the_prompts_of_earlier_releases() -> None:
    """A sample's random numbers depend on its row in the batch, so the batch of sampled calls stays 16."""
    sampled = DecodingParams(n=10, temperature=1.0)
    assert default_batch_prompts(sampled, fitting_rows=64) == SAMPLED_BATCH_PROMPTS == 16


@pytest.mark.slow
def test_smollm2_plans_by_rows_and_answers_as_at_batch_16() -> None:
    default = load_backend("smollm2", BackendOptions())
    prompts = [Prompt.chat(f"What is {i} plus {i}? Answer with a number.") for i in range(70)]
    rendered = [default.render(p) for p in prompts]
    greedy = DecodingParams(max_new_tokens=6)
    assert [len(b) for b in default.plan_batches(rendered, greedy)] == [DEFAULT_BATCH_ROWS, 6]
    assert default.info.batch_size == DEFAULT_BATCH_ROWS and default.info.extra["batch_size"] == "default"
    sampled = DecodingParams(max_new_tokens=6, temperature=1.0, n=3)
    assert {len(b) for b in default.plan_batches(rendered, sampled)[:-1]} == {SAMPLED_BATCH_PROMPTS}

    fixed = load_backend("smollm2", BackendOptions(batch_size=16))
    assert [g.text for g in _run(default, prompts, greedy)] == [g.text for g in _run(fixed, prompts, greedy)]


def _run(backend, prompts, params):  # type: ignore[no-untyped-def]
    out = [None] * len(prompts)
    rendered = [backend.render(p) for p in prompts]
    for batch in backend.plan_batches(rendered, params):
        for i, generation in zip(batch, backend.generate([prompts[i] for i in batch], params), strict=True):
            out[i] = generation
    return out
