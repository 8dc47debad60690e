"""Write an audit's results: per-response JSONL, summary JSON, Markdown report, plots.

Everything is staged in a temporary folder and moved into place at the end, so
a failed or interrupted run never leaves a half-written report.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronoprobe.errors import ConfigError
from chronoprobe.io import (
    staging_dir,
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)
from chronoprobe.metrics.dyknow import VERDICTS
from chronoprobe.outdated.audit import ResponseRecord
from chronoprobe.outdated.summary import ALL
from chronoprobe.reports.markdown import provenance_section, table


def _verdict_rows(per_model: Mapping[str, dict[str, Any]], key: str, section: str = "per_category") -> list[list[Any]]:
    rows = []
    for model, summary in per_model.items():
        for category, stats in summary[section].items():
            rows.append([model, category, stats["facts"], *(stats[key][v] for v in VERDICTS)])
    return rows


def render_markdown(per_model: Mapping[str, dict[str, Any]], provenance: dict[str, Any], as_of: str | None) -> str:
    headers = ["model", "category", "facts", *VERDICTS]
    parts = [
        "# Outdated-knowledge audit",
        "",
        "Each fact is asked with three paraphrases; every answer is judged against the pinned Wikidata answers "
        "(up-to-date = the current holder, outdated = a past holder, irrelevant = none of them, "
        "ambiguous = several).",
        "",
        "## Soft constraint (% of facts)",
        "",
        "A fact counts as up-to-date if any paraphrase is; else outdated if any is; else ambiguous if any is; else irrelevant.",
        "",
        table(headers, _verdict_rows(per_model, "soft_constraint_pct")),
        "",
        "## Averaged over paraphrases (% of prompts)",
        "",
        table(headers, _verdict_rows(per_model, "average_pct")),
        "",
        "## Inconsistency across paraphrases",
        "",
        table(
            ["model", "category", "facts", "inconsistent", "%"],
            [
                [m, c, s["facts"], s["inconsistent"], s["inconsistency_pct"]]
                for m, summary in per_model.items()
                for c, s in summary["per_category"].items()
            ],
        ),
        "",
    ]
    if as_of:
        parts += [
            f"## Soft constraint judged as of {as_of} (% of facts)",
            "",
            table(headers, _verdict_rows(per_model, "soft_constraint_pct", section="as_of")),
            "",
        ]
    parts += ["## Facts to edit", ""]
    for model, summary in per_model.items():
        edit = summary["facts_to_edit"]
        parts.append(f"- `{model}`: {len(edit)} fact(s) with no up-to-date and at least one outdated answer")
    parts += [
        "",
        "Full lists are in `summary.json`; the per-response records are in `responses.jsonl`.",
        "",
        "## Recency of training data",
        "",
        "![start years of matched answers](recency.png)",
        "",
        table(
            ["model", "matched answers", "median start year", "latest start year"],
            [
                [m, len(s["start_years"]), _median(s["start_years"]), max(s["start_years"], default=None)]
                for m, s in per_model.items()
            ],
        ),
        "",
        "![verdicts per category](verdicts.png)",
        "",
        provenance_section(provenance),
    ]
    return "\n".join(parts)


def _median(values: Sequence[int]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def plot_recency(per_model: Mapping[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(per_model)
    data = [per_model[m]["start_years"] or [float("nan")] for m in names]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.6 * len(names) + 2), 4))
    ax.boxplot(data, showmeans=True)
    ax.set_xticks(range(1, len(names) + 1), names, rotation=15)
    ax.set_ylabel("start year of the matched answer")
    ax.set_title("How recent are the facts the model knows?")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_verdicts(per_model: Mapping[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"up-to-date": "#2a9d8f", "outdated": "#e9c46a", "irrelevant": "#bbbbbb", "ambiguous": "#e76f51"}
    labels, shares = [], {v: [] for v in VERDICTS}
    for model, summary in per_model.items():
        for category, stats in summary["per_category"].items():
            labels.append(f"{model}\n{category}" if len(per_model) > 1 else category)
            for v in VERDICTS:
                shares[v].append(stats["soft_constraint_pct"][v])
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(labels) + 2), 4))
    bottom = [0.0] * len(labels)
    for v in VERDICTS:
        ax.bar(range(len(labels)), shares[v], bottom=bottom, label=v, color=colours[v])
        bottom = [b + s for b, s in zip(bottom, shares[v], strict=True)]
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("% of facts (soft constraint)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def check_output_dir(out_dir: Path) -> None:
    """Refuse, before any work, to replace a folder that is not an earlier report."""
    if out_dir.exists() and (not out_dir.is_dir() or (any(out_dir.iterdir()) and not (out_dir / "summary.json").exists())):
        raise ConfigError(f"output folder {out_dir}", "exists and does not hold an earlier report; refusing to replace it")


def write_report(
    out_dir: Path,
    records: Sequence[ResponseRecord],
    per_model: Mapping[str, dict[str, Any]],
    provenance: dict[str, Any],
    *,
    as_of: str | None,
) -> None:
    check_output_dir(out_dir)
    staging = staging_dir(out_dir)
    try:
        write_jsonl_atomic(staging / "responses.jsonl", (r.model_dump(mode="json") for r in records))
        write_json_atomic(
            staging / "summary.json",
            {"provenance": provenance, "as_of": as_of, "models": per_model, "overall_key": ALL},
        )
        plot_recency(per_model, staging / "recency.png")
        plot_verdicts(per_model, staging / "verdicts.png")
        write_text_atomic(staging / "report.md", render_markdown(per_model, provenance, as_of))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
