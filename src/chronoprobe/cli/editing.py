"""``chronoprobe editing``: can the outdated facts be fixed? (DyKnow's editing and RAG experiments)

``dataset`` builds (or reads) DyKnow's ``editing_dataset.json``; ``score`` re-scores generations
in DyKnow's editing result layout. Kept free of torch imports so both start instantly.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated

import typer

from chronoprobe.cli.deprecated import with_deprecated
from chronoprobe.cli.lens_command import lens_app
from chronoprobe.cli.options import choice
from chronoprobe.cli.progress_display import console
from chronoprobe.cli.runs import claim_output_dir
from chronoprobe.editing.lens import EditingLens
from chronoprobe.errors import ConfigError

RENAMED = {"--seed": "--template-seed", "--limit": "--balanced-limit", "--prompts": "--wording"}
"""Options renamed for one meaning per flag, their old spellings kept for a release."""

app = lens_app(
    EditingLens,
    help_text="Can it be fixed? Edit the facts an audit found wrong, build DyKnow's editing dataset, score edited models.",
    deprecated=RENAMED,
)

SELECT_CHOICES = ("outdated", "not-up-to-date")
LABEL_CHOICES = ("ours", "original")
DEFAULT_DATASET = Path("editing_dataset.json")


def build_record_path(out: Path) -> Path:
    """The file beside a dataset we wrote: its checksum, notes, skipped facts and source run."""
    return out.with_name(out.stem + ".build.json")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


DATASET = "a dataset written by `chronoprobe editing dataset` (or it was changed since)"
"""What ``editing dataset --out`` may replace (the refusal names it)."""


def _is_our_dataset(out: Path) -> bool:
    """A dataset this command wrote: its build record's checksum matches it."""
    try:
        recorded = json.loads(build_record_path(out).read_text(encoding="utf-8")).get("sha256")
        return bool(recorded == _digest(out.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return False


def _is_build_record(path: Path) -> bool:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and "sha256" in record


def _check_ours(out: Path) -> None:
    """Refuse to replace a file this command did not write (its build record must match it)."""
    from chronoprobe.publish import check_output_file

    check_output_file(out, "--out", ours=_is_our_dataset, what=DATASET)
    record = build_record_path(out)
    check_output_file(record, "--out", ours=_is_build_record, what=f"the build record of {out.name}")


def _say(lines: list[str]) -> None:
    for line in lines:
        console.print(line, highlight=False, markup=False)


@app.command("dataset")
@with_deprecated({"--model": "--for-model"})
def dataset(
    from_run: Annotated[
        Path | None, typer.Option("--from", help="An `outdated run` folder (run.json + items.jsonl) to build from.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--for-model", help="The model of the run to build for (needed when it has several).")
    ] = None,
    select: Annotated[
        str,
        typer.Option(
            help="outdated: the facts to edit (no up-to-date answer, one outdated at least, none ambiguous: "
            "DyKnow's rule, as the audit report counts them); not-up-to-date: every fact with no up-to-date answer.",
            callback=choice(SELECT_CHOICES),
        ),
    ] = "outdated",
    out: Annotated[
        Path | None,
        typer.Option(
            help="Where to write the dataset (default editing_dataset.json; with --from). An earlier dataset this "
            "command wrote is replaced; any other file is refused, never overwritten."
        ),
    ] = None,
    read: Annotated[
        Path | None, typer.Option("--dataset", help="Read an editing_dataset.json (DyKnow's or ours) and summarise it.")
    ] = None,
) -> None:
    """Build DyKnow's editing_dataset.json from an outdated audit, or summarise one (--dataset)."""
    from chronoprobe.editing.dataset import (
        build_from_run,
        check_run_folder,
        counts_lines,
        dataset_text,
        fact_notes_line,
        read_dataset,
        write_dataset,
    )

    if (from_run is None) == (read is None):
        raise ConfigError("--from/--dataset", "give one of them: a run folder to build from, or a dataset to read")
    if read is not None:
        if out is not None or model is not None:
            raise ConfigError("--out/--for-model", "only with --from")
        _say(counts_lines(read_dataset(read), str(read)))
        return
    assert from_run is not None
    target = out or DEFAULT_DATASET
    from chronoprobe.publish import check_not_input, staged_files

    check_run_folder(from_run)  # a parent of run folders is named as one, before any output is judged
    _check_ours(target)  # before the run is read
    check_not_input([target, build_record_path(target)], {"--from": from_run})
    built = build_from_run(from_run, model=model, select=select)  # type: ignore[arg-type]  # --select's callback allows only Selection values
    per_fact = set(built.fact_notes.values())
    for note in built.notes:
        if note not in per_fact:
            console.print(f"[yellow]note[/]: {note}", highlight=False)
    _say(fact_notes_line(len(built.fact_notes), "", "the build record"))
    for fact, why in built.skipped.items():
        console.print(f"[yellow]skipped[/] {fact}: {why}", highlight=False)
    if not built.records:
        raise ConfigError(
            f"--from {from_run}",
            f"no facts to edit for {built.model} with --select {select}"
            + (" (try --select not-up-to-date)" if select == "outdated" else ""),
        )
    from chronoprobe.io import write_json_atomic

    with staged_files(target, ours=_is_our_dataset, what=DATASET) as staging:
        write_dataset(staging / target.name, built.records)
        write_json_atomic(
            staging / build_record_path(target).name,
            {
                "sha256": _digest(dataset_text(built.records)),
                "run": built.run,
                "model": built.model,
                "select": built.select,
                "notes": built.notes,
                "skipped": built.skipped,
            },
        )
    _say(counts_lines(built.records, f"{from_run} ({built.model}, --select {select})", select, len(built.skipped)))
    console.print(f"dataset: {target}  build record: {build_record_path(target)}", highlight=False)


@app.command("score")
@with_deprecated({"--model": "--only-model"})
def score(
    generations: Annotated[
        Path,
        typer.Option(
            help="DyKnow's root (models_editing/results and RAG/) or its results folder: "
            "<METHOD>/<single_edits|batch_editing>/<model>/<category>_answers.json."
        ),
    ],
    dataset: Annotated[
        Path, typer.Option(help="The editing_dataset.json the answers were made for, or a folder with one per model.")
    ],
    out: Annotated[Path, typer.Option(help="Where to write scores.json and report.md (a folder).")],
    labels: Annotated[
        str,
        typer.Option(
            help="ours: re-classify every answer; original: DyKnow's labels from <category>_analysis.json.",
            callback=choice(LABEL_CHOICES),
        ),
    ] = "ours",
    model: Annotated[
        list[str] | None,
        typer.Option("--only-model", help="Only these models: their folders (repeatable; default: all)."),
    ] = None,
) -> None:
    """Efficacy, paraphrase success, their harmonic mean (Table 3) and the soft constraint (Table 7)."""
    from chronoprobe.editing.score import score_editing
    from chronoprobe.metrics.editing import ALL

    claim_output_dir(out, kind="editing score", inputs={"--generations": generations, "--dataset": dataset})
    summary = score_editing(generations, dataset, out, labels=labels, models=model)  # type: ignore[arg-type]  # --labels' callback allows only Labels values
    for name, methods in summary.models.items():
        for method, scores in methods.items():
            everything = scores.groups[ALL]
            console.print(
                f"[bold]{name}[/] {method} ({everything.facts} facts): HM {everything.harmonic_mean.format_pct()}  "
                f"E {everything.efficacy.format_pct()}  P {everything.paraphrase.format_pct()}  "
                f"soft {everything.soft_constraint.format_pct()}",
                highlight=False,
            )
            if scores.missing:
                console.print(f"  [yellow]{len(scores.missing)} fact(s) without every answer, left out[/]")
    for folder, why in {**summary.unlabelled, **summary.no_dataset}.items():
        console.print(f"[yellow]not scored[/] {folder}: {why}", highlight=False)
    console.print(f"scores.json and report.md in {out}")
