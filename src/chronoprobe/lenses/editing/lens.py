"""The editing lens (DyKnow §4): can the facts a model got wrong be fixed, by editing or by retrieval?"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.contract.check_part import CheckPart
from chronoprobe.contract.lens import CheckContext, Lens, ModelLoader, ProgressFactory, RunRecipe, Summary, Workload
from chronoprobe.contract.sizing import Sizing
from chronoprobe.datasets.balance import take_balanced
from chronoprobe.engines import Engine
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.judges.embedding import Embedder
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.lenses.editing import metric_records
from chronoprobe.lenses.editing.compare import comparable
from chronoprobe.lenses.editing.config import PROMPT_METHODS, WEIGHT_METHODS, EditingConfig
from chronoprobe.lenses.editing.dataset import (
    audit_config_of,
    build_from_run,
    check_run_folder,
    count_lines,
    fact_notes_line,
    group_counts,
    read_dataset,
    read_json_object,
    write_dataset,
)
from chronoprobe.lenses.editing.metric_records import EditSet
from chronoprobe.lenses.editing.plain_words import sentences
from chronoprobe.lenses.editing.plan import RunPlan, plan_line, plan_model
from chronoprobe.lenses.editing.prompts import load_prompts
from chronoprobe.lenses.editing.report import write_report_files
from chronoprobe.lenses.editing.retrieval import PassageRetriever
from chronoprobe.lenses.editing.rows import UNEDITED, EditingRow, MethodRun
from chronoprobe.lenses.editing.run import (
    AuditContext,
    ModelEditor,
    baseline_calls,
    check_backend,
    check_spec,
    method_calls,
    method_plan,
)
from chronoprobe.lenses.editing.serac import check_scope_model
from chronoprobe.lenses.editing.summary import summarise_model
from chronoprobe.lenses.outdated.audit import AuditConfig, facts_without_gold, load_gold
from chronoprobe.lenses.summary_layout import KeepsLayout
from chronoprobe.metrics.paired import Comparable
from chronoprobe.models.base import Capability
from chronoprobe.models.names import file_safe
from chronoprobe.models.registry import ModelRequest
from chronoprobe.provenance import Provenance
from chronoprobe.records.publish import check_output_folder
from chronoprobe.records.runlog import Run
from chronoprobe.reports.lens_card import CardPart
from chronoprobe.reports.metric_format import cell
from chronoprobe.reports.plain_words import find

NEEDS_EMBEDDER = frozenset({"serac", "ike", "ike-null", "rag-retrieved"})


@dataclass
class Tools:
    """What the in-context methods share across models: the embedder, the retriever, the prompt wording."""

    prompts: Any
    embedder: Any = None
    retriever: Any = None
    counterfactual: Any = None
    """SERAC*'s counterfactual model when it is not the edited model itself."""
    scope_embedder: Any = None
    """SERAC*'s scope embedder when ``--serac-scope embedding:<model>`` names one (else ``embedder``)."""


def check_options(context: CheckContext) -> dict[str, Any]:
    """The facts to edit: those the check's own audit found (its folder)."""
    return {"from_": context.runs["outdated"]}


class EditingLens(KeepsLayout, Lens[EditingRow]):
    """Edit (or retrieve) each fact the audit found outdated, re-ask it, and judge the answers."""

    name = "editing"
    kind = "editing run"
    row_type = EditingRow
    config_type = EditingConfig
    capabilities = frozenset({Capability.GENERATE})
    config: EditingConfig
    card = CardPart(
        question="Can it be fixed?",
        about="DyKnow §4: knowledge editing against retrieval, on the facts the audit found wrong.",
        words=sentences,
    )
    checkup = CheckPart(
        # IKE and RAG gold on 10 of the facts the audit found wrong; every prompt method on 30; DyKnow's whole run.
        sizes={
            "quick": {"method": ("ike-null", "rag-gold"), "balanced_limit": 10, "locality": False, "fluency": False},
            "standard": {
                "method": ("ike", "ike-null", "serac", "rag-gold", "rag-retrieved", "rag-noisy"),
                "balanced_limit": 30,
                "locality": False,
            },
            "full": {},
        },
        # In a check, the facts to edit come from the check's own audit.
        needs=("outdated",),
        # How often an edit fixes the fact, over the facts it got wrong (``--limit`` of them).
        sizing=Sizing(metric="ike-null.efficacy_pct", option="limit", unit="facts"),
        metric_patterns=(
            "*.efficacy_pct",
            "*.paraphrase_pct",
            "*.harmonic_mean_pct",
            "*.soft_constraint_pct",
            "*.locality_*_pct",
            "*.ngram_entropy",
            "*.seconds_per_edit",
        ),
        options=check_options,
    )

    def __init__(self, config: EditingConfig) -> None:
        super().__init__(config)
        self.sets: dict[str, EditSet] = {}
        self.audit: Any = None
        self.tools: Tools | None = None
        self.runs: list[MethodRun] = []
        self._models: list[CachedModel] = []

    # --- before any model ------------------------------------------------------------------------

    def check_inputs(self) -> None:
        """``--from`` must be an outdated run's folder (a parent of run folders is named as such, with those
        inside), and ``--save-edited`` a folder we may write."""
        if self.config.from_ is not None:
            check_run_folder(self.config.from_)
        if self.config.save_edited is not None:
            check_output_folder(self.config.save_edited, "--save-edited")

    def notices(self) -> list[str]:
        """Per model: how its facts were chosen, the per-fact notes in one line, and the facts per group."""

        lines = []
        for spec, chosen in self.sets.items():
            lines += [f"note ({spec}): {note}" for note in chosen.notes]
            per_fact = fact_notes_line(len(chosen.fact_notes), f" ({spec})", "report.md")
            lines += [Text.from_markup(per_fact).plain] if per_fact else []
            lines += count_lines(chosen.records, f"{chosen.source} for {spec}", chosen.select, len(chosen.skipped))
        return [*lines, *super().notices()]

    def present(self, run: Run) -> list[str]:
        """Each model's line per method over every fact: harmonic mean and soft constraint, with intervals."""
        lines = []
        for spec, summary in metric_records.read_detail(self._layout())["models"].items():
            for entry in summary["results"]:
                method = entry["method"]
                hm, soft = (
                    find(run.summary, spec, f"{method}.{key}_pct") for key in ("harmonic_mean", "soft_constraint")
                )
                if entry["fraction"] != 1.0 or hm is None or soft is None:
                    continue
                column = entry["column"] if method != "unedited" else "unedited"
                lines.append(f"{spec} {column} ({entry['facts']} facts): HM {cell(hm)}  soft constraint {cell(soft)}")
        return lines

    def load(self) -> None:

        config = self.config
        prompts = load_prompts(config.wording)
        if config.hparams is not None:
            from chronoprobe.lenses.editing.hparams import load_overrides  # deferred: torch

            load_overrides(config.hparams)
        if "serac" in config.method:
            check_scope_model(config.serac_scope)
        if config.stats_corpus is not None and "memit" in config.method:
            from chronoprobe.lenses.editing.mom2 import load_corpus  # deferred: torch

            load_corpus(config.stats_corpus)

        for request in self.models:
            check_spec(request.spec, config.method)
        for request in self.models:  # keyed as the loaded model will be (info.label)
            if request.label in self.sets:
                raise ConfigError(f"--model {request.label}", "given twice; give each model its own NAME=")
            self.sets[request.label] = self._edit_set(request)
        self.audit = self._audit_context()
        self.tools = Tools(prompts=prompts)
        self.loaded = True

    def _edit_set(self, request: ModelRequest) -> EditSet:
        """The facts for the model of one ``--model`` value."""
        config = self.config
        if config.dataset is not None:
            chosen = EditSet(read_dataset(config.dataset), source=str(config.dataset))
        else:
            assert config.from_ is not None
            chosen = self._from_run(request)
        if config.balanced_limit is not None and len(chosen.records) > config.balanced_limit:
            _limit(chosen, config.balanced_limit)
        if not chosen.records:
            raise DataError(chosen.source, f"no facts to edit for {request.label}" + _why(chosen))
        return chosen

    def _from_run(self, request: ModelRequest) -> EditSet:

        config = self.config
        assert config.from_ is not None
        select = "outdated" if config.select == "auto" else config.select
        built = build_from_run(config.from_, model=request, select=select)
        notes: list[str] = []
        if config.select == "auto" and len(built.records) < config.min_facts:
            fewer = len(built.records)
            built = build_from_run(config.from_, model=request, select="not-up-to-date")
            notes = [
                f"only {fewer} fact(s) are outdated (fewer than {config.min_facts}), so every fact that is not "
                f"up-to-date qualifies: {len(built.records)} facts"
            ]
        per_fact = set(built.fact_notes.values())
        edited = {r.fact_id for r in built.records}
        return EditSet(
            built.records,
            source=str(config.from_),
            select=built.select,
            notes=[*notes, *(n for n in built.notes if n not in per_fact)],
            fact_notes={fact: note for fact, note in built.fact_notes.items() if fact in edited},
            skipped=built.skipped,
        )

    def _audit_context(self) -> Any:
        if not self.config.locality:
            return None

        if self.config.from_ is not None:
            log_path = self.config.from_ / "run.json"
            audit_config = audit_config_of(read_json_object(log_path), str(log_path))
        else:
            audit_config = AuditConfig(facts=self.config.facts, snapshot=self.config.snapshot)
        facts, gold = load_gold(audit_config)
        return AuditContext(
            facts=facts,
            gold=gold,
            use_aliases=audit_config.aliases,
            skipped=set(facts_without_gold(facts, gold)),
        )

    def check_engine(self, engine: Engine) -> None:
        """Weight edits change the model in this process: another engine may run the prompt methods only."""
        weights = sorted(WEIGHT_METHODS & set(self.config.method))
        if weights and not engine.local:
            raise ConfigError(
                f"--engine {engine.label}",
                f"{', '.join(weights)} edit the weights in this process, so they run on --engine local only; "
                f"with Ray pick prompt methods (--method {','.join(PROMPT_METHODS)})",
            )

    def setup(self, cache: CallCache, load_model: ModelLoader) -> None:
        assert self.tools is not None
        if "serac" in self.config.method and self.config.serac_counterfactual != "base-with-context":
            self.tools.counterfactual = load_model(self.config.serac_counterfactual)  # with the run's --dtype, --device
        if not NEEDS_EMBEDDER & set(self.config.method):
            return

        with load_model.announce("loading the MiniLM embedder"):
            self.tools.embedder = Embedder(cache=cache)
        kind, _, scope_model = self.config.serac_scope.partition(":")
        if "serac" in self.config.method and kind == "embedding" and scope_model:
            with load_model.announce(f"loading the SERAC* scope embedder {scope_model}"):
                self.tools.scope_embedder = Embedder(scope_model, cache=cache)
        if "rag-retrieved" in self.config.method:
            self.tools.retriever = PassageRetriever(embedder=self.tools.embedder)

    def check(self, model: CachedModel, engine: Engine) -> None:

        super().check(model, engine)
        check_backend(model, self.config.method)
        if WEIGHT_METHODS & set(self.config.method):
            from chronoprobe.lenses.editing import weight_methods  # deferred: torch, transformers

            weight_methods.check_model(self.config, model.backend)
            editor = self._editor(model)
            for record in editor.records:  # the subject must be found in the prompt as the model sees it
                editor.edit_request(record)
        self._models.append(model)

    def workload(self) -> Workload:
        """At most: the facts the audit may find wrong, every question about them asked before and after each
        method (with the fluency prompt), and the locality audit; the audit's run tells the real numbers."""

        config = self.config
        for request in self.models:  # a method the backend cannot run fails now, before the audit runs
            check_spec(request.spec, config.method)
        catalogue = load_catalogue(config.facts)
        facts = min(config.balanced_limit or len(catalogue), len(catalogue))
        questions = max((len(f.templates) for f in catalogue), default=0) + int(config.fluency)
        applications = len(config.method) * (1 + len([f for f in config.scaling if f < 1.0]))
        audit = sum(len(f.templates) for f in catalogue) if config.locality else 0
        calls = facts * questions * (1 + applications) + audit * (1 + len(config.method))
        return Workload(items=facts, unit="facts", calls=calls, at_most=True)

    def plan(self, cache: CallCache | Path | None = None) -> list[RunPlan]:
        """What the run will do per model, before any model loads: facts, calls, edits and a time range.

        Times come from what the call cache (open, or the file at a path: never created here)
        measured for the same model spec (model calls, and seconds per fact for each weight
        method); without a measurement, a rough default widened to a range stands in and the
        plan says so (:mod:`chronoprobe.lenses.editing.plan`)."""

        assert self.loaded, "load() first"
        opened = CallCache(cache) if isinstance(cache, Path) and cache.is_file() else None
        timings = cache if isinstance(cache, CallCache) else opened
        plans = []
        try:
            for request in self.models:
                records = self.sets[request.label].records
                applications = method_plan(self.config, records)
                calls = {UNEDITED: baseline_calls(self.config, self.audit, records)}
                edits: dict[str, int] = {}
                for method, fraction, subset in applications:
                    calls[method] = calls.get(method, 0) + method_calls(
                        self.config, self.audit, method, fraction, subset
                    )
                    if method in WEIGHT_METHODS:
                        edits[method] = edits.get(method, 0) + len(subset)
                plans.append(plan_model(request.spec.raw, request.label, len(records), calls, edits, timings))
        finally:
            if opened is not None:
                opened.close()
        return plans

    def plan_line(self, cache: CallCache) -> str:
        return plan_line(self.plan(cache), self.config)

    # --- the run -------------------------------------------------------------------------------

    def _editor(self, model: CachedModel, progress: ProgressFactory | None = None) -> Any:

        records = self.sets[model.info.label].records
        return ModelEditor(self.config, model, records, self.audit, self.tools, progress)

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[EditingRow]:

        editor = self._editor(model, progress)
        records = editor.records
        plan = method_plan(self.config, records)
        total = baseline_calls(self.config, self.audit, records)
        total += sum(method_calls(self.config, self.audit, m, f, s) for m, f, s in plan)
        tick = progress(model.info.label, total) if progress else None
        editor.baseline(tick)
        for method, fraction, subset in plan:
            editor.apply(method, fraction, subset, tick)
        self.runs += editor.runs
        rows: list[EditingRow] = editor.rows
        return rows

    # --- results -------------------------------------------------------------------------------

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[EditingRow]) -> Summary:

        per_model: dict[str, Any] = {}
        for model in models:
            spec = model.info.label
            chosen = self.sets[spec]
            per_model[spec] = summarise_model(
                chosen.records,
                [r for r in rows if r.model == spec],
                [r for r in self.runs if r.model == spec],
                dataset=chosen.record(),
            )
            per_model[spec]["name"] = model.info.name or spec
        self.layout = {"models": per_model, "methods": list(self.config.method)}
        return metric_records.summary(self.layout)

    @classmethod
    def comparable(cls, run: Run, model: str) -> Comparable:
        """Per method and Table 3 group: efficacy and soft constraint per fact, paraphrase success per answer
        (clustered on the fact) and the harmonic mean of the two over the facts."""

        return comparable(run, model)

    def recipe(self) -> RunRecipe:
        config = self.config
        extra: dict[str, Any] = {
            "methods": list(config.method),
            "modes": {m: config.mode_of(m) for m in config.method},
            "scaling": list(config.scaling),
            "datasets": {
                spec: {"source": s.source, "select": s.select, "facts": len(s.records)} for spec, s in self.sets.items()
            },
            "locality": config.locality,
            "method_settings": {f"{r.model}|{r.method}|{r.fraction:g}": _settings(r) for r in self.runs},
        }
        if self.tools is not None and self.tools.embedder is not None:
            extra["embedding_model"] = self.tools.embedder.model_id
        snapshot = None
        if self.audit is not None:
            gold = self.audit.gold
            snapshot = {"name": gold.name, "retrieved": str(gold.retrieved), "endpoint": gold.endpoint}
        judge = "string match on Wikidata labels (the outdated audit's classifier)"
        if "serac" in config.method:
            judge += "; SERAC scope: MiniLM cosine similarity (no trained classifier)"
        decoding = config.decoding()
        return RunRecipe(
            decoding=decoding.model_dump(mode="json"),
            seeds=[config.template_seed, 42],
            snapshot=snapshot,
            judge=judge,
            extra=extra,
        )

    def report(self, folder: Path, rows: Sequence[EditingRow], summary: Summary, provenance: Provenance) -> None:

        detail = metric_records.read_detail(self._layout())
        for spec, chosen in self.sets.items():
            name = detail["models"][spec].get("name", spec) if spec in detail["models"] else spec
            suffix = "" if len(self.sets) == 1 else f"-{file_safe(name)}"
            write_dataset(folder / f"editing_dataset{suffix}.json", chosen.records)
        write_report_files(folder, rows, detail, provenance)


def _settings(run: MethodRun) -> dict[str, Any]:
    return {
        "mode": run.mode,
        "hparams": run.hparams,
        "hparams_source": run.hparams_source,
        "stats": run.stats,
        "reused_from_cache": run.reused,
    }


def _limit(chosen: EditSet, limit: int) -> None:
    """Keep ``limit`` facts spread over Table 3's groups (as ``conflicts run --balanced-limit`` spreads over classes)."""

    total = len(chosen.records)
    chosen.records = take_balanced(chosen.records, limit, lambda record: record.group)
    kept = {r.fact_id for r in chosen.records}
    chosen.fact_notes = {fact: note for fact, note in chosen.fact_notes.items() if fact in kept}
    shown = ", ".join(f"{group} {n}" for group, n in group_counts(chosen.records).items())
    chosen.notes.append(
        f"--balanced-limit {limit}: {len(chosen.records)} of the {total} facts are edited, spread over the groups ({shown})"
    )


def _why(chosen: EditSet) -> str:
    if chosen.select is None:
        return ""
    hint = "; --select not-up-to-date takes every fact with no up-to-date answer" if chosen.select == "outdated" else ""
    return f" (selection {chosen.select!r}; {len(chosen.skipped)} fact(s) skipped{hint})"
