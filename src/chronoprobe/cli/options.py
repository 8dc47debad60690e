"""``--model``, the one choice check, and what each shared flag means.

A flag name has one type and one meaning in every command (:data:`MEANINGS`, checked over every
command's option table by ``tests/cli/test_flag_meanings.py``); a value is checked by the same
function a lens config uses (:mod:`chronoprobe.values`), so the command and ``chronoprobe.run``
accept the same strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated

import typer

from chronoprobe import values

__all__ = ["MEANINGS", "ModelOpt", "choice"]


def choice(choices: Sequence[str]) -> Callable[[str | None], str | None]:
    """A typer callback taking one of ``choices`` (:func:`chronoprobe.values.one_of`'s message otherwise); None
    (not given) passes."""

    def callback(value: str | None) -> str | None:
        if value is not None:
            try:
                values.one_of(value, choices)
            except ValueError as exc:
                raise typer.BadParameter(str(exc)) from None
        return value

    return callback


ModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="Model spec (repeatable): smollm2, gemma3-270m, hf:<id>\\[@rev], gguf:<file>, llamacpp:<file>, vllm:<id>\\[@rev], openai:<name>@<url>, mock:constant=<text> (no model; smoke runs); "
        "NAME=SPEC gives it a short name for plots (e.g. qwen=hf:Qwen/Qwen2.5-0.5B-Instruct). See `chronoprobe models`.",
    ),
]

MEANINGS: dict[str, str] = {
    "--model": "Model spec",
    "--only-model": "Only th",
    "--out": "Where to write",
    "--seed": "Decoding seed",
    "--sample-seed": "Seed of the",
    "--template-seed": "Seed of ROME/MEMIT",
    "--limit": "Only the first N",
    "--balanced-limit": "At most N",
    "--per-template": "At most N",
    "--data": "Where the data comes from",
    "--aliases": "Wikidata aliases",
    "--aliases-file": "MuLan aliases",
    "--as-of": "this date (YYYY-MM-DD)",
    "--cutoff": "published knowledge cutoff",
    "--dataset": "editing_dataset.json",
    "--deployed-at": "Forecast staleness",
    "--endpoint": "SPARQL endpoint",
    "--facts": "Fact catalogue JSON",
    "--from": "`outdated run` folder",
    "--generations": "_answers.json",
    "--live": "today's answers",
    "--max-new-tokens": "Tokens to generate per",
    "--min-share": "share of samples",
    "--prompt-file": "Prompt file",
    "--wording": "JSON file",
    "--samples": "Samples drawn per",
    "--select": "outdated",
    "--snapshot": "Snapshot name or file",
    "--temperature": "Sampling temperature",
    "--templates": "MuLan clean.json templates",
    "--threshold": "recency class",
    "--timeout": "Seconds per request",
    "--format": "csv, json or parquet",
    "--allow-different-items": "on the items they share",
    "--wide": "Draw the whole table at its own width",
}
"""Flag -> the words every command's help for it contains (at the start, for a capitalised one): its one meaning.
A flag two commands share must be listed; the model options are one declaration and need no entry."""
