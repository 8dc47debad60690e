"""The outdated lens's outcomes item by item, for a paired comparison of two runs (``chronoprobe compare``).

Per class (every category, and ``all``): each fact's soft-constraint verdict (one unit per fact), each
paraphrase's verdict for the averaged shares (three answers of one fact: clustered on the fact) and
whether a fact's paraphrases disagree; the same judged as of ``--as-of`` where the run asked it. An
``outdated run`` folder gives them from its rows (``items.jsonl``), an ``outdated score`` folder from its
``classifications.jsonl`` (the paraphrases only, as its summary counts them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

from chronoprobe.errors import ChronoprobeError
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.types import Snapshot
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.knowledge_date import dated_answers
from chronoprobe.metrics.dyknow import EXCLUDED_PROMPT_KEYS, VERDICTS, Verdict, inconsistent_by_labels, soft_constraint
from chronoprobe.metrics.knowledge_cutoff import change_facts, cutoff_components, cutoff_of_sums
from chronoprobe.metrics.knowledge_date import (
    GRID_START,
    NOISE_GRID,
    date_of_sums,
    decimal_year,
    fact_logliks,
    monthly_grid,
)
from chronoprobe.metrics.paired import Comparable, ItemOutcomes
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Run, read_items

SCORE_ROWS = "classifications.jsonl"

WORDS: dict[str, tuple[str, str]] = {
    "up-to-date": ("gives a current answer", ""),
    "outdated": ("gives an outdated answer", ""),
    "irrelevant": ("names no dated value", ""),
    "ambiguous": ("gives an ambiguous answer", ""),
}
"""Per verdict: what a model does on a fact with it, and what a model with more of it is (the check's paragraph).
None of them decides "fresher": more current answers may only mean more answers (``dated_pct``), so fresher is
asked only where both models answer with a dated value (``current_among_dated_pct``)."""
DATED: tuple[Verdict, ...] = ("up-to-date", "outdated")


@dataclass(frozen=True)
class Answer:
    """One judged paraphrase, from either folder kind."""

    fact_id: str
    category: str
    paraphrase: str
    verdict: Verdict
    verdict_as_of: Verdict | None
    matched: tuple[str, ...]


class _ScoreRow(BaseModel):
    """The part of an ``outdated score`` classification row a comparison reads."""

    fact_id: str
    category: str
    prompt_key: str
    verdict: Verdict
    matched: list[str] = []


def _run_answers(rows: Iterable[ResponseRecord], model: str) -> list[Answer]:
    return [
        Answer(r.fact_id, r.category, str(r.template_index), r.verdict, r.verdict_as_of, tuple(r.matched))
        for r in rows
        if r.model == model
    ]


def _score_answers(run: Run) -> list[Answer]:
    rows = read_items(run.path / SCORE_ROWS, _ScoreRow)
    return [
        Answer(r.fact_id, r.category, r.prompt_key, r.verdict, None, tuple(r.matched))
        for r in rows
        if isinstance(r, _ScoreRow) and r.prompt_key not in EXCLUDED_PROMPT_KEYS
    ]


def _rate(
    metric: str,
    group: str,
    values: dict[str, float],
    *,
    clusters: dict[str, str] | None = None,
    phrase: str = "",
    verdict: str = "",
    shared: str = "",
) -> ItemOutcomes:
    """A share in percent over facts (clustered on the fact where ``clusters`` maps paraphrases to facts)."""
    return ItemOutcomes(
        metric=metric,
        group=group,
        kind="rate",
        values=values,
        clusters=clusters,
        scale=100.0,
        unit="facts",
        phrase=phrase,
        verdict=verdict,
        shared=shared,
    )


def _group_outcomes(answers: Sequence[Answer], group: str, prefix: str, as_of: bool) -> list[ItemOutcomes]:
    verdicts: dict[str, list[Verdict]] = defaultdict(list)
    labelled: dict[str, list[tuple[Verdict, Sequence[str]]]] = defaultdict(list)
    for answer in sorted(answers, key=lambda a: (a.fact_id, a.paraphrase)):
        verdict = answer.verdict_as_of if as_of else answer.verdict
        assert verdict is not None  # an as-of comparison only where every answer was judged as of the date
        verdicts[answer.fact_id].append(verdict)
        labelled[answer.fact_id].append((verdict, answer.matched))
    soft = soft_constraint(verdicts)
    inconsistent = set(inconsistent_by_labels(labelled))
    paraphrases = {f"{a.fact_id}#{a.paraphrase}": (a.fact_id, a.verdict_as_of if as_of else a.verdict) for a in answers}
    owners = {key: fact for key, (fact, _) in paraphrases.items()}
    found = []
    for verdict in VERDICTS:
        phrase, better = WORDS[verdict]
        found.append(
            _rate(
                f"{prefix}soft_constraint_pct.{verdict}",
                group,
                {fact: float(v == verdict) for fact, v in soft.items()},
                phrase=phrase,
                verdict=better if group == ALL and not prefix else "",
            )
        )
        found.append(
            _rate(
                f"{prefix}average_pct.{verdict}",
                group,
                {key: float(v == verdict) for key, (_, v) in paraphrases.items()},
                clusters=owners,
                phrase=phrase.replace("gives", "gives, per paraphrase,"),
            )
        )
    found += _dated_outcomes(soft, group, prefix)
    found.append(
        _rate(
            f"{prefix}inconsistency_pct",
            group,
            {fact: float(fact in inconsistent) for fact in verdicts},
            phrase="answers its paraphrases inconsistently",
        )
    )
    return found


def _dated_outcomes(soft: dict[str, Verdict], group: str, prefix: str) -> list[ItemOutcomes]:
    """Knows more (a dated answer, current or outdated, over every fact) and fresher where both answer (current,
    over the facts it dates: paired, only the facts both models date are compared)."""
    decides = group == ALL and not prefix
    dated = {fact: v for fact, v in soft.items() if v in DATED}
    return [
        _rate(
            f"{prefix}dated_pct",
            group,
            {fact: float(v in DATED) for fact, v in soft.items()},
            phrase="gives a dated answer (current or outdated)",
            verdict="knows more" if decides else "",
        ),
        _rate(
            f"{prefix}current_among_dated_pct",
            group,
            {fact: float(v == "up-to-date") for fact, v in dated.items()},
            phrase="gives the current value where both give a dated one",
            verdict="fresher where both answer" if decides else "",
            shared="both date",
        ),
    ]


def outcomes(answers: Sequence[Answer]) -> list[ItemOutcomes]:
    """Every comparable number of one model's answers, per category and over all of them."""
    as_of = bool(answers) and all(a.verdict_as_of is not None for a in answers)
    groups = {ALL: list(answers)}
    for answer in answers:
        groups.setdefault(answer.category, []).append(answer)
    found = []
    for group, members in groups.items():
        found += _group_outcomes(members, group, "", as_of=False)
        if as_of:
            found += _group_outcomes(members, group, "as_of.", as_of=True)
    return found


def _date_outcomes(answers: Sequence[Answer], gold: Snapshot) -> list[ItemOutcomes]:
    """The knowledge date and the knowledge cutoff over every fact asked, as statistics of per-fact components (a
    fact the model does not date adds nothing): their paired difference, in years, is bootstrapped over facts."""
    dated, _ = dated_answers(((a.fact_id, a.category, a.verdict, a.matched) for a in answers), gold.answers)
    grid = monthly_grid(GRID_START, decimal_year(gold.retrieved))
    facts = sorted({a.fact_id for a in answers})
    logliks = fact_logliks(dated, grid)
    empty = np.zeros(len(NOISE_GRID) * len(grid))
    changes = {f.fact_id: f for f in change_facts(dated, gold.answers)}
    absent = np.zeros(2 * len(grid) + 2)

    def date(sums: np.ndarray) -> np.ndarray:
        return date_of_sums(sums, grid)

    def cutoff(sums: np.ndarray) -> np.ndarray:
        return cutoff_of_sums(sums, grid)

    return [
        ItemOutcomes(
            metric="knowledge_date",
            group=ALL,
            kind="statistic",
            values={f: tuple(logliks[f].ravel()) if f in logliks else tuple(empty) for f in facts},
            unit="facts",
            verdict="dated later (knowledge date)",
            statistic=date,
        ),
        ItemOutcomes(
            metric="knowledge_cutoff",
            group=ALL,
            kind="statistic",
            values={f: tuple(cutoff_components(changes[f], grid)) if f in changes else tuple(absent) for f in facts},
            unit="facts",
            verdict="dated later (knowledge cutoff)",
            statistic=cutoff,
        ),
    ]


def _gold(run: Run) -> Snapshot | None:
    """The snapshot the run judged against, where it can still be read (a shipped or saved one); None otherwise."""
    name = (run.provenance.snapshot or {}).get("name") if run.provenance is not None else None
    try:
        return load_snapshot(str(name) if name else None)
    except ChronoprobeError:
        return None


def comparable(run: Run, model: str) -> Comparable:
    """``model``'s outcomes in an ``outdated run`` or ``outdated score`` folder, and the snapshot or gold answers and
    the facts it asked."""
    gold = _gold(run)
    if run.kind == "outdated score":
        answers = _score_answers(run)
        dates = _date_outcomes(answers, gold) if gold is not None and gold.name == run.dataset else []
        return Comparable(source=f"gold answers {run.dataset}", outcomes=[*outcomes(answers), *dates])
    config = run.config
    facts = (getattr(config, "facts", None) or getattr(config, "facts_file", None)) if config is not None else None
    catalogue = f"catalogue {facts.name}" if facts is not None else "the shipped catalogue"
    answers = _run_answers(run.rows, model)
    dates = _date_outcomes(answers, gold) if gold is not None and gold.name == run.dataset else []
    return Comparable(source=f"snapshot {run.dataset}, {catalogue}", outcomes=[*outcomes(answers), *dates])
