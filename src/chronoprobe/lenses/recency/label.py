"""The RecencyQA labelling pipeline, for new questions (paper section 4.2).

1. Recency labels: ``samples`` (13) samples per question from one shared prompt
   pass (temperature 0.7, top_p 0.9). Unparseable samples are redrawn at the
   lower ``retry_temperatures``, one round each; what is still unparseable is
   dropped. Distribution, majority, confidence and entropy come from the parsed
   samples.
2. Stationarity: one greedy vote per voter model (up to three), majority, then
   the four consistency rules (``stationarity.py``). Rule 4 discards.
3. Contexts: for every (question, label), ``candidates`` contexts per round;
   each is relabelled ``verify_samples`` (13) times and is verified only if
   every relabelling gives the intended label. Labels without a verified
   context get a new round, up to ``max_context_rounds``. The longest verified
   context (words, then characters) is kept.

Every model call goes through ``CachedModel.generate``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.recency_taxonomy import RecencyClass, Stationarity
from chronoprobe.datasets.recencyqa import LabelContext, RecencyItem
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import read_text
from chronoprobe.lenses.recency.parse import (
    parse_contexts,
    parse_recency_answer,
    parse_stationarity_vote,
)
from chronoprobe.lenses.recency.prompts import Template, builtin, load_template
from chronoprobe.lenses.recency.stationarity import StationarityDecision, decide
from chronoprobe.metrics import recency as m
from chronoprobe.models.base import DecodingParams, NewTokens, Prompt

ProgressFactory = Callable[[str, int], Callable[[int], None]]


class LabelConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    samples: int = Field(13, ge=1)
    temperature: float = Field(0.7, ge=0.0)
    top_p: float = Field(0.9, gt=0.0, le=1.0)
    retry_temperatures: tuple[float, ...] = (0.3, 0.0)
    """One redraw round per entry, for the samples still unparseable."""
    seed: int = 0
    label_max_new_tokens: NewTokens = Field(32, ge=4)
    vote_max_new_tokens: NewTokens = Field(32, ge=2)
    candidates: int = Field(3, ge=1)
    context_temperature: float = Field(0.9, ge=0.0)
    context_max_new_tokens: NewTokens = Field(60, ge=8)
    verify_samples: int = Field(13, ge=1)
    max_context_rounds: int = Field(3, ge=1)
    """Context generation rounds per (question, label); 1 means no regeneration."""
    require_verified: bool = False
    """Paper behaviour: drop a question unless every label has a verified context."""
    label_prompt: Path | None = None
    verify_prompt: Path | None = None
    stationarity_prompt: Path | None = None
    context_prompt: Path | None = None

    def template(self, kind: str) -> Template:
        override = {
            "label": self.label_prompt,
            "label_with_context": self.verify_prompt,
            "stationarity": self.stationarity_prompt,
            "context_generation": self.context_prompt,
        }[kind]
        return load_template(override) if override else builtin(kind)


class QuestionIn(BaseModel):
    q_id: int | str
    question: str
    source: str = "user"
    hop_type: str = "unknown"


def read_questions(path: Path) -> list[QuestionIn]:
    """JSONL (one object with a "question" per line) or a JSON list of such objects / strings."""
    path = Path(path)
    if not path.is_file():
        raise DataError(str(path), "no such file")
    text = read_text(path)
    rows: list[tuple[str, Any]] = []
    if text.lstrip().startswith("["):
        try:
            rows = [(f"{path} item {i}", row) for i, row in enumerate(json.loads(text))]
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((f"{path} line {number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DataError(f"{path} line {number}", f"invalid JSON: {exc.msg}") from None
    questions: list[QuestionIn] = []
    seen: set[str] = set()
    for position, (where, row) in enumerate(rows, start=1):
        if isinstance(row, str):
            row = {"question": row}
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
            raise DataError(where, 'expected an object with a non-empty "question" string')
        q = QuestionIn(
            q_id=row.get("q_id", position),
            question=row["question"].strip(),
            source=str(row.get("source", "user")),
            hop_type=str(row.get("hop_type", "unknown")),
        )
        if str(q.q_id) in seen:
            raise DataError(where, f"duplicate q_id {q.q_id!r}")
        seen.add(str(q.q_id))
        questions.append(q)
    if not questions:
        raise DataError(str(path), "no questions")
    return questions


def _params(config: LabelConfig, *, n: int, temperature: float, seed: int, max_new_tokens: int) -> DecodingParams:
    return DecodingParams(
        n=n,
        temperature=temperature,
        top_p=config.top_p if temperature > 0 else 1.0,
        seed=seed,
        max_new_tokens=max_new_tokens,
    )


def sample_labels(
    prompts: Sequence[Prompt],
    model: CachedModel,
    config: LabelConfig,
    *,
    n: int,
    seed: int,
    progress: ProgressFactory | None = None,
    what: str = "labelling",
) -> tuple[list[list[RecencyClass | None]], int, int]:
    """``n`` parsed labels per prompt (None = unparseable after all retries), the number of samples
    unparseable in the first pass, and the number of redraws."""
    params = _params(config, n=n, temperature=config.temperature, seed=seed, max_new_tokens=config.label_max_new_tokens)
    callback = progress(what, len(prompts)) if progress else None
    generations = model.generate(prompts, params, progress=callback)
    labels = [[parse_recency_answer(s.text).label for s in g.samples] for g in generations]
    first_unparseable = sum(label is None for row in labels for label in row)
    redraws = 0
    for round_number, temperature in enumerate(config.retry_temperatures, start=1):
        by_count: dict[int, list[int]] = defaultdict(list)
        for i, row in enumerate(labels):
            missing = sum(label is None for label in row)
            if missing:
                by_count[missing].append(i)
        for count, indices in sorted(by_count.items()):
            retry = _params(
                config,
                n=count,
                temperature=temperature,
                seed=seed + 1000 * round_number,
                max_new_tokens=config.label_max_new_tokens,
            )
            callback = (
                progress(f"{what}: {count} redraw(s) at temperature {temperature:g}", len(indices))
                if progress
                else None
            )
            fresh = model.generate([prompts[i] for i in indices], retry, progress=callback)
            redraws += count * len(indices)
            for i, generation in zip(indices, fresh, strict=True):
                new = iter(parse_recency_answer(s.text).label for s in generation.samples)
                labels[i] = [label if label is not None else next(new) for label in labels[i]]
    return labels, first_unparseable, redraws


class LabelReport(BaseModel):
    questions: int = 0
    unlabelled: list[str] = Field(default_factory=list)
    """q_ids with no parseable sample at all."""
    samples_unparseable_first_pass: int = 0
    samples_redrawn: int = 0
    samples_unparseable_final: int = 0
    rule_counts: dict[str, int] = Field(default_factory=dict)
    discarded_rule4: list[dict[str, Any]] = Field(default_factory=list)
    preliminary_ties: int = 0
    context_targets: int = 0
    context_targets_verified: int = 0
    candidates_generated: int = 0
    candidates_verified: int = 0
    context_rounds_used: int = 0
    dropped_unverified: list[str] = Field(default_factory=list)
    dropped_no_context: list[str] = Field(default_factory=list)
    kept: int = 0
    stationary: int = 0
    non_stationary: int = 0


def label_dataset(
    questions: Sequence[QuestionIn],
    labeller: CachedModel,
    voters: Sequence[CachedModel],
    config: LabelConfig,
    progress: ProgressFactory | None = None,
) -> tuple[list[RecencyItem], LabelReport]:
    """Label each question's recency class, vote on its stationarity, and find a context per label.

    The model calls go in this order: the label samples, each voter's votes, then the contexts."""
    if not 1 <= len(voters) <= 3:
        raise ConfigError("--voter", f"needs one to three stationarity voters, got {len(voters)}")
    report = LabelReport(questions=len(questions))
    labelled, raw_samples = _label_questions(questions, labeller, config, report, progress)
    kept = _vote_stationarity(labelled, voters, config, report, progress)
    contexts = generate_contexts(
        [(q, sorted(set(parsed))) for q, parsed, _ in kept], labeller, config, report, progress
    )
    voter_labels = [v.info.label for v in voters]
    items: list[RecencyItem] = []
    for (q, parsed, decision), chosen in zip(kept, contexts, strict=True):
        item = _item(q, parsed, decision, chosen, raw_samples[str(q.q_id)], voter_labels, config, report)
        if item is not None:
            items.append(item)
    report.kept = len(items)
    report.stationary = sum(item.final_stationary_label is Stationarity.STATIONARY for item in items)
    report.non_stationary = report.kept - report.stationary
    return items, report


Kept = tuple[QuestionIn, list[RecencyClass], StationarityDecision]
"""A question that passed the stationarity vote: its parsed labels and the decision."""


def _label_questions(
    questions: Sequence[QuestionIn],
    labeller: CachedModel,
    config: LabelConfig,
    report: LabelReport,
    progress: ProgressFactory | None,
) -> tuple[list[tuple[QuestionIn, list[RecencyClass]]], dict[str, list[RecencyClass | None]]]:
    """(each question with a parseable label and its labels, every question's raw samples by q_id)."""
    label_t = config.template("label")
    prompts = [label_t.fill(question=q.question) for q in questions]
    samples, first_unparseable, redrawn = sample_labels(
        prompts, labeller, config, n=config.samples, seed=config.seed, progress=progress, what="recency labels"
    )
    report.samples_unparseable_first_pass, report.samples_redrawn = first_unparseable, redrawn
    report.samples_unparseable_final = sum(label is None for row in samples for label in row)

    labelled: list[tuple[QuestionIn, list[RecencyClass]]] = []
    raw_samples: dict[str, list[RecencyClass | None]] = {}
    for q, row in zip(questions, samples, strict=True):
        parsed = [label for label in row if label is not None]
        raw_samples[str(q.q_id)] = row
        if parsed:
            labelled.append((q, parsed))
        else:
            report.unlabelled.append(str(q.q_id))
    return labelled, raw_samples


def _vote_stationarity(
    labelled: Sequence[tuple[QuestionIn, list[RecencyClass]]],
    voters: Sequence[CachedModel],
    config: LabelConfig,
    report: LabelReport,
    progress: ProgressFactory | None,
) -> list[Kept]:
    """Stationarity votes (greedy, one per voter, on the majority label); the questions rule 4 does not discard."""
    stat_t = config.template("stationarity")
    vote_prompts = [stat_t.fill(question=q.question, label=m.majority_label(parsed).label) for q, parsed in labelled]
    vote_params = DecodingParams(n=1, temperature=0.0, seed=config.seed, max_new_tokens=config.vote_max_new_tokens)
    votes_by_voter = []
    for voter in voters:
        callback = progress(f"stationarity votes ({voter.info.label})", len(vote_prompts)) if progress else None
        generations = voter.generate(vote_prompts, vote_params, progress=callback) if vote_prompts else []
        votes_by_voter.append([parse_stationarity_vote(g.text) for g in generations])

    kept: list[Kept] = []
    for index, (q, parsed) in enumerate(labelled):
        votes = [votes[index] for votes in votes_by_voter]
        decision = decide(votes, len(set(parsed)))
        report.rule_counts[str(decision.rule)] = report.rule_counts.get(str(decision.rule), 0) + 1
        report.preliminary_ties += decision.preliminary_source != "vote"
        if decision.discarded:
            report.discarded_rule4.append(
                {
                    "q_id": q.q_id,
                    "question": q.question,
                    "label": m.majority_label(parsed).label,
                    "votes": decision.votes,
                }
            )
        else:
            kept.append((q, parsed, decision))
    return kept


def _item(
    q: QuestionIn,
    parsed: list[RecencyClass],
    decision: StationarityDecision,
    chosen: Sequence[tuple[str, bool, str] | None],
    row_samples: Sequence[RecencyClass | None],
    voter_labels: Sequence[str],
    config: LabelConfig,
    report: LabelReport,
) -> RecencyItem | None:
    """The dataset item of one kept question; None (and a note in ``report``) when a label lacks its context."""
    labels = sorted(set(parsed))
    verified = {label.label: c is not None and c[1] for label, c in zip(labels, chosen, strict=True)}
    found = [c for c in chosen if c is not None]
    if len(found) < len(chosen):
        report.dropped_no_context.append(str(q.q_id))
        return None
    if config.require_verified and not all(verified.values()):
        report.dropped_unverified.append(str(q.q_id))
        return None
    distribution = m.label_distribution(parsed)
    return RecencyItem(
        q_id=q.q_id,
        question=q.question,
        source=q.source,
        hop_type=q.hop_type,
        unique_labels=tuple(labels),
        label_distribution=distribution,
        majority_label=m.majority_label(parsed),
        confidence=m.confidence(distribution),
        entropy=m.entropy(distribution),
        label_contexts=tuple(
            LabelContext(recency_label=label, context=c[0]) for label, c in zip(labels, found, strict=True)
        ),
        final_stationary_label=decision.final,
        extra={
            "label_samples": [label.label if label is not None else None for label in row_samples],
            "stationarity_votes": dict(zip(voter_labels, decision.votes, strict=True)),
            "preliminary_stationarity": decision.preliminary.value,
            "stationarity_rule": decision.rule,
            "contexts_verified": verified,
            "context_agreement": {label.label: c[2] for label, c in zip(labels, found, strict=True)},
        },
    )


def _length(context: str) -> tuple[int, int]:
    return (len(context.split()), len(context))


def generate_contexts(
    targets: Sequence[tuple[QuestionIn, list[RecencyClass]]],
    model: CachedModel,
    config: LabelConfig,
    report: LabelReport,
    progress: ProgressFactory | None = None,
) -> list[list[tuple[str, bool, str] | None]]:
    """Per question, per label: (context, verified, "agreeing/relabellings") or None when no candidate parsed.

    Verified contexts win (the longest); without one, the candidate with the most
    agreeing relabellings (then the longest) is returned, marked unverified.
    """
    flat = [(targets[qi][0].question, label, qi) for qi, (_, labels) in enumerate(targets) for label in labels]
    report.context_targets = len(flat)
    # candidate pool per target: context -> agreeing relabellings
    pool: dict[int, dict[str, int]] = {t: {} for t in range(len(flat))}
    pending = list(range(len(flat)))
    for round_number in range(config.max_context_rounds):
        if not pending:
            break
        report.context_rounds_used = round_number + 1
        _context_round(round_number, [(t, *flat[t][:2]) for t in pending], pool, model, config, report, progress)
        pending = [t for t in pending if not any(a == config.verify_samples for a in pool[t].values())]
    result: list[list[tuple[str, bool, str] | None]] = [[] for _ in targets]
    for t, (_, _, qi) in enumerate(flat):
        result[qi].append(_chosen_context(pool[t], config, report))
    return result


def _context_round(
    round_number: int,
    pending: Sequence[tuple[int, str, RecencyClass]],
    pool: dict[int, dict[str, int]],
    model: CachedModel,
    config: LabelConfig,
    report: LabelReport,
    progress: ProgressFactory | None,
) -> None:
    """One round for the targets still without a verified context (target, question, label): new candidate contexts,
    each relabelled ``verify_samples`` times, into ``pool`` with its agreeing relabellings."""
    gen_t, verify_t = config.template("context_generation"), config.template("label_with_context")
    gen_prompts = [
        gen_t.fill(question=question, label=label.label, label_description=label.description)
        for _, question, label in pending
    ]
    gen_params = DecodingParams(
        n=config.candidates,
        temperature=config.context_temperature,
        top_p=config.top_p,
        seed=config.seed + round_number,
        max_new_tokens=config.context_max_new_tokens,
    )
    callback = progress(f"contexts, round {round_number + 1}", len(gen_prompts)) if progress else None
    generations = model.generate(gen_prompts, gen_params, progress=callback)
    fresh: list[tuple[int, str, RecencyClass, str]] = []
    for (t, question, label), generation in zip(pending, generations, strict=True):
        found: list[str] = []
        for sample in generation.samples:
            for context in parse_contexts(sample.text):
                if context not in pool[t] and context not in found:
                    found.append(context)
        fresh += [(t, question, label, c) for c in found[: config.candidates]]
    report.candidates_generated += len(fresh)
    if not fresh:
        return
    verify_prompts = [verify_t.fill(question=question, context=c) for _, question, _, c in fresh]
    relabels, _, _ = sample_labels(
        verify_prompts,
        model,
        config,
        n=config.verify_samples,
        seed=config.seed,
        progress=progress,
        what=f"verifying contexts, round {round_number + 1}",
    )
    for (t, _, label, context), row in zip(fresh, relabels, strict=True):
        agree = sum(relabelled == label for relabelled in row)
        pool[t][context] = agree
        report.candidates_verified += agree == config.verify_samples


def _chosen_context(
    candidates: dict[str, int], config: LabelConfig, report: LabelReport
) -> tuple[str, bool, str] | None:
    """The longest verified candidate, else the most agreed with (then the longest); None without candidates."""
    if not candidates:
        return None
    verified = [c for c, a in candidates.items() if a == config.verify_samples]
    if verified:
        best = max(verified, key=_length)
        report.context_targets_verified += 1
    else:
        best = max(candidates, key=lambda c: (candidates[c], *_length(c)))
    return best, bool(verified), f"{candidates[best]}/{config.verify_samples}"
