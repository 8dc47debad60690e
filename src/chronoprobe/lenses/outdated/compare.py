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

from pydantic import BaseModel

from chronoprobe.contract.runlog import Run, read_items
from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.metrics.dyknow import EXCLUDED_PROMPT_KEYS, VERDICTS, Verdict, inconsistent_by_labels, soft_constraint
from chronoprobe.metrics.paired import Comparable, ItemOutcomes
from chronoprobe.metrics.records import ALL

SCORE_ROWS = "classifications.jsonl"

WORDS: dict[str, tuple[str, str]] = {
    "up-to-date": ("gives a current answer", "fresher"),
    "outdated": ("gives an outdated answer", ""),
    "irrelevant": ("names no dated value", ""),
    "ambiguous": ("gives an ambiguous answer", ""),
}
"""Per verdict: what a model does on a fact with it, and what a model with more of it is (the check's paragraph)."""


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
    found.append(
        _rate(
            f"{prefix}inconsistency_pct",
            group,
            {fact: float(fact in inconsistent) for fact in verdicts},
            phrase="answers its paraphrases inconsistently",
        )
    )
    return found


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


def comparable(run: Run, model: str) -> Comparable:
    """``model``'s outcomes in an ``outdated run`` or ``outdated score`` folder, and the snapshot or gold answers and
    the facts it asked."""
    if run.kind == "outdated score":
        return Comparable(source=f"gold answers {run.dataset}", outcomes=outcomes(_score_answers(run)))
    config = run.config
    facts = (getattr(config, "facts", None) or getattr(config, "facts_file", None)) if config is not None else None
    catalogue = f"catalogue {facts.name}" if facts is not None else "the shipped catalogue"
    return Comparable(source=f"snapshot {run.dataset}, {catalogue}", outcomes=outcomes(_run_answers(run.rows, model)))
