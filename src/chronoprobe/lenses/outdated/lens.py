"""The outdated lens (DyKnow) in the shared :class:`~chronoprobe.contract.lens.Lens` shape."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text

from chronoprobe.cache import CachedModel
from chronoprobe.contract.check_part import CheckPart
from chronoprobe.contract.lens import CheckContext, Lens, Metric, ProgressFactory, RunRecipe, Summary, Workload
from chronoprobe.contract.sizing import Sizing
from chronoprobe.knowledge.types import Fact, Snapshot
from chronoprobe.lenses.outdated import metric_records
from chronoprobe.lenses.outdated.audit import (
    AuditConfig,
    ResponseRecord,
    audit_facts,
    facts_without_gold,
    load_gold,
    run_audit,
)
from chronoprobe.lenses.outdated.claimed_cutoff import ask_cutoff
from chronoprobe.lenses.outdated.compare import comparable
from chronoprobe.lenses.outdated.cutoffs import parse_deployed_at
from chronoprobe.lenses.outdated.knowledge_date import check_deployed_at, rows_knowledge_summary
from chronoprobe.lenses.outdated.knowledge_report import knowledge_console_lines
from chronoprobe.lenses.outdated.plain_words import sentences
from chronoprobe.lenses.outdated.prompts import CUTOFF_QUESTIONS
from chronoprobe.lenses.outdated.report import write_report_files
from chronoprobe.lenses.outdated.summary import ALL, summarize_model
from chronoprobe.lenses.summary_layout import KeepsLayout
from chronoprobe.metrics.paired import Comparable
from chronoprobe.provenance import Provenance
from chronoprobe.records.runlog import Run
from chronoprobe.reports.lens_card import CardPart
from chronoprobe.reports.markdown import template_date_text
from chronoprobe.reports.metric_format import cell

VERDICT_ORDER = ("up-to-date", "outdated", "irrelevant", "ambiguous")


def share_text(verdict: str, metric: Metric | None) -> str:
    """``up-to-date 3.8% [1.7, 8.7]``: a soft-constraint share with its 95% interval."""
    if metric is None or metric.value is None:
        return f"{verdict} –"
    return f"{verdict} {cell(metric, with_n=False)}"


def check_options(context: CheckContext) -> dict[str, Any]:
    """What a check gives the lens besides its size: its own options (``--live``, ``--snapshot`` ...)."""
    options: dict[str, Any] = {"live": context.live, "snapshot": context.snapshot}
    if context.endpoint is not None:
        options["endpoint"] = context.endpoint
    if context.deployed_at is not None:
        options["deployed_at"] = parse_deployed_at(context.deployed_at)
    return options


class OutdatedLens(KeepsLayout, Lens[ResponseRecord]):
    """Ask every fact's paraphrases, judge each answer against the pinned (or live) Wikidata answers."""

    name = "outdated"
    kind = "outdated run"
    row_type = ResponseRecord
    config_type = AuditConfig
    config: AuditConfig
    old_rows_file = "responses.jsonl"
    card = CardPart(
        question="Is the model outdated?",
        about="DyKnow: answers judged against Wikidata, per fact over three paraphrases.",
        by_group=("soft_constraint_pct.up-to-date", "Up-to-date share per category (soft constraint)"),
        words=sentences,
    )
    checkup = CheckPart(
        # Every budget asks the whole audit: 130 facts, three paraphrases each, the cheapest lens.
        sizes={"quick": {}, "standard": {}, "full": {}},
        # The share of facts answered up to date, over the facts asked (``--limit``); replayed from the cache to
        # measure.
        sizing=Sizing(
            metric="soft_constraint_pct.up-to-date",
            option="limit",
            unit="facts",
            more="`chronoprobe catalogue build` makes more",
            measured=True,
        ),
        metric_patterns=(
            "soft_constraint_pct.*",
            "average_pct.*",
            "inconsistency_pct",
            "dated_pct",
            "current_among_dated_pct",
            "as_of.soft_constraint_pct.*",
            "as_of.average_pct.*",
            "as_of.inconsistency_pct",
            "as_of.dated_pct",
            "as_of.current_among_dated_pct",
            "knowledge_date",
            "knowledge_date_naive",
            "knowledge_cutoff",
            "knowledge_horizon",
            "claimed_cutoff",
            "published_cutoff",
            "freshness_half_life_years",
            "still_current_at_snapshot_pct",
            "deployed_at.stale_pct",
            "deployed_at.stale_*m_pct",
        ),
        options=check_options,
    )

    def __init__(self, config: AuditConfig) -> None:
        super().__init__(config)
        self.facts: list[Fact] = []
        self.gold: Snapshot | None = None
        self.no_gold: dict[str, str] = {}
        self.claims: dict[str, dict[str, Any]] = {}
        """Model label -> what it said its knowledge cutoff is (``claimed_cutoff``), filled by :meth:`run`."""

    def load(self, fetch_progress: Callable[[int], None] | None = None) -> None:
        """Facts and gold answers; with ``live``, the Wikidata query runs here (``fetch_progress`` counts rows,
        else :attr:`load_progress` shows it)."""

        if fetch_progress is None and self.config.live and self.load_progress is not None:
            fetch_progress = self.load_progress("querying Wikidata", None)
        self.facts, self.gold = load_gold(self.config, fetch_progress=fetch_progress)
        check_deployed_at(self.config.deployed_at, self.gold.answers, f"snapshot {self.gold.name}")
        self.no_gold = facts_without_gold(self.facts, self.gold)  # not asked, outside every rate
        self.loaded = True

    def item_units(self) -> set[str]:
        """The facts it will ask (those with a gold answer), by their ids."""
        if not self.loaded:
            self.load()
        return {f.fact_id for f in self.facts if f.fact_id not in self.no_gold}

    def record_classes(self) -> list[str]:
        """``all`` and every category of the facts it will ask (those with a gold answer)."""
        if not self.loaded:
            self.load()
        return [ALL, *sorted({f.category for f in self.facts if f.fact_id not in self.no_gold})]

    def template_as_of(self) -> dt.date:
        """The day the gold describes: ``--as-of``, else the snapshot's retrieval date."""
        assert self.gold is not None, "load() first"
        return self.config.as_of or self.gold.retrieved

    def notices(self) -> list[str]:
        assert self.gold is not None, "load() first"
        lines = [f"live answers saved as snapshot {self.gold.name}"] if self.config.live else []
        if self.no_gold:
            lines.append(f"no gold answer for {len(self.no_gold)} fact(s) in {self.gold.name}: left out of every rate")
        return [*lines, *super().notices()]

    def present(self, run: Run) -> list[str]:
        """Per model: the soft-constraint shares with their intervals, the facts judged, the new calls, its knowledge date."""

        calls = run.provenance.model_calls_made or {}
        judged, missing = len(self.facts) - len(self.no_gold), len(self.no_gold)
        lines = []
        for spec, numbers in metric_records.read_run_detail(self._layout())["models"].items():
            found = {m.name: m for m in run.summary.metrics if m.model == spec and m.group == "all"}
            shares = "  ".join(share_text(v, found.get(f"soft_constraint_pct.{v}")) for v in VERDICT_ORDER)
            lines.append(
                f"{spec}: {shares} (soft constraint, 95% Wilson intervals; {judged} facts judged, "
                f"{missing} without gold; {calls.get(spec)} new model calls)"
            )
            known = knowledge_console_lines(spec, numbers.get("knowledge_date"), numbers.get("claimed_cutoff"))
            lines += [Text.from_markup(line).plain for line in known]
            lines += [
                f"{spec}: chat template {template_date_text(m)}"
                for m in run.provenance.models
                if m.label == spec and m.template_takes_date
            ]
        return lines

    def workload(self) -> Workload:
        """Every paraphrase of every fact with gold answers (a live run learns which only when it queries)."""
        if not self.loaded and not self.config.live:
            self.load()
        asked = [f for f in self.facts if f.fact_id not in self.no_gold] if self.loaded else audit_facts(self.config)
        claims = len(CUTOFF_QUESTIONS) if self.config.claimed_cutoff else 0
        return Workload(items=len(asked), unit="facts", calls=sum(len(f.templates) for f in asked) + claims)

    @classmethod
    def comparable(cls, run: Run, model: str) -> Comparable:
        """Per fact its soft-constraint verdict and inconsistency, per paraphrase its verdict (clustered on the
        fact), per category and overall; from an ``outdated run`` or an ``outdated score`` folder."""

        return comparable(run, model)

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[ResponseRecord]:
        assert self.gold is not None, "load() first"
        claims = len(CUTOFF_QUESTIONS) if self.config.claimed_cutoff else 0
        total = sum(len(f.templates) for f in self.facts if f.fact_id not in self.no_gold) + claims
        tick = progress(model.info.label, total) if progress else None
        rows = run_audit(self.config, model, self.facts, self.gold, progress=tick)
        if self.config.claimed_cutoff:
            self.claims[model.info.label] = ask_cutoff(model, progress=tick)
        return rows

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[ResponseRecord]) -> Summary:

        per_model: dict[str, dict[str, Any]] = {}
        for model in models:
            spec = model.info.label
            per_model[spec] = summarize_model(
                [r for r in rows if r.model == spec], with_as_of=self.config.as_of is not None, no_gold=self.no_gold
            )
            per_model[spec]["name"] = model.info.name or spec  # short label for the plots
            per_model[spec]["knowledge_date"] = self._knowledge_date(model, [r for r in rows if r.model == spec])
            if spec in self.claims:  # absent under --no-claimed-cutoff: the summary reads as before
                per_model[spec]["claimed_cutoff"] = self.claims[spec]
        as_of = self.config.as_of.isoformat() if self.config.as_of else None
        self.layout = {"as_of": as_of, "models": per_model, "overall_key": ALL}
        assert self.gold is not None, "load() first"
        return metric_records.run_summary(self.layout, {"name": self.gold.name})

    def _knowledge_date(self, model: CachedModel, rows: Sequence[ResponseRecord]) -> dict[str, Any]:
        """The model's knowledge date and staleness (no model calls: the rows and the snapshot's periods)."""

        assert self.gold is not None, "load() first"
        given = [r.display_name for r in self.models if r.label == model.info.label]  # as --cutoff may name it
        names = (model.info.name, model.info.spec, *given)
        cutoff = next((self.config.cutoff[n] for n in names if n and n in self.config.cutoff), None)
        return rows_knowledge_summary(rows, self.gold, cutoff=cutoff, deployed_at=self.config.deployed_at)

    def recipe(self) -> RunRecipe:
        assert self.gold is not None, "load() first"
        decoding = self.config.decoding()
        return RunRecipe(
            decoding=decoding.model_dump(mode="json"),
            seeds=[decoding.seed],
            snapshot={
                "name": self.gold.name,
                "retrieved": str(self.gold.retrieved),
                "endpoint": self.gold.endpoint,
                "query_hash": self.gold.query_hash,
            },
            judge="string match on Wikidata labels" + (" and aliases" if self.config.aliases else " (no aliases)"),
            extra={
                "facts": len(self.facts),
                "as_of": self.config.as_of.isoformat() if self.config.as_of else None,
                "instruction": self.config.instruction,
                "use_aliases": self.config.aliases,
            },
        )

    def report(self, folder: Path, rows: Sequence[ResponseRecord], summary: Summary, provenance: Provenance) -> None:

        detail = metric_records.read_run_detail(self._layout())
        write_report_files(folder, rows, detail["models"], provenance, as_of=detail.get("as_of"))
