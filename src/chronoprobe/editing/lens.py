"""The editing lens (DyKnow §4): can the facts a model got wrong be fixed, by editing or by retrieval?"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from chronoprobe.cache import CachedModel, CallCache
from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.editing.config import METHODS, WEIGHT_METHODS, EditingConfig
from chronoprobe.editing.rows import EditingRow, MethodRun
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.lens import Announce, Lens, ProgressFactory, RunRecipe, Summary
from chronoprobe.models.base import Capability

NEEDS_EMBEDDER = frozenset({"serac", "ike", "ike-null", "rag-retrieved"})


@dataclass
class EditSet:
    """The facts to edit for one model, and how they were chosen."""

    records: list[EditRecord]
    source: str
    select: str | None = None
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class Tools:
    """What the in-context methods share across models: the embedder, the retriever, the prompt wording."""

    prompts: Any
    embedder: Any = None
    retriever: Any = None
    counterfactual: Any = None
    """SERAC*'s counterfactual model when it is not the edited model itself."""


class EditingLens(Lens[EditingRow]):
    """Edit (or retrieve) each fact the audit found outdated, re-ask it, and judge the answers."""

    name = "editing"
    kind = "editing run"
    input_options: ClassVar[dict[str, str]] = {"from_run": "--from", "prompts_file": "--prompts"}
    text_paths = frozenset({"snapshot"})
    output_fields = frozenset({"save_edited"})
    row_type = EditingRow
    config_type = EditingConfig
    capabilities = frozenset({Capability.GENERATE})
    config: EditingConfig

    def __init__(self, config: EditingConfig) -> None:
        super().__init__(config)
        self.sets: dict[str, EditSet] = {}
        self.audit: Any = None
        self.tools: Tools | None = None
        self.runs: list[MethodRun] = []
        self._models: list[CachedModel] = []

    # --- before any model ------------------------------------------------------------------------

    def load(self) -> None:
        from chronoprobe.editing.prompts import load_prompts
        from chronoprobe.models.names import model_label, split_model_name

        config = self.config
        prompts = load_prompts(config.prompts_file)
        if config.hparams is not None:
            from chronoprobe.editing.hparams import load_overrides

            load_overrides(config.hparams)
        if config.stats_corpus is not None and "memit" in config.methods:
            from chronoprobe.editing.mom2 import load_corpus

            load_corpus(config.stats_corpus)
        from chronoprobe.editing.run import check_spec
        from chronoprobe.models.registry import canonical_spec

        for raw in config.models:
            check_spec(canonical_spec(split_model_name(raw)[1]), config.methods)
        for raw in config.models:  # keyed as the loaded model will be (info.label), never by a raw spec
            if model_label(raw) in self.sets:
                raise ConfigError(f"--model {model_label(raw)}", "given twice; give each model its own NAME=")
            self.sets[model_label(raw)] = self._edit_set(raw)
        self.audit = self._audit_context()
        self.tools = Tools(prompts=prompts)
        self.loaded = True

    def _edit_set(self, raw: str) -> EditSet:
        """The facts for the model of one ``--model`` value (``NAME=SPEC`` or a spec, credentials and all)."""
        from chronoprobe.models.names import model_label

        config = self.config
        if config.dataset is not None:
            from chronoprobe.editing.dataset import read_dataset

            chosen = EditSet(read_dataset(config.dataset), source=str(config.dataset))
        else:
            assert config.from_run is not None
            chosen = self._from_run(raw)
        if config.limit is not None:
            chosen.records = chosen.records[: config.limit]
        if not chosen.records:
            raise DataError(chosen.source, f"no facts to edit for {model_label(raw)}" + _why(chosen))
        return chosen

    def _from_run(self, raw: str) -> EditSet:
        from chronoprobe.editing.dataset import build_from_run

        config = self.config
        assert config.from_run is not None
        select = "outdated" if config.select == "auto" else config.select
        built = build_from_run(config.from_run, model=raw, select=select)
        notes = list(built.notes)
        if config.select == "auto" and len(built.records) < config.min_facts:
            fewer = len(built.records)
            built = build_from_run(config.from_run, model=raw, select="not-up-to-date")
            notes = [
                f"only {fewer} fact(s) are outdated (fewer than {config.min_facts}), so every fact that is not "
                f"up-to-date is edited: {len(built.records)} facts",
                *built.notes,
            ]
        return EditSet(
            built.records, source=str(config.from_run), select=built.select, notes=notes, skipped=built.skipped
        )

    def _audit_context(self) -> Any:
        if not self.config.locality:
            return None
        from chronoprobe.editing.run import AuditContext
        from chronoprobe.outdated.audit import AuditConfig, facts_without_gold, load_gold

        if self.config.from_run is not None:
            from chronoprobe.editing.dataset import audit_config_of, read_json_object

            log_path = self.config.from_run / "run.json"
            audit_config = audit_config_of(read_json_object(log_path), str(log_path))
        else:
            audit_config = AuditConfig(facts_file=self.config.facts_file, snapshot=self.config.snapshot)
        facts, gold = load_gold(audit_config)
        return AuditContext(
            facts=facts,
            gold=gold,
            use_aliases=audit_config.use_aliases,
            skipped=set(facts_without_gold(facts, gold)),
        )

    def setup(self, cache: CallCache, announce: Announce | None = None) -> None:
        assert self.tools is not None
        if "serac" in self.config.methods and self.config.serac_counterfactual != "base-with-context":
            from chronoprobe.models.registry import BackendOptions
            from chronoprobe.runner import load_models

            [self.tools.counterfactual] = load_models(
                [self.config.serac_counterfactual], BackendOptions(), cache, announce
            )
        if not NEEDS_EMBEDDER & set(self.config.methods):
            return
        from chronoprobe.judges.embedding import Embedder

        with (announce or (lambda _: nullcontext()))("loading the MiniLM embedder"):
            self.tools.embedder = Embedder(cache=cache)
        if "rag-retrieved" in self.config.methods:
            from chronoprobe.editing.retrieval import PassageRetriever

            self.tools.retriever = PassageRetriever(embedder=self.tools.embedder)

    def check(self, model: CachedModel) -> None:
        from chronoprobe.editing.run import check_backend

        super().check(model)
        check_backend(model, self.config.methods)
        if WEIGHT_METHODS & set(self.config.methods):
            from chronoprobe.editing import weight_methods

            weight_methods.check_model(self.config, model.backend)
            editor = self._editor(model)
            for record in editor.records:  # the subject must be found in the prompt as the model sees it
                editor.edit_request(record)
        self._models.append(model)

    # --- the run -------------------------------------------------------------------------------

    def _editor(self, model: CachedModel, progress: ProgressFactory | None = None) -> Any:
        from chronoprobe.editing.run import ModelEditor

        records = self.sets[model.info.label].records
        return ModelEditor(self.config, model, records, self.audit, self.tools, progress)

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[EditingRow]:
        from chronoprobe.editing.run import scaling_subsets

        editor = self._editor(model, progress)
        records = editor.records
        plan: list[tuple[str, float, list[EditRecord]]] = [(m, 1.0, records) for m in self.config.methods]
        fractions = [f for f in self.config.scaling if f < 1.0]
        for fraction, subset in scaling_subsets(records, fractions).items():
            plan += [(m, fraction, subset) for m in self.config.methods]
        total = len(editor.scored(records)) + len(editor.fluency(records)) + len(editor.locality([]))
        total += sum(editor.planned_calls(m, f, s) for m, f, s in plan)
        tick = progress(model.info.label, total) if progress else None
        editor.baseline(tick)
        for method, fraction, subset in plan:
            editor.apply(method, fraction, subset, tick)
        self.runs += editor.runs
        rows: list[EditingRow] = editor.rows
        return rows

    # --- results -------------------------------------------------------------------------------

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[EditingRow]) -> Summary:
        from chronoprobe.editing.summary import summarise_model

        per_model: dict[str, Any] = {}
        for model in models:
            spec = model.info.label
            chosen = self.sets[spec]
            per_model[spec] = summarise_model(
                chosen.records,
                [r for r in rows if r.model == spec],
                [r for r in self.runs if r.model == spec],
                dataset={
                    "source": chosen.source,
                    "select": chosen.select,
                    "facts": len(chosen.records),
                    "notes": chosen.notes,
                    "skipped": chosen.skipped,
                },
            )
            per_model[spec]["name"] = model.info.name or spec
        return self.summary_from_detail({"models": per_model, "methods": list(self.config.methods)})

    @classmethod
    def summary_from_detail(cls, detail: dict[str, Any]) -> Summary:
        headline: dict[str, dict[str, float | None]] = {}
        for spec, summary in detail["models"].items():
            numbers: dict[str, float | None] = {}
            for result in summary["results"]:
                if result["fraction"] != 1.0:
                    continue
                overall = result["scores"]["All"]
                numbers[f"{result['method']}.harmonic_mean"] = overall["harmonic_mean"]["value"]
                numbers[f"{result['method']}.soft_constraint"] = overall["soft_constraint"]["value"]
            headline[spec] = numbers
        return Summary(lens=cls.name, models=list(detail["models"]), headline=headline, detail=detail)

    def recipe(self) -> RunRecipe:
        config = self.config
        extra: dict[str, Any] = {
            "methods": list(config.methods),
            "modes": {m: config.mode_of(m) for m in config.methods},
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
        if "serac" in config.methods:
            judge += "; SERAC scope: MiniLM cosine similarity (no trained classifier)"
        decoding = config.decoding()
        return RunRecipe(
            decoding=decoding.model_dump(mode="json"),
            seeds=[config.seed, 42],
            snapshot=snapshot,
            judge=judge,
            extra=extra,
        )

    def report(self, folder: Path, rows: Sequence[EditingRow], summary: Summary, provenance: dict[str, Any]) -> None:
        from chronoprobe.editing.dataset import write_dataset
        from chronoprobe.editing.report import write_report_files
        from chronoprobe.models.names import file_safe

        for spec, chosen in self.sets.items():
            name = summary.detail["models"].get(spec, {}).get("name", spec)
            suffix = "" if len(self.sets) == 1 else f"-{file_safe(name)}"
            write_dataset(folder / f"editing_dataset{suffix}.json", chosen.records)
        write_report_files(folder, rows, summary.detail, provenance)


def _settings(run: MethodRun) -> dict[str, Any]:
    return {
        "mode": run.mode,
        "hparams": run.hparams,
        "hparams_source": run.hparams_source,
        "stats": run.stats,
        "reused_from_cache": run.reused,
    }


def _why(chosen: EditSet) -> str:
    if chosen.select is None:
        return ""
    return f" (selection {chosen.select!r}; {len(chosen.skipped)} fact(s) skipped)"


def validate_methods(values: Sequence[str]) -> tuple[str, ...]:
    unknown = [v for v in values if v not in METHODS]
    if unknown:
        raise ConfigError("--method", f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    return tuple(values)
