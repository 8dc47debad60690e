"""Next-token selection for the hf decode loop: greedy, temperature, top-k, top-p.

Sampling is by inverse CDF: each row brings one uniform number, and the token
is the first whose cumulative probability passes it. One number per row (rather
than a random draw per vocabulary entry, as ``torch.multinomial`` makes) keeps
sampling cheap, and lets the decode loop draw the numbers for every row of the
batch at each step, so that dropping finished rows never changes what the
remaining rows sample.

Releases before 0.2.0 drew with ``torch.multinomial`` from one generator over
the whole batch. :func:`pick_tokens_multinomial` keeps that draw, so that
``--sampler multinomial`` reproduces their samples exactly.

Top-p is exact but avoids sorting the whole vocabulary. The nucleus is looked
for among the ``NUCLEUS_CANDIDATES`` most likely tokens; a row whose nucleus
does not fit there (a very flat distribution) falls back to a full sort. Both
paths keep the same tokens: the most likely ones up to and including the first
that brings the cumulative probability to ``top_p``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from chronoprobe.models.base import DecodingParams

NUCLEUS_CANDIDATES = 256


Draw = Callable[[torch.Tensor, torch.Tensor | None], torch.Tensor]
"""(weights, rows × candidates; which rows of the batch they belong to, None for all) → one position per row."""


def pick_tokens(logits: torch.Tensor, params: DecodingParams, uniforms: torch.Tensor | None) -> torch.Tensor:
    """One token id per row of ``logits`` (rows × vocabulary, float32).

    ``uniforms`` holds one number in [0, 1) per row; greedy decoding needs none.
    """
    if params.greedy:
        return logits.argmax(dim=-1)
    if uniforms is None:
        raise ValueError("sampling needs one uniform number per row")
    drawn_from = uniforms

    def draw(weights: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        return _inverse_cdf(weights, drawn_from if rows is None else drawn_from[rows])

    return _pick(logits, params, draw)


def pick_tokens_multinomial(logits: torch.Tensor, params: DecodingParams, generator: torch.Generator) -> torch.Tensor:
    """As :func:`pick_tokens`, drawn the way releases before 0.2.0 drew: ``torch.multinomial`` over the
    candidates' weights, one call per batch (and one more for rows whose nucleus needs a full sort)."""
    if params.greedy:
        return logits.argmax(dim=-1)

    def draw(weights: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        return torch.multinomial(weights, 1, generator=generator).squeeze(-1)

    return _pick(logits, params, draw)


def _pick(logits: torch.Tensor, params: DecodingParams, draw: Draw) -> torch.Tensor:
    scores = logits / params.temperature
    if params.top_k is not None:
        kth = torch.topk(scores, min(params.top_k, scores.shape[-1]), dim=-1).values[:, -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if params.top_p >= 1.0:
        return draw(torch.softmax(scores, dim=-1), None)
    return _nucleus(scores, params.top_p, draw)


def _inverse_cdf(weights: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Per row, the first position whose cumulative weight exceeds ``uniform × total``.

    Weights need not sum to one; a zero weight can never be picked.
    """
    cumulative = weights.cumsum(dim=-1)
    targets = (uniforms.to(cumulative.dtype) * cumulative[:, -1]).unsqueeze(-1)
    position = torch.searchsorted(cumulative, targets, right=True).squeeze(-1)
    return position.clamp(max=weights.shape[-1] - 1)


def _sample_sorted(
    sorted_scores: torch.Tensor, log_norm: torch.Tensor, top_p: float, draw: Draw, rows: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample positions in descending-sorted scores; also return whether each row's nucleus fit."""
    probs = (sorted_scores - log_norm).exp()
    cumulative = probs.cumsum(dim=-1)
    fits = cumulative[:, -1] >= top_p
    keep = (cumulative - probs) < top_p
    return draw(probs * keep, rows), fits


def _nucleus(scores: torch.Tensor, top_p: float, draw: Draw) -> torch.Tensor:
    log_norm = torch.logsumexp(scores, dim=-1, keepdim=True)
    width = min(NUCLEUS_CANDIDATES, scores.shape[-1])
    top_scores, top_ids = torch.topk(scores, width, dim=-1)
    position, fits = _sample_sorted(top_scores, log_norm, top_p, draw, None)
    tokens = top_ids.gather(-1, position.unsqueeze(-1)).squeeze(-1)
    if width < scores.shape[-1] and not bool(fits.all()):
        wide = (~fits).nonzero().squeeze(-1)
        sorted_scores, sorted_ids = torch.sort(scores[wide], descending=True, dim=-1)
        # Rounding can leave the full cumulative a hair under top_p; the last token then stays in.
        wide_position, _ = _sample_sorted(sorted_scores, log_norm[wide], top_p, draw, wide)
        tokens[wide] = sorted_ids.gather(-1, wide_position.unsqueeze(-1)).squeeze(-1)
    return tokens
