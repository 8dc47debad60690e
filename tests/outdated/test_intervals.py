"""Every share in the outdated summary and report carries its n and a 95% Wilson interval."""

from __future__ import annotations

import json

import pytest

from chronoprobe.lenses.outdated.audit import ResponseRecord
from chronoprobe.lenses.outdated.report import render_markdown
from chronoprobe.lenses.outdated.summary import summarize_model
from chronoprobe.metrics.uncertainty import wilson
from chronoprobe.provenance import Provenance

# fact -> verdicts of its three paraphrases
VERDICTS = {
    "f1": ["up-to-date", "outdated", "irrelevant"],  # soft up-to-date, inconsistent
    "f2": ["outdated", "outdated", "outdated"],  # soft outdated
    "f3": ["irrelevant", "irrelevant", "irrelevant"],  # soft irrelevant
    "f4": ["up-to-date", "up-to-date", "up-to-date"],  # soft up-to-date
}


def _records() -> list[ResponseRecord]:
    return [
        ResponseRecord(
            model="m",
            fact_id=fact,
            category="leaders",
            subject=fact,
            attribute=None,
            template_index=i,
            template="t",
            rendered_prompt="t",
            response="r",
            verdict=verdict,
            verdict_as_of=verdict,  # type: ignore[arg-type]
            matched=["X"] if verdict != "irrelevant" else [],
            matched_start_years=[],
        )
        for fact, verdicts in VERDICTS.items()
        for i, verdict in enumerate(verdicts)
    ]


def test_summary_has_wilson_estimates_beside_every_share() -> None:
    group = summarize_model(_records(), with_as_of=True)["per_category"]["all"]
    est = group["estimates"]
    soft = est["soft_constraint_pct"]["up-to-date"]
    assert soft == wilson(2, 4, scale=100.0).to_json()
    assert soft["value"] == group["soft_constraint_pct"]["up-to-date"] == 50.0
    assert soft["n"] == 4 and soft["method"] == "wilson"
    for verdict, share in group["soft_constraint_pct"].items():
        assert est["soft_constraint_pct"][verdict]["value"] == share  # identical, not just close
    # averaged: 12 answers, 4 outdated, clustered on the 4 facts (f1 has 1, f2 3, f3 and f4 none).
    # Each fact's summed deviation from p = 1/3 is 0, 2, -1, -1: the clustered variance 6/144 is 2.25 times
    # the binomial 1/54, so the Wilson interval is taken at the effective size 12 / 2.25 = 16/3 answers.
    outdated = est["average_pct"]["outdated"]
    assert outdated["n"] == 12 and outdated["value"] == group["average_pct"]["outdated"]
    assert outdated["method"] == "wilson-clustered"
    p, n, z = 1 / 3, 16 / 3, 1.959963984540054
    centre, half = (
        (p + z * z / (2 * n)) / (1 + z * z / n),
        z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n),
    )
    assert (outdated["ci_low"], outdated["ci_high"]) == pytest.approx((100 * (centre - half), 100 * (centre + half)))
    assert outdated["ci_high"] - outdated["ci_low"] > wilson(4, 12, scale=100.0).ci_high - wilson(4, 12).ci_low * 100
    assert est["inconsistency_pct"] == wilson(1, 4, scale=100.0).to_json()
    assert est["inconsistency_pct"]["value"] == group["inconsistency_pct"]
    json.dumps(est, allow_nan=False)  # plain JSON
    assert summarize_model(_records(), with_as_of=True)["as_of"]["all"]["estimates"]["soft_constraint_pct"]


def test_report_cells_show_the_interval_and_n() -> None:
    per_model = {"m": summarize_model(_records(), with_as_of=False)}
    text = render_markdown(per_model, Provenance(), None)
    up = wilson(2, 4, scale=100.0)
    cell = f"50.0 [{up.ci_low:.1f}, {up.ci_high:.1f}]"
    assert f"| m | all | 4 | {cell} |" in text  # soft constraint: n = facts
    assert "| model | category | facts | answers | up-to-date |" in text
    assert "| m | all | 4 | 12 | " in text  # averaged: n = answers
    inc = wilson(1, 4, scale=100.0)
    assert f"| m | all | 4 | 1 | 25.0 | [{inc.ci_low:.1f}, {inc.ci_high:.1f}] (n=4) |" in text
