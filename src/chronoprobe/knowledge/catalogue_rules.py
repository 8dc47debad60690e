"""Which retrieved (subject, property) histories become facts, and why the others are refused.

A fact is kept only when its gold answers can be trusted to judge a model's answer:

* the subject and every value have a label in a language asked for (``unlabelled_subject``,
  ``unlabelled_value``): an unlabelled value cannot be matched, and a model naming it would be
  judged irrelevant;
* no two different values share a label (``colliding_labels``): a classifier could not tell
  which one the model named;
* no statement ends before it starts, and with ``current = "one"`` no two values are current at
  once (``contradictory``);
* no value lacks a start while it could still hold (``undated``: no start, no end and no dated
  statement of the same value); an undated statement of a value dated elsewhere, or one that
  ended, is dropped and counted instead;
* at least one value is current (``no_current``) and at least two values have dated validity:
  the fact changed at least once (``unchanged``), so it is time-sensitive.

With ``as_of`` the history is read as it stood on that date: later statements are dropped and
later ends reopened. Without it, a value whose end is after the build's day (a scheduled end) is
current. An end of "unknown value" ends a value. Unknown values (a ``.well-known/genid/`` IRI or
a blank node) and values that are no item are never answers and are counted.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, get_args

from chronoprobe.knowledge.catalogue_query import RawStatement, RawSubject
from chronoprobe.knowledge.templates import PropertyTemplate
from chronoprobe.knowledge.types import Statement, WikidataDate

Reason = Literal[
    "unlabelled_subject",
    "unlabelled_value",
    "colliding_labels",
    "contradictory",
    "undated",
    "no_current",
    "unchanged",
    "duplicate",
    "colliding_subject",
]
REASONS: tuple[Reason, ...] = get_args(Reason)
"""Why a fact is refused, in the order the rules are applied (the first that applies is counted)."""
StatementDrop = Literal["unknown_value", "not_an_item", "undated", "after_as_of", "alias_of_another_value"]


@dataclass
class Judged:
    """One subject's history under the rules: its label, its gold answers and, if refused, why."""

    qid: str
    label: str | None
    statements: tuple[Statement, ...]
    """The answers that count (dated), also when the fact is refused (a DyKnow fact is kept anyway)."""
    reason: Reason | None = None
    detail: str = ""
    dropped: Counter[str] = field(default_factory=Counter)
    """Statements (and aliases) left out of the answers, by why."""


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _first(by_language: dict[str, str], languages: tuple[str, ...]) -> str | None:
    return next((by_language[lang] for lang in languages if by_language.get(lang)), None)


def _as_of(statement: Statement, when: dt.date) -> Statement | None:
    """The statement as known on ``when``: None if it started later; an end after ``when`` is not known yet.

    An end of "unknown value" stays: it cannot be placed before or after ``when``, so the value is
    not taken as current then."""
    if statement.start is not None and statement.start.earliest() > when:
        return None
    update: dict[str, WikidataDate | None] = {}
    if statement.end is not None and statement.end.earliest() > when:
        update["end"] = None
    if statement.point_in_time is not None and statement.point_in_time.earliest() > when:
        update["point_in_time"] = None
    return statement.model_copy(update=update) if update else statement


def _statement(raw: RawStatement, label: str, aliases: tuple[str, ...]) -> Statement:
    rank = {"PreferredRank": "preferred", "DeprecatedRank": "deprecated"}.get(raw.rank, "normal")
    return Statement(
        label=label, qid=raw.value, aliases=aliases, **raw.times.validity(), rank=rank, statement_id=raw.statement_id
    )


class _Verdict:
    """Collects the first refusal; later rules still run so the statements come out whole."""

    def __init__(self) -> None:
        self.reason: Reason | None = None
        self.detail = ""

    def refuse(self, reason: Reason, detail: str) -> None:
        if self.reason is None:
            self.reason, self.detail = reason, detail


def _value_labels(known: list[RawStatement], languages: tuple[str, ...], verdict: _Verdict) -> dict[str, str]:
    """Each value's label (its QID where it has none, refused as ``unlabelled_value``); colliding labels refused."""
    labels: dict[str, str] = {}
    for raw in known:
        assert raw.value is not None
        found = _first(raw.labels, languages)
        if found is None:
            verdict.refuse("unlabelled_value", f"value {raw.value} has no label in {', '.join(languages)}")
        labels.setdefault(raw.value, found or raw.value)
    owners: dict[str, set[str]] = {}
    for qid, text in labels.items():
        owners.setdefault(_norm(text), set()).add(qid)
    for text, qids in owners.items():
        if len(qids) > 1:
            verdict.refuse("colliding_labels", f"{len(qids)} values are labelled {text!r} ({', '.join(sorted(qids))})")
    return labels


def _aliases(
    raw: RawStatement, labels: dict[str, str], languages: tuple[str, ...], dropped: Counter[str]
) -> tuple[str, ...]:
    """The value's aliases in the languages asked, without its own label or another value's."""
    assert raw.value is not None
    others = {_norm(text) for qid, text in labels.items() if qid != raw.value}
    own, kept = _norm(labels[raw.value]), []
    for language in languages:
        for alias in raw.aliases.get(language, []):
            if _norm(alias) == own or alias in kept:
                continue
            if _norm(alias) in others:
                dropped["alias_of_another_value"] += 1  # it would match another value's answer
                continue
            kept.append(alias)
    return tuple(sorted(kept))


def _dated(statements: list[Statement], verdict: _Verdict, dropped: Counter[str]) -> list[Statement]:
    """Statements with a start; an undated one that may still hold (its value dated nowhere, no end) is refused."""
    dated_values = {s.qid for s in statements if s.start is not None}
    kept = []
    for statement in statements:
        if statement.start is not None:
            kept.append(statement)
            continue
        if statement.qid not in dated_values and not statement.has_end:
            verdict.refuse("undated", f"{statement.label} has no start date and may still hold")
        dropped["undated"] += 1
    return kept


def judge_subject(
    raw: RawSubject, template: PropertyTemplate, as_of: dt.date | None = None, retrieved: dt.date | None = None
) -> Judged:
    """Apply the rules to one subject's statements of the template's property.

    ``retrieved``: the day the answers describe (the build's day, or ``as_of``); a value whose end
    comes after it (a scheduled end) is current then. None: any end ends a value.
    """
    languages = template.values.languages
    verdict = _Verdict()
    dropped: Counter[str] = Counter()
    label = _first(raw.labels, languages)
    if label is None:
        verdict.refuse("unlabelled_subject", f"{raw.qid} has no label in {', '.join(languages)}")
    known = [s for s in raw.statements.values() if s.value is not None]
    for unknown in (s for s in raw.statements.values() if s.value is None):
        dropped["not_an_item" if unknown.not_an_item else "unknown_value"] += 1
    labels = _value_labels(known, languages, verdict)
    statements = []
    for one in known:
        assert one.value is not None
        statement = _statement(one, labels[one.value], _aliases(one, labels, languages, dropped))
        if statement.start and statement.end and statement.end.last_day() < statement.start.first_day():
            verdict.refuse(
                "contradictory", f"{statement.label} ends ({statement.end}) before it starts ({statement.start})"
            )
        then = _as_of(statement, as_of) if as_of is not None else statement
        if then is None:
            dropped["after_as_of"] += 1
        else:
            statements.append(then)
    kept = _dated(statements, verdict, dropped)
    on = as_of or retrieved
    current = {s.qid for s in kept if not s.ended_by(on)}
    # an announced successor (a start after the day) is an answer, but does not yet hold beside its predecessor
    holding = [s for s in kept if not s.ended_by(on) and (on is None or s.start is None or s.start.earliest() <= on)]
    if len({s.qid for s in holding}) > 1 and template.validity.current == "one":
        names = sorted({s.label for s in holding})
        verdict.refuse("contradictory", f"{len(names)} values are current at once ({', '.join(names)})")
    if not current:
        verdict.refuse("no_current", "no value is current" + (f" on {as_of}" if as_of else ""))
    values = len({s.qid for s in kept})
    if values < 2:
        verdict.refuse("unchanged", f"{values} dated value(s): it never changed")
    kept.sort(key=lambda s: (s.start.first_day() if s.start else (0, 0, 0), s.label, s.statement_id or ""))
    return Judged(raw.qid, label, tuple(kept), verdict.reason, verdict.detail, dropped)
