"""Small Markdown helpers shared by every lens's report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chronoprobe.models.base import BackendInfo
from chronoprobe.models.chat_dates import told_text
from chronoprobe.provenance import Provenance


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 1) -> str:
    def cell(value: Any) -> str:
        return fmt(value, digits).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def cpu_threads_text(record: dict[str, Any]) -> str:
    """``torch ran with 2 (policy auto, 2 cores)``, from provenance's ``threads``."""
    counts = record.get("torch") or []
    used = f"torch ran with {', '.join(str(n) for n in counts)}" if counts else "no local model ran on the CPU"
    return f"{used} (policy {record.get('policy')}, {record.get('cores')} cores)"


def _producer_text(producer: Mapping[str, Any] | None) -> str:
    if not producer:
        return "a release that did not record what produced them"
    text = str(producer.get("backend"))
    if producer.get("version"):
        text += f" ({producer['version']})"
    if producer.get("engine"):
        text += f" on engine {producer['engine']}"
    parts = [f"on {producer['device']}" if producer.get("device") else None]
    parts.append(f"in {producer['dtype']}" if producer.get("dtype") else None)
    parts.append(
        f"at {producer['threads']} thread{'s' if producer['threads'] != 1 else ''}" if producer.get("threads") else None
    )
    details = " ".join(p for p in parts if p)
    batch = f", batch {producer['batch_size']}" if producer.get("batch_size") else ""
    return f"{text} {details}{batch}" if details else text + batch


def _written(origin: Mapping[str, Any]) -> str:
    first, last = str(origin.get("written_first", ""))[:10], str(origin.get("written_last", ""))[:10]
    return first if first == last else f"{first} to {last}"


def answers_text(record: Mapping[str, Any]) -> str:
    """``390 answers asked for: 390 from the call cache, 0 computed, written 2026-12-01 by hf (torch 2.5.1, ...) on cpu in float32 at 2 threads, batch 64``."""
    origins = record.get("origins") or []
    head = f"{record.get('answers')} answers, {record.get('from_cache')} from the call cache"
    if record.get("computed") is not None:  # absent in files written before it was recorded
        head = (
            f"{record['answers']} answers asked for: {record.get('from_cache')} from the call cache, "
            f"{record['computed']} computed"
        )
    if len(origins) == 1:
        return f"{head}, written {_written(origins[0])} by {_producer_text(origins[0].get('producer'))}"
    parts = [f"{o.get('answers')} written {_written(o)} by {_producer_text(o.get('producer'))}" for o in origins]
    return f"{head}: " + "; ".join(parts)


def template_date_text(model: BackendInfo) -> str:
    """The day the model's chat template was told and what in it takes a date, in words (models/chat_dates.py)."""
    return told_text(
        model.template_date, model.template_takes_date, chat_template=model.chat_template, backend=model.backend
    )


def provenance_section(provenance: Provenance) -> str:
    lines = ["## Provenance", ""]
    for model in provenance.models:
        named = f" ({model.given_name})" if model.given_name else ""
        lines.append(
            f"- model `{model.spec}`{named}: {model.model_id} @ {model.revision}, backend {model.backend}, "
            f"dtype {model.dtype}, batch size {model.batch_size or model.extra.get('batch_size')}, "
            f"chat template {model.chat_template} ({template_date_text(model)})"
        )
    if provenance.snapshot:
        snap = provenance.snapshot
        lines.append(
            f"- knowledge snapshot: {snap.get('name')} retrieved {snap.get('retrieved')} from {snap.get('endpoint')}"
        )
    if provenance.judge:
        lines.append(f"- judge: {provenance.judge}")
    if provenance.seeds:
        lines.append(f"- seeds: {provenance.seeds}")
    lines.append(f"- decoding: `{provenance.decoding}`")
    sampled_by = {m.spec: m.sampler for m in provenance.models if m.sampler}
    if sampled_by:
        hint = (
            " (`--sampler multinomial` reproduces releases before 0.2.0)"
            if "inverse-cdf" in sampled_by.values()
            else ""
        )
        lines.append(f"- sampler: {', '.join(f'{spec} {name}' for spec, name in sampled_by.items())}{hint}")
    versions = ", ".join(f"{k} {v}" for k, v in provenance.packages.items())
    lines.append(f"- packages: {versions}")
    if provenance.threads:
        lines.append(f"- CPU threads: {cpu_threads_text(provenance.threads.model_dump(mode='json'))}")
    for label, record in provenance.answers.items():
        lines.append(f"- answers of `{label}`: {answers_text(record.model_dump(mode='json'))}")
    lines.append(f"- created {provenance.created} by `{provenance.command}`")
    return "\n".join(lines) + "\n"
