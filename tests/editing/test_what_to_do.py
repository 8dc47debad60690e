"""The "what to do" sentence compares retrieval and editing on the same facts, and says how many had a
passage to retrieve: hand-computed from three facts, one of them without a gold passage."""

from __future__ import annotations

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.lenses.editing import metric_records
from chronoprobe.lenses.editing.lens import EditingLens
from chronoprobe.lenses.editing.metric_records import EditSetRecord
from chronoprobe.lenses.editing.rows import EditingRow, MethodRun
from chronoprobe.lenses.editing.summary import summarise_model
from chronoprobe.records.runlog import Metric
from chronoprobe.reports.lens_card import card_of
from chronoprobe.reports.metric_format import quote

UP, OLD = "up-to-date", "outdated"

AMAZON = EditRecord(
    prompt="The CEO position at Amazon is currently held by",
    target="Andy Jassy",
    subject="CEO position at Amazon",
    domain="companies_byRevenue",
    element="Amazon",
    prompt_type="rephrased_2",
    questions={
        "contextualized": "The current Chief Executive Officer of Amazon is",
        "rephrased_1": "The current CEO of Amazon is",
        "rephrased_2": "The CEO position at Amazon is currently held by",
    },
    answers=["Andy Jassy |S: +2021-07-06T00:00:00Z", "Jeff Bezos |S: +1996-05-00T00:00:00Z |E: +2021-07-05T00:00:00Z"],
)
ITALY = EditRecord(
    prompt="The position of the Prime Minister of Italy is currently held by",
    target="Giorgia Meloni",
    subject="Prime Minister of Italy",
    domain="countries_byGDP",
    element="Italy",
    attribute="Prime Minister of Italy",
    prompt_type="rephrased_2",
    questions={
        "contextualized": "The Prime Minister of Italy is",
        "rephrased_1": "Italy's head of government is",
        "rephrased_2": "The position of the Prime Minister of Italy is currently held by",
    },
    answers=["Giorgia Meloni |S: +2022-10-22T00:00:00Z"],
)
APPLE = EditRecord(  # no gold passage: RAG gold does not ask it
    prompt="The CEO position at Apple is currently held by",
    target="Tim Cook",
    subject="CEO position at Apple",
    domain="companies_byRevenue",
    element="Apple",
    prompt_type="rephrased_2",
    questions={"rephrased_2": "The CEO position at Apple is currently held by"},
    answers=["Tim Cook |S: +2011-08-24T00:00:00Z"],
)


def _rows(method: str, *verdicts: tuple[EditRecord, list[str]]) -> list[EditingRow]:
    """One row per scored question of each fact, with the given verdicts (edit prompt first)."""
    rows = []
    for record, said in verdicts:
        for kind, verdict in zip(record.scored_types, said, strict=True):
            rows.append(
                EditingRow(
                    model="m",
                    method=method,
                    role="edit" if kind == record.prompt_type else "paraphrase",
                    fact_id=record.fact_id,
                    group=record.group,
                    question_kind=kind,
                    question=record.questions[kind],
                    rendered_prompt=record.questions[kind],
                    response="",
                    verdict=verdict,
                )
            )
    return rows


def test_retrieval_and_editing_are_compared_on_the_facts_both_were_asked() -> None:
    records = [AMAZON, ITALY, APPLE]
    rows = [
        *_rows("unedited", (AMAZON, [OLD, OLD, OLD]), (ITALY, [OLD, OLD, OLD]), (APPLE, [OLD])),
        # IKE fixes every question of every fact
        *_rows("ike-null", (AMAZON, [UP, UP, UP]), (ITALY, [UP, UP, UP]), (APPLE, [UP])),
        # RAG gold, on the two facts with a passage: Amazon's prompt and one paraphrase, Italy's two paraphrases
        *_rows("rag-gold", (AMAZON, [UP, UP, OLD]), (ITALY, [OLD, UP, UP])),
    ]
    runs = [
        MethodRun(model="m", method="ike-null", mode="prompt", facts=3),
        MethodRun(model="m", method="rag-gold", mode="prompt", facts=2, skipped={APPLE.fact_id: "no gold passage"}),
    ]
    dataset: EditSetRecord = {"source": "test", "facts": 3}
    detail = {"models": {"m": summarise_model(records, rows, runs, dataset=dataset)}}
    summary = metric_records.summary(detail)

    def record(name: str, group: str) -> Metric:
        return next(m for m in summary.metrics if m.name == name and m.group == group)

    # over each method's own facts: RAG gold on 2 (E 1/2, P 3/4: HM 2·0.5·0.75/1.25 = 0.6), IKE on all 3
    rag, ike = record("rag-gold.harmonic_mean_pct", "all"), record("ike-null.harmonic_mean_pct", "all")
    assert (rag.value, rag.n, ike.value, ike.n) == (60.0, 2, 100.0, 3)
    # on the 2 facts every method was asked: RAG gold the same 60%, IKE 100% on those 2 alone
    rag_shared, ike_shared = (
        record("rag-gold.harmonic_mean_pct", "shared"),
        record("ike-null.harmonic_mean_pct", "shared"),
    )
    assert (rag_shared.value, rag_shared.n, ike_shared.value, ike_shared.n) == (60.0, 2, 100.0, 2)
    assert record("rag-gold.efficacy_pct", "shared").value == 50.0
    assert record("rag-gold.paraphrase_pct", "shared").value == 75.0
    assert record("unedited.harmonic_mean_pct", "shared").n == 2

    [sentence] = card_of(EditingLens).sentences(summary, "m")
    assert sentence == (
        "What to do: on the 3 facts it got wrong (2 of the 3 have a passage to retrieve), the harmonic mean of "
        f"efficacy and paraphrase success is {quote(rag_shared)} for retrieval (RAG gold) over those 2 against "
        f"{quote(ike_shared)} for editing (IKE) on the same facts. 2 facts are too few to choose between them."
    )
    assert quote(ike_shared) == "100.0% (no variation in n = 2)"  # on the same 2 facts, not on all 3


def test_methods_on_the_same_facts_get_no_shared_records() -> None:
    records = [AMAZON, ITALY]
    rows = [
        *_rows("unedited", (AMAZON, [OLD, OLD, OLD]), (ITALY, [OLD, OLD, OLD])),
        *_rows("ike-null", (AMAZON, [UP, UP, UP]), (ITALY, [UP, UP, UP])),
        *_rows("rag-gold", (AMAZON, [UP, UP, OLD]), (ITALY, [OLD, UP, UP])),
    ]
    runs = [
        MethodRun(model="m", method="ike-null", mode="prompt", facts=2),
        MethodRun(model="m", method="rag-gold", mode="prompt", facts=2),
    ]
    detail = {"models": {"m": summarise_model(records, rows, runs, dataset={"source": "test", "facts": 2})}}
    summary = metric_records.summary(detail)
    assert not [m for m in summary.metrics if m.group == "shared"]
    [sentence] = card_of(EditingLens).sentences(summary, "m")
    assert sentence.startswith(
        "What to do: on the 2 facts it got wrong, the harmonic mean of efficacy and paraphrase success is 60.0% (95% CI"
    )
    assert "n=2) for retrieval (RAG gold) over them against 100.0% (" in sentence


def test_an_older_run_without_shared_records_does_not_compare_different_facts() -> None:
    from chronoprobe.records.runlog import Summary

    def m(name: str, value: float, n: int) -> Metric:
        return Metric(
            model="x", group="all", name=name, value=value, n=n, ci_low=value - 5, ci_high=value + 5, unit="%"
        )

    old = Summary(
        lens="editing",
        models=["x"],
        headline={},
        metrics=[
            m("unedited.harmonic_mean_pct", 0, 6),
            m("ike-null.harmonic_mean_pct", 80, 6),
            m("rag-gold.harmonic_mean_pct", 44.4, 5),
        ],
        labels={"ike-null": "IKE", "rag-gold": "RAG gold"},
    )
    [sentence] = card_of(EditingLens).sentences(old, "x")
    assert sentence == (
        "What to do: on the 6 facts it got wrong (5 of the 6 have a passage to retrieve), the harmonic mean of "
        "efficacy and paraphrase success is 44.4% (95% CI 39.4–49.4%, n=5) for retrieval (RAG gold) on the facts it "
        "was asked and 80.0% (95% CI 75.0–85.0%, n=6) for editing (IKE); on different facts, the two are not compared."
    )
