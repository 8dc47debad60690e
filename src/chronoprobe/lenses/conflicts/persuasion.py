"""DynamicQA's methodology: n samples per input with and without context, clustered
by an equivalence judge, scored with accuracy, Coherent Persuasion, semantic
entropy and stubborn/persuaded shares.

Work runs in chunks of facts, so per-sample vocabulary distributions are only
held for one chunk at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.dynamicqa import ContextFact, ContextItem, expand
from chronoprobe.errors import CapabilityError
from chronoprobe.judges.base import Judge, cluster_many
from chronoprobe.lenses.conflicts.prompts import PromptWording, qa_prompt
from chronoprobe.lenses.conflicts.rows import PersuasionRow
from chronoprobe.metrics import conflicts as m
from chronoprobe.metrics.uncertainty import Estimate, bootstrap_difference, bootstrap_mean_clustered, wilson_clustered
from chronoprobe.models.base import Capability, DecodingParams, Generation, NewTokens, require


class PersuasionConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    n_samples: int = 10
    temperature: float = 0.5
    top_p: float = 1.0
    max_new_tokens: NewTokens = 20
    seed: int = 10
    rouge_threshold: float = m.ROUGE_THRESHOLD
    chunk_facts: int = 32
    topk_approximation: bool = False
    """Allow a backend without exact distributions to supply a declared top-k approximation."""

    def decoding(self) -> DecodingParams:
        return DecodingParams(
            n=self.n_samples,
            temperature=self.temperature,
            top_p=self.top_p,
            max_new_tokens=self.max_new_tokens,
            seed=self.seed,
            token_logprobs=True,
            mean_distribution=True,
        )


def check_capabilities(model: CachedModel, config: PersuasionConfig) -> str:
    """Fail before work if the backend cannot supply what CP needs; return the distribution source."""
    params = config.decoding()
    backend = model  # what it can do, without loading it
    if Capability.MEAN_DISTRIBUTION in backend.capabilities:
        require(backend, params, purpose="Coherent Persuasion and semantic entropy")
        return "exact: mean softmax over generated positions"
    if config.topk_approximation and Capability.TOPK_LOGPROBS in backend.capabilities:
        require(backend, params.model_copy(update={"mean_distribution": False}), purpose="semantic entropy")
        return "approximation: backend-supplied top-k distribution (renormalised over the returned tokens)"
    hint = (
        ""
        if config.topk_approximation
        else "; pass --topk-approximation to accept a top-k approximation where the backend offers one"
    )
    raise CapabilityError(
        f"model {backend.info.spec}",
        f"Coherent Persuasion needs each sample's mean next-token distribution, which the {backend.info.backend} backend does not provide{hint}",
    )


def _texts(generation: Generation) -> list[str]:
    return [s.text.strip() for s in generation.samples]


def _logliks(generation: Generation) -> list[float]:
    return [m.length_normalised_loglik(s.token_logprobs or [0.0]) for s in generation.samples]


def _dists(generation: Generation, where: str) -> list[np.ndarray]:
    out = []
    for s in generation.samples:
        if s.mean_distribution is None:
            raise CapabilityError(where, "the backend returned a sample without a distribution")
        out.append(s.mean_distribution)
    return out


def run_persuasion(
    model: CachedModel,
    facts: Sequence[ContextFact],
    judge: Judge,
    config: PersuasionConfig,
    wording: PromptWording,
    progress: Callable[[int], None] | None = None,
) -> list[PersuasionRow]:
    """Per-item result rows (one per context item) for one model."""
    params = config.decoding()
    rows: list[PersuasionRow] = []
    for start in range(0, len(facts), config.chunk_facts):
        chunk = list(facts[start : start + config.chunk_facts])
        items: list[ContextItem] = [item for fact in chunk for item in expand(fact)]
        prompts = [qa_prompt(wording, f.question) for f in chunk] + [
            qa_prompt(wording, it.question, it.context) for it in items
        ]
        generations = model.generate(prompts, params, progress=progress)
        no_ctx = {f.fact_id: g for f, g in zip(chunk, generations[: len(chunk)], strict=True)}
        with_ctx = generations[len(chunk) :]
        clusters = cluster_many([_texts(g) for g in generations], judge)
        no_ctx_clusters = {f.fact_id: c for f, c in zip(chunk, clusters[: len(chunk)], strict=True)}
        for item, gen, ids in zip(items, with_ctx, clusters[len(chunk) :], strict=True):
            base = no_ctx[item.fact_id]
            base_ids = no_ctx_clusters[item.fact_id]
            cp = m.coherent_persuasion_from_samples(
                _dists(gen, item.item_id), ids, _dists(base, item.item_id), base_ids
            )
            y_ctx = gen.samples[0].text.strip()
            y_noctx = base.samples[0].text.strip()
            t = config.rouge_threshold
            rows.append(
                PersuasionRow(
                    model=model.info.label,
                    item_id=item.item_id,
                    fact_id=item.fact_id,
                    dataset=item.dataset,
                    fact_class=item.fact_class,
                    relation=item.relation,
                    counterfactual=item.counterfactual,
                    question=item.question,
                    true_answer=item.true_answer,
                    inserted=item.inserted,
                    substitute=item.substitute,
                    answers_context=_texts(gen),
                    answers_no_context=_texts(base),
                    clusters_context=ids,
                    clusters_no_context=base_ids,
                    cp=cp,
                    se_context=m.semantic_entropy(_logliks(gen), ids),
                    se_no_context=m.semantic_entropy(_logliks(base), base_ids),
                    correct_context=m.is_correct(y_ctx, item.inserted, t),
                    correct_no_context=m.is_correct(y_noctx, item.true_answer, t),
                    correct_no_context_original=(
                        m.is_correct(y_noctx, item.true_answer, t) + m.is_correct(y_noctx, item.substitute, t)
                    )
                    / 2,
                    persuaded=m.is_persuaded(y_ctx, item.substitute, t) if item.counterfactual else None,
                    stubborn=m.is_stubborn(y_ctx, y_noctx, item.substitute, t) if item.counterfactual else None,
                )
            )
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    clean = [v for v in values if v is not None and not math.isnan(v)]
    return sum(clean) / len(clean) if clean else None


def _percent(flags: Sequence[float]) -> float | None:
    share = _mean(flags)
    return None if share is None else 100.0 * share


def summarise_persuasion(
    rows: Sequence[PersuasionRow], classes: Sequence[str], no_context_accuracy_classes: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per class: Eq. 4 / Eq. 5 accuracy, CP, SE, stubborn/persuaded %, counts.

    CP is the mean over all with-context items of the class, true-context and
    counterfactual alike (the paper's tables and the original code); the means over each
    context type are reported beside it.
    """
    out: dict[str, dict[str, Any]] = {}
    for fact_class in classes:
        mine = [r for r in rows if r.fact_class == fact_class]
        cf = [r for r in mine if r.counterfactual]
        true_ctx = [r for r in mine if not r.counterfactual]
        per_fact: dict[str, PersuasionRow] = {}
        for r in mine:
            per_fact.setdefault(r.fact_id, r)
        report_no_ctx = no_context_accuracy_classes is None or fact_class in no_context_accuracy_classes
        out[fact_class] = {
            "facts": len(per_fact),
            "items": len(mine),
            # Eq. 4: mean over both items of every fact = 1/(2N) sum (hit_true + hit_cf).
            "accuracy_context": _mean([float(r.correct_context) for r in mine]),
            "accuracy_no_context": _mean([float(r.correct_no_context) for r in per_fact.values()])
            if report_no_ctx
            else None,
            "accuracy_no_context_original": _mean([float(r.correct_no_context_original) for r in per_fact.values()])
            if report_no_ctx
            else None,
            "cp": _mean([r.cp for r in mine]),
            "cp_true_context": _mean([r.cp for r in true_ctx]),
            "cp_counterfactual": _mean([r.cp for r in cf]),
            "se_context": _mean([r.se_context for r in mine]),
            "se_no_context": _mean([r.se_no_context for r in per_fact.values()]),
            "stubborn_pct": _percent([float(r.stubborn is True) for r in cf]),
            "persuaded_pct": _percent([float(r.persuaded is True) for r in cf]),
        }
        out[fact_class]["estimates"] = _persuasion_estimates(
            out[fact_class], mine, cf, true_ctx, list(per_fact.values()), report_no_ctx
        )
    return out


def cp_difference(rows: Sequence[PersuasionRow], first: str, second: str, point: float | None) -> Estimate:
    """CP of class ``first`` minus CP of class ``second`` (one model's rows), with a bootstrap that
    resamples each class's facts on its own (a fact's contexts stay together); n counts the items of both."""

    def cps(fact_class: str) -> list[PersuasionRow]:
        return [r for r in rows if r.fact_class == fact_class and _number(r.cp)]

    a, b = cps(first), cps(second)
    facts = ([r.fact_id for r in a], [r.fact_id for r in b])
    return bootstrap_difference([r.cp for r in a], [r.cp for r in b], point=point, clusters=facts)


def _persuasion_estimates(
    stats: dict[str, Any],
    mine: Sequence[PersuasionRow],
    cf: Sequence[PersuasionRow],
    true_ctx: Sequence[PersuasionRow],
    per_fact: Sequence[PersuasionRow],
    report_no_ctx: bool,
) -> dict[str, dict[str, Any] | None]:
    """n and a 95% interval for every number of the class, keyed like it: Wilson for the
    accuracies and stubborn/persuaded shares, a seeded bootstrap for the means. A fact's contexts
    (its true one and its counterfactual) share the fact, so the intervals cluster on it: the
    Wilson interval at the clustered effective size, the bootstrap resampling facts."""

    def share(rows: Sequence[PersuasionRow], flag: str, scale: float = 1.0) -> Estimate:
        flags = [bool(getattr(r, flag)) for r in rows]
        return wilson_clustered(flags, [r.fact_id for r in rows], scale=scale)

    def mean(key: str, rows: Sequence[PersuasionRow], value: str, *, is_share: bool = False) -> dict[str, Any]:
        kept = [(getattr(r, value), r.fact_id) for r in rows if _number(getattr(r, value))]
        values, facts = [v for v, _ in kept], [f for _, f in kept]
        return bootstrap_mean_clustered(values, facts, point=stats[key], share=is_share).to_json()

    def shown(key: str, estimate: Estimate) -> dict[str, Any]:
        return estimate.reported_as(stats[key]).to_json()

    return {
        "accuracy_context": shown("accuracy_context", share(mine, "correct_context")),
        "accuracy_no_context": shown("accuracy_no_context", share(per_fact, "correct_no_context"))
        if report_no_ctx
        else None,
        "accuracy_no_context_original": mean(
            "accuracy_no_context_original", per_fact, "correct_no_context_original", is_share=True
        )
        if report_no_ctx
        else None,
        "cp": mean("cp", mine, "cp"),
        "cp_true_context": mean("cp_true_context", true_ctx, "cp"),
        "cp_counterfactual": mean("cp_counterfactual", cf, "cp"),
        "se_context": mean("se_context", mine, "se_context"),
        "se_no_context": mean("se_no_context", per_fact, "se_no_context"),
        "stubborn_pct": shown("stubborn_pct", share(cf, "stubborn", 100.0)),
        "persuaded_pct": shown("persuaded_pct", share(cf, "persuaded", 100.0)),
    }


def _number(value: float | None) -> bool:
    """A value a mean counts (not None, not NaN)."""
    return value is not None and not math.isnan(value)
