"""MuLan's methodology: greedy fact completion with F1 and first-token confidence,
memorised-fact selection, then in-context updates ("Imagine that ...").

Both datasets enter as :class:`CompletionQuery` rows: MuLan queries directly,
DynamicQA facts through the converted statement templates.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.mulan import subject_of
from chronoprobe.errors import DataError
from chronoprobe.lenses.conflicts.prompts import PromptWording, completion_prompt
from chronoprobe.lenses.conflicts.rows import CompletionRow, UpdateRow
from chronoprobe.lenses.conflicts.templates import completion_prefix, fill
from chronoprobe.metrics import mulan as mm
from chronoprobe.metrics.uncertainty import bootstrap_mean_clustered, wilson_from_flags
from chronoprobe.models.base import DecodingParams, NewTokens, Sample, require


class CompletionQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    query_id: str
    fact_id: str
    fact_class: str
    relation: str
    template_index: int
    subject: str
    templates: tuple[str, ...]
    """Every statement template of the relation (with [X] and [Y])."""
    golds: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    @property
    def prefix(self) -> str:
        return completion_prefix(self.templates[self.template_index], self.subject)


class CompletionConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_new_tokens: NewTokens = 50
    fidelity: mm.Fidelity = "corrected"
    """``original`` reproduces the original code's F1 truncation, first-token confidence and
    update success exactly; ``corrected`` (default) uses our fixes (chronoprobe docs conflicts)."""
    min_confidence: float = 0.5
    seed: int = 0
    """Picks the memorised facts and their new objects, and seeds decoding when ``temperature`` > 0."""
    temperature: float = 0.0
    """0: greedy, as MuLan's methodology decodes."""
    per_class: int | None = None

    def decoding(self) -> DecodingParams:
        return DecodingParams(
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
            seed=self.seed,
            token_logprobs=True,
            first_token_prob=True,
        )


_SENTENCE_END = re.compile(r"\.(\s|$)")


def answer_span(text: str) -> str:
    """The prediction that is scored: the generated text up to its first line break,
    then up to its first sentence-ending period, stripped."""
    line = text.strip().split("\n", 1)[0]
    end = _SENTENCE_END.search(line)
    return (line[: end.start()] if end else line).strip()


def _token_view(backend: Any, sample: Sample) -> tuple[list[str], list[float], list[bool]] | None:
    """The sample's generated tokens as text, their probabilities and special flags, if the backend tells."""
    logprobs = sample.token_logprobs
    if not logprobs:
        return None
    tokenizer = getattr(backend, "tokenizer", None)
    token_strings = getattr(backend, "token_strings", None)
    ids = sample.token_ids[: len(logprobs)] if sample.token_ids else []
    texts: list[str] | None = None
    if ids and token_strings is not None:  # hf backends decode token by token themselves
        texts = list(token_strings(ids))
    elif ids and tokenizer is not None:  # for vLLM we ask its tokenizer
        texts = [tokenizer.decode([t]) for t in ids]
    if texts is not None:
        specials = set(getattr(tokenizer, "all_special_ids", []) or []) | set(getattr(backend, "eos_ids", []) or [])
        return texts, [math.exp(lp) for lp in logprobs[: len(ids)]], [i in specials for i in ids]
    if sample.tokens is not None and len(sample.tokens) == len(logprobs):
        return list(sample.tokens), [math.exp(lp) for lp in logprobs], [False] * len(logprobs)
    return None


def sample_confidence(model: CachedModel, sample: Sample, fidelity: mm.Fidelity = "corrected") -> float | None:
    """First-token confidence of a greedy completion, by the same rule on every backend.

    Token texts come from the tokenizer (hf, vLLM) or the server's log-probabilities
    (OpenAI-compatible). ``original`` follows the original's HF path (case-sensitive article
    check) for hf models and its vLLM path (lower-cased) for vLLM and API models. Without
    token texts (e.g. an old cache entry) the backend's p(first token) is used where no
    article or leading whitespace can be skipped, an empty text scores 0, else None (unknown).
    """
    backend = model.backend
    view = _token_view(backend, sample)
    if view is not None:
        tokens, probabilities, special = view
        if fidelity == "original":
            case_sensitive = backend.info.backend not in {"vllm", "openai"}
            return mm.first_token_confidence_original(tokens, probabilities, special, case_sensitive=case_sensitive)
        return mm.first_token_confidence(tokens, probabilities, special)
    words = sample.text.split()
    if not words:
        return 0.0
    if sample.text[:1].isspace() or words[0].lower() in mm.ARTICLE_TOKENS:
        return None
    return sample.first_token_prob


def run_completion(
    model: CachedModel,
    queries: Sequence[CompletionQuery],
    config: CompletionConfig,
    wording: PromptWording,
    progress: Callable[[int], None] | None = None,
) -> list[CompletionRow]:
    params = config.decoding()
    require(model, params, purpose="MuLan-style fact completion")
    generations = model.generate([completion_prompt(wording, q.prefix) for q in queries], params, progress=progress)
    rows = []
    for q, gen in zip(queries, generations, strict=True):
        sample = gen.samples[0]
        prediction = answer_span(sample.text)
        rows.append(
            CompletionRow(
                model=model.info.label,
                query_id=q.query_id,
                fact_id=q.fact_id,
                fact_class=q.fact_class,
                relation=q.relation,
                template_index=q.template_index,
                prefix=q.prefix,
                generation=sample.text,
                prediction=prediction,
                golds=list(q.golds),
                f1=mm.f1_with_aliases(prediction, q.golds, q.aliases, truncate=mm.f1_truncation(config.fidelity)),
                confidence=sample_confidence(model, sample, config.fidelity),
            )
        )
    return rows


def _best_rows(rows: Sequence[CompletionRow]) -> dict[str, CompletionRow]:
    per_template: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        per_template.setdefault((r.relation, r.template_index), []).append(r.f1)
    best = mm.best_template_per_relation(per_template)
    return {r.fact_id: r for r in rows if best.get(r.relation) == r.template_index}


def _score(row: CompletionRow) -> mm.FactScore:
    return mm.FactScore(
        fact_id=row.fact_id, fact_class=row.fact_class, relation=row.relation, f1=row.f1, confidence=row.confidence
    )


def memorised_counts(rows: Sequence[CompletionRow], config: CompletionConfig) -> dict[str, int]:
    """Memorised facts per class before balancing (best template per relation)."""
    counts: dict[str, int] = {}
    for r in _best_rows(rows).values():
        counts[r.fact_class] = counts.get(r.fact_class, 0) + int(mm.is_memorised(_score(r), config.min_confidence))
    return counts


def select_for_update(rows: Sequence[CompletionRow], config: CompletionConfig) -> list[CompletionRow]:
    """The memorised facts (best template per relation), class-balanced."""
    best_rows = _best_rows(rows)
    scores = [_score(r) for r in best_rows.values()]
    chosen = mm.select_memorised(
        scores, seed=config.seed, min_confidence=config.min_confidence, per_class=config.per_class
    )
    return [best_rows[s.fact_id] for s in chosen]


def run_updates(
    model: CachedModel,
    queries: Sequence[CompletionQuery],
    completion_rows: Sequence[CompletionRow],
    config: CompletionConfig,
    wording: PromptWording,
    progress: Callable[[int], None] | None = None,
) -> list[UpdateRow]:
    """Update success rows for the memorised facts of one model."""
    by_id = {q.query_id: q for q in queries}
    answers_by_relation: dict[str, list[str]] = {}
    for q in queries:
        answers_by_relation.setdefault(q.relation, []).extend(q.golds)
    rng = random.Random(config.seed)
    plans = []
    for row in select_for_update(completion_rows, config):
        q = by_id[row.query_id]
        others = [a for a in dict.fromkeys(answers_by_relation[q.relation]) if a not in q.golds]
        new_object = mm.pick_new_object(row.prediction, others, rng)
        if new_object is None:
            continue
        other_template = q.templates[(q.template_index + 1) % len(q.templates)]
        altered = fill(other_template, q.subject, new_object)
        plans.append((q, row, new_object, altered))
    if not plans:
        return []
    params = config.decoding()
    prompts = [
        completion_prompt(wording, q.prefix, preamble=mm.update_prompt(altered, "")) for q, _, _, altered in plans
    ]
    generations = model.generate(prompts, params, progress=progress)
    out = []
    for (q, row, new_object, altered), gen in zip(plans, generations, strict=True):
        prediction = answer_span(gen.samples[0].text)
        out.append(
            UpdateRow(
                model=model.info.label,
                fact_id=q.fact_id,
                fact_class=q.fact_class,
                relation=q.relation,
                query_id=q.query_id,
                original_prediction=row.prediction,
                new_object=new_object,
                altered_fact=altered,
                prediction=prediction,
                success=mm.update_succeeded(prediction, new_object, fidelity=config.fidelity),
            )
        )
    return out


def summarise_completion(
    rows: Sequence[CompletionRow],
    updates: Sequence[UpdateRow],
    classes: Sequence[str],
    config: CompletionConfig | None = None,
) -> dict[str, dict[str, Any]]:
    """Per class: F1 x100 and confidence (relations weighted by example counts), update success rate.

    As in the original, F1 means leave out queries with an empty prediction (counted in
    ``empty_predictions``), and confidence means include empty generations as 0 (their
    confidence is 0.0; only an unknown confidence, None, is left out).
    """
    config = config or CompletionConfig()
    out: dict[str, dict[str, Any]] = {}
    memorised = memorised_counts(rows, config)
    for fact_class in classes:
        mine = [r for r in rows if r.fact_class == fact_class]
        per_rel_f1: dict[str, tuple[float, int]] = {}
        per_rel_conf: dict[str, tuple[float, int]] = {}
        for relation in sorted({r.relation for r in mine}):
            rel = [r for r in mine if r.relation == relation]
            scored = [r for r in rel if not mm.is_empty_prediction(r.prediction)]
            if scored:
                per_rel_f1[relation] = (100.0 * sum(r.f1 for r in scored) / len(scored), len(scored))
            confs = [r.confidence for r in rel if r.confidence is not None]
            if confs:
                per_rel_conf[relation] = (sum(confs) / len(confs), len(confs))
        ups = [u for u in updates if u.fact_class == fact_class]
        out[fact_class] = {
            "queries": len(mine),
            "empty_predictions": sum(mm.is_empty_prediction(r.prediction) for r in mine),
            "f1": mm.weighted_type_mean(per_rel_f1) if per_rel_f1 else None,
            "confidence": mm.weighted_type_mean(per_rel_conf) if per_rel_conf else None,
            "f1_per_relation": {r: v[0] for r, v in per_rel_f1.items()},
            "memorised": memorised.get(fact_class, 0),
            "updates": len(ups),
            "update_success": mm.update_success_rate(
                [u.prediction for u in ups], [u.new_object for u in ups], fidelity=config.fidelity
            )
            if ups
            else None,
        }
        out[fact_class]["estimates"] = _completion_estimates(out[fact_class], mine, ups, config)
    return out


def _completion_estimates(
    stats: dict[str, Any], mine: Sequence[CompletionRow], ups: Sequence[UpdateRow], config: CompletionConfig
) -> dict[str, Any]:
    """n and a 95% interval for F1, confidence, each relation's F1 (seeded bootstrap) and update
    success (Wilson).

    Weighting relations by their example counts makes F1 and confidence plain means over the
    queries they count. A fact's queries (its templates) share the fact, so the bootstrap
    resamples facts, with their queries; update success has one prompt per memorised fact.
    """
    scored = [r for r in mine if not mm.is_empty_prediction(r.prediction)]

    def f1_mean(rows: Sequence[CompletionRow], point: float | None) -> dict[str, Any]:
        values, facts = [100.0 * r.f1 for r in rows], [r.fact_id for r in rows]
        return bootstrap_mean_clustered(values, facts, point=point).to_json()

    per_relation = {
        relation: f1_mean([r for r in scored if r.relation == relation], point)
        for relation, point in stats["f1_per_relation"].items()
    }
    confident = [r for r in mine if r.confidence is not None]
    confidences = [float(r.confidence) for r in confident if r.confidence is not None]
    successes = [mm.update_succeeded(u.prediction, u.new_object, fidelity=config.fidelity) for u in ups]
    return {
        "f1": f1_mean(scored, stats["f1"]),
        "confidence": bootstrap_mean_clustered(
            confidences, [r.fact_id for r in confident], point=stats["confidence"]
        ).to_json(),
        "update_success": wilson_from_flags(successes).reported_as(stats["update_success"]).to_json(),
        "f1_per_relation": per_relation,
    }


def mulan_completion_queries(
    queries: Sequence[Any], templates: Mapping[str, Sequence[str]], aliases: Mapping[str, Sequence[str]]
) -> list[CompletionQuery]:
    """MuLan queries -> completion queries (subject recovered from the query text)."""

    out = []
    for q in queries:
        rel_templates = templates.get(q.relation)
        if not rel_templates:
            raise DataError(q.source, f"no templates for relation {q.relation}")
        subject = subject_of(q, rel_templates)
        if subject is None:
            raise DataError(q.source, f"query {q.query!r} matches none of {q.relation}'s templates")
        alias_list = [a for ans in q.answers if ans.qid for a in aliases.get(ans.qid, [])]
        out.append(
            CompletionQuery(
                query_id=q.query_id,
                fact_id=q.fact_id,
                fact_class=q.fact_class,
                relation=q.relation,
                template_index=q.template_index if q.template_index < len(rel_templates) else 0,
                subject=subject,
                templates=tuple(rel_templates),
                golds=tuple(a.name for a in q.answers),
                aliases=tuple(alias_list),
            )
        )
    return out


def dynamicqa_completion_queries(facts: Sequence[Any], matcher: Any) -> list[CompletionQuery]:
    """DynamicQA facts -> five completion queries each (one per statement paraphrase)."""

    out = []
    for fact in facts:
        found = matcher.match(fact.question)
        if found is None:
            raise DataError(fact.source, f"question {fact.question!r} matches none of the 16 templates")
        template, subject = found
        for index in range(len(template.statements)):
            out.append(
                CompletionQuery(
                    query_id=f"{fact.fact_id}/{index}",
                    fact_id=fact.fact_id,
                    fact_class=fact.fact_class,
                    relation=template.relation,
                    template_index=index,
                    subject=subject,
                    templates=template.statements,
                    golds=(fact.answer,),
                    aliases=tuple(fact.possible_answers),
                )
            )
    return out
