"""What a model says its knowledge cutoff is: three paraphrases asked, each answer read, the claim kept.

Every ``outdated run`` asks them (``--no-claimed-cutoff`` turns it off): three more calls per model,
through the call cache like every other. The answers are read by
:mod:`chronoprobe.metrics.claimed_cutoff` and stored, raw, under ``claimed_cutoff`` in the model's
summary; nothing else in the audit reads them, so no other number moves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from chronoprobe.cache import CachedModel
from chronoprobe.lenses.outdated.prompts import CUTOFF_QUESTIONS, cutoff_decoding, cutoff_prompts
from chronoprobe.metrics.claimed_cutoff import combine_claims, read_claim

__all__ = ["ask_cutoff", "claim_block", "claim_words"]

METHOD = (
    "three paraphrases of 'what is your knowledge cutoff date?', greedy; the year most answers name, then its month"
)


def ask_cutoff(model: CachedModel, *, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Ask ``model`` the cutoff question's paraphrases and read its answers (the ``claimed_cutoff`` block)."""
    generations = model.generate(cutoff_prompts(), cutoff_decoding(), progress=progress)
    chat = model.info.chat_template
    asked = [question if chat else sentence for question, sentence in CUTOFF_QUESTIONS]
    return claim_block(asked, [g.text for g in generations])


def claim_block(asked: list[str], answers: list[str]) -> dict[str, Any]:
    """The JSON block of a claim: each question with its raw answer and the date read from it, and the claim."""
    dates = [read_claim(answer) for answer in answers]
    claim = combine_claims(dates)
    return {
        "method": METHOD,
        "value": claim.date.label if claim.date is not None else None,
        "year": claim.date.decimal if claim.date is not None else None,
        "n": claim.parsed,
        "asked": claim.asked,
        "answers": [
            {"question": question, "answer": answer, "parsed": date.label if date is not None else None}
            for question, answer, date in zip(asked, answers, dates, strict=True)
        ],
    }


def _quoted(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return f"“{flat[:limit]}{'…' if len(flat) > limit else ''}”"


def claim_words(block: Mapping[str, Any] | None) -> str | None:
    """``says its knowledge ends 2023-12 (2 of 3 answers name a date)``, or that nothing parses with the first
    raw answer; None when the model was not asked."""
    if not block:
        return None
    if block.get("value") is None:
        answers = block.get("answers") or [{}]
        return f"says nothing that reads as a date when asked its knowledge cutoff ({_quoted(str(answers[0].get('answer', '')))})"
    return f"says its knowledge ends {block['value']} ({block['n']} of {block['asked']} answers name a date)"
