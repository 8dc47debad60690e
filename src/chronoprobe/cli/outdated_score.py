"""``chronoprobe outdated score``: classify generations that already exist (no model calls).

Kept free of torch imports so scoring starts instantly.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from chronoprobe.cli.options import CutoffOpt, DeployedAtOpt, SnapshotOpt, check_as_of
from chronoprobe.errors import ConfigError
from chronoprobe.outdated.knowledge_report import knowledge_console_lines

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
            help="Where to write the answer sheets, classifications.jsonl and summary.json (a run folder, for a "
            "harness log)."
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
    from chronoprobe.outdated.cutoffs import parse_cutoffs, parse_deployed_at
    from chronoprobe.outdated.score import score_generations

    deployed = parse_deployed_at(deployed_at)
    if gold is not None and snapshot is not None:
        raise ConfigError("--gold/--snapshot", "give one of them, not both")
    when = dt.date.fromisoformat(as_of) if as_of is not None else None  # checked by check_as_of
    from chronoprobe.cli.runs import claim_output_dir
    from chronoprobe.integrations.harness_logs import is_harness_log

    inputs = {"--generations": generations, "--gold": gold}
    if snapshot is not None and Path(snapshot).exists():
        inputs["--snapshot"] = Path(snapshot)
    if is_harness_log(generations):
        if gold is not None:
            raise ConfigError("--gold", "judges DyKnow answer folders; for a harness log pass --snapshot")
        claim_output_dir(out, kind="outdated run", inputs=inputs)
        _score_harness_log(generations, out, snapshot, aliases, when, cutoff or [], deployed)
        return
    cutoffs = parse_cutoffs(cutoff or [], [[generations.name]])  # the scored model is named after its folder
    claim_output_dir(out, kind="outdated score", inputs=inputs)
    summary = score_generations(
        generations,
        out,
        gold=gold if gold is not None else snapshot,
        use_aliases=aliases,
        as_of=when,
        cutoff=cutoffs.get(generations.name),
        deployed_at=deployed,
    )
    for category, result in {**summary.categories, "all": summary.overall}.items():
        soft, ci = result.soft_constraint, result.estimates
        assert ci is not None  # always set by score_generations
        shares = "  ".join(
            f"{v} {100 * soft[v]:.1f}% {ci.soft_constraint[v].interval(1, 100.0)}"
            for v in ("up-to-date", "outdated", "irrelevant", "ambiguous")
        )
        _console.print(
            f"[bold]{category}[/] ({result.facts} facts): {shares}  "
            f"inconsistent {100 * result.inconsistency:.1f}% {ci.inconsistency.interval(1, 100.0)} (95% Wilson intervals)",
            highlight=False,
        )
    if summary.no_gold:
        _console.print(
            f"[yellow]no gold[/] answer for {len(summary.no_gold)} fact(s): left out of every rate "
            "(listed as no_gold in summary.json)"
        )
    for line in knowledge_console_lines(summary.model, summary.knowledge_date):
        _console.print(line, highlight=False)
    _console.print(f"answer sheets, summary.json and report.md in {out}")


def _score_harness_log(
    generations: Path,
    out: Path,
    snapshot: str | None,
    aliases: bool,
    when: dt.date | None,
    cutoffs: list[str],
    deployed_at: str | None,
) -> None:
    """An inspect or lm-eval log: judged as ``outdated run`` judges, written as its run folder."""
    from chronoprobe.integrations.harness_logs import score_harness_log
    from chronoprobe.outdated.lens import VERDICT_ORDER, OutdatedLens, share_text
    from chronoprobe.outdated.records import read_run_detail

    run_log = score_harness_log(
        generations, out, snapshot=snapshot, use_aliases=aliases, as_of=when, cutoffs=cutoffs, deployed_at=deployed_at
    )
    harness = run_log["provenance"]["extra"]["harness"]
    summary = OutdatedLens.summary_from_detail(run_log["summary"]["detail"])
    for spec, numbers in read_run_detail(summary.detail)["models"].items():
        found = {m.name: m for m in summary.metrics if m.model == spec and m.group == "all"}
        shares = "  ".join(share_text(v, found.get(f"soft_constraint_pct.{v}")) for v in VERDICT_ORDER)
        facts = numbers["per_category"]["all"]["facts"]
        _console.print(
            f"[bold]{spec}[/] ({harness}): {shares} (soft constraint, 95% Wilson intervals; {facts} facts)",
            highlight=False,
        )
        for line in knowledge_console_lines(spec, numbers.get("knowledge_date")):
            _console.print(line, highlight=False)
    _console.print(f"report: {out / 'report.md'} (a run folder: chronoprobe results / card read it)")
