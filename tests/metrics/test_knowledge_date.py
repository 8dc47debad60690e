"""The knowledge date and staleness on hand-built histories whose right answer is known."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate
from chronoprobe.metrics.knowledge_date import (
    GRID_STEP,
    DatedAnswer,
    Period,
    dated_answer,
    decimal_year,
    estimate_knowledge_date,
    month_label,
    monthly_grid,
    parse_month,
    plateau_centre,
    share_stale,
    staleness,
)

GRID = monthly_grid(2000.0, 2024.0)


def day(text: str) -> WikidataDate:
    y, m, d = (int(p) for p in text.split("-"))
    return WikidataDate(year=y, month=m, day=d)


def year(y: int) -> WikidataDate:
    return WikidataDate(year=y)


def fact(fact_id: str, *periods: tuple[str, WikidataDate, WikidataDate | None]) -> FactAnswers:
    return FactAnswers(
        fact_id=fact_id, statements=tuple(Statement(label=label, start=s, end=e) for label, s, e in periods)
    )


def answer(history: FactAnswers, label: str, category: str = "c") -> DatedAnswer:
    dated = dated_answer(history.fact_id, category, label, history)
    assert dated is not None
    return dated


# --- dates -------------------------------------------------------------------------------------


def test_decimal_years_start_months_at_twelfths() -> None:
    assert decimal_year(dt.date(2021, 7, 1)) == 2021.5
    assert decimal_year(dt.date(2021, 1, 1)) == 2021.0
    assert month_label(2021.5) == "2021-07"
    assert month_label(2021.999) == "2021-12"
    assert parse_month("2021-07") == 2021.5
    assert parse_month("2017") == 2017.0
    with pytest.raises(ValueError):
        parse_month("July 2021")


def test_a_year_only_date_is_uniform_over_its_year() -> None:
    period = Period.of(Statement(label="x", start=year(2016), end=year(2018)))
    held = period.held(np.array([2015.9, 2016.5, 2017.5, 2018.5, 2019.1]))
    assert held.tolist() == pytest.approx([0.0, 0.5, 1.0, 0.5, 0.0], abs=0.01)


def test_a_day_precise_period_is_a_step() -> None:
    period = Period.of(Statement(label="x", start=day("2016-01-01"), end=day("2018-01-01")))
    assert period.held(np.array([2015.99, 2016.0, 2017.99, 2018.01])).tolist() == [0.0, 1.0, 1.0, 0.0]


# --- the knowledge date -----------------------------------------------------------------------


def test_answers_valid_together_on_one_month_are_dated_there() -> None:
    """Fact a's named value held 2015-2017-04, fact b's from 2017-03: only March 2017 fits both."""
    a = fact("a", ("A1", day("2015-01-01"), day("2017-04-01")), ("A2", day("2017-04-01"), None))
    b = fact("b", ("B1", day("2010-01-01"), day("2017-03-01")), ("B2", day("2017-03-01"), None))
    result = estimate_knowledge_date([answer(a, "A1"), answer(b, "B2")], GRID)
    assert result is not None and result.estimate.value is not None
    assert abs(result.estimate.value - parse_month("2017-03")) <= GRID_STEP
    assert result.estimate.n == 2


def test_a_tie_is_broken_at_the_middle_of_the_tied_dates() -> None:
    """One value that held 2016-2018: every month in between fits equally; the middle one is reported."""
    a = fact("a", ("A1", day("2012-01-01"), day("2016-01-01")), ("A2", day("2016-01-01"), day("2018-01-01")))
    result = estimate_knowledge_date([answer(a, "A2")], GRID)
    assert result is not None and result.estimate.value is not None
    assert abs(result.estimate.value - 2017.0) <= GRID_STEP
    assert plateau_centre(np.array([0.0, 1.0, 1.0, 1.0, 0.0])) == 2
    assert plateau_centre(np.array([1.0, 1.0, 0.0])) == 0


def test_year_only_dates_spread_the_evidence_over_their_year() -> None:
    """Started 'in 2019' (year only), and a day-precise value that ended 2019-07-01: the likelihood
    rises through 2019 until July, so the date falls in the first half of 2019."""
    a = fact("a", ("A0", day("2010-01-01"), year(2019)), ("A1", year(2019), None))
    b = fact("b", ("B1", day("2015-01-01"), day("2019-07-01")), ("B2", day("2019-07-01"), None))
    result = estimate_knowledge_date([answer(a, "A1"), answer(b, "B1")], GRID)
    assert result is not None and result.estimate.value is not None
    assert 2019.0 <= result.estimate.value < 2019.5


def test_facts_that_changed_often_weigh_more_than_facts_that_changed_once() -> None:
    """Two facts disagree: a two-valued fact says 2010-2012, a ten-valued one says 2020-2021. The
    ten-valued fact's noise term (eps / K) is smaller, so its date wins; the naive curve cannot tell."""
    two = fact("two", ("T1", day("2010-01-01"), day("2012-01-01")), ("T2", day("2012-01-01"), None))
    ten = fact(
        "ten",
        *[(f"X{i}", day(f"{2002 + 2 * i}-01-01"), day(f"{2004 + 2 * i}-01-01")) for i in range(9)],
        ("X9", day("2020-01-01"), day("2021-01-01")),
        ("X10", day("2021-01-01"), None),
    )
    result = estimate_knowledge_date([answer(two, "T1"), answer(ten, "X9")], GRID)
    assert result is not None and result.estimate.value is not None
    assert 2020.0 <= result.estimate.value < 2021.0


def test_a_never_changing_fact_does_not_move_the_date() -> None:
    a = fact("a", ("A1", day("2015-01-01"), day("2017-04-01")), ("A2", day("2017-04-01"), None))
    b = fact("b", ("B1", day("2010-01-01"), day("2017-03-01")), ("B2", day("2017-03-01"), None))
    static = [fact(f"s{i}", ("S", day("1995-01-01"), None)) for i in range(5)]
    base = estimate_knowledge_date([answer(a, "A1"), answer(b, "B2")], GRID)
    more = estimate_knowledge_date([answer(a, "A1"), answer(b, "B2"), *(answer(s, "S") for s in static)], GRID)
    assert base is not None and more is not None
    assert more.estimate.value == base.estimate.value
    assert more.informative_facts == 2


def test_a_synthetic_model_up_to_date_on_one_day_of_the_real_snapshot_is_dated_there() -> None:
    """For each fact of the shipped snapshot, answer with a value that held on 2020-03-15: the
    date must lie where all those answers held (within a grid step), and close to the day itself."""
    from chronoprobe.knowledge.snapshot import load_snapshot

    when = dt.date(2020, 3, 15)
    snapshot = load_snapshot(None)
    answers = []
    for fact_id, history in snapshot.answers.items():
        held = [s for s in history.counted().statements if s.valid_at(when)]
        if held:
            answers.append(answer(history, held[0].label, fact_id.split("/")[0]))
    result = estimate_knowledge_date(answers, GRID, resamples=200)
    assert result is not None and result.estimate.value is not None
    points = np.array([result.estimate.value - GRID_STEP, result.estimate.value, result.estimate.value + GRID_STEP])
    assert any(all(a.held(points)[i] > 0 for a in answers) for i in range(3))
    assert abs(result.estimate.value - decimal_year(when)) <= 0.5
    assert result.estimate.ci_low is not None and result.estimate.ci_high is not None
    assert result.estimate.ci_low <= decimal_year(when) + GRID_STEP
    assert result.estimate.ci_high >= decimal_year(when) - GRID_STEP


@pytest.mark.e2e
def test_the_bootstrap_is_seeded_and_reproducible() -> None:
    histories = [
        fact(
            f"f{i}",
            ("old", day(f"{2005 + i}-01-01"), day(f"{2010 + i}-06-01")),
            ("new", day(f"{2010 + i}-06-01"), None),
        )
        for i in range(8)
    ]
    answers = [answer(h, "old" if i % 2 else "new") for i, h in enumerate(histories)]
    first = estimate_knowledge_date(answers, GRID, seed=0)
    again = estimate_knowledge_date(answers, GRID, seed=0)
    other = estimate_knowledge_date(answers, GRID, seed=1)
    assert first is not None and again is not None and other is not None
    assert first.estimate == again.estimate and first.naive == again.naive
    assert first.estimate.value == other.estimate.value
    assert first.estimate.method == "bootstrap" and first.estimate.n == 8


def test_no_dated_answer_gives_no_date() -> None:
    assert estimate_knowledge_date([], GRID) is None


# --- staleness ----------------------------------------------------------------------------------


def test_staleness_follows_what_was_known_and_fits_the_half_life() -> None:
    """Four values held on 2020-01: two changed on 2021-01-01, two never. Followed to 2024-01:
    half still current; exposure 1 + 1 + 4 + 4 years with two changes -> half-life 5 ln 2."""
    changed = [
        fact(f"c{i}", ("old", day("2015-01-01"), day("2021-01-01")), ("new", day("2021-01-01"), None)) for i in range(2)
    ]
    kept = [fact(f"k{i}", ("same", day("2015-01-01"), None)) for i in range(2)]
    answers = [answer(h, "old") for h in changed] + [answer(h, "same") for h in kept]
    curve = staleness(answers, 2020.0, 2024.0)
    assert curve is not None
    assert curve.n == 4 and curve.changed == 2
    assert curve.share[0] == 1.0 and curve.share[-1] == 0.5
    assert curve.half_life.value == pytest.approx(5 * math.log(2.0))
    stale, _, _, extrapolated = share_stale(curve, 2022.0)
    assert stale == 0.5 and not extrapolated
    later, _, _, extrapolated = share_stale(curve, 2024.0 + curve.half_life.value)
    assert extrapolated and later == pytest.approx(0.75)


def test_a_value_that_lapsed_and_returned_counts_as_changed() -> None:
    history = fact(
        "f",
        ("A", day("2010-01-01"), day("2012-01-01")),
        ("B", day("2012-01-01"), day("2016-01-01")),
        ("A", day("2016-01-01"), None),
    )
    curve = staleness([answer(history, "A")], 2011.0, 2020.0)
    assert curve is not None and curve.changed == 1 and curve.share[-1] == 0.0


def test_no_change_gives_no_half_life() -> None:
    curve = staleness([answer(fact("f", ("A", day("2010-01-01"), None)), "A")], 2015.0, 2020.0)
    assert curve is not None and curve.half_life.value is None and curve.changed == 0
