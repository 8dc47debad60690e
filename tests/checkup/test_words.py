"""The paragraph in plain words: each lens's sentences quote its records and say when the numbers cannot tell."""

from __future__ import annotations

from chronoprobe.lenses.conflicts.lens import ConflictsLens
from chronoprobe.lenses.editing.lens import EditingLens
from chronoprobe.lenses.outdated.lens import OutdatedLens
from chronoprobe.lenses.recency.lens import RecencyLens
from chronoprobe.records.runlog import Difference, Metric, Summary
from chronoprobe.reports.lens_card import card_of
from chronoprobe.reports.plain_words import brief, compare, quote, span


def m(name: str, value: float, low: float, high: float, n: int, group: str = "all", unit: str = "%") -> Metric:
    return Metric(model="x", group=group, name=name, value=value, n=n, ci_low=low, ci_high=high, unit=unit)


def summary(lens: str, *metrics: Metric, labels: dict[str, str] | None = None) -> Summary:
    return Summary(lens=lens, models=["x"], headline={}, metrics=list(metrics), labels=labels or {})


def test_numbers_read_with_their_interval() -> None:
    share = m("soft_constraint_pct.up-to-date", 3.8461, 1.65, 8.69, 130)
    assert quote(share) == "3.8% (95% CI 1.6–8.7%, n=130)"
    assert brief(share) == "3.8% (1.6–8.7%)"
    rate = m("zero-shot.without.unparseable_rate", 0.025, 0.0044, 0.1288, 40, unit="rate")
    assert quote(rate) == "2.5% (95% CI 0.4–12.9%, n=40)"
    on_zero_to_one = m("zero-shot.without.accuracy", 0.025, 0.0044, 0.1288, 40, unit="rate")  # RecencyQA's Table 5
    assert quote(on_zero_to_one) == "0.025 (95% CI 0.004–0.129, n=40)"
    date = m("knowledge_date", 2021.75, 2007.1, 2022.2, 11, unit="year")
    assert span(date) == "2007-02 to 2022-03"
    assert compare(m("a", 50, 40, 60, 99), m("b", 20, 10, 39, 99)) == "above"
    assert compare(m("a", 50, 40, 60, 99), m("b", 35, 30, 41, 99)) == "overlap"


def test_freshness_says_when_the_intervals_cannot_tell() -> None:
    base = ("soft_constraint_pct.up-to-date", "soft_constraint_pct.outdated", "soft_constraint_pct.irrelevant")
    overlapping = summary(
        "outdated",
        *(m(n, v, lo, hi, 130) for n, (v, lo, hi) in zip(base, [(5, 2, 10), (7, 4, 12), (88, 81, 92)], strict=True)),
    )
    [date, fresh] = card_of(OutdatedLens).sentences(overlapping, "x")
    assert fresh == (
        "Freshness: of 130 time-sensitive facts, 5.0% get a current answer (95% CI 2.0–10.0%), 7.0% (4.0–12.0%) "
        "an outdated one and 88.0% (81.0–92.0%) none that names a dated value. Whether it is more often current "
        "than outdated, the intervals cannot tell."
    )
    assert date.startswith("Knowledge date: none of its answers named a dated value")
    apart = summary(
        "outdated",
        m(base[0], 60, 51, 68, 130),
        m(base[1], 20, 14, 28, 130),
        m(base[2], 20, 14, 28, 130),
        m("knowledge_date", 2022.5, 2022.1, 2022.9, 40, unit="year"),
        m("knowledge_cutoff", 2021.5, 2020.75, 2022.0, 40, unit="year"),
    )
    date, fresh = card_of(OutdatedLens).sentences(apart, "x")
    assert fresh.endswith("It is more often current than outdated.")
    assert date == (
        "Knowledge cutoff: it knows changes up to about 2021-07 (2020-10 to 2022-01, from 40 dated facts); its answers"
        " most often describe 2022-07 (95% CI 2022-02 to 2022-11, from 40 dated facts). The two differ because the"
        " values it names began before its cutoff and still held later, so the world they describe runs past the last"
        " change it knows."
    )
    few = summary("outdated", *(m(n, 50, 10, 90, 4) for n in base))
    assert (
        card_of(OutdatedLens)
        .sentences(few, "x")[1]
        .startswith("Freshness: only 4 time-sensitive facts were judged, too few")
    )


def test_context_compares_facts_that_change_with_static_ones() -> None:
    rows = []
    for group, persuaded, cp in (
        ("static", (20, 12, 30), (1.0, 0.8, 1.2)),
        ("temporal", (60, 50, 70), (3.0, 2.6, 3.4)),
    ):
        rows += [m("persuaded_pct", *persuaded, 40, group), m("stubborn_pct", 70, 60, 80, 40, group)]
        rows.append(m("cp", *cp, 80, group, unit=""))
    [sentence] = card_of(ConflictsLens).sentences(summary("conflicts", *rows), "x")
    assert sentence.startswith(
        "Context: given a context that contradicts its memory, it takes the context's answer 20.0% (12.0–30.0%) on static and 60.0% (50.0–70.0%) on temporal facts"
    )
    assert sentence.endswith(
        "Context sways it more on facts that change (CP 3.00 (2.60–3.40) on temporal facts, 1.00 (0.80–1.20) on static ones)."
    )
    few = [r.model_copy(update={"n": 4}) for r in rows]
    assert (
        card_of(ConflictsLens)
        .sentences(summary("conflicts", *few), "x")[0]
        .endswith("With 4 facts per class, too few to say for which kinds of facts.")
    )


def test_recency_and_what_to_do() -> None:
    recency = summary(
        "recency",
        m("zero-shot.without.accuracy", 0.3, 0.2, 0.4, 90, unit="rate"),
        m("zero-shot.without.gate_agreement", 0.7, 0.6, 0.8, 90, unit="rate"),
        m("zero-shot.without.unparseable_rate", 0.6, 0.52, 0.7, 90, unit="rate"),
        m("zero-shot.with.accuracy", 0.1, 0.05, 0.2, 120, unit="rate"),
    )
    [sentence] = card_of(RecencyLens).sentences(recency, "x")
    assert (
        "Recency (zero-shot, without context)" in sentence
        and "right interval with an accuracy of 0.300 on a 0–1 scale (95% CI 0.200–0.400, n=90)" in sentence
    )
    assert "decides as the labels would for 70.0% (60.0–80.0%)" in sentence
    assert sentence.endswith(
        "Most of its answers, 60.0% (52.0–70.0%), name no interval at all, so these numbers say little."
    )
    editing = summary(
        "editing",
        m("unedited.harmonic_mean_pct", 0, 0, 0, 20),
        m("ike-null.harmonic_mean_pct", 10, 3, 20, 20),
        m("rag-gold.harmonic_mean_pct", 70, 55, 85, 20),
        m("rag-gold@50%.harmonic_mean_pct", 90, 80, 99, 10),
        labels={"ike-null": "IKE", "rag-gold": "RAG gold"},
    )
    [sentence] = card_of(EditingLens).sentences(editing, "x")
    assert sentence == (
        "What to do: on the 20 facts it got wrong, the harmonic mean of efficacy and paraphrase success is 70.0% "
        "(95% CI 55.0–85.0%, n=20) for retrieval (RAG gold) over them against 10.0% (3.0–20.0%) for editing (IKE). "
        "Retrieval is the better fix."
    )


def test_what_to_do_decides_paired_where_two_intervals_cannot() -> None:
    """Six facts, intervals overlapping: the paired comparison on the same facts decides instead of "too few"."""
    metrics = (
        m("ike-null.harmonic_mean_pct", 80, 66.7, 90.9, 6),
        m("rag-gold.harmonic_mean_pct", 44.4, 0, 84.7, 6),
    )
    paired = Difference(
        model="x",
        a="rag-gold",
        b="ike-null",
        metric="harmonic_mean_pct",
        delta=35.6,
        ci_low=8.1,
        ci_high=70.2,
        n=6,
        p=0.031,
        test="exact sign-flip",
    )
    labels = {"ike-null": "IKE", "rag-gold": "RAG gold"}
    decided = summary("editing", *metrics, labels=labels)
    decided.paired = [paired]
    [sentence] = card_of(EditingLens).sentences(decided, "x")
    assert sentence.endswith(
        "Editing is the better fix: paired on the same 6 facts, editing scores +35.6 points against retrieval "
        "(95% bootstrap CI +8.1 to +70.2; exact sign-flip p = 0.031)."
    )
    undecided = summary("editing", *metrics, labels=labels)
    undecided.paired = [paired.model_copy(update={"ci_low": -5.0, "p": 0.09})]
    [sentence] = card_of(EditingLens).sentences(undecided, "x")
    assert sentence.endswith("6 facts are too few to choose between them.")  # where the data does not decide


def test_no_interval_is_ever_empty_or_of_no_width() -> None:
    """One dated fact gives no interval: it says too few, never "(95% CI , from 1 dated facts)"; a statistic whose
    resamples never vary says "no variation in n = 40", never "[0.000, 0.000]"."""
    from chronoprobe.reports.metric_format import cell

    shares = [m(f"soft_constraint_pct.{v}", 50, 40, 60, 130) for v in ("up-to-date", "outdated", "irrelevant")]
    one = Metric(model="x", group="all", name="knowledge_date", value=2019.04, n=1, unit="year")
    [date] = [s for s in card_of(OutdatedLens).sentences(summary("outdated", *shares, one), "x") if "describe" in s]
    assert "its answers most often describe about 2019-01; too few dated facts (1) to give it an interval." in date
    flat_date = m("knowledge_date", 2019.04, 2019.04, 2019.04, 5, unit="year")
    [date] = [
        s for s in card_of(OutdatedLens).sentences(summary("outdated", *shares, flat_date), "x") if "describe" in s
    ]
    assert "describe about 2019-01 (no variation over 5 dated facts), too few facts to rely on." in date
    macro = m("zero-shot.without.macro_f1", 0.0, 0.0, 0.0, 40, unit="rate")
    assert quote(macro) == "0.000 (no variation in n = 40)" and brief(macro) == "0.000 (no variation)"
    assert cell(macro) == "0.000 (no variation in n = 40)" and span(macro) == "no variation"
