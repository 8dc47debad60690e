"""Writing an evaluation's result files: items.jsonl, summary.json, report.md, confusion PNGs.

They go into the runner's staging folder (the recency lens's ``report``), which the runner publishes
whole (:mod:`chronoprobe.records.publish`), so a failure or kill leaves the whole old folder or the whole new
one, never a mix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chronoprobe.io import write_json_atomic, write_jsonl_atomic, write_text_atomic
from chronoprobe.lenses.recency.report import confusion_png, render, slug

NAMES = {"items": "items.jsonl", "summary": "summary.json", "report": "report.md"}


def write_eval_files(
    folder: Path, rows: Sequence[dict[str, Any]], summary: dict[str, Any], provenance: dict[str, Any]
) -> None:
    """Write an evaluation's files into ``folder``; ``summary`` gains plot names and provenance."""
    summary["provenance"] = provenance
    plots: dict[str, str] = {}
    models = {run["model"] for run in summary["runs"]}
    for run in summary["runs"]:
        prefix = f"{slug(run['model'])}_" if len(models) > 1 else ""
        name = f"confusion_{prefix}{run['strategy']}_{run['context_mode']}.png"
        title = f"{run['model']} · {run['strategy']} · {run['context_mode']} context (n={run['n']})"
        confusion_png(folder / name, run["confusion"], summary["labels"], title)
        plots[title] = name
        run["confusion_png"] = name
    write_jsonl_atomic(folder / NAMES["items"], rows)
    write_json_atomic(folder / NAMES["summary"], summary)
    write_text_atomic(folder / NAMES["report"], render(summary, plots))
