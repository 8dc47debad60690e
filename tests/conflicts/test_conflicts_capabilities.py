"""Distribution sources for CP: exact, a declared top-k approximation, or a clear refusal.

Uses a mock backend (chronoprobe.testing.MockBackend with fixed outputs) so the whole
DynamicQA pipeline runs in milliseconds and its CP can be checked by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from through_lens import run_conflicts

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.errors import CapabilityError
from chronoprobe.lenses.conflicts import persuasion as pers
from chronoprobe.models.base import Capability, DecodingParams
from chronoprobe.testing import MockBackend, MockPrompt, MockReply

ASSETS = Path(__file__).resolve().parents[1] / "assets"
DIST = {"Paris": np.array([0.9, 0.1]), "Lyon": np.array([0.2, 0.8])}


def paris_or_lyon(prompt: MockPrompt, params: DecodingParams) -> MockReply:
    """Answers 'Lyon' when the prompt holds a context mentioning Lyon, else 'Paris' (two tokens, l = -1)."""
    answer = "Lyon" if "Context:" in prompt and "Lyon" in prompt else "Paris"
    return MockReply(answer, tokens=[answer[:2], answer[2:]], logprobs=[-0.5, -1.5], distribution=DIST[answer])


BASE = frozenset({Capability.GENERATE, Capability.SAMPLE_N, Capability.TOKEN_LOGPROBS})


def _model(capabilities: frozenset[Capability], tmp_path: Path) -> CachedModel:
    return CachedModel(
        MockBackend(paris_or_lyon, name="scripted", capabilities=capabilities), CallCache(tmp_path / "c.sqlite")
    )


def test_refuses_without_distributions_and_names_the_flag(tmp_path: Path):
    model = _model(BASE, tmp_path)
    with pytest.raises(CapabilityError, match="--topk-approximation"):
        pers.check_capabilities(model, pers.PersuasionConfig())
    topk = _model(BASE | {Capability.TOPK_LOGPROBS}, tmp_path)
    with pytest.raises(CapabilityError):
        pers.check_capabilities(topk, pers.PersuasionConfig())  # flag not given
    assert pers.check_capabilities(topk, pers.PersuasionConfig(topk_approximation=True)).startswith("approximation")


@pytest.mark.e2e
def test_pipeline_cp_by_hand_and_recorded_source(tmp_path: Path):
    model = _model(BASE | {Capability.MEAN_DISTRIBUTION}, tmp_path)
    result = run_conflicts(
        [model],
        tmp_path / "o",
        dataset="dynamicqa",
        methodology="dynamicqa",
        data=ASSETS / "dynamicqa_small",
        persuasion=pers.PersuasionConfig(n_samples=3),
    )
    rows = {r["item_id"]: r for r in map(json.loads, (tmp_path / "o" / "items.jsonl").read_text().splitlines())}
    cf = rows["dynamicqa/static/1/cf"]
    # Context answers all 'Lyon' (one cluster [.2,.8]); no-context all 'Paris' (one cluster [.9,.1]).
    expected = 0.2 * math.log(0.2 / 0.9) + 0.8 * math.log(0.8 / 0.1)
    assert cf["cp"] == pytest.approx(expected, rel=1e-6)
    assert cf["persuaded"] is True and cf["stubborn"] is False
    # SE: one cluster of three samples with l = -1: -(logsumexp(-1,-1,-1)) = 1 - ln 3.
    assert cf["se_context"] == pytest.approx(1 - math.log(3))
    true_item = rows["dynamicqa/static/1/true"]
    assert true_item["cp"] == pytest.approx(0.0, abs=1e-6)  # Paris with and without context
    static = json.loads((result.path / "summary.json").read_text())["summary"]["mock:scripted"]["static"]
    assert static["persuaded_pct"] == pytest.approx(50.0)  # France's cf says Lyon; Einstein's cf says Paris
    assert result.provenance.extra["distribution"]["mock:scripted"].startswith("exact")
