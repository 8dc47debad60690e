"""The report card: one self-contained HTML page over any set of result folders.

Every number comes from :mod:`chronoprobe.reports.tidy_table`, the reader behind
``chronoprobe results``, so the card and the table never disagree. The page needs
nothing but itself: CSS is inline, figures are ``data:`` URIs (SVG in an ``<img>``, so
a figure cannot run script or fetch anything), there is no script, and a
Content-Security-Policy forbids every load that is not ``data:``.

Each number cell carries ``data-run``, ``data-lens``, ``data-dataset``, ``data-class``,
``data-model``, ``data-metric``, ``data-value`` (the exact float, ``repr``), ``data-n``,
``data-ci-low`` and ``data-ci-high``, so a test or a script can read the page back.

The card knows no lens: a section's title and line come from the lens's card part
(:class:`~chronoprobe.reports.lens_card.CardPart`: ``question``, ``about``, ``by_group``) found through the registry, the headline table from the records'
``headline`` flags, and the scale of a number from its ``unit``.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from chronoprobe import plugins
from chronoprobe.errors import ConfigError
from chronoprobe.records.publish import check_not_input, check_output_file, staged_files
from chronoprobe.reports.lens_card import card_of
from chronoprobe.reports.markdown import template_date_text
from chronoprobe.reports.metric_format import (
    FLAT,
    bounds,
    display_unit,
    no_variation,
    unit_note,
    unit_scale,
    value_text,
)
from chronoprobe.reports.tidy_table import ALL, Row, Run, find_runs, lens_order, run_rows
from chronoprobe.version import __version__

GENERATOR = f"chronoprobe {__version__} card"
GENERATOR_MARK = '<meta name="generator" content="chronoprobe '
"""What an earlier card starts with; any other file at the output path is never overwritten."""

METRIC_LABELS = {
    "soft_constraint_pct": "soft constraint",
    "harmonic_mean_pct": "harmonic mean of efficacy and paraphrase",
    "efficacy_pct": "efficacy",
    "paraphrase_pct": "paraphrase success",
    "average_pct": "per paraphrase",
    "inconsistency_pct": "inconsistent across paraphrases",
    "cp": "persuasion (CP)",
    "accuracy_context": "accuracy with context",
    "accuracy_no_context": "accuracy without context",
    "persuaded_pct": "persuaded by context",
    "stubborn_pct": "stubborn",
    "f1": "F1",
    "confidence": "first-token confidence",
    "update_success": "update success",
    "accuracy": "accuracy",
    "tolerant_accuracy": "accuracy (±1 class)",
    "macro_f1": "macro F1",
    "unparseable_rate": "unparseable",
    "knowledge_date": "knowledge date",
    "knowledge_date_naive": "knowledge date, naive argmax",
    "dated_pct": "gives a dated answer, current or not",
    "current_among_dated_pct": "current, of the facts it dates",
    "knowledge_cutoff": "knowledge cutoff: knows changes up to about",
    "knowledge_horizon": "knowledge horizon: latest change it knows",
    "claimed_cutoff": "cutoff it claims",
    "published_cutoff": "published cutoff",
    "freshness_half_life_years": "freshness half-life",
    "still_current_at_snapshot_pct": "known at the knowledge date, still current at the snapshot",
}
CARD = "a chronoprobe card"
"""What ``card --out`` may replace (the refusal names it)."""


def is_card(path: Path) -> bool:
    """A file this command wrote: its first lines carry our generator mark."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    return GENERATOR_MARK in head


def check_card_path(out: Path) -> None:
    """Refuse an output path that is a folder, cannot be written, or is a file that is not a card we wrote."""

    check_output_file(out, "--out", ours=is_card, what=CARD)


# --- numbers -----------------------------------------------------------------------------------


def method_names(runs: Iterable[Run]) -> dict[str, str]:
    """Parts of metric names by the names the runs' reports use (``ike-null`` -> ``IKE``), as each run recorded them."""
    names: dict[str, str] = {}
    for run in runs:
        names.update(run.summary.labels)
    return names


def _method_label(setting: str, methods: Mapping[str, str]) -> str:
    """``ike-null@50%`` -> ``IKE @50%``."""
    method, at, fraction = setting.partition("@")
    return methods.get(method, method) + (f" {at}{fraction}" if at else "")


def metric_label(metric: str, methods: Mapping[str, str] | None = None) -> str:
    """``zero-shot.with.accuracy`` -> ``accuracy · zero-shot, with context``; ``ike-null.efficacy_pct`` ->
    ``efficacy · IKE`` given the runs' ``methods`` names (their recorded labels)."""
    parts = metric.split(".")
    prefix = ""
    if parts[0] == "as_of":
        prefix, parts = "as of the --as-of date: ", parts[1:]
    if len(parts) >= 2 and parts[0] in METRIC_LABELS and parts[0].endswith("_pct"):  # a share per verdict
        return f"{prefix}{parts[1]} ({METRIC_LABELS[parts[0]]})"
    base = METRIC_LABELS.get(parts[-1], parts[-1].replace("_", " "))
    setting = parts[:-1]
    if len(setting) == 2:
        return f"{prefix}{base} · {setting[0]}, {setting[1]} context"
    if setting and methods is not None:
        return f"{prefix}{base} · {', '.join(_method_label(part, methods) for part in setting)}"
    if setting:
        return f"{prefix}{base} · {', '.join(setting)}"
    return prefix + base


def _attrs(row: Row) -> str:
    pairs = {
        "run": row.run,
        "lens": row.lens,
        "dataset": row.dataset,
        "class": row.metric.group,
        "model": row.model,
        "metric": row.metric.name,
        "value": "" if row.metric.value is None else repr(row.metric.value),
        "n": "" if row.metric.n is None else str(row.metric.n),
        "ci-low": "" if row.metric.ci_low is None else repr(row.metric.ci_low),
        "ci-high": "" if row.metric.ci_high is None else repr(row.metric.ci_high),
    }
    return " ".join(f'data-{key}="{escape(value, quote=True)}"' for key, value in pairs.items())


def _number_cell(row: Row | None) -> str:
    if row is None:
        return '<td class="num empty">–</td>'
    if row.metric.value is None:  # in words: a dash beside "n=0" reads as a number measured on nothing
        if not row.metric.n:
            return f'<td class="num" {_attrs(row)}><span class="v none">none</span></td>'
        n = f'<span class="n">from n={row.metric.n}</span>'
        return f'<td class="num" {_attrs(row)}><span class="v none">not estimable</span>{n}</td>'
    parts = [f'<span class="v">{escape(value_text(row.metric))}</span>']
    ends = bounds(row.metric)
    if no_variation(row.metric):
        parts.append(f'<span class="ci">{FLAT}</span>')
    elif ends is not None:
        parts.append(f'<span class="ci">[{escape(ends[0])}, {escape(ends[1])}]</span>')
    if row.metric.n is not None:
        parts.append(f'<span class="n">n={row.metric.n}</span>')
    parts.append(_bar(row))
    return f'<td class="num" {_attrs(row)}>{"".join(parts)}</td>'


def _bar(row: Row) -> str:
    """A track from 0 to the metric's maximum, the interval shaded and the value marked."""
    scale = unit_scale(display_unit(row.metric))
    if scale is None or row.metric.value is None:
        return ""

    def at(x: float) -> float:
        return round(100.0 * min(max(x / scale, 0.0), 1.0), 2)

    interval = ""
    if row.metric.ci_low is not None and row.metric.ci_high is not None:
        left, right = at(row.metric.ci_low), at(row.metric.ci_high)
        interval = f'<i class="iv" style="left:{left}%;width:{max(right - left, 0.0)}%"></i>'
    return (
        f'<span class="bar" aria-hidden="true">{interval}<i class="pt" style="left:{at(row.metric.value)}%"></i></span>'
    )


# --- layout ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    run: Run
    model: str


def _columns(runs: Sequence[Run]) -> list[Column]:
    return [Column(run, m.name) for run in runs for m in run.models]


def run_label(run: Run) -> str:
    """A run as the card names it beside its model: its folder's name and when it ran (``audit · 2026-11-30 14:02``)."""
    created = run.provenance.created
    when = created[:16].replace("T", " ") if len(created) >= 16 else created
    name = Path(run.label).name or run.label
    return f"{name} · {when}" if when else name


def run_anchor(run: Run) -> str:
    return "run-" + _slug(run.label)


def _column_head(column: Column, several_runs: bool) -> str:
    run = (
        f'<a class="run" href="#{run_anchor(column.run)}" title="{escape(column.run.label, quote=True)}">'
        f"{escape(run_label(column.run))}</a>"
        if several_runs
        else ""
    )
    return f'<th scope="col" class="model">{escape(column.model)}{run}</th>'


def _headline_keys(rows: Sequence[Row]) -> tuple[list[tuple[str, str]], bool]:
    """(class, metric) pairs the records flag as headline numbers, in the lens's order; and whether
    they span several classes (then the table shows the class)."""
    keys = list(dict.fromkeys((r.metric.group, r.metric.name) for r in rows if r.metric.headline))
    groups = {cls for cls, _ in keys}
    if groups - {ALL}:  # grouped by class: each class's numbers together
        keys = [(c, m) for c in dict.fromkeys(c for c, _ in keys) for c2, m in keys if c2 == c]
    return keys, bool(groups - {ALL})


def _table(
    keys: Sequence[tuple[str, str]],
    columns: Sequence[Column],
    rows: Sequence[Row],
    caption: str,
    show_class: bool,
    show_metric: bool = True,
    methods: Mapping[str, str] | None = None,
) -> str:
    index = {(r.run, r.model, r.metric.group, r.metric.name): r for r in rows}
    notes = {r.metric.name: unit_note(r.metric) for r in rows}
    several = len({c.run.label for c in columns}) > 1
    head = "".join(_column_head(c, several) for c in columns)
    lead = ('<th scope="col">class</th>' if show_class else "") + ('<th scope="col">metric</th>' if show_metric else "")
    body = []
    previous = None
    for cls, metric in keys:
        cls_cell, group = "", ""
        if show_class and cls != previous:  # the class names its group of rows once
            span = sum(1 for c, _ in keys if c == cls)
            kind = ' class="cls group"' if span > 1 else ' class="cls"'
            cls_cell = f'<th scope="rowgroup" rowspan="{span}"{kind}>{escape(cls)}</th>'
            group = ' class="group"' if span > 1 and previous is not None else ""
        previous = cls
        named = metric_label(metric, methods) + notes.get(metric, "")
        label = f'<th scope="row" class="metric">{escape(named)}</th>' if show_metric else ""
        cells = "".join(_number_cell(index.get((c.run.label, c.model, cls, metric))) for c in columns)
        body.append(f"<tr{group}>{cls_cell}{label}{cells}</tr>")
    return (
        f'<table class="numbers"><caption>{escape(caption)}</caption>'
        f"<thead><tr>{lead}{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _group_table(columns: Sequence[Column], rows: Sequence[Row], by_group: tuple[str, str] | None) -> str:
    """The metric a lens names (``CardPart.by_group``) for every class side by side, when there are two or more."""
    if by_group is None:
        return ""
    metric, caption = by_group
    classes = [c for c in dict.fromkeys(r.metric.group for r in rows if r.metric.name == metric) if c != ALL]
    if len(classes) < 2:
        return ""
    keys = [(c, metric) for c in classes]
    return _table(keys, columns, rows, caption, show_class=True, show_metric=False)


def _all_numbers(rows: Sequence[Row]) -> str:
    body = "".join(
        f"<tr><td>{escape(r.run)}</td><td>{escape(r.model)}</td><td>{escape(r.metric.group)}</td>"
        f'<td class="mono">{escape(r.metric.name + unit_note(r.metric))}</td>{_number_cell(r)}</tr>'
        for r in rows
    )
    return (
        f'<details class="all"><summary>All {len(rows)} numbers of this dataset</summary>'
        '<table class="numbers flat"><thead><tr><th>run</th><th>model</th><th>class</th><th>metric</th>'
        f"<th>value [95% CI] n</th></tr></thead><tbody>{body}</tbody></table></details>"
    )


def _data_uri(path: Path) -> str:
    mime = "image/svg+xml" if path.suffix == ".svg" else "image/png"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def png_display_size(data: bytes) -> tuple[int, int] | None:
    """A PNG's size in CSS pixels at the resolution it records (its ``pHYs`` chunk), so a figure drawn at
    160 dpi shows its text at the point size it was drawn with; None without a recorded resolution."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    at = 8
    while at + 8 <= len(data):
        length, kind = int.from_bytes(data[at : at + 4], "big"), data[at + 4 : at + 8]
        if kind == b"pHYs" and length == 9:
            body = data[at + 8 : at + 17]
            per_metre, unit = int.from_bytes(body[0:4], "big"), body[8]
            if unit != 1 or per_metre <= 0:
                return None
            dpi = per_metre * 0.0254
            return round(width * 96 / dpi), round(height * 96 / dpi)
        if kind in (b"IDAT", b"IEND"):
            return None
        at += 12 + length
    return None


def _figure(plot: Path) -> str:
    """One plot at the size it was drawn for (SVG: its points; PNG: its recorded resolution), never wider than the page."""
    size = ""
    if plot.suffix == ".png":
        shown = png_display_size(plot.read_bytes())
        if shown is not None:
            size = f' width="{shown[0]}" height="{shown[1]}"'
    return (
        f'<figure><img src="{_data_uri(plot)}" alt="{escape(plot.stem, quote=True)}"{size}>'
        f"<figcaption>{escape(plot.name)}</figcaption></figure>"
    )


def _figures(runs: Sequence[Run]) -> str:
    """Each run's plots in a block of their own, headed by its models and its label when there are several runs."""
    blocks = []
    several = len(runs) > 1
    for run in runs:
        if not run.plots:
            continue
        figures = "".join(_figure(plot) for plot in run.plots)
        head = ""
        if several:
            models = ", ".join(m.name for m in run.models)
            head = f'<h4 class="run-head">{escape(models)} <span class="run">{escape(run_label(run))}</span></h4>'
        blocks.append(
            f'<div class="run-plots" id="{run_anchor(run)}-plots">{head}<div class="figures">{figures}</div></div>'
        )
    return "".join(blocks)


def _dl(items: Iterable[tuple[str, Any]]) -> str:
    parts = []
    for key, value in items:
        if value in (None, "", [], {}):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"<dt>{escape(key)}</dt><dd>{escape(text)}</dd>")
    return f"<dl>{''.join(parts)}</dl>"


def _provenance(run: Run) -> str:
    p = run.provenance.recorded()  # shown as the folder records it
    packages = p.get("packages") or {}
    models = "".join(
        "<tr>"
        + "".join(
            f"<td>{escape(str(v))}</td>"
            for v in (
                m.name,
                m.spec,
                info.get("backend", ""),
                info.get("revision", ""),
                info.get("dtype") or "",
                info.get("chat_template", ""),
                template_date_text(m.info) if m.info else "",
            )
        )
        + "</tr>"
        for m, info in ((m, m.info.model_dump(mode="json", exclude_unset=True) if m.info else {}) for m in run.models)
    )
    model_table = (
        '<table class="prov"><thead><tr><th>name</th><th>spec</th><th>backend</th><th>revision</th>'
        f"<th>dtype</th><th>chat template</th><th>date told</th></tr></thead><tbody>{models}</tbody></table>"
    )
    facts = _dl(
        [
            ("folder", str(run.path)),
            ("written by", run.kind),
            ("command", p.get("command")),
            ("created", p.get("created")),
            ("packages", ", ".join(f"{k} {v}" for k, v in packages.items())),
            ("snapshot", p.get("snapshot")),
            ("judge", p.get("judge")),
            ("decoding", p.get("decoding")),
            ("seeds", p.get("seeds")),
            ("settings", p.get("extra")),
        ]
    )
    raw = escape(json.dumps(p, indent=2, ensure_ascii=False, default=str))
    return (
        f'<details class="prov" id="{run_anchor(run)}"><summary>Provenance: {escape(run_label(run))} '
        f'<span class="path">{escape(run.label)}</span></summary>{model_table}{facts}'
        f"<details><summary>as recorded (JSON)</summary><pre>{raw}</pre></details></details>"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _lens_text(lens: str) -> tuple[str, str, tuple[str, str] | None]:
    """The lens's own card text: its question, one line about it, and its by-group table, if any."""
    try:
        cls = plugins.load(lens)
    except ConfigError:  # a folder of a lens that is no longer installed: its name stands in
        return lens, "", None
    card = card_of(cls)
    return card.question or lens, card.about, card.by_group


def _lens_section(lens: str, runs: Sequence[Run], rows_of: Mapping[str, list[Row]]) -> str:
    title, about, by_group = _lens_text(lens)
    parts = [
        f'<section class="lens" id="{lens}"><h2>{escape(title)} <span class="tag">{lens}</span>'
        '<a class="top" href="#top">contents ↑</a></h2>',
        f'<p class="about">{escape(about)}</p>',
    ]
    datasets = list(dict.fromkeys(r.dataset for r in runs))
    for dataset in datasets:
        group = [r for r in runs if r.dataset == dataset]
        rows = [row for run in group for row in rows_of[run.label]]
        columns = _columns(group)
        parts.append(f'<article class="dataset" id="{lens}-{_slug(dataset)}"><h3>{escape(dataset)}</h3>')
        keys, by_class = _headline_keys(rows)
        if keys:
            methods = method_names(group) or None
            caption = "Headline numbers, 95% intervals"
            parts.append(_table(keys, columns, rows, caption, show_class=by_class, methods=methods))
        else:
            parts.append('<p class="none">No headline numbers in these folders.</p>')
        parts.append(_group_table(columns, rows, by_group))
        parts.append(_figures(group))
        parts.append(_all_numbers(rows))
        parts.extend(_provenance(run) for run in group)
        parts.append("</article>")
    parts.append("</section>")
    return "".join(parts)


def _contents(runs: Sequence[Run]) -> str:
    """The table of contents: each lens, its datasets, and each run (models, folder, when) with links to its
    plots and its provenance."""
    items = []
    for lens in sorted({r.lens for r in runs}, key=lens_order):
        title, _, _ = _lens_text(lens)
        mine = [r for r in runs if r.lens == lens]
        datasets = []
        for dataset in dict.fromkeys(r.dataset for r in mine):
            entries = []
            for run in (r for r in mine if r.dataset == dataset):
                plots = f' · <a href="#{run_anchor(run)}-plots">plots</a>' if run.plots else ""
                entries.append(
                    f"<li><b>{escape(', '.join(m.name for m in run.models))}</b> "
                    f'<span class="run">{escape(run_label(run))}</span>{plots} · '
                    f'<a href="#{run_anchor(run)}">provenance</a> <span class="path">{escape(run.label)}</span></li>'
                )
            datasets.append(
                f'<li><a href="#{lens}-{_slug(dataset)}">{escape(dataset)}</a><ul>{"".join(entries)}</ul></li>'
            )
        items.append(
            f'<li><a href="#{lens}">{escape(title)}</a> <span class="tag">{escape(lens)}</span>'
            f"<ul>{''.join(datasets)}</ul></li>"
        )
    return f'<nav class="toc" aria-label="contents"><h2>Contents</h2><ol>{"".join(items)}</ol></nav>'


def _intro(paragraphs: Sequence[tuple[str, str]]) -> str:
    """One paragraph per model, in plain words, above the sections (``chronoprobe check``'s answer)."""
    if not paragraphs:
        return ""
    body = "".join(f"<p><b>{escape(name)}.</b> {escape(text)}</p>" for name, text in paragraphs)
    return f'<section class="answer" id="answer"><h2>In plain words</h2>{body}</section>'


def render_card(
    runs: Sequence[Run],
    title: str = "chronoprobe report card",
    now: dt.datetime | None = None,
    intro: Sequence[tuple[str, str]] = (),
    extra: Sequence[str] = (),
) -> str:
    """The card's HTML for ``runs`` (any mix of lenses), sections in lens order; ``intro`` is
    (model name, paragraph) pairs shown first, ``extra`` sections of HTML after them (the check's paired
    comparison: :mod:`chronoprobe.reports.compare_card`)."""
    if not runs:
        raise ConfigError("card", "no result folders to show")
    rows_of = {run.label: run_rows(run) for run in runs}
    stamp = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0).isoformat()
    lenses = sorted({r.lens for r in runs}, key=lens_order)
    sections = [_lens_section(lens, [r for r in runs if r.lens == lens], rows_of) for lens in lenses]
    nav = " ".join(f'<a href="#{lens}">{lens}</a>' for lens in lenses) + ' <a href="#top">contents</a>'
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head>{GENERATOR_MARK}{escape(__version__)} card">\n'
        '<meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        "style-src 'unsafe-inline'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f'<nav class="bar">{nav}</nav><header id="top"><h1>{escape(title)}</h1>'
        f'<p class="meta">Generated {escape(stamp)} by chronoprobe {escape(__version__)} from {len(runs)} '
        f"result folder{'s' if len(runs) != 1 else ''}. Each number reads <b>value</b> [95% interval] n: "
        "Wilson intervals for rates, a seeded bootstrap over items for means.</p>"
        f"{_contents(runs)}</header><main>{_intro(intro)}{''.join(extra)}{''.join(sections)}</main>"
        "<footer>chronoprobe report card: self-contained, works offline. "
        "The same numbers as <code>chronoprobe results</code>.</footer></body></html>\n"
    )


CSS = """
:root{--ink:#1d2330;--mute:#5d6678;--line:#dfe3ea;--bg:#f6f7f9;--card:#fff;--accent:#2f5fd0;--band:#c9d6f5}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"DejaVu Sans",sans-serif}
header,main,footer{max-width:1180px;margin:0 auto;padding:0 24px}
header{padding-top:28px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:0 0 2px;display:flex;align-items:center;gap:10px}
h3{font-size:16px;margin:18px 0 8px;color:var(--mute);font-weight:600}
nav a{margin-right:14px;color:var(--accent);text-decoration:none;font-weight:600}
nav.bar{position:sticky;top:0;z-index:2;background:rgba(246,247,249,.96);border-bottom:1px solid var(--line);
padding:8px 24px;font-size:14px}
nav.toc{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 20px;margin:14px 0 4px}
nav.toc h2{font-size:16px;margin:0 0 6px}
nav.toc ol{margin:0;padding-left:20px}
nav.toc ul{margin:2px 0 6px;padding-left:18px;font-size:13.5px}
nav.toc li{margin:2px 0}
nav.toc ul ul a{font-weight:500}
.run{color:var(--mute);font-weight:400;font-size:12.5px}
.path{color:var(--mute);font-weight:400;font-size:11.5px;font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace}
a.top{margin-left:auto;font-size:12.5px;font-weight:500;color:var(--accent);text-decoration:none}
[id]{scroll-margin-top:48px}
.meta,.about,footer{color:var(--mute);font-size:13.5px}
.tag{font-size:12px;font-weight:600;color:var(--accent);background:#e8eefc;border-radius:10px;padding:1px 9px}
section.answer{background:#fffdf4;border:1px solid #eadfb5;border-radius:10px;padding:14px 22px;margin:22px 0}
section.answer p{margin:8px 0;max-width:900px}
svg.forest{max-width:760px;display:block;margin:6px 0}svg.forest .label{font-size:12px;fill:var(--ink)}
svg.forest .axis{font-size:11px;fill:var(--mute)}p.rests{color:var(--mute);margin:2px 0 4px}
section.lens{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:20px 22px;margin:22px 0;
box-shadow:0 1px 2px rgba(20,30,50,.05)}
table{border-collapse:collapse;width:auto;max-width:100%}
th,td{padding:6px 12px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{font-size:12.5px;text-transform:uppercase;letter-spacing:.03em;color:var(--mute);border-bottom:2px solid var(--line)}
caption{text-align:left;font-size:13px;color:var(--mute);padding-bottom:6px}
table.numbers{margin:6px 0 14px}
th.model{text-transform:none;font-size:14px;color:var(--ink);min-width:150px}
th .run{display:block;font-weight:400;font-size:11.5px;color:var(--mute);text-decoration:none}
th.metric,th.cls{font-weight:500}
th.cls{font-weight:500}
th.cls.group{font-weight:600;border-right:1px solid var(--line)}
tr.group>*{border-top:2px solid var(--line)}
td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
td.num .v{font-weight:700;font-size:15px}
td.num .v.none{font-weight:400;color:var(--mute)}
td.num .ci{color:var(--mute);font-size:12.5px;margin-left:6px}
td.num .n{color:var(--mute);font-size:11.5px;margin-left:6px}
td.empty{color:var(--mute)}
.bar{display:block;position:relative;height:6px;margin-top:5px;background:#eef0f4;border-radius:3px;width:100%;min-width:120px}
.bar .iv{position:absolute;top:0;height:6px;background:var(--band);border-radius:3px}
.bar .pt{position:absolute;top:-2px;width:4px;height:10px;margin-left:-2px;background:var(--accent);border-radius:2px}
table.flat td.num .bar{display:none}
.mono,code,pre{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,monospace;font-size:12.5px}
.run-plots{margin:12px 0 16px}
h4.run-head{font-size:14px;margin:14px 0 6px;padding-bottom:4px;border-bottom:1px solid var(--line)}
.figures{display:flex;flex-wrap:wrap;gap:14px;margin:8px 0 12px;align-items:flex-start}
figure{margin:0;border:1px solid var(--line);border-radius:8px;padding:8px;background:#fff;max-width:100%}
figure img{display:block;max-width:100%;height:auto}
figcaption{font-size:12px;color:var(--mute);margin-top:4px}
details{margin:8px 0;font-size:13.5px}
details summary{cursor:pointer;color:var(--accent);font-weight:600}
details.prov dl{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;margin:8px 0}
details.prov dt{color:var(--mute)}
details.prov dd{margin:0;word-break:break-word}
table.prov{font-size:12.5px;margin-top:8px}
pre{background:#f3f4f7;border-radius:6px;padding:10px;overflow:auto;max-height:420px}
footer{padding:8px 24px 30px}
"""


def write_card(
    dirs: Sequence[Path],
    out: Path,
    title: str = "chronoprobe report card",
    warn: Callable[[str], None] | None = None,
) -> list[Run]:
    """The card of every run folder under ``dirs`` (searched as ``chronoprobe results`` does), written to ``out``
    whole; only an earlier card there is replaced, never an input. ``warn`` gets each folder skipped, before the
    page is drawn. Returns the runs shown."""

    check_card_path(out)
    found = find_runs(dirs)
    check_not_input(out, [("RUN_DIR", run.path) for run in found.runs])
    for warning in found.warnings:
        if warn is not None:
            warn(warning)
    page = render_card(found.runs, title=title)
    with staged_files(out, ours=is_card, what=CARD) as staging:
        (staging / out.name).write_text(page, encoding="utf-8")
    return found.runs
