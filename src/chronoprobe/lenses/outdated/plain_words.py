"""The outdated lens's sentences in ``chronoprobe check``'s paragraph: freshness, the knowledge cutoff with the
knowledge date, and the cutoff the model claims beside them.

Built only from the run's metric records (soft-constraint shares over every fact, the knowledge
date and the deployment forecast), each quoted with its 95% interval and n.
"""

from __future__ import annotations

from chronoprobe.lenses.outdated.knowledge_date import is_wide
from chronoprobe.records.runlog import Summary
from chronoprobe.reports.metric_format import no_variation
from chronoprobe.reports.plain_words import MIN_ITEMS, brief, compare, find, quote, span, too_few, value_text

SHARE = "soft_constraint_pct"


def freshness(summary: Summary, model: str) -> str | None:
    """How much of its time-sensitive knowledge is current, outdated or missing."""
    up, old, none = (find(summary, model, f"{SHARE}.{v}") for v in ("up-to-date", "outdated", "irrelevant"))
    if up is None and old is None:
        return None
    if up is None or old is None or none is None or too_few([up, old, none]):
        facts = next((m.n for m in (up, old, none) if m is not None and m.n is not None), 0)
        return (
            f"Freshness: only {facts} time-sensitive facts were judged, too few to say how current its knowledge is"
            + (f" (up-to-date {quote(up)})." if up is not None and up.value is not None else ".")
        )
    sentence = (
        f"Freshness: of {up.n} time-sensitive facts, {value_text(up)} get a current answer "
        f"(95% CI {span(up)}), {brief(old)} an outdated one and {brief(none)} none that names a dated value."
    )
    side = compare(up, old)
    if side == "above":
        return sentence + " It is more often current than outdated."
    if side == "below":
        return sentence + " More of its answers are outdated than current."
    return sentence + " Whether it is more often current than outdated, the intervals cannot tell."


def knowledge_date(summary: Summary, model: str) -> str | None:
    """Up to when it knows changes (the cutoff) and which world its answers most often describe (the knowledge
    date), one sentence on why they differ where they do, and how stale it is at the deployment date."""
    date = find(summary, model, "knowledge_date")
    if date is None or date.value is None:
        judged = find(summary, model, f"{SHARE}.up-to-date")
        if judged is None:
            return None
        return "Knowledge date: none of its answers named a dated value, so the world they describe cannot be dated."
    cutoff = _cutoff_words(summary, model)
    when = value_text(date)
    known = f"95% CI {span(date)}" + (f", from {date.n} dated facts" if date.n is not None else "")
    if no_variation(date):
        known = f"no variation over {date.n} dated facts"
    if date.ci_low is None and date.ci_high is None:  # too few to resample: no interval, never an empty one
        sentence = (
            f"its answers most often describe about {when}; too few dated facts ({date.n or 0}) to give it an interval."
        )
    elif date.n is not None and date.n < MIN_ITEMS:
        sentence = f"its answers most often describe about {when} ({known}), too few facts to rely on."
    elif is_wide({"ci_low": date.ci_low, "ci_high": date.ci_high}):
        sentence = (
            f"its answers most often describe about {when} ({known}); the interval is too wide to date it closely."
        )
    else:
        sentence = f"its answers most often describe {when} ({known})."
    return f"Knowledge cutoff: {cutoff}; {sentence}" + _why_they_differ(summary, model) + _deployed(summary, model)


def _cutoff_words(summary: Summary, model: str) -> str:
    """``it knows changes up to about 2021-06 (2020-09 to 2022-01, from 40 dated facts)``, or why there is none."""
    cutoff = find(summary, model, "knowledge_cutoff")
    if cutoff is not None and cutoff.value is not None:
        facts = f", from {cutoff.n} dated facts" if cutoff.n is not None else ""
        return f"it knows changes up to about {value_text(cutoff)} ({span(cutoff)}{facts})"
    dated = summary.note(model, "knowledge_cutoff.too_few")
    if dated is not None:
        return f"too few dated facts ({dated}) to say up to when it knows changes"
    return "not estimated in this run"


def _why_they_differ(summary: Summary, model: str) -> str:
    """One sentence where the knowledge date lies outside the cutoff's interval; empty otherwise."""
    cutoff, date = find(summary, model, "knowledge_cutoff"), find(summary, model, "knowledge_date")
    if cutoff is None or date is None or cutoff.value is None or date.value is None:
        return ""
    if cutoff.ci_low is None or cutoff.ci_high is None or cutoff.ci_low <= date.value <= cutoff.ci_high:
        return ""
    if date.value > cutoff.ci_high:
        return (
            " The two differ because the values it names began before its cutoff and still held later, so the world"
            " they describe runs past the last change it knows."
        )
    return (
        " The two differ because many of its answers name older values (stale memories), which pull the world"
        " they describe back before the latest changes it still knows."
    )


def _deployed(summary: Summary, model: str) -> str:
    now, later = find(summary, model, "deployed_at.stale_pct"), find(summary, model, "deployed_at.stale_12m_pct")
    if now is None or now.value is None:
        return ""
    when = summary.note(model, "deployed_at") or "the deployment date"
    text = f" Shipped at {when}, {brief(now)} of what it knows would already be stale"
    if later is not None and later.value is not None:
        text += f", {brief(later)} a year later"
    return text + "."


def claimed(summary: Summary, model: str) -> str | None:
    """What it says its cutoff is, beside the changes it knows and the world its answers most often describe."""
    said = summary.note(model, "claimed_cutoff")
    if said is None:
        return None
    sentence = f"Claimed cutoff: it {said}"
    cutoff, date = find(summary, model, "knowledge_cutoff"), find(summary, model, "knowledge_date")
    if cutoff is not None and cutoff.value is not None:
        sentence += f"; it knows changes up to about {brief(cutoff)}"
    if date is not None and date.value is not None:
        sentence += f"; its answers most often describe {brief(date)}"
    return sentence + "."


def sentences(summary: Summary, model: str) -> list[str]:
    """The knowledge cutoff (with the knowledge date) first, then freshness, then what it claims."""
    return [s for s in (knowledge_date(summary, model), freshness(summary, model), claimed(summary, model)) if s]
