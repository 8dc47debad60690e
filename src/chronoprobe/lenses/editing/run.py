"""Apply each method to one model, re-ask every question, judge the answers.

config → edit records → (edited weights | edited prompts) → cached model calls → verdicts → rows.

Edited weights live only inside :func:`weights_edited`: the touched weights are copied first and
restored bit-exactly afterwards, and while they are edited the model's cache identity carries a
hash of the method, its hyperparameters, the edits and the base revision. When every answer an
edited model would give is already cached (a resumed run), the edit is not applied again.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from chronoprobe.cache import CachedModel, sample_key, speed_subject, stable_hash
from chronoprobe.datasets.editing_records import GROUP_OF, EditRecord, EditRequest
from chronoprobe.errors import CapabilityError
from chronoprobe.knowledge.types import Fact, FactAnswers, Snapshot
from chronoprobe.lenses.editing import context_methods
from chronoprobe.lenses.editing.config import WEIGHT_METHODS, EditingConfig
from chronoprobe.lenses.editing.context_methods import Asked
from chronoprobe.lenses.editing.rows import UNEDITED, EditingRow, MethodRun, Role
from chronoprobe.lenses.editing.score import scoring_gold
from chronoprobe.lenses.outdated.prompts import audit_prompt
from chronoprobe.metrics.dyknow import Verdict, classify_response
from chronoprobe.models.base import Prompt
from chronoprobe.models.registry import ModelSpec, backend_kind

Tick = Callable[[int], None]

LOCALITY_METHODS = (*sorted(WEIGHT_METHODS), "serac")
"""Methods that can change answers about facts that were not edited, so the audit is re-run for them."""


@dataclass
class AuditContext:
    """The whole audit the locality check re-runs: its facts, gold answers and settings."""

    facts: list[Fact]
    gold: Snapshot
    use_aliases: bool = False
    skipped: set[str] = field(default_factory=set)
    """Facts without gold: never asked."""


USABLE_ELSEWHERE = "ike, ike-null, serac, rag-gold, rag-retrieved, rag-noisy"


def check_spec(spec: ModelSpec, methods: Sequence[str]) -> None:
    """Before any model loads: weight editing needs a local transformers model (its backend's registration says)."""

    weight = [m for m in methods if m in WEIGHT_METHODS]
    kind = spec.kind
    if weight and not backend_kind(kind).local_weights:
        # llama.cpp runs the GGUF's quantised weights; the same file's gguf: path has torch weights to edit
        torch_path = f"; {', '.join(weight)} run on the same file as gguf:<file>" if kind == "llamacpp" else ""
        raise CapabilityError(
            f"model {spec.raw}",
            f"{', '.join(weight)} edit weights, which the {kind} backend does not expose; "
            f"methods that work there: {USABLE_ELSEWHERE}{torch_path}",
        )


def check_backend(model: CachedModel, methods: Sequence[str]) -> None:
    """Weight editing needs a local transformers model; say which methods work elsewhere."""
    weight = [m for m in methods if m in WEIGHT_METHODS]
    if not weight:
        return
    from chronoprobe.models.hf import HFBackend  # deferred: torch, transformers

    if not isinstance(model.backend, HFBackend):
        raise CapabilityError(
            f"model {model.info.spec}",
            f"{', '.join(weight)} edit weights, which the {model.info.backend} backend does not expose; "
            f"methods that work there: {USABLE_ELSEWHERE}",
        )


def scaling_subsets(records: Sequence[EditRecord], fractions: Sequence[float]) -> dict[float, list[EditRecord]]:
    """The first ⌈f·N⌉ facts of the seed-42 shuffled list, per fraction (DyKnow's scaling protocol)."""
    shuffled = list(records)
    random.Random(42).shuffle(shuffled)
    return {f: shuffled[: math.ceil(f * len(shuffled))] for f in fractions}


def questions_of(records: Sequence[EditRecord]) -> list[tuple[EditRecord, Role, str, str]]:
    """(record, role, kind, question) for every scored question: the edit prompt, then the paraphrases."""
    asked: list[tuple[EditRecord, Role, str, str]] = []
    for record in records:
        for kind in record.scored_types:
            role: Role = "edit" if kind == record.prompt_type else "paraphrase"
            asked.append((record, role, kind, record.questions[kind]))
    return asked


def judge_record(record: EditRecord, gold: FactAnswers, question: str, response: str, use_aliases: bool) -> Verdict:
    """The outdated audit's verdict against the record's own answers (``gold``: its scoring answers)."""
    return classify_response(response, gold, use_aliases=use_aliases, prompt=question, subject=record.element).verdict


def locality_facts(config: EditingConfig, audit: AuditContext | None, edited: Sequence[EditRecord]) -> list[Fact]:
    """The audit's facts the locality check asks about: every fact with gold that was not edited.

    Empty when no method of the run is checked for locality (the in-context methods leave other facts alone)."""
    if not config.locality or audit is None or not set(LOCALITY_METHODS) & set(config.method):
        return []
    edited_ids = {r.fact_id for r in edited}
    return [f for f in audit.facts if f.fact_id not in edited_ids and f.fact_id not in audit.skipped]


def baseline_calls(config: EditingConfig, audit: AuditContext | None, records: Sequence[EditRecord]) -> int:
    """Prompts the unedited model is asked: every scored question, the fluency prompts, the audit."""
    fluency = len(records) if config.fluency else 0
    audit_questions = sum(len(f.templates) for f in locality_facts(config, audit, []))
    return sum(len(r.scored_types) for r in records) + fluency + audit_questions


def method_calls(
    config: EditingConfig, audit: AuditContext | None, method: str, fraction: float, subset: Sequence[EditRecord]
) -> int:
    """Prompts one method sends over ``subset`` (before the cache): the questions, fluency, and the locality audit."""
    count = sum(len(r.scored_types) for r in subset) + (len(subset) if config.fluency else 0)
    if fraction == 1.0 and method in LOCALITY_METHODS:
        count += sum(len(f.templates) for f in locality_facts(config, audit, subset))
    return count


def method_plan(config: EditingConfig, records: list[EditRecord]) -> list[tuple[str, float, list[EditRecord]]]:
    """(method, fraction, facts) for every application, in run order: each method on all facts, then scaling."""
    plan: list[tuple[str, float, list[EditRecord]]] = [(m, 1.0, records) for m in config.method]
    fractions = [f for f in config.scaling if f < 1.0]
    for fraction, subset in scaling_subsets(records, fractions).items():
        plan += [(m, fraction, subset) for m in config.method]
    return plan


class ModelEditor:
    """Everything one model goes through in an editing run."""

    def __init__(
        self,
        config: EditingConfig,
        model: CachedModel,
        records: list[EditRecord],
        audit: AuditContext | None,
        tools: Any,
        progress: Any = None,
    ) -> None:
        self.progress = progress
        """The run's progress factory: each weight edit gets its own bar (edits take longer than answers)."""
        self.config = config
        self.model = model
        self.records = records
        self.audit = audit
        self.tools = tools
        self.rows: list[EditingRow] = []
        self.runs: list[MethodRun] = []
        self._before: dict[tuple[str, str], Verdict] = {}
        self._locality_before: dict[tuple[str, int], Verdict] = {}

        self._gold = {r.fact_id: scoring_gold(r) for r in records}
        """Each edited fact's answers as the judge uses them (national teams left out, as DyKnow)."""

    # --- asking --------------------------------------------------------------------------------

    def plain(self, question: str) -> Prompt:
        return audit_prompt(question, self.config.instruction)

    def _rows(
        self, method: str, fraction: float, asked: Sequence[Asked], responses: Sequence[str], rendered: Sequence[str]
    ) -> list[EditingRow]:
        rows = []
        use_aliases = self.audit.use_aliases if self.audit else False
        for item, response, prompt_text in zip(asked, responses, rendered, strict=True):
            verdict: Verdict | None = None
            before: Verdict | None = None
            if item.role == "locality":
                fact = item.record_or_fact
                assert isinstance(fact, Fact) and self.audit is not None and item.template_index is not None
                verdict = classify_response(
                    response,
                    self.audit.gold.answers[fact.fact_id].counted(),
                    use_aliases=use_aliases,
                    prompt=item.question,
                    subject=fact.subject,
                ).verdict
                before = self._locality_before.get((fact.fact_id, item.template_index))
                fact_id, group = fact.fact_id, _group_of(fact.category)
            else:
                record = item.record_or_fact
                assert isinstance(record, EditRecord)
                fact_id, group = record.fact_id, record.group
                if item.role != "fluency":
                    verdict = judge_record(record, self._gold[fact_id], item.question, response, use_aliases)
                    before = self._before.get((fact_id, item.kind or ""))
            rows.append(
                EditingRow(
                    model=self.model.info.label,
                    method=method,
                    fraction=fraction,
                    role=item.role,
                    fact_id=fact_id,
                    group=group,
                    question_kind=item.kind,
                    question=item.question,
                    rendered_prompt=prompt_text,
                    response=response,
                    verdict=verdict,
                    before=before,
                    routed=item.routed,
                    similarity=item.similarity,
                )
            )
        return rows

    def _answer(self, method: str, fraction: float, asked: Sequence[Asked], tick: Tick | None) -> list[EditingRow]:
        """Ask everything (judged questions with the run's decoding, fluency prompts with longer greedy ones)."""
        answers: dict[int, tuple[str, str]] = {}
        models = list(dict.fromkeys(id(a.answered_by) for a in asked))
        by_id = {id(a.answered_by): a.answered_by or self.model for a in asked}
        made_before = sum(m.calls_made for m in by_id.values())
        started = time.perf_counter()
        for key in models:
            for fluency, params in ((False, self.config.decoding()), (True, self.config.fluency_decoding())):
                group = [
                    i for i, a in enumerate(asked) if id(a.answered_by) == key and (a.role == "fluency") == fluency
                ]
                if not group:
                    continue
                generations = by_id[key].generate([asked[i].prompt for i in group], params, progress=tick)
                answers.update({i: (g.text, g.rendered_prompt) for i, g in zip(group, generations, strict=True)})
        fresh = sum(m.calls_made for m in by_id.values()) - made_before
        if fresh:  # what the next run's plan line estimates this method's calls by
            subject = speed_subject(self._spec(), f"editing:{method}")
            self.model.cache.add_timing(subject, fresh, time.perf_counter() - started)
        ordered = [answers[i] for i in range(len(asked))]
        return self._rows(method, fraction, asked, [a for a, _ in ordered], [r for _, r in ordered])

    # --- what each method asks ---------------------------------------------------------------

    def scored(self, records: Sequence[EditRecord]) -> list[Asked]:
        return [Asked(r, role, kind, q, self.plain(q)) for r, role, kind, q in questions_of(records)]

    def fluency(
        self, records: Sequence[EditRecord], prompt_of: Callable[[EditRecord], Prompt] | None = None
    ) -> list[Asked]:
        if not self.config.fluency:
            return []
        make = prompt_of or (lambda r: self.plain(r.prompt))
        return [Asked(r, "fluency", r.prompt_type, r.prompt, make(r)) for r in records]

    def locality(self, edited: Sequence[EditRecord]) -> list[Asked]:
        """The audit's questions about every fact that was not edited."""
        asked = []
        for fact in locality_facts(self.config, self.audit, edited):
            for index, template in enumerate(fact.templates):
                asked.append(Asked(fact, "locality", None, template, self.plain(template), template_index=index))
        return asked

    # --- the run ------------------------------------------------------------------------------

    def baseline(self, tick: Tick | None) -> None:
        """The unedited model's answers: the 'before' of every verdict."""
        asked = self.scored(self.records) + self.fluency(self.records)
        rows = self._answer(UNEDITED, 1.0, asked, tick)
        if self.config.locality and self.audit is not None:
            loc = self.locality([])
            loc_rows = self._answer(UNEDITED, 1.0, loc, tick)
            for item, row in zip(loc, loc_rows, strict=True):
                assert item.template_index is not None and row.verdict is not None
                self._locality_before[(row.fact_id, item.template_index)] = row.verdict
            rows += loc_rows
        for row in rows:
            if row.role in ("edit", "paraphrase") and row.verdict is not None:
                self._before[(row.fact_id, row.question_kind or "")] = row.verdict
        for row in rows:
            if row.role in ("edit", "paraphrase", "locality"):
                row.before = row.verdict
        self.rows += rows

    def apply(self, method: str, fraction: float, subset: list[EditRecord], tick: Tick | None) -> None:
        if method in WEIGHT_METHODS:
            self._weights(method, fraction, subset, tick)
        else:
            self._in_context(method, fraction, subset, tick)

    def _weights(self, method: str, fraction: float, subset: list[EditRecord], tick: Tick | None) -> None:
        from chronoprobe.lenses.editing import weight_methods  # deferred: torch, transformers

        asked = self.scored(subset) + self.fluency(subset)
        if fraction == 1.0:
            asked += self.locality(subset)  # locality of the full edit set only, not of each scaling prefix
        backend = self.model.backend
        plan = weight_methods.plan(self.config, method, backend, [self.edit_request(r) for r in subset], self.tools)
        timing_key = stable_hash({"edit-timing": plan.edit_hash})
        stored = self.model.cache.get_many([timing_key])
        if timing_key in stored and self._all_cached(asked, plan.edit_hash):
            run = MethodRun(**stored[timing_key][0])
            run = run.model_copy(update={"reused": True, "model": self.model.info.label})
            with self._identity(plan.edit_hash):
                self.rows += self._answer(method, fraction, asked, tick)
            self.runs.append(run)
            return
        save_to = self._save_dir(method, fraction)
        label = f"{self.model.info.name or self.model.info.label}: {method} edits" + (
            f" ({100 * fraction:g}%)" if fraction < 1.0 else ""
        )
        edits = self.progress(label, len(subset)) if self.progress else None
        with (
            weight_methods.edited(plan, backend, self.model.cache, save_to=save_to, tick=edits) as timings,
            self._identity(plan.edit_hash),
        ):
            self.rows += self._answer(method, fraction, asked, tick)
        seconds = [t.seconds for t in timings]
        resumed = sum(t.reused for t in timings)
        if subset:  # what the next run's plan line estimates edits by (seconds per fact edited)
            self.model.cache.add_timing(speed_subject(self._spec(), f"edit:{method}"), len(subset), sum(seconds))
        run = MethodRun(
            model=self.model.info.label,
            method=method,
            fraction=fraction,
            mode=self.config.mode_of(method),
            facts=len(subset),
            notes=[f"{resumed} of {len(subset)} value optimisations resumed from a killed run (their first times)"]
            if resumed
            else [],
            edit_seconds=[round(s, 3) for s in seconds],
            seconds_per_edit=round(sum(seconds) / max(len(subset), 1), 3),
            hparams=plan.hparams,
            hparams_source=plan.hparams_source,
            stats=plan.stats,
        )
        self.model.cache.put_many("editing-timing", [(timing_key, run.model_dump(mode="json"), None)])
        self.runs.append(run)

    def _spec(self) -> str:
        """The spec the model was loaded from: what the speed table is keyed by."""
        return self.model.source.request.spec.raw if self.model.source else self.model.info.spec

    def _save_dir(self, method: str, fraction: float) -> Any:
        if self.config.save_edited is None:
            return None
        label = method if fraction == 1.0 else f"{method}-{fraction:g}"
        return self.config.save_edited / label

    def edit_request(self, record: EditRecord) -> EditRequest:
        """The edit as the model sees it: the edit prompt rendered as the audit asks it."""
        backend = self.model.backend
        rendered = backend.render(self.plain(record.prompt))
        target = record.target
        if self.model.info.chat_template:
            eos = getattr(getattr(backend, "tokenizer", None), "eos_token", None)
            if eos:  # DyKnow ended chat models' targets with the end-of-turn token ("{target}</s>")
                target = f"{target}{eos}"
        return EditRequest(prompt=rendered, subject=record.subject, target=target)

    @contextmanager
    def _identity(self, edit_hash: str) -> Iterator[None]:
        info = self.model.backend.info
        info.edit = edit_hash
        try:
            yield
        finally:
            info.edit = None

    def _all_cached(self, asked: Sequence[Asked], edit_hash: str) -> bool:
        info = self.model.backend.info.model_copy(update={"edit": edit_hash})
        keys = []
        for item in asked:
            params = self.config.fluency_decoding() if item.role == "fluency" else self.config.decoding()
            rendered = self.model.backend.render(item.prompt)
            keys += [sample_key(info, rendered, params, i) for i in range(params.n)]
        found = self.model.cache.get_many(keys)
        return len(found) == len(set(keys))

    def _in_context(self, method: str, fraction: float, subset: list[EditRecord], tick: Tick | None) -> None:
        started = time.perf_counter()
        built = context_methods.build(self, method, subset)
        seconds = time.perf_counter() - started
        asked = built.asked
        self.rows += self._answer(method, fraction, asked, tick)
        edited = len(subset) - len(built.skipped)
        self.runs.append(
            MethodRun(
                model=self.model.info.label,
                method=method,
                fraction=fraction,
                mode=self.config.mode_of(method),
                facts=edited,
                edit_seconds=[round(seconds, 4)],
                seconds_per_edit=round(seconds / max(edited, 1), 4),
                skipped=built.skipped,
                notes=built.notes,
                hparams=built.settings,
            )
        )


def _group_of(category: str) -> str:
    return GROUP_OF.get(category, category)
