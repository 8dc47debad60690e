"""The knowledge date and staleness in a report: Markdown sections and the two figures.

Shared by ``outdated run`` (sections inside its report.md) and ``outdated score`` (a report.md
of its own). ``per_model`` maps a model's display name to its ``knowledge_date`` block
(:func:`chronoprobe.lenses.outdated.knowledge_date.knowledge_summary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chronoprobe.io import write_text_atomic
from chronoprobe.lenses.outdated import plots
from chronoprobe.lenses.outdated.claimed_cutoff import claim_words
from chronoprobe.lenses.outdated.knowledge_date import ALL, FORECAST_MONTHS, WIDE_YEARS, is_wide
from chronoprobe.metrics.knowledge_date import month_label
from chronoprobe.reports.markdown import table

KNOWLEDGE_PNG = "knowledge_date.png"
STALENESS_PNG = "staleness.png"


def _month(value: float | None) -> str:
    return "–" if value is None else month_label(value)


def _interval(estimate: Mapping[str, Any]) -> str:
    low, high = estimate.get("ci_low"), estimate.get("ci_high")
    if low is None or high is None:
        return "none (too few facts)"
    return f"{month_label(low)} to {month_label(high)}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}%"


def _sentence(name: str, block: Mapping[str, Any]) -> str:
    overall = block["per_category"].get(ALL)
    excluded = block["excluded"]
    left_out = f"{excluded.get('irrelevant', 0)} irrelevant and {excluded.get('ambiguous', 0)} ambiguous answers"
    if overall is None:
        return f"- `{name}`: no answer matched a dated value ({left_out}), so no knowledge date can be given."
    estimate = overall["estimate"]
    text = (
        f"- `{name}`: its answers describe the world of about **{estimate['label']}** "
        f"({estimate['value']:.2f}; 95% interval {_interval(estimate)}, bootstrap over {estimate['n']} facts "
        f"with a dated answer, {overall['answers']} dated answers; {left_out} left out)."
    )
    text += _cutoff_sentence(block.get("cutoff"))
    horizon = block.get("horizon")
    if horizon:
        text += (
            f" The latest change whose current value it gives (its knowledge horizon, a maximum that one lucky answer"
            f" moves): {horizon['label']} (95% interval {_interval(horizon)}, bootstrap over the {horizon['n']} facts"
            " it answers up-to-date)."
        )
    if block.get("published_cutoff"):
        text += f" Published cutoff: {block['published_cutoff']}."
    if is_wide(estimate):
        text += (
            f" **The interval is wide** (more than {WIDE_YEARS:g} years, or none): only {estimate['n']} facts "
            "have a dated answer, so read this as a rough range, not a date."
        )
    return text


def _cutoff_sentence(cutoff: Mapping[str, Any] | None) -> str:
    """The report's sentence on the knowledge cutoff; empty in a folder written before it."""
    if not cutoff:
        return ""
    if "too_few" in cutoff:
        return f" Knowledge cutoff: too few dated facts ({cutoff['too_few']}; it needs {cutoff['min_facts']})."
    estimate = cutoff["estimate"]
    return (
        f" It knows changes up to about **{estimate['label']}** (its knowledge cutoff, {estimate['value']:.2f}; 95% "
        f"interval {_interval(estimate)} by profile likelihood over {estimate['n']} dated facts)."
    )


def knowledge_date_line(model: str, block: Mapping[str, Any] | None) -> str:
    """One console line: the model's knowledge date and interval."""
    overall = (block or {}).get("per_category", {}).get(ALL)
    if overall is None:
        return f"[bold]{model}[/]: no answer matched a dated value, so no knowledge date"
    e = overall["estimate"]
    interval = f"{_interval(e)}" + (" (wide: few dated facts)" if is_wide(e) else "")
    return (
        f"[bold]{model}[/]: knowledge date {e['label']} ({e['value']:.2f}; 95% interval {interval}; n={e['n']} facts)"
    )


def dates_line(claim: Mapping[str, Any] | None, block: Mapping[str, Any] | None) -> str | None:
    """``says its knowledge ends 2023-12; it knows changes up to about 2021-06 [2020-09 to 2022-01], n=40 facts; its
    answers most often describe 2021-10 [2020-11 to 2022-03]``: the claim beside the two estimates; None without
    any."""
    parts = [said] if (said := claim_words(claim)) else []
    cutoff = ((block or {}).get("cutoff") or {}).get("estimate")
    if cutoff:
        parts.append(f"it knows changes up to about {cutoff['label']} [{_interval(cutoff)}], n={cutoff['n']} facts")
    overall = (block or {}).get("per_category", {}).get(ALL)
    if overall is not None:
        estimate = overall["estimate"]
        parts.append(f"its answers most often describe {estimate['label']} [{_interval(estimate)}]")
    return "; ".join(parts) if parts else None


def claim_lines(per_model: Mapping[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]) -> list[str]:
    """The report's "What the model says" section: per model (display name -> (claim, knowledge-date block)) the
    claim beside the knowledge date and the horizon, then every question with its raw answer."""
    claimed = {name: pair for name, pair in per_model.items() if pair[0]}
    if not claimed:
        return []
    lines = [
        "## What the model says its cutoff is",
        "",
        'Each model was asked three paraphrases of "what is your knowledge cutoff date?" (chronoprobe docs outdated, What '
        "the model is told, and what it says). The claim is the year most answers name, with its month where they "
        "name one; nothing is read where an answer names no date. Beside it, the knowledge cutoff (up to when it "
        "knows changes) and the knowledge date (the month its answers most often describe).",
        "",
        *(f"- `{name}` {dates_line(claim, block)}." for name, (claim, block) in claimed.items()),
        "",
        table(
            ["model", "question", "answer", "date read"],
            [
                [name, item["question"], " ".join(str(item["answer"]).split()), item["parsed"] or "none"]
                for name, (claim, _) in claimed.items()
                for item in (claim or {}).get("answers", [])
            ],
        ),
        "",
    ]
    return lines


def knowledge_console_lines(
    model: str, block: Mapping[str, Any] | None, claim: Mapping[str, Any] | None = None
) -> list[str]:
    """What the console says of a model's knowledge date: the date, what it says its cutoff is beside the date
    and the horizon, the published cutoff given with ``--cutoff``, and the ``--deployed-at`` forecast (or a
    warning when it forecasts nothing)."""
    lines = [knowledge_date_line(model, block)]
    said = dates_line(claim, block) if claim else None
    if said:
        lines.append(f"[bold]{model}[/]: {said}")
    if block and block.get("published_cutoff"):
        lines.append(f"[bold]{model}[/]: published cutoff {block['published_cutoff']} (--cutoff)")
    forecast = (block or {}).get("deployed_at")
    if not forecast:
        return lines
    if forecast.get("before_knowledge_date"):
        lines.append(f"[yellow]warning[/]: {_before_knowledge_date(model, forecast)}")
        return lines
    points = (forecast.get("per_category") or {}).get(ALL)
    if points:
        shares = ", ".join(
            f"{_point(points[str(m)])} {'on the day' if m == 0 else f'after {m} months'}" for m in FORECAST_MONTHS
        )
        extrapolated = any(points[str(m)]["extrapolated"] for m in FORECAST_MONTHS)
        lines.append(
            f"[bold]{model}[/]: deployed on {forecast['date']}, stale: {shares} (share of what it knew, all facts"
            + ("; * past the snapshot: extended with the half-life fit)" if extrapolated else ")")
        )
    return lines


def _point(point: Mapping[str, Any]) -> str:
    cell = _pct(point["value"])
    if point["ci_low"] is not None and point["ci_high"] is not None:
        cell += f" [{point['ci_low']:.1f}, {point['ci_high']:.1f}]"
    return cell + (" *" if point["extrapolated"] else "")


def _before_knowledge_date(model: str, forecast: Mapping[str, Any]) -> str:
    return (
        f"--deployed-at {forecast['date']} is before the knowledge date of {model} "
        f"({forecast['before_knowledge_date']}): its answers describe a later world than that day, "
        "so no staleness is forecast"
    )


def knowledge_lines(per_model: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """The report's "Knowledge date" and "Staleness" sections."""
    blocks = {name: block for name, block in per_model.items() if block}
    if not blocks:
        return []
    lines = [
        "## Knowledge date",
        "",
        "The date whose world a model's answers describe best: a maximum-likelihood fit to the validity periods "
        "of the values its answers name (chronoprobe docs outdated, Knowledge date). Dates are months; decimal years "
        "beside them (2021.5 is the start of July 2021). The naive column is the month where the as-of curve "
        "peaks, the floor the estimate is compared with.",
        "",
        *(_sentence(name, block) for name, block in blocks.items()),
        "",
        f"![as-of curve and knowledge date]({KNOWLEDGE_PNG})",
        "",
        table(
            ["model", "category", "knowledge date", "decimal", "95% interval", "facts", "dated answers", "naive"],
            [
                [
                    name,
                    category,
                    _month(entry["estimate"]["value"]),
                    entry["estimate"]["value"],
                    _interval(entry["estimate"]),
                    entry["estimate"]["n"],
                    entry["answers"],
                    _month(entry["naive"]["value"]),
                ]
                for name, block in blocks.items()
                for category, entry in block["per_category"].items()
            ],
            digits=2,
        ),
        "",
    ]
    too_few = {name: block["too_few"] for name, block in blocks.items() if block.get("too_few")}
    if too_few:
        listed = "; ".join(f"`{n}`: " + ", ".join(f"{c} ({k})" for c, k in t.items()) for n, t in too_few.items())
        lines += [f"Categories with fewer than 5 dated facts get no date of their own: {listed}.", ""]
    return lines + _staleness_lines(blocks)


def _staleness_lines(blocks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = []
    for name, block in blocks.items():
        stale = block.get("staleness") or {}
        for category, curve in (stale.get("per_category") or {}).items():
            half = curve["half_life_years"]
            low, high = curve["low"][-1], curve["high"][-1]
            still = f"{100 * curve['share'][-1]:.1f}%" + (
                f" [{100 * low:.1f}, {100 * high:.1f}]" if low is not None and high is not None else ""
            )
            half_cell = "– (none changed)" if half["value"] is None else f"{half['value']:.1f}"
            if half["value"] is not None and half["ci_low"] is not None:
                top = "unbounded" if half["ci_high"] is None else f"{half['ci_high']:.1f}"
                half_cell += f" [{half['ci_low']:.1f}, {top}]"
            rows.append([name, category, stale["from_label"], curve["n"], curve["changed"], still, half_cell])
    if not rows:
        return []
    lines = [
        "## Staleness",
        "",
        "Of the values a model named that held at its knowledge date, the share that still held at each later "
        "date up to the snapshot, and the freshness half-life: the years until half of them change, from a "
        "constant-rate fit (changes over years followed). Intervals: 95% bootstrap over the values.",
        "",
        f"![staleness per category]({STALENESS_PNG})",
        "",
        table(
            ["model", "category", "from", "values", "changed", "still current at snapshot", "half-life (years)"],
            rows,
        ),
        "",
    ]
    return lines + _forecast_lines(blocks)


def _forecast_lines(blocks: Mapping[str, Mapping[str, Any]]) -> list[str]:
    rows = []
    date = None
    before: list[str] = []
    for name, block in blocks.items():
        forecast = block.get("deployed_at")
        if not forecast:
            continue
        date = forecast["date"]
        if forecast.get("before_knowledge_date"):
            before.append(f"- **No forecast for `{name}`**: {_before_knowledge_date(name, forecast)}.")
        for category, points in forecast["per_category"].items():
            rows.append([name, category, *(_point(points[str(months)]) for months in FORECAST_MONTHS)])
    if not rows and not before:
        return []
    lines = [f"### Deployed on {date}", ""]
    if rows:
        heads = ["on the day" if m == 0 else f"after {m} months" for m in FORECAST_MONTHS]
        lines += [
            "Share of what the model knew at its knowledge date that is stale (changed) when it is used. "
            "A * marks a date after the snapshot: there the curve is extended with the half-life fit.",
            "",
            table(["model", "category", *heads], rows),
            "",
        ]
    return lines + ([*before, ""] if before else [])


def write_knowledge_plots(folder: Path, per_model: Mapping[str, Mapping[str, Any] | None]) -> None:
    """``knowledge_date.png``/``.svg`` and ``staleness.png``/``.svg`` when any model has a date."""

    blocks = {name: block for name, block in per_model.items() if block and block.get("curve")}
    if not blocks:
        return
    plots.saved(
        folder / KNOWLEDGE_PNG,
        "knowledge date",
        blocks,
        lambda target: plots.save_figure(plots.knowledge_date_figure(blocks), target),
    )
    plots.saved(
        folder / STALENESS_PNG,
        "staleness",
        blocks,
        lambda target: plots.save_figure(plots.staleness_figure(blocks), target),
    )


def write_score_report(folder: Path, model: str, block: Mapping[str, Any]) -> None:
    """``outdated score``'s report.md (the knowledge date and staleness) and its figures."""
    lines = [
        f"# Knowledge date of `{model}`",
        "",
        "Scored generations (`outdated score`); the verdict shares are in `summary.json` and `chronoprobe results`.",
        "",
        *knowledge_lines({model: block}),
    ]
    write_text_atomic(folder / "report.md", "\n".join(lines))
    write_knowledge_plots(folder, {model: block})
