"""Inverse-CDF sampling: hand-computed picks, exact top-p without a full sort, frequencies."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.models.base import DecodingParams
from chronoprobe.models.sampling import NUCLEUS_CANDIDATES, pick_tokens, pick_tokens_multinomial


def full_sort_nucleus(logits: torch.Tensor, top_p: float) -> set[int]:
    """Reference: sort everything, keep tokens while the probability before them is under top_p."""
    probs = torch.softmax(logits.double(), dim=-1)
    order = torch.argsort(probs, descending=True).tolist()
    kept, before = set(), 0.0
    for token in order:
        if before >= top_p:
            break
        kept.add(token)
        before += float(probs[token])
    return kept


def uniforms(rows: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(rows, generator=torch.Generator().manual_seed(seed))


def draw(logits: torch.Tensor, params: DecodingParams, rows: int, seed: int = 0) -> torch.Tensor:
    return pick_tokens(logits.expand(rows, -1).contiguous(), params, uniforms(rows, seed))


def test_hand_computed_nucleus_and_renormalised_frequencies():
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    tokens = draw(logits, DecodingParams(temperature=1.0, top_p=0.7), rows=20000)
    assert set(tokens.tolist()) == {0, 1}, "0.5 + 0.3 reaches 0.7; tokens 2 and 3 are cut"
    assert abs(float((tokens == 0).float().mean()) - 0.5 / 0.8) < 0.02


@pytest.mark.e2e
def test_flat_distribution_falls_back_to_a_full_sort():
    vocab = 4 * NUCLEUS_CANDIDATES
    logits = -torch.arange(vocab, dtype=torch.float32) * 1e-3  # nearly flat, order known
    kept = full_sort_nucleus(logits, 0.9)
    assert len(kept) > NUCLEUS_CANDIDATES, "the nucleus must not fit among the candidates"
    tokens = draw(logits, DecodingParams(temperature=1.0, top_p=0.9), rows=8000)
    assert set(tokens.tolist()) <= kept
    assert max(tokens.tolist()) > max(kept) - 20, "the tail of the nucleus is reachable"


def test_mixed_rows_each_use_their_own_nucleus():
    vocab = 2 * NUCLEUS_CANDIDATES
    peaked = torch.full((vocab,), -20.0)
    peaked[7], peaked[3] = 5.0, 4.0
    flat = torch.zeros(vocab)
    logits = torch.stack([peaked, flat] * 500)
    tokens = pick_tokens(logits, DecodingParams(temperature=1.0, top_p=0.9), uniforms(len(logits), seed=1))
    assert set(tokens[0::2].tolist()) <= full_sort_nucleus(peaked, 0.9) == {7, 3}
    assert len(set(tokens[1::2].tolist())) > NUCLEUS_CANDIDATES / 2


def test_temperature_and_top_k_and_greedy():
    logits = torch.tensor([[1.0, 3.0, 2.0, 0.5]])
    assert pick_tokens(logits, DecodingParams(), None).tolist() == [1]
    tokens = draw(logits[0], DecodingParams(temperature=1.0, top_k=2), rows=2000)
    assert set(tokens.tolist()) == {1, 2}
    cold = draw(logits[0], DecodingParams(temperature=0.05, top_p=0.95), rows=500)
    assert set(cold.tolist()) == {1}


def test_inverse_cdf_picks_the_token_whose_interval_holds_the_uniform():
    logits = torch.log(torch.tensor([[0.5, 0.0, 0.3, 0.2]]).expand(5, -1))
    params = DecodingParams(temperature=1.0)
    # intervals: token 0 [0, 0.5), token 1 never (p = 0), token 2 [0.5, 0.8), token 3 [0.8, 1)
    picks = pick_tokens(logits.contiguous(), params, torch.tensor([0.0, 0.49, 0.5, 0.79, 0.999]))
    assert picks.tolist() == [0, 0, 2, 2, 3]


def test_each_row_depends_only_on_its_own_uniform():
    logits = torch.randn(6, 50, generator=torch.Generator().manual_seed(3))
    params = DecodingParams(temperature=0.7)
    u = uniforms(6, seed=4)
    whole = pick_tokens(logits, params, u)
    kept = torch.tensor([1, 4, 5])
    assert pick_tokens(logits[kept], params, u[kept]).tolist() == whole[kept].tolist()


def test_sampling_without_uniforms_is_refused():
    with pytest.raises(ValueError, match="uniform"):
        pick_tokens(torch.zeros(1, 3), DecodingParams(temperature=1.0), None)


# --- the draw of releases before 0.2.0 (--sampler multinomial) -------------------------------------


def release_0_1_draw(logits: torch.Tensor, params: DecodingParams, generator: torch.Generator) -> torch.Tensor:
    """pick_tokens as releases before 0.2.0 wrote it (before commit ec448bb), kept here as the reference."""
    if params.greedy:
        return logits.argmax(dim=-1)
    scores = logits / params.temperature
    if params.top_k is not None:
        kth = torch.topk(scores, min(params.top_k, scores.shape[-1]), dim=-1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if params.top_p >= 1.0:
        return torch.multinomial(torch.softmax(scores, dim=-1), 1, generator=generator).squeeze(-1)

    def sample_sorted(sorted_scores, log_norm, top_p):
        probs = (sorted_scores - log_norm).exp()
        cumulative = probs.cumsum(dim=-1)
        fits = cumulative[:, -1] >= top_p
        keep = (cumulative - probs) < top_p
        return torch.multinomial(probs * keep, 1, generator=generator).squeeze(-1), fits

    log_norm = torch.logsumexp(scores, dim=-1, keepdim=True)
    width = min(NUCLEUS_CANDIDATES, scores.shape[-1])
    top_scores, top_ids = torch.topk(scores, width, dim=-1)
    position, fits = sample_sorted(top_scores, log_norm, params.top_p)
    tokens = top_ids.gather(-1, position.unsqueeze(-1)).squeeze(-1)
    if width < scores.shape[-1] and not bool(fits.all()):
        wide = (~fits).nonzero().squeeze(-1)
        sorted_scores, sorted_ids = torch.sort(scores[wide], descending=True, dim=-1)
        wide_position, _ = sample_sorted(sorted_scores, log_norm[wide], params.top_p)
        tokens[wide] = sorted_ids.gather(-1, wide_position.unsqueeze(-1)).squeeze(-1)
    return tokens


@pytest.mark.parametrize(
    "params",
    [
        DecodingParams(temperature=0.5),
        DecodingParams(temperature=0.7, top_p=0.9),
        DecodingParams(temperature=1.5, top_k=50),
        DecodingParams(temperature=1.0, top_k=400, top_p=0.95),
    ],
)
def test_multinomial_draws_what_releases_before_0_2_drew(params):
    """Same seed, same steps: the same tokens, including rows whose nucleus needs the full sort."""
    vocab = 1000
    peaked = torch.randn(8, vocab, generator=torch.Generator().manual_seed(2)) * 4
    flat = torch.randn(8, vocab, generator=torch.Generator().manual_seed(3)) * 0.01
    logits = torch.cat([peaked, flat])[torch.randperm(16, generator=torch.Generator().manual_seed(4))]
    ours, theirs = torch.Generator().manual_seed(11), torch.Generator().manual_seed(11)
    for _ in range(5):  # consecutive steps share one generator, as in the decode loop
        expected = release_0_1_draw(logits, params, theirs)
        assert pick_tokens_multinomial(logits, params, ours).tolist() == expected.tolist()


def test_the_two_samplers_draw_differently():
    logits = torch.randn(64, 200, generator=torch.Generator().manual_seed(5))
    params = DecodingParams(temperature=1.0)
    multinomial = pick_tokens_multinomial(logits, params, torch.Generator().manual_seed(0))
    inverse = pick_tokens(logits, params, uniforms(64, seed=0))
    assert multinomial.tolist() != inverse.tolist()
