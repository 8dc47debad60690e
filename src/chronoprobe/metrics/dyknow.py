"""DyKnow: classify a model's answer against a fact's dated gold answers, and aggregate.

Pure functions only: no I/O, no model calls. The rules, their order and every
difference from the original DyKnow code are documented in
``docs/dyknow-classifier.md``.

Matching works on *entities*: all statements of a fact that share a label
(case- and whitespace-insensitively) are one entity, e.g. "Manchester United
F.C." with two periods. For each entity we look for, in order of strength:

1. ``exact``: the label as a whole word, case-insensitively (regex-escaped);
   ``alias``: one of its Wikidata aliases, the same way (only with ``use_aliases``);
2. ``suffix-stripped``: the label without club/company affixes ("F.C.", "CF",
   "team", "Scuderia", "City of", "Inc." ...);
3. ``head-noun``: for a multi-word (stripped) label, its head word (see
   :func:`head_noun`), matched case-sensitively as a proper noun.

An entity's first rule that matches anywhere gives its position. The entity
matched earliest in the response wins; at equal position the stronger rule
wins, then the longer matched text. Distinct entities still tied are
``ambiguous``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from chronoprobe.knowledge.types import FactAnswers, Statement
from chronoprobe.metrics.uncertainty import Estimate, wilson, wilson_clustered

Verdict = Literal["up-to-date", "outdated", "irrelevant", "ambiguous"]
MatchRule = Literal["exact", "alias", "suffix-stripped", "head-noun"]

VERDICTS: tuple[Verdict, ...] = ("up-to-date", "outdated", "irrelevant", "ambiguous")
EXCLUDED_PROMPT_KEYS = ("generic",)
"""Prompt keys classified and written to the answer sheet but left out of the statistics (a score's and a
paired comparison's alike)."""
RULE_STRENGTH: dict[MatchRule, int] = {"exact": 0, "alias": 1, "suffix-stripped": 2, "head-noun": 3}
"""Lower is stronger; used to break ties between entities matched at the same position."""


class Classification(BaseModel):
    """The verdict on one response, and why."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    matched: tuple[Statement, ...] = ()
    """One statement per distinct matched entity: for a current entity its current
    statement, for a past one its latest-starting statement."""
    position: int | None = None
    """Character offset of the winning match in the searched text."""
    rule: MatchRule | None = None
    matched_text: tuple[str, ...] = ()
    """The surface form found for each matched entity (label, alias, stripped label or head word)."""
    searched: str = ""
    """The text that was searched: the response without its prompt."""

    @property
    def matched_labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.matched)

    @property
    def start_years(self) -> tuple[int | None, ...]:
        return tuple(s.start.year if s.start is not None else None for s in self.matched)


# --- surface forms ------------------------------------------------------------------------------

# Whole-token affixes removed by the suffix-stripped rule. Acronyms are matched case-sensitively
# (so "As" or "Sc" in a name survive); words case-insensitively.
_ACRONYM_TOKEN = re.compile(
    r"^(?:[A-Z]?(?:F\.?C\.?|C\.?F\.?|F\.?K\.?|A\.?S\.?|S\.?V\.?|B\.?C\.?)[A-Z]?|F1|(?:[A-Z]\.){2,})$"
)
_WORD_TOKENS = frozenset(
    {"football", "team", "association", "men's", "women's", "basketball", "scuderia", "racing", "club"}
)
_TRAILING_COMPANY = frozenset({"inc", "inc.", "ltd", "ltd.", "plc", "corp", "corp.", "corporation", "llc", "co."})
_LEADING_CITY_OF = re.compile(r"^city of\s+", re.IGNORECASE)
_ROMAN_NUMERAL = re.compile(r"^(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3})$")
_GENERATIONAL = frozenset({"jr", "jr.", "sr", "sr.", "junior", "senior"})


def _norm_space(text: str) -> str:
    return " ".join(text.split())


def strip_affixes(label: str) -> str:
    """The label without club/company affixes; the label itself if nothing is removed or nothing is left."""
    text = _LEADING_CITY_OF.sub("", _norm_space(label))
    tokens = [t for t in text.split() if not _ACRONYM_TOKEN.match(t) and t.lower() not in _WORD_TOKENS]
    while len(tokens) > 1 and tokens[-1].lower() in _TRAILING_COMPANY:
        tokens.pop()
    if len(tokens) > 1 and tokens[-1].endswith(","):
        tokens[-1] = tokens[-1][:-1]
    stripped = " ".join(tokens)
    return stripped if stripped else _norm_space(label)


def head_noun(label: str) -> str | None:
    """The head word of a multi-word name, or None (single word, or no proper-noun head).

    Our stand-in for the original's dependency-parse head (spaCy noun-chunk root):
    cut the name at the first comma ("Peter Carington, 6th Baron Carrington") and at
    the first " of " ("Philippe of Belgium"); a regnal name with a Roman numeral is
    kept whole ("Charles III", "Carl XVI Gustaf"); otherwise the last word, skipping
    Jr./Sr. and dropping a lower-case article joined by a hyphen ("Fumio Kishida" ->
    "Kishida", "Abdel Fattah el-Sisi" -> "Sisi", "Los Angeles Lakers" -> "Lakers").
    The head must be capitalised: "England national" (from "England national
    football team") has none, so no common word like "national" is ever searched.
    """
    if len(_norm_space(label).split()) < 2:
        return None
    core = _norm_space(label).split(",")[0]
    core = re.split(r"\s+of\s+", core, maxsplit=1)[0]
    tokens = core.split()
    if any(_ROMAN_NUMERAL.match(t) for t in tokens[1:]):
        return core
    tokens = [t for t in tokens if t.lower() not in _GENERATIONAL]
    if not tokens:
        return None
    head = re.sub(r"^[a-z]{1,3}-(?=[A-Z])", "", tokens[-1])
    return head if head[:1].isupper() else None


def _mask(text: str, phrase: str | None) -> str:
    """``text`` with whole-word occurrences of ``phrase`` blanked out (offsets unchanged)."""
    if not phrase or not phrase.strip():
        return text
    surface = _norm_space(phrase)
    if _surely_absent(text, surface):
        return text
    return _pattern(surface, True).sub(lambda m: " " * len(m.group(0)), text)


def _surely_absent(text: str, surface: str) -> bool:
    """True when ``surface`` cannot match anywhere in ``text``, checked without compiling its pattern.

    Only for ASCII text and surface, where a case-insensitive match implies the lower-cased surface
    is a substring of the lower-cased text (beyond ASCII, ``re.IGNORECASE`` also matches letters like
    the long s or the Kelvin sign that ``str.lower`` keeps apart). Most of the thousands of labels a
    run looks for are absent from an answer, and compiling each one's pattern was most of its time.
    """
    return text.isascii() and surface.isascii() and surface.lower() not in text.lower()


@lru_cache(maxsize=4096)
def _pattern(surface: str, ignore_case: bool) -> re.Pattern[str]:
    # Whole word: not preceded or followed by a word character. Lookarounds (not \b) so
    # labels that start or end with punctuation ("F.C.", "Jr.") still match.
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(rf"(?<!\w){re.escape(surface)}(?!\w)", flags)


def find_whole_word(text: str, surface: str, *, ignore_case: bool = True) -> int | None:
    """Start offset of the first whole-word occurrence of ``surface`` in ``text``."""
    if not surface.strip():
        return None
    surface = _norm_space(surface)
    if ignore_case and _surely_absent(text, surface):
        return None
    if not ignore_case and text.isascii() and surface.isascii() and surface not in text:
        return None
    match = _pattern(surface, ignore_case).search(text)
    return match.start() if match else None


_LEADING_SPECIAL = re.compile(r"^\s*(?:<[^<>\s]{1,30}>\s*)*")


def strip_prompt(response: str, prompt: str | None) -> str:
    """The response without its prompt, if it starts with it.

    Leading whitespace and special tokens such as ``<s>`` before the prompt are
    allowed. A prompt repeated later in the response is left alone (the original
    cut at the *last* repeat and so lost answers given before it).
    """
    if not prompt:
        return response
    head = _LEADING_SPECIAL.match(response)
    offsets = (len(response) - len(response.lstrip()), head.end() if head else 0)
    for candidate in dict.fromkeys((prompt, prompt.strip())):
        for offset in offsets:
            if candidate and response.startswith(candidate, offset):
                return response[offset + len(candidate) :]
    return response


# --- entities -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entity:
    label: str
    statements: tuple[Statement, ...]
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class _Hit:
    entity: _Entity
    position: int
    rule: MatchRule
    surface: str


def group_entities(statements: Iterable[Statement]) -> list[_Entity]:
    """Statements sharing a label (case/space-insensitive) form one entity, in first-seen order."""
    groups: dict[str, list[Statement]] = {}
    for statement in statements:
        groups.setdefault(_norm_space(statement.label).casefold(), []).append(statement)
    entities = []
    for members in groups.values():
        aliases = tuple(dict.fromkeys(a for s in members for a in s.aliases if a.strip()))
        entities.append(_Entity(label=_norm_space(members[0].label), statements=tuple(members), aliases=aliases))
    return entities


def _find_entity(text: str, masked: str, entity: _Entity, use_aliases: bool) -> _Hit | None:
    tier: list[tuple[int, MatchRule, str]] = []
    surfaces: list[tuple[str, MatchRule]] = [(entity.label, "exact")]
    surfaces += [(a, "alias") for a in (entity.aliases if use_aliases else ())]
    for surface, rule in surfaces:
        position = find_whole_word(text, surface)
        if position is not None:
            tier.append((position, rule, surface))
    if not tier:
        stripped = strip_affixes(entity.label)
        if stripped.casefold() != entity.label.casefold():
            position = find_whole_word(masked, stripped)
            if position is not None:
                tier.append((position, "suffix-stripped", stripped))
        if not tier:
            head = head_noun(stripped)
            if head is not None:
                position = find_whole_word(masked, head, ignore_case=False)
                if position is not None:
                    tier.append((position, "head-noun", head))
    if not tier:
        return None
    position, rule, surface = min(tier, key=lambda hit: (hit[0], RULE_STRENGTH[hit[1]], -len(hit[2])))
    return _Hit(entity=entity, position=position, rule=rule, surface=surface)


def _is_current(statement: Statement, as_of: dt.date | None, retrieved: dt.date | None) -> bool:
    """Current on the answers' day ``retrieved`` (an end after it has not happened yet), or valid at ``as_of``."""
    return statement.current_on(retrieved) if as_of is None else statement.valid_at(as_of, retrieved)


def _deciding_statement(
    entity: _Entity, as_of: dt.date | None, retrieved: dt.date | None
) -> tuple[Statement, bool] | None:
    """(statement, is_current) for a matched entity; None if it only starts after ``as_of``."""
    current = [s for s in entity.statements if _is_current(s, as_of, retrieved)]
    if current:
        return max(current, key=_start_key), True
    past = entity.statements
    if as_of is not None:
        past = tuple(s for s in past if s.start is None or s.start.earliest() <= as_of)
        if not past:
            return None
    return max(past, key=_start_key), False


def _start_key(statement: Statement) -> tuple[int, int, int]:
    return statement.start.first_day() if statement.start is not None else (-(10**17), 0, 0)


def classify_response(
    response: str,
    answers: FactAnswers,
    *,
    as_of: dt.date | None = None,
    use_aliases: bool = False,
    prompt: str | None = None,
    subject: str | None = None,
) -> Classification:
    """Classify one model response as up-to-date, outdated, irrelevant or ambiguous.

    ``as_of``: judge against what was valid on that date (default: the answers current on
    their snapshot's day, ``answers.retrieved``: started and not ended by then; an end
    after that day is a scheduled one, an end of "unknown value" has passed). ``prompt``: removed from the start of the response
    if the response repeats it. ``subject``: the fact's subject ("Ford Motor Company");
    the weak rules (suffix-stripped, head noun) ignore its mentions, so "Ford" in the
    company's name is not read as Henry Ford.
    """
    text = strip_prompt(response, prompt)
    masked = _mask(text, subject)
    entities = group_entities(answers.statements)
    hits = [hit for entity in entities if (hit := _find_entity(text, masked, entity, use_aliases))]
    if not hits:
        return Classification(verdict="irrelevant", searched=text)
    best = min(hits, key=lambda h: (h.position, RULE_STRENGTH[h.rule], -len(h.surface)))
    winners = [
        h
        for h in hits
        if (h.position, RULE_STRENGTH[h.rule], len(h.surface))
        == (best.position, RULE_STRENGTH[best.rule], len(best.surface))
    ]
    decided = [(h, d) for h in winners if (d := _deciding_statement(h.entity, as_of, answers.retrieved)) is not None]
    verdict: Verdict
    if len(winners) > 1:
        verdict = "ambiguous"
    elif not decided:  # a value that only became true after as_of
        verdict = "irrelevant"
    else:
        verdict = "up-to-date" if decided[0][1][1] else "outdated"
    return Classification(
        verdict=verdict,
        matched=tuple(d[0] for _, d in decided),
        position=best.position,
        rule=best.rule,
        matched_text=tuple(h.surface for h, _ in decided),
        searched=text,
    )


# --- aggregates ---------------------------------------------------------------------------------


def soft_constraint(verdicts_per_fact: Mapping[str, Sequence[Verdict]]) -> dict[str, Verdict]:
    """Per fact: up-to-date if any paraphrase is; else outdated if any is; else ambiguous
    if any is; else irrelevant."""
    result: dict[str, Verdict] = {}
    for fact_id, verdicts in verdicts_per_fact.items():
        present = set(verdicts)
        for verdict in ("up-to-date", "outdated", "ambiguous"):
            if verdict in present:
                result[fact_id] = verdict
                break
        else:
            result[fact_id] = "irrelevant"
    return result


def verdict_shares(verdicts: Iterable[Verdict]) -> dict[Verdict, float]:
    """Share of each verdict among ``verdicts`` (all four keys; zeros when empty)."""
    items = list(verdicts)
    total = len(items)
    return {v: (items.count(v) / total if total else 0.0) for v in VERDICTS}


def average_counts(verdicts_per_fact: Mapping[str, Sequence[Verdict]]) -> dict[Verdict, float]:
    """Per-paraphrase counts of each verdict divided by the number of classified
    paraphrases (facts x 3 in DyKnow)."""
    return verdict_shares(v for verdicts in verdicts_per_fact.values() for v in verdicts)


def inconsistent_facts(classifications_per_fact: Mapping[str, Sequence[Classification]]) -> list[str]:
    """Facts whose paraphrases disagree: more than one verdict among them, or all
    outdated but matched to different past answers."""
    return inconsistent_by_labels(
        {
            fact_id: [(c.verdict, [s.label for s in c.matched]) for c in classifications]
            for fact_id, classifications in classifications_per_fact.items()
        }
    )


def inconsistent_by_labels(answers_per_fact: Mapping[str, Sequence[tuple[Verdict, Sequence[str]]]]) -> list[str]:
    """:func:`inconsistent_facts` from each paraphrase's verdict and matched labels (what a run's rows record)."""
    result = []
    for fact_id, answers in answers_per_fact.items():
        verdicts = {verdict for verdict, _ in answers}
        if len(verdicts) > 1:
            result.append(fact_id)
        elif verdicts == {"outdated"}:
            labels = {tuple(sorted(_norm_space(label).casefold() for label in matched)) for _, matched in answers}
            if len(labels) > 1:
                result.append(fact_id)
    return result


FACT_TO_EDIT_RULE = (
    "A fact to edit has no question answered up-to-date, at least one answered outdated and none "
    "ambiguous: DyKnow's rule for its editing experiments."
)
"""The one definition, said in every report that counts facts to edit (audit, editing run, editing dataset)."""


def is_fact_to_edit(verdicts: Sequence[Verdict]) -> bool:
    """DyKnow's editing selection for one fact's verdicts (``get_outdated_questions``): out if any
    answer is up-to-date; in when only outdated or irrelevant with at least one outdated. DyKnow
    stops on an ambiguous answer until it is fixed by hand; here such a fact is out (and counted
    by :func:`ambiguous_not_edited`)."""
    return "up-to-date" not in verdicts and "ambiguous" not in verdicts and "outdated" in verdicts


def facts_to_edit(verdicts_per_fact: Mapping[str, Sequence[Verdict]]) -> list[str]:
    """The facts :func:`is_fact_to_edit` selects."""
    return [fact_id for fact_id, verdicts in verdicts_per_fact.items() if is_fact_to_edit(verdicts)]


def ambiguous_not_edited(verdicts_per_fact: Mapping[str, Sequence[Verdict]]) -> list[str]:
    """Facts with no up-to-date answer and an ambiguous one: DyKnow stops on these until the answer is
    fixed by hand, so they are not facts to edit."""
    return [
        fact_id
        for fact_id, verdicts in verdicts_per_fact.items()
        if "up-to-date" not in verdicts and "ambiguous" in verdicts
    ]


def not_up_to_date(verdicts_per_fact: Mapping[str, Sequence[Verdict]]) -> list[str]:
    """Facts with no question answered up-to-date: a wider set than the facts to edit
    (``editing run --select not-up-to-date``)."""
    return [fact_id for fact_id, verdicts in verdicts_per_fact.items() if "up-to-date" not in verdicts]


def start_years(classifications: Iterable[Classification]) -> list[int]:
    """Start year of the matched answer of every up-to-date or outdated response
    (those with a known start), for the recency box plot."""
    years = []
    for c in classifications:
        if c.verdict in ("up-to-date", "outdated") and c.matched and c.matched[0].start is not None:
            years.append(c.matched[0].start.year)
    return years


class VerdictEstimates(BaseModel):
    """n and 95% Wilson intervals for a group's verdict shares (see :mod:`chronoprobe.metrics.uncertainty`)."""

    model_config = ConfigDict(frozen=True)

    soft_constraint: dict[str, Estimate]
    """Per verdict: share of facts (n = facts)."""
    average: dict[str, Estimate]
    """Per verdict: share of paraphrase answers (n = answers). A fact's answers are not independent, so the
    interval is clustered on the fact (:func:`~chronoprobe.metrics.uncertainty.wilson_clustered`)."""
    inconsistency: Estimate
    """Share of facts whose paraphrases disagree (n = facts)."""


def verdict_estimates(
    verdicts_per_fact: Mapping[str, Sequence[Verdict]], inconsistent: Sequence[str], *, scale: float = 1.0
) -> VerdictEstimates:
    """Wilson intervals for :func:`soft_constraint` shares (over facts), :func:`average_counts` (over answers,
    clustered on their fact) and the inconsistency rate (over facts); ``scale=100`` for percentages."""
    soft = list(soft_constraint(verdicts_per_fact).values())
    answers = [v for verdicts in verdicts_per_fact.values() for v in verdicts]
    owners = [fact for fact, verdicts in verdicts_per_fact.items() for _ in verdicts]
    facts = len(verdicts_per_fact)
    return VerdictEstimates(
        soft_constraint={v: wilson(soft.count(v), facts, scale=scale) for v in VERDICTS},
        average={v: wilson_clustered([a == v for a in answers], owners, scale=scale) for v in VERDICTS},
        inconsistency=wilson(len(inconsistent), facts, scale=scale),
    )
