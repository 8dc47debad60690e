"""Publish judged answers from elsewhere as an ``outdated run`` folder, the one ``runner.execute`` writes.

The summary, the report files and ``run.json``/``items.jsonl`` are built by the outdated lens's own
functions, so a harness's answers read back exactly as our own runs do. What differs is recorded:
the harness, its files and its decoding settings go into the provenance, and each model's
``backend`` names the harness.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronoprobe.knowledge.types import Snapshot
from chronoprobe.lenses.outdated.audit import AuditConfig, ResponseRecord
from chronoprobe.lenses.outdated.knowledge_date import rows_knowledge_summary
from chronoprobe.lenses.outdated.lens import OutdatedLens
from chronoprobe.lenses.outdated.metric_records import run_summary
from chronoprobe.lenses.outdated.summary import ALL, summarize_model
from chronoprobe.models.base import BackendInfo
from chronoprobe.provenance import build_provenance
from chronoprobe.records.runlog import Run, write_run_log


class HarnessRun(Run):
    """A judged harness log as an ``outdated run`` folder, in memory: the run and the outdated summary layout its
    report is written from (what :attr:`OutdatedLens.layout` holds after a run)."""

    def __init__(self, run: Run, layout: dict[str, Any]) -> None:
        super().__init__(
            run.path, run.lens, run.summary, kind=run.kind, config=run.config, provenance=run.provenance, rows=run.rows
        )
        self.summary_layout = layout


def _backend_info(model: str, harness: str, generation: Mapping[str, Any]) -> BackendInfo:
    # inspect's chat models always apply a template; lm-eval only with --apply_chat_template.
    chat = harness == "inspect_ai" or bool(generation.get("apply_chat_template"))
    return BackendInfo(
        spec=model,
        backend=harness,
        model_id=model,
        revision="as logged by the harness",
        chat_template=chat,
        is_chat_model=chat,
        name=model,
    )


def outdated_run(
    out: Path,
    records: Sequence[ResponseRecord],
    gold: Snapshot,
    *,
    no_gold: Mapping[str, str],
    use_aliases: bool,
    as_of: dt.date | None,
    source: Mapping[str, Any],
    cutoffs: Mapping[str, str] | None = None,
    deployed_at: str | None = None,
) -> HarnessRun:
    """The ``outdated run`` folder that ``out`` will hold, in memory: summary, config, provenance and rows.

    ``cutoffs``: published knowledge cutoffs by model (as the records name it); ``deployed_at``: the
    date to forecast staleness from, as ``outdated run --cutoff/--deployed-at`` give them.
    """
    cutoffs = dict(cutoffs or {})
    models = list(dict.fromkeys(r.model for r in records))
    per_model: dict[str, dict[str, Any]] = {}
    for model in models:
        per_model[model] = summarize_model(
            [r for r in records if r.model == model], with_as_of=as_of is not None, no_gold=no_gold
        )
        per_model[model]["name"] = model
        per_model[model]["knowledge_date"] = rows_knowledge_summary(
            [r for r in records if r.model == model], gold, cutoff=cutoffs.get(model), deployed_at=deployed_at
        )
    when = as_of.isoformat() if as_of else None
    layout = {"as_of": when, "models": per_model, "overall_key": ALL}
    config = AuditConfig(
        models=(),  # no chronoprobe model was asked: the harness's models are in the provenance
        snapshot=gold.name,
        as_of=as_of,
        aliases=use_aliases,
        cutoff=cutoffs,
        deployed_at=deployed_at,
    )
    generation: Mapping[str, Any] = source.get("harness_generation") or {}
    harness = str(source.get("harness", "harness"))
    provenance = build_provenance(
        [],
        decoding={"as logged": dict(generation)},
        snapshot={
            "name": gold.name,
            "retrieved": str(gold.retrieved),
            "endpoint": gold.endpoint,
            "query_hash": gold.query_hash,
        },
        judge="string match on Wikidata labels" + (" and aliases" if use_aliases else " (no aliases)"),
        extra={**source, "facts": len({r.fact_id for r in records}) + len(no_gold), "as_of": when},
        described=[_backend_info(m, harness, generation.get(m) or {}) for m in models],
    )
    summary = run_summary(layout, provenance.snapshot)
    run = Run(
        Path(out),
        OutdatedLens.name,
        summary,
        kind=OutdatedLens.kind,
        config=config,
        provenance=provenance,
        rows=records,
    )
    return HarnessRun(run, layout)


def write_outdated_run(folder: Path, run: HarnessRun) -> None:
    """The report, plots and run log of ``run`` in ``folder`` (a staging folder), as ``outdated run`` writes them."""
    config = run.config
    assert isinstance(config, AuditConfig), "an outdated run's config"
    lens = OutdatedLens(config)
    lens.layout = run.summary_layout
    lens.report(folder, run.rows, run.summary, run.provenance)
    write_run_log(
        folder,
        lens=run.lens,
        kind=run.kind,
        config=config,
        summary=run.summary,
        provenance=run.provenance,
        rows=run.rows,
    )
