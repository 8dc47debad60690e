"""``chronoprobe outdated score``: classify generations that already exist (no model calls).

Kept free of torch imports so scoring starts instantly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from chronoprobe.cli.common import CutoffOpt, DeployedAtOpt, SnapshotOpt, check_as_of

_console = Console(stderr=True)


def score(
    generations: Annotated[
        Path,
        typer.Option(
            help="Folder of <category>_answers.json files (DyKnow layout: subject, optional attribute, then answers and questions), "
            "or a harness log: an inspect .eval log (or folder of them), lm-eval --log_samples output (docs/harnesses.md)."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="Folder for the answer sheets, classifications.jsonl and summary.json (a run folder, for a harness log)."
        ),
    ],
    gold: Annotated[
        Path | None, typer.Option(help="An original grc_generated.json to judge against (its 2023-12-18 answers).")
    ] = None,
    snapshot: SnapshotOpt = None,
    aliases: Annotated[
        bool, typer.Option("--aliases/--no-aliases", help="Also match Wikidata aliases (off reproduces the paper).")
    ] = False,
    as_of: Annotated[
        str | None,
        typer.Option(
            help="Judge against what was current on this date (YYYY-MM-DD) instead of now.", callback=check_as_of
        ),
    ] = None,
    cutoff: CutoffOpt = None,
    deployed_at: DeployedAtOpt = None,
) -> None:
    """Judge existing generations: up-to-date / outdated / irrelevant / ambiguous per answer; date the model's knowledge."""
    chosen = dict(locals())  # every option, as the tool's config names it
    from chronoprobe.integrations.harness_scoring import HarnessScoreTool
    from chronoprobe.runner import produce

    tool = HarnessScoreTool.from_options(**chosen)
    for line in tool.present(produce(tool)):
        _console.print(line, highlight=False)
