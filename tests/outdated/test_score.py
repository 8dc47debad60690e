"""``chronoprobe outdated score``: regression against the DyKnow authors' verdicts, output
shape, hand-computed aggregates and malformed input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from chronoprobe.errors import DataError
from chronoprobe.knowledge.types import FactAnswers, Statement, WikidataDate
from chronoprobe.lenses.outdated.score import score_generations

REPO = Path(__file__).resolve().parents[2]
DYKNOW = REPO / ".." / "shared" / "data" / "dyknow"
RESULTS = DYKNOW / "models_output" / "results"
AUTHORS_TO_OURS = {
    "correct": "up-to-date",
    "outdated": "outdated",
    "irrelevant": "irrelevant",
    "ambiguous": "ambiguous",
}

# Measured agreement (docs/dyknow-classifier.md): gpt2-xl 99.4%, OLMo-1B 97.3%, Mistral 100%.
# Every remaining disagreement is explained there; these floors catch regressions.
MIN_AGREEMENT = {"gpt2-xl": 0.99, "OLMo-1B": 0.965, "Mistral-7B-Instruct-v0.1": 0.995}


def _dyknow() -> Path:
    if not (DYKNOW / "grc_generated.json").is_file() or not RESULTS.is_dir():
        pytest.skip("../shared/data/dyknow is not present")
    return DYKNOW


def _flatten_sheet(sheet: dict) -> dict[tuple, str]:
    flat = {}
    for subject, node in sheet.items():
        for key, value in node.items():
            if isinstance(value, dict):
                for prompt_key, verdict in value.items():
                    flat[(subject, key, prompt_key)] = verdict
            else:
                flat[(subject, None, key)] = value
    return flat


def _authors(model_dir: Path, category: str) -> dict[tuple, str]:
    sheet = model_dir / f"{category}_answer_sheet.json"
    if sheet.is_file():
        return _flatten_sheet(json.loads(sheet.read_text(encoding="utf-8")))
    flat = {}
    analysis = json.loads((model_dir / f"{category}_analysis.json").read_text(encoding="utf-8"))
    for prompt_key, buckets in analysis.items():
        for verdict, items in buckets.items():
            for item in items:
                flat[(item["element"], item["attribute"], prompt_key)] = verdict
    return flat


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dyknow = _dyknow()
    out = {}
    for model in MIN_AGREEMENT:
        target = tmp_path_factory.mktemp(model)
        score_generations(RESULTS / model, target, gold=dyknow / "grc_generated.json")
        out[model] = target
    return out


@pytest.mark.e2e
@pytest.mark.parametrize("model", sorted(MIN_AGREEMENT))
def test_agreement_with_the_authors(scored: dict[str, Path], model: str) -> None:
    agree = total = 0
    for ours_path in sorted(scored[model].glob("*_answer_sheet.json")):
        category = ours_path.name[: -len("_answer_sheet.json")]
        ours = _flatten_sheet(json.loads(ours_path.read_text(encoding="utf-8")))
        theirs = _authors(RESULTS / model, category)
        assert set(theirs) <= set(ours), f"{category}: responses the authors judged but we did not"
        agree += sum(ours[k] == v for k, v in theirs.items())
        total += len(theirs)
    assert total == 520  # 130 facts x 4 prompt keys
    assert agree / total >= MIN_AGREEMENT[model], f"{model}: {agree}/{total}"


def test_answer_sheet_shape_matches_the_authors(scored: dict[str, Path]) -> None:
    for model in ("gpt2-xl", "OLMo-1B"):
        for theirs_path in sorted((RESULTS / model).glob("*_answer_sheet.json")):
            theirs = json.loads(theirs_path.read_text(encoding="utf-8"))
            ours = json.loads((scored[model] / theirs_path.name).read_text(encoding="utf-8"))
            assert set(ours) == set(theirs)
            for subject, node in theirs.items():
                assert set(ours[subject]) == set(node), f"{theirs_path.name} {subject}"
                for key, value in node.items():
                    if isinstance(value, dict):
                        assert set(ours[subject][key]) == set(value)
                        assert set(ours[subject][key].values()) <= set(AUTHORS_TO_OURS)
                    else:
                        assert ours[subject][key] in AUTHORS_TO_OURS


def test_summary_of_a_real_model(scored: dict[str, Path]) -> None:
    summary = json.loads((scored["OLMo-1B"] / "summary.json").read_text(encoding="utf-8"))
    overall = summary["overall"]
    assert overall["facts"] == 130 and overall["responses"] == 390
    assert sum(overall["soft_constraint_counts"].values()) == 130
    assert summary["provenance"]["snapshot"]["kind"] == "grc"
    assert set(summary["categories"]) == {
        "countries_byGDP",
        "athletes_byPayment",
        "companies_byRevenue",
        "organizations",
    }
    assert summary["categories"]["countries_byGDP"]["facts"] == 78
    rows = (scored["OLMo-1B"] / "classifications.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 520


# --- a tiny hand-made folder --------------------------------------------------------------------


def _st(label: str, start: str, end: str | None = None) -> Statement:
    return Statement(label=label, start=WikidataDate.parse(start), end=WikidataDate.parse(end) if end else None)


GOLD = {
    "athletes_byPayment/A": FactAnswers(
        fact_id="athletes_byPayment/A",
        statements=(
            _st("Old Club", "2000-01-01", "2010-01-01"),
            _st("Other Club", "2010-01-01", "2015-01-01"),
            _st("New Club", "2015-01-01"),
        ),
    ),
    "countries_byGDP/Land/President of Land": FactAnswers(
        fact_id="countries_byGDP/Land/President of Land",
        statements=(_st("Ann Smith", "2001-01-01", "2009-01-01"), _st("Bob Jones", "2009-01-01")),
    ),
}


def _leaf(prompts: dict[str, str], answers: dict[str, str]) -> dict:
    return {"answers": {k: prompts[k] + answers[k] for k in answers}, "questions": prompts}


def _write_tiny(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    ath = {
        "generic": "Team of A is",
        "contextualized": "A plays for",
        "rephrased_1": "A's club is",
        "rephrased_2": "A is with",
    }
    ctry = {
        "generic": "Head of Land is",
        "contextualized": "The President of Land is",
        "rephrased_1": "Land's president is",
        "rephrased_2": "Land is led by",
    }
    (folder / "athletes_byPayment_answers.json").write_text(
        json.dumps(
            {
                "A": _leaf(
                    ath,
                    {
                        "generic": " New Club",
                        "contextualized": " Old Club",
                        "rephrased_1": " Other Club.",
                        "rephrased_2": " nobody",
                    },
                )
            }
        )
    )
    (folder / "countries_byGDP_answers.json").write_text(
        json.dumps(
            {
                "Land": {
                    "President of Land": _leaf(
                        ctry,
                        {
                            "generic": " x",
                            "contextualized": " nobody",
                            "rephrased_1": " Bob Jones",
                            "rephrased_2": " Ann Smith",
                        },
                    )
                }
            }
        )
    )
    return folder


def test_hand_computed_summary(tmp_path: Path) -> None:
    folder = _write_tiny(tmp_path / "tiny")
    summary = score_generations(folder, tmp_path / "out", gold="in-memory", gold_answers=GOLD)
    # A: [outdated(Old), outdated(Other), irrelevant] -> soft outdated, inconsistent, to edit.
    # Land: [irrelevant, up-to-date, outdated] -> soft up-to-date, inconsistent.
    overall = summary.overall
    assert overall.facts == 2 and overall.responses == 6
    assert overall.soft_constraint_counts == {"up-to-date": 1, "outdated": 1, "irrelevant": 0, "ambiguous": 0}
    assert overall.average == pytest.approx(
        {"up-to-date": 1 / 6, "outdated": 3 / 6, "irrelevant": 2 / 6, "ambiguous": 0.0}
    )
    assert overall.facts_to_edit == ["athletes_byPayment/A"]
    assert sorted(overall.inconsistent) == ["athletes_byPayment/A", "countries_byGDP/Land/President of Land"]
    assert overall.per_prompt["generic"] == {"up-to-date": 1, "outdated": 0, "irrelevant": 1, "ambiguous": 0}
    assert sorted(overall.start_years) == [2000, 2001, 2009, 2010]
    sheet = json.loads((tmp_path / "out" / "athletes_byPayment_answer_sheet.json").read_text())
    assert sheet == {
        "A": {
            "generic": "correct",
            "contextualized": "outdated",
            "rephrased_1": "outdated",
            "rephrased_2": "irrelevant",
        }
    }
    sheet = json.loads((tmp_path / "out" / "countries_byGDP_answer_sheet.json").read_text())
    assert sheet["Land"]["President of Land"]["rephrased_1"] == "correct"


def test_malformed_input_names_file_and_key_and_writes_nothing(tmp_path: Path) -> None:
    folder = _write_tiny(tmp_path / "bad")
    path = folder / "countries_byGDP_answers.json"
    data = json.loads(path.read_text())
    data["Land"]["President of Land"]["answers"]["rephrased_2"] = 42
    path.write_text(json.dumps(data))
    out = tmp_path / "out"
    with pytest.raises(DataError) as err:
        score_generations(folder, out, gold="in-memory", gold_answers=GOLD)
    assert "countries_byGDP_answers.json" in str(err.value) and "rephrased_2" in str(err.value)
    assert not out.exists()

    path.write_text("{not json")
    with pytest.raises(DataError, match=r"countries_byGDP_answers\.json"):
        score_generations(folder, out, gold="in-memory", gold_answers=GOLD)

    path.write_text(json.dumps({"Nowhere": {"President": {"answers": {"generic": "x"}}}}))
    with pytest.raises(DataError, match="Nowhere"):
        score_generations(folder, out, gold="in-memory", gold_answers=GOLD)
    assert not out.exists()


@pytest.mark.e2e
def test_cli_score_and_error_exit(tmp_path: Path) -> None:
    dyknow = _dyknow()
    cmd = [sys.executable, "-m", "chronoprobe.cli.main", "outdated", "score"]
    ok = subprocess.run(
        [
            *cmd,
            "--generations",
            str(RESULTS / "gpt2-xl"),
            "--out",
            str(tmp_path / "o"),
            "--gold",
            str(dyknow / "grc_generated.json"),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "o" / "summary.json").is_file()
    assert len(list((tmp_path / "o").glob("*_answer_sheet.json"))) == 4
    bad = subprocess.run(
        [*cmd, "--generations", str(tmp_path / "missing"), "--out", str(tmp_path / "o2")],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert "missing" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "o2").exists()


def test_fact_without_dated_gold_is_no_gold_and_outside_every_rate(tmp_path: Path) -> None:
    folder = _write_tiny(tmp_path / "tiny")
    hollow = dict(GOLD)
    land = "countries_byGDP/Land/President of Land"
    hollow[land] = FactAnswers(fact_id=land, statements=())
    summary = score_generations(folder, tmp_path / "out", gold="in-memory", gold_answers=hollow)
    # Only A is judged: [outdated, outdated, irrelevant] -> soft outdated; Land is "no gold".
    assert summary.no_gold == [land]
    assert summary.overall.facts == 1 and summary.overall.responses == 3
    assert summary.overall.soft_constraint_counts == {"up-to-date": 0, "outdated": 1, "irrelevant": 0, "ambiguous": 0}
    assert "countries_byGDP" not in {c for c, s in summary.categories.items() if s.facts}
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["no_gold"] == [land]


def test_scores_carry_wilson_intervals(tmp_path: Path) -> None:
    from chronoprobe.metrics.uncertainty import wilson

    folder = _write_tiny(tmp_path / "tiny")
    summary = score_generations(folder, tmp_path / "out", gold="in-memory", gold_answers=GOLD)
    est = summary.overall.estimates
    assert est is not None
    assert est.soft_constraint["up-to-date"] == wilson(1, 2)
    # 6 answers of 2 facts (A: 2 outdated of 3, Land: 1 of 3): clustering leaves the effective size at 6
    average = est.average["outdated"]
    assert (average.value, average.ci_low, average.ci_high) == (0.5, wilson(3, 6).ci_low, wilson(3, 6).ci_high)
    assert average.method == "wilson-clustered"
    assert est.inconsistency == wilson(2, 2)
    for verdict, share in summary.overall.soft_constraint.items():
        assert est.soft_constraint[verdict].value == share
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["overall"]["estimates"]["average"]["outdated"]["n"] == 6
