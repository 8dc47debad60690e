"""``--model``, the one choice check, and what each shared flag means.

A flag name has one type and one meaning in every command (:data:`MEANINGS`, checked over every
command's option table by ``tests/cli/test_flag_meanings.py``); a value is checked by the same
function a lens config uses (:mod:`chronoprobe.values`), so the command and ``chronoprobe.run``
accept the same strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from chronoprobe import values

__all__ = ["MEANINGS", "ModelOpt", "Typed", "choice"]


@dataclass(frozen=True)
class Typed:
    """A field's metadata for the generator (``cli/generate.py``): what its typer option gets beyond the field's
    name, type, help and bounds. A check that runs while the command line is parsed (``callback``, ``parser``: a
    refusal names the flag before anything else runs), the value's name in help (``metavar``), the type typer is
    shown where it cannot take the field's own (``shown``: ``--batch-size``'s whole number or ``auto``), and help
    made when the command is (``help``: it lists what the registered backends declare)."""

    callback: Callable[[Any], Any] | None = None
    parser: Callable[[str], Any] | None = None
    metavar: str | None = None
    shown: Any = None
    help: Callable[[], str] | None = None

    def option_settings(self) -> dict[str, Any]:
        """The ``typer.Option`` keywords it sets."""
        chosen = {"callback": self.callback, "parser": self.parser, "metavar": self.metavar}
        return {key: value for key, value in chosen.items() if value is not None}


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
    "--questions": "Text file, one question per line",
    "--weights": "Folder of router weights",
    "--json": "Print the decision as JSON",
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
