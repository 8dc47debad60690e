"""Small Markdown helpers shared by every lens's report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def recorded_label(model: Mapping[str, Any]) -> str:
    """What a run's rows and summary call a model recorded in its provenance: the given name, else the spec."""
    return str(model.get("given_name") or model.get("spec"))


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


def provenance_section(provenance: dict[str, Any]) -> str:
    lines = ["## Provenance", ""]
    for model in provenance.get("models", []):
        named = f" ({model['given_name']})" if model.get("given_name") else ""
        lines.append(
            f"- model `{model['spec']}`{named}: {model['model_id']} @ {model['revision']}, backend {model['backend']}, "
            f"dtype {model.get('dtype')}, batch size {model.get('batch_size')}, chat template {model.get('chat_template')}"
        )
    if provenance.get("snapshot"):
        snap = provenance["snapshot"]
        lines.append(
            f"- knowledge snapshot: {snap.get('name')} retrieved {snap.get('retrieved')} from {snap.get('endpoint')}"
        )
    if provenance.get("judge"):
        lines.append(f"- judge: {provenance['judge']}")
    if provenance.get("seeds"):
        lines.append(f"- seeds: {provenance['seeds']}")
    lines.append(f"- decoding: `{provenance.get('decoding')}`")
    sampled_by = {m["spec"]: m["sampler"] for m in provenance.get("models", []) if m.get("sampler")}
    if sampled_by:
        hint = (
            " (`--sampler multinomial` reproduces releases before 0.2.0)"
            if "inverse-cdf" in sampled_by.values()
            else ""
        )
        lines.append(f"- sampler: {', '.join(f'{spec} {name}' for spec, name in sampled_by.items())}{hint}")
    versions = ", ".join(f"{k} {v}" for k, v in provenance.get("packages", {}).items())
    lines.append(f"- packages: {versions}")
    if provenance.get("threads"):
        lines.append(f"- CPU threads: {cpu_threads_text(provenance['threads'])}")
    lines.append(f"- created {provenance.get('created')} by `{provenance.get('command')}`")
    return "\n".join(lines) + "\n"
