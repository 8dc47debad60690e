"""What a check writes beside its lens folders: ``check.json``, ``check.md`` and one ``card.html``.

Nothing here depends on how the check got there (which lenses ran now, which were kept from a
killed run, how many calls the cache answered), so a resumed check ends with the same files as
an uninterrupted one; those facts are printed and returned instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from chronoprobe.checkup.thresholds import NOTHING_SHARED, GateResult
from chronoprobe.contract.lens import Budget, Workload
from chronoprobe.io import write_json_atomic, write_text_atomic
from chronoprobe.records.runlog import Metric, Summary
from chronoprobe.reports.card import render_card
from chronoprobe.reports.compare_card import comparison_section
from chronoprobe.reports.markdown import table
from chronoprobe.reports.metric_format import quote, unit_note
from chronoprobe.reports.plain_words import change_quote
from chronoprobe.reports.tidy_table import read_run

if TYPE_CHECKING:
    from chronoprobe.reports.compare import Comparison

CHECK_KIND = "check"
"""The check folder's marker kind."""
CHECK_JSON = "check.json"
CHECK_MD = "check.md"
CARD_HTML = "card.html"
CHECK_FORMAT = "chronoprobe-check/1"


class LensEntry(BaseModel):
    """One lens of the check."""

    lens: str
    question: str = ""
    status: Literal["done", "skipped"]
    reason: str = ""
    """Why it was skipped."""
    folder: str | None = None
    """Its run folder, relative to the check folder."""
    fingerprint: str = ""
    workload: Workload | None = None


class GateEntry(BaseModel):
    """One threshold judged for one model."""

    threshold: str
    model: str
    passed: bool
    line: str
    metric: Metric | None = None

    @classmethod
    def of(cls, result: GateResult) -> GateEntry:
        return cls(
            threshold=result.threshold.name,
            model=result.model,
            passed=result.passed,
            line=result.line(),
            metric=result.metric,
        )


class CheckRecord(BaseModel):
    """``check.json``: the budget, the models, each lens, the paragraph per model and the gate."""

    format: str = CHECK_FORMAT
    budget: Budget
    models: list[str]
    """The ``--model`` values, credentials removed."""
    complete: bool = False
    """False while the check runs (and after a kill): the lenses listed so far are done."""
    lenses: list[LensEntry] = []
    names: dict[str, str] = {}
    """Model key -> its name in the paragraphs."""
    paragraphs: dict[str, list[str]] = {}
    """Model key -> the sentences of its paragraph."""
    strict: bool = False
    gate: list[GateEntry] = []
    comparisons: list[str] = []
    """The paired verdicts between the check's models (two or more)."""
    baseline: str | None = None
    """``--baseline``: the earlier check compared with."""
    against_baseline: list[str] = []
    """The sentences of each model's comparison with the baseline."""

    def entry(self, lens: str) -> LensEntry | None:
        return next((e for e in self.lenses if e.lens == lens), None)


def read_record(folder: Path) -> CheckRecord | None:
    """The folder's ``check.json``, or None when it has none that reads."""
    try:
        return CheckRecord.model_validate_json((folder / CHECK_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_record(folder: Path, record: CheckRecord) -> None:
    write_json_atomic(folder / CHECK_JSON, record.model_dump(mode="json"))


def paragraph(name: str, sentences: Sequence[str]) -> str:
    body = " ".join(sentences) if sentences else "No lens of this check had anything to say about it."
    return f"**{name}.** {body}"


def _headlines(summary: Summary, names: Mapping[str, str]) -> list[list[str]]:
    return [
        [m.name + unit_note(m), m.group, names.get(m.model, m.model), quote(m)]
        for m in summary.metrics
        if m.headline and m.value is not None
    ]


def _gate_value(entry: GateEntry) -> str:
    """The number a threshold was judged on: a change against the baseline in points or years."""
    if entry.metric is None:
        return NOTHING_SHARED if NOTHING_SHARED in entry.line else "not measured"
    return change_quote(entry.metric) if entry.metric.name.endswith(".delta") else quote(entry.metric)


def check_markdown(record: CheckRecord, summaries: Mapping[str, Summary], questions: Mapping[str, str]) -> str:
    """``check.md``: the paragraphs, the gate, the lenses and their headline numbers."""
    models = ", ".join(record.names.get(m, m) for m in record.paragraphs) or ", ".join(record.models)
    lines = [f"# chronoprobe check: {models} ({record.budget} budget)", "", "## In plain words", ""]
    for key, sentences in record.paragraphs.items():
        lines += [paragraph(record.names.get(key, key), sentences), ""]
    if record.comparisons:
        lines += [paragraph("Paired", record.comparisons), ""]
    if record.baseline is not None:
        lines += [f"**Against the baseline {record.baseline}.**", ""]
        lines += [f"- {line}" for line in record.against_baseline] + [""]
    if record.gate:
        how = (
            "point values (--strict)"
            if record.strict
            else "a threshold fails only when its whole 95% interval misses it"
        )
        lines += [f"## Gate ({how})", ""]
        lines.append(
            table(
                ["threshold", "model", "value", "result"],
                [
                    [
                        g.threshold,
                        g.model,
                        _gate_value(g),
                        "holds" if g.passed else "fails",
                    ]
                    for g in record.gate
                ],
            )
        )
        lines.append("")
    lines += ["## Lenses", ""]
    rows = []
    for entry in record.lenses:
        where = f"[{entry.folder}/]({entry.folder}/report.md)" if entry.folder else "–"
        shown = entry.reason if entry.status == "skipped" else "done"
        rows.append([entry.lens, questions.get(entry.lens, entry.question), shown, where])
    lines += [table(["lens", "question", "status", "folder"], rows), ""]
    for entry in record.lenses:
        summary = summaries.get(entry.lens)
        if summary is None:
            continue
        headline = _headlines(summary, {**record.names, **summary.names})
        if headline:
            lines += [
                f"### {entry.lens}: headline numbers",
                "",
                table(["metric", "class", "model", "value"], headline),
                "",
            ]
    lines += [
        "Each lens folder is a normal run folder: `chronoprobe results`, `chronoprobe card` and "
        "`chronoprobe.load` read it. `card.html` shows every lens on one page.",
        "",
    ]
    return "\n".join(lines)


def write_outputs(
    folder: Path,
    record: CheckRecord,
    summaries: Mapping[str, Summary],
    questions: Mapping[str, str],
    title: str,
    compared: Sequence[Comparison] = (),
) -> None:
    """``check.md``, ``card.html`` (with a section of the paired ``compared``) and (last, with ``complete``)
    ``check.json``."""

    write_text_atomic(folder / CHECK_MD, check_markdown(record, summaries, questions))
    runs = [read_run(folder / e.folder, run=e.folder) for e in record.lenses if e.folder]
    found = [run for run in runs if run is not None]
    if found:
        intro = [(record.names.get(key, key), " ".join(sentences)) for key, sentences in record.paragraphs.items()]
        extra = [comparison_section(compared)] if compared else []
        write_text_atomic(folder / CARD_HTML, render_card(found, title=title, intro=intro, extra=extra))
    write_record(folder, record)
