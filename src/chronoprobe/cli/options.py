"""Options shared by several commands, the one choice check, and what each shared flag means.

A flag name has one type and one meaning in every command (:data:`MEANINGS`, checked over every
command's option table by ``tests/cli/test_flag_meanings.py``); a value is checked by the same
function a lens config uses (:mod:`chronoprobe.values`), so the command and ``chronoprobe.run``
accept the same strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

from chronoprobe import values

__all__ = [
    "MEANINGS",
    "CutoffOpt",
    "DeployedAtOpt",
    "ModelOpt",
    "SnapshotOpt",
    "check_as_of",
    "check_endpoint",
    "check_share",
    "check_snapshot_name",
    "check_snapshot_ref",
    "choice",
    "none_or_choice",
]


def _bad(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A check that raises ValueError, as a typer callback: the same message, as a bad value of the option; None passes."""

    def callback(value: Any) -> Any:
        if value is None:
            return None
        try:
            check(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        return value

    return callback


def choice(choices: Sequence[str]) -> Callable[[str], str]:
    """A typer callback taking one of ``choices`` (:func:`chronoprobe.values.one_of`'s message otherwise)."""
    return _bad(lambda value: values.one_of(value, choices))


def none_or_choice(choices: Sequence[str]) -> Callable[[str | None], str | None]:
    """:func:`choice`, with None (not given) let through."""
    return _bad(lambda value: values.one_of(value, choices))


def _share(value: float) -> float:
    if not 0 < value <= 1:
        raise ValueError(f"{value} is not a share in (0, 1]")
    return value


def _snapshot_name(value: str) -> str:
    from chronoprobe.errors import ChronoprobeError
    from chronoprobe.knowledge.snapshot import snapshot_path

    try:
        snapshot_path(value)
    except ChronoprobeError as exc:
        raise ValueError(f"{exc.where} {exc.problem}") from None
    return value


def _snapshot_ref(value: str) -> str:
    from chronoprobe.knowledge.snapshot import check_snapshot_ref

    return check_snapshot_ref(value)


check_share = _bad(_share)
"""A share or fraction in (0, 1]."""
check_snapshot_ref = _bad(_snapshot_ref)
"""A snapshot name (a plain file name) or a path to a snapshot file, refused early if unusable."""
check_snapshot_name = _bad(_snapshot_name)
"""A name a snapshot can be saved under: a plain, printable, not overlong file name."""
check_as_of = _bad(values.past_date)
"""A YYYY-MM-DD date that is not in the future (nothing is known about it yet)."""
check_endpoint = _bad(values.http_url)
"""An http(s) URL."""


ModelOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--model",
        "-m",
        help="Model spec (repeatable): smollm2, gemma3-270m, hf:<id>\\[@rev], gguf:<file>, llamacpp:<file>, vllm:<id>\\[@rev], openai:<name>@<url>, mock:constant=<text> (no model; smoke runs); "
        "NAME=SPEC gives it a short name for plots (e.g. qwen=hf:Qwen/Qwen2.5-0.5B-Instruct). See `chronoprobe models`.",
    ),
]
SnapshotOpt = Annotated[
    str | None,
    typer.Option(
        help="Snapshot name or file to judge against (default: shipped 2023-12-18).", callback=check_snapshot_ref
    ),
]
CutoffOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--cutoff",
        help="A model's published knowledge cutoff, NAME=YYYY-MM (repeatable; NAME as in --model NAME=SPEC, "
        "or the spec): a marker on the knowledge-date plot and a row in results.",
    ),
]
DeployedAtOpt = Annotated[
    str | None,
    typer.Option(
        "--deployed-at",
        help="Forecast staleness for a model shipped on this date (YYYY-MM or YYYY-MM-DD): "
        "the share of what it knows that is stale then, 6 and 12 months later.",
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
}
"""Flag -> the words every command's help for it contains (at the start, for a capitalised one): its one meaning.
A flag two commands share must be listed; the model options are one declaration and need no entry."""
