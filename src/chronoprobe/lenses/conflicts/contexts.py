"""Natural contexts for MuLan facts (the reproduction study's RQ3 pipeline).

1. A generator model writes a Wikipedia-style passage per fact (greedy).
2. A passage is kept only if it mentions the object and an NLI model gives
   P(entailment | premise=passage, hypothesis=fact sentence) >= a threshold.
3. The object in the passage becomes ``[ENTITY]``; the substitute is the most
   similar other object of the same relation by embedding cosine (sharing no word
   with the true object).
4. N facts per class are sampled with a fixed seed.

The output is a JSONL file that ``conflicts run mulan --methodology dynamicqa`` reads.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.dynamicqa import PLACEHOLDER, ContextFact
from chronoprobe.datasets.mulan import MulanQuery, subject_of
from chronoprobe.errors import DataError
from chronoprobe.io import read_text
from chronoprobe.lenses.conflicts.prompts import PromptWording, passage_prompt
from chronoprobe.lenses.conflicts.templates import fill, mulan_question
from chronoprobe.metrics.mulan import shares_no_word
from chronoprobe.models.base import DecodingParams, NewTokens


class ContextsConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    min_entailment: float | None = 0.95
    """None: keep every passage that mentions the object (no NLI filter)."""
    per_class: int = 2500
    seed: int = 0
    max_new_tokens: NewTokens = 120


class ContextRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    fact_class: str
    relation: str
    subject: str
    question: str
    obj: str
    replace_name: str
    context: str
    possible_answers: list[str]
    fact_sentence: str
    entailment: float | None


def _first_fact_per_subject(queries: Sequence[MulanQuery]) -> list[MulanQuery]:
    """One query per fact: its template-0 query if present, else the first one seen."""
    seen: dict[str, MulanQuery] = {}
    for q in queries:
        if q.fact_id not in seen or (q.template_index == 0 and seen[q.fact_id].template_index != 0):
            seen[q.fact_id] = q
    return list(seen.values())


def _mask(passage: str, obj: str) -> str | None:
    pattern = re.compile(re.escape(obj), re.IGNORECASE)
    return pattern.sub(PLACEHOLDER, passage) if pattern.search(passage) else None


def build_contexts(
    queries: Sequence[MulanQuery],
    templates: Mapping[str, Sequence[str]],
    aliases: Mapping[str, Sequence[str]],
    generator: CachedModel,
    entailment: Callable[[Sequence[tuple[str, str]]], list[float]] | None,
    embed: Callable[[Sequence[str]], np.ndarray],
    config: ContextsConfig,
    wording: PromptWording,
    progress: Callable[[int], None] | None = None,
    pool: Sequence[MulanQuery] | None = None,
) -> tuple[list[ContextRow], dict[str, int]]:
    """The kept context rows and a count of why facts were dropped.

    ``pool``: queries whose objects may serve as substitutes (default: ``queries``), so a
    ``--balanced-limit``-ed run still draws substitutes from the whole dataset."""
    facts = _facts(queries, templates)
    params = DecodingParams(max_new_tokens=config.max_new_tokens, temperature=0.0)
    generations = generator.generate([passage_prompt(wording, f.sentence) for f in facts], params, progress=progress)
    passages = [g.samples[0].text.strip() for g in generations]
    scores: list[float | None] = [None] * len(facts)
    if entailment is not None:
        scores = list(entailment([(p, f.sentence) for p, f in zip(passages, facts, strict=True)]))
    substitutes = _Substitutes(pool if pool is not None else queries, embed)
    dropped = {"no_object_mention": 0, "low_entailment": 0, "no_substitute": 0}
    kept: list[ContextRow] = []
    for fact, passage, score in zip(facts, passages, scores, strict=True):
        masked = _mask(passage, fact.obj)
        if masked is None:
            dropped["no_object_mention"] += 1
            continue
        if config.min_entailment is not None and (score is None or score < config.min_entailment):
            dropped["low_entailment"] += 1
            continue
        substitute = substitutes.nearest(fact)
        if substitute is None:
            dropped["no_substitute"] += 1
            continue
        kept.append(_row(fact, masked, substitute, score, aliases))
    return subsample(kept, config.per_class, config.seed), dropped


@dataclass(frozen=True)
class _Fact:
    """A fact's query, its subject and first object, and the sentence a passage is asked to support."""

    query: MulanQuery
    subject: str
    obj: str
    sentence: str


def _facts(queries: Sequence[MulanQuery], templates: Mapping[str, Sequence[str]]) -> list[_Fact]:
    """One fact per subject, with its template-0 sentence; a query its relation's templates cannot read is a DataError."""
    facts = []
    for q in _first_fact_per_subject(queries):
        rel_templates = templates.get(q.relation)
        if not rel_templates:
            raise DataError(q.source, f"no templates for relation {q.relation}")
        subject = subject_of(q, rel_templates)
        if subject is None:
            raise DataError(q.source, f"query {q.query!r} matches none of {q.relation}'s templates")
        obj = q.answers[0].name
        facts.append(_Fact(q, subject, obj, fill(rel_templates[0], subject, obj)))
    return facts


class _Substitutes:
    """The other objects of each relation, embedded: a counterfactual takes the nearest by cosine."""

    def __init__(self, pool: Sequence[MulanQuery], embed: Callable[[Sequence[str]], np.ndarray]) -> None:
        self.by_relation: dict[str, list[str]] = {}
        for q in pool:
            self.by_relation.setdefault(q.relation, [])
            for a in q.answers:
                if a.name not in self.by_relation[q.relation]:
                    self.by_relation[q.relation].append(a.name)
        every = sorted({o for objects in self.by_relation.values() for o in objects})
        self.vectors = dict(zip(every, embed(every), strict=True)) if every else {}

    def nearest(self, fact: _Fact) -> str | None:
        """The object of the fact's relation nearest its own that is no gold answer and shares no word with the
        object or the subject; None when there is none."""
        golds = {a.name for a in fact.query.answers}
        candidates = [
            o
            for o in self.by_relation.get(fact.query.relation, [])
            if o not in golds and shares_no_word(o, fact.obj) and shares_no_word(o, fact.subject)
        ]
        if not candidates:
            return None
        sims = [float(np.dot(self.vectors[fact.obj], self.vectors[c])) for c in candidates]
        return candidates[int(np.argmax(sims))]


def _row(
    fact: _Fact, masked: str, substitute: str, score: float | None, aliases: Mapping[str, Sequence[str]]
) -> ContextRow:
    q = fact.query
    # in the query's order, then the aliases: a set's order would differ from one process to the next
    named = [a.name for a in q.answers]
    possible = list(dict.fromkeys([*named, *(al for a in q.answers if a.qid for al in aliases.get(a.qid, []))]))
    return ContextRow(
        id=q.fact_id,
        fact_class=q.fact_class,
        relation=q.relation,
        subject=fact.subject,
        question=mulan_question(q.relation, fact.subject),
        obj=fact.obj,
        replace_name=substitute,
        context=masked,
        possible_answers=possible,
        fact_sentence=fact.sentence,
        entailment=score,
    )


def subsample(rows: Sequence[ContextRow], per_class: int, seed: int) -> list[ContextRow]:
    """At most ``per_class`` rows per class, drawn with ``random.Random(seed)`` (classes sorted, input order kept)."""
    rng = random.Random(seed)
    keep: set[str] = set()
    for fact_class in sorted({r.fact_class for r in rows}):
        ids = [r.id for r in rows if r.fact_class == fact_class]
        keep.update(ids if len(ids) <= per_class else rng.sample(ids, per_class))
    return [r for r in rows if r.id in keep]


def load_context_file(path: Path) -> list[ContextFact]:
    """Read a contexts JSONL (as written by ``conflicts contexts``) into facts."""
    if not path.is_file():
        raise DataError(str(path), "file not found (write one with `chronoprobe conflicts contexts`)")
    facts = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            data: Any = json.loads(line)
            row = ContextRow(**data)
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0]
            raise DataError(where, f"not a contexts row: {first}") from None
        if PLACEHOLDER not in row.context:
            raise DataError(where, f"context has no {PLACEHOLDER} placeholder")
        facts.append(
            ContextFact(
                fact_id=f"mulan/{row.id}",
                dataset="mulan",
                fact_class=row.fact_class,
                subject=row.subject,
                relation=row.relation,
                question=row.question,
                answer=row.obj,
                substitute=row.replace_name,
                context=row.context,
                placeholder=True,
                possible_answers=tuple(row.possible_answers),
                source=where,
            )
        )
    return facts
