"""Write an audit's results: per-response JSONL, summary JSON, Markdown report, plots.

The files go into the runner's staging folder (:func:`write_report_files`), which the runner
publishes whole (:mod:`chronoprobe.records.publish`), so a failed or killed run leaves the whole old report
or the whole new one, never a mix.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronoprobe.datasets.editing_records import GROUP_OF, GROUPS, group_heading
from chronoprobe.io import (
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)
from chronoprobe.lenses.outdated import plots
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.knowledge_report import claim_lines, knowledge_lines, write_knowledge_plots
from chronoprobe.lenses.outdated.prompts import prompting_label
from chronoprobe.lenses.outdated.summary import ALL
from chronoprobe.metrics.dyknow import FACT_TO_EDIT_RULE, VERDICTS
from chronoprobe.metrics.uncertainty import cell, ci_cell
from chronoprobe.models.chat_dates import TEMPLATE
from chronoprobe.provenance import Provenance
from chronoprobe.reports.markdown import provenance_section, table, template_date_text


def _verdict_rows(
    per_model: Mapping[str, Mapping[str, Any]], key: str, section: str = "per_category", *, answers: bool = False
) -> list[list[Any]]:
    """One row per model and category; cells are ``value [95% CI]`` where the summary has estimates.

    ``answers``: add the number of judged answers (the n of the averaged shares) after ``facts``.
    """
    rows = []
    for model, summary in per_model.items():
        for category, stats in summary[section].items():
            estimates = (stats.get("estimates") or {}).get(key) or {}
            cells = [cell(estimates[v], 1) if v in estimates else stats[key][v] for v in VERDICTS]
            n = [next((e["n"] for e in estimates.values()), None)] if answers else []
            rows.append([model, category, stats["facts"], *n, *cells])
    return rows


_INTERVALS_NOTE = "Cells read `value [low, high]`: the share and its 95% Wilson score interval (chronoprobe docs outdated, Intervals)."


def _prompting_lines(provenance: Provenance) -> list[str]:
    """Which prompt form each model got (chat template + instruction, or the bare sentence), the day its chat
    template was told, and its licence."""
    rows = [
        [m.label, prompting_label(chat_template=m.chat_template), template_date_text(m), m.extra.get("licence", "–")]
        for m in provenance.models
    ]
    if not rows:
        return []
    return [
        "## Prompting",
        "",
        table(["model", "prompting", "day the chat template is told", "licence"], rows),
        "",
        *_clock_lines(provenance),
    ]


def _clock_lines(provenance: Provenance) -> list[str]:
    """A warning for each model whose prompt changes with the machine's date (``--template-date template``)."""
    moving = [m.label for m in provenance.models if m.template_date == TEMPLATE and m.template_takes_date]
    if not moving:
        return []
    return [
        f"**The prompts of {', '.join(f'`{name}`' for name in moving)} change with the machine's date**: "
        "`--template-date template` left the chat template its own clock, so a rerun on another day asks other "
        "prompts and misses the call cache. Without it the template is told the audit's as-of date.",
        "",
    ]


def render_markdown(per_model: Mapping[str, Mapping[str, Any]], provenance: Provenance, as_of: str | None) -> str:
    headers = ["model", "category", "facts", *VERDICTS]
    parts = [
        "# Outdated-knowledge audit",
        "",
        "Each fact is asked with three paraphrases; every answer is judged against the pinned Wikidata answers "
        "(up-to-date = the current holder, outdated = a past holder, irrelevant = none of them, "
        "ambiguous = several).",
        "",
        *_prompting_lines(provenance),
        *_no_gold_lines(per_model, provenance),
        "## Soft constraint (% of facts)",
        "",
        "A fact counts as up-to-date if any paraphrase is; else outdated if any is; else ambiguous if any is; else irrelevant.",
        _INTERVALS_NOTE,
        "",
        table(headers, _verdict_rows(per_model, "soft_constraint_pct")),
        "",
        "## Averaged over paraphrases (% of prompts)",
        "",
        "n is the number of judged answers; a fact's answers are not independent, so these intervals are optimistic.",
        "",
        table(
            ["model", "category", "facts", "answers", *VERDICTS], _verdict_rows(per_model, "average_pct", answers=True)
        ),
        "",
        "## Inconsistency across paraphrases",
        "",
        table(
            ["model", "category", "facts", "inconsistent", "%", "95% CI"],
            [
                [
                    m,
                    c,
                    s["facts"],
                    s["inconsistent"],
                    s["inconsistency_pct"],
                    ci_cell((s.get("estimates") or {}).get("inconsistency_pct"), 1),
                ]
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
    parts += facts_to_edit_lines(per_model)
    parts += [
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
        *knowledge_lines(_knowledge_blocks(per_model)),
        *claim_lines(
            {str(s.get("name") or m): (s.get("claimed_cutoff"), s.get("knowledge_date")) for m, s in per_model.items()}
        ),
        provenance_section(provenance),
    ]
    return "\n".join(parts)


def facts_to_edit_lines(per_model: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The facts to edit per editing group (DyKnow's Table 3 rows), said with the one rule that picks them."""
    heads = [group_heading(g) for g in GROUPS]
    rows = []
    for model, summary in per_model.items():
        edit = summary["facts_to_edit"]
        counts = Counter(GROUP_OF.get(fact.split("/", 1)[0], "") for fact in edit)
        overall = summary["per_category"].get(ALL) or {}
        wider = overall.get("facts", 0) - (overall.get("soft_constraint") or {}).get("up-to-date", 0)
        rows.append([model, *(counts[g] for g in GROUPS), len(edit), wider])
    lines = [
        "## Facts to edit",
        "",
        f"{FACT_TO_EDIT_RULE} `editing run --from` and `editing dataset --from` this folder edit these facts "
        "(less any whose current value is not one single answer; they list those). The groups are the rows of "
        "DyKnow's Table 3, the audit's categories pooled as shown. The last column is a wider set, every fact "
        "with no question answered up-to-date, which `--select not-up-to-date` edits.",
        "",
        table(["model", *heads, "facts to edit", "not up-to-date"], rows),
        "",
    ]
    for model, summary in per_model.items():
        left = summary["per_category"].get(ALL, {}).get("ambiguous_not_edited") or []
        if left:
            lines += [
                f"`{model}`: {len(left)} fact(s) with no up-to-date answer have an ambiguous one; DyKnow stops on "
                "those until the answer is fixed by hand, so they are not facts to edit.",
                "",
            ]
    return lines


def _knowledge_blocks(per_model: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Display name -> knowledge-date block, for the models whose summary has one."""
    return {str(s.get("name") or m): s.get("knowledge_date") for m, s in per_model.items() if "knowledge_date" in s}


def _no_gold_lines(per_model: Mapping[str, Mapping[str, Any]], provenance: Provenance) -> list[str]:
    """The facts without gold answers: not asked, outside every rate, but counted here."""
    missing = sorted({fact for summary in per_model.values() for fact in summary.get("no_gold", [])})
    if not missing:
        return []
    snapshot = (provenance.snapshot or {}).get("name", "the snapshot")
    shown = ", ".join(f"`{fact}`" for fact in missing[:10]) + (" ..." if len(missing) > 10 else "")
    return [
        f"**No gold: {len(missing)} fact(s)** have no dated answer in snapshot `{snapshot}`, so they were not "
        "asked and are left out of every rate and count below (the `facts` columns count judged facts only). "
        f"They are: {shown} (full list: `no_gold` in `summary.json`).",
        "",
    ]


def _median(values: Sequence[int]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def plot_recency(per_model: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    """``recency.png`` and ``recency.svg``: start years of the matched answers, one box per model."""

    plots.saved(path, "recency", per_model, lambda target: plots.plot_recency(per_model, target))


def plot_verdicts(per_model: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    """``verdicts.png`` and ``verdicts.svg``: soft-constraint verdicts per category."""

    plots.saved(path, "verdicts", per_model, lambda target: plots.plot_verdicts(per_model, target))


def write_report_files(
    folder: Path,
    records: Sequence[ResponseRecord],
    per_model: Mapping[str, Mapping[str, Any]],
    provenance: Provenance,
    *,
    as_of: str | None,
) -> None:
    """Write the report's files into ``folder`` (a staging folder; publishing is the caller's)."""
    write_jsonl_atomic(folder / "responses.jsonl", (r.model_dump(mode="json") for r in records))
    write_json_atomic(
        folder / "summary.json",
        {"provenance": provenance.recorded(), "as_of": as_of, "models": per_model, "overall_key": ALL},
    )
    plot_recency(per_model, folder / "recency.png")
    plot_verdicts(per_model, folder / "verdicts.png")
    write_knowledge_plots(folder, _knowledge_blocks(per_model))
    write_text_atomic(folder / "report.md", render_markdown(per_model, provenance, as_of))
