"""``chronoprobe check`` end to end on mock models: every lens in one folder, the paragraph, the gate, JUnit."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml
from world import World, register_knower

import chronoprobe as cp
from chronoprobe.contract import lens as lens_module
from chronoprobe.contract.lens import Lens
from chronoprobe.metrics.knowledge_date import month_label
from chronoprobe.models.base import Capability
from chronoprobe.testing import MockBackend, unregister_mock
from chronoprobe.testing.openai_server import OpenAIServer
from cli_driver import run_main

LENSES = ["outdated", "conflicts", "recency", "editing"]


@pytest.fixture(scope="module")
def half_knower():
    register_knower("half", World(), every=2)
    yield "mock:half"
    unregister_mock("half")


def record(folder: Path, lens: str, name: str, group: str = "all") -> dict:
    metrics = json.loads((folder / lens / "run.json").read_text())["summary"]["metrics"]
    return next(m for m in metrics if m["name"] == name and m["group"] == group)


def pct(metric: dict) -> str:
    scale = 100.0 if metric["unit"] == "rate" else 1.0
    return f"{scale * metric['value']:.1f}% "


@pytest.mark.e2e
def test_check_runs_every_lens_into_one_folder_and_answers_in_plain_words(monkeypatch, capsys, tmp_path, half_knower):
    out, cache = tmp_path / "check", tmp_path / "calls.sqlite"
    args = ["check", "--model", half_knower, "--out", str(out), "--cache", str(cache)]
    first = run_main(monkeypatch, capsys, *args, columns=400)
    assert first.code == 0, first.text
    plan = [line for line in first.err.splitlines() if re.match(r"^(outdated|conflicts|recency|editing|total): ", line)]
    rough = (
        "(a rough range: the call cache has not timed this model on this machine yet, so it stands on 1.0 s per call)"
    )
    heads = [
        "outdated: 130 facts, 393 model calls; about ",  # and 3 on its knowledge cutoff
        "conflicts: 12 facts, 36 model calls; about ",
        "recency: 40 questions, 93 model calls; about ",
        "editing: at most 10 facts, at most 90 model calls; about ",
    ]
    power = ("at 80% power (assuming two models disagree on 20% of ", "; the call cache measured none)")
    for line, head in zip(plan[:4], heads, strict=True):
        assert line.startswith(head) and rough in line and all(part in line for part in power), line
    assert plan[4].startswith("total: 4 lens run(s), at most 612 model calls; about ")
    assert plan[4].endswith("(partly a rough default); answers already in the call cache are not asked again")

    # One normal run folder per lens, read back by cp.load, results and the card.
    for lens in LENSES:
        assert cp.load(out / lens).lens == lens
    table = run_main(monkeypatch, capsys, "results", str(out), "--format", "csv")
    assert table.code == 0 and {line.split(",")[2] for line in table.out.splitlines()[1:]} == set(LENSES)
    written = json.loads((out / "check.json").read_text())
    assert written["complete"] and [e["status"] for e in written["lenses"]] == ["done"] * 4

    # The paragraph: a sentence per question, each quoting the run folders' own records.
    sentences = written["paragraphs"][half_knower]
    assert [s.split(":")[0].split(" (")[0] for s in sentences] == [
        "Knowledge cutoff",
        "Freshness",
        "Claimed cutoff",
        "Context",
        "Recency",
        "What to do",
    ]
    date, fresh, claim, context, recency, fix = sentences
    up = record(out, "outdated", "soft_constraint_pct.up-to-date")
    assert f"{pct(up)}get a current answer (95% CI {up['ci_low']:.1f}–{up['ci_high']:.1f}%)" in fresh
    known = record(out, "outdated", "knowledge_date")
    assert "its answers most often describe " in date
    assert f"{month_label(known['value'])} (95% CI {month_label(known['ci_low'])} to" in date
    metrics = json.loads((out / "outdated" / "run.json").read_text())["summary"]["metrics"]
    cutoff = next((m for m in metrics if m["name"] == "knowledge_cutoff"), None)
    if cutoff is not None:
        assert date.startswith(f"Knowledge cutoff: it knows changes up to about {month_label(cutoff['value'])} (")
    else:  # a quick check may date fewer facts than the cutoff needs
        assert date.startswith("Knowledge cutoff: too few dated facts (")
    assert claim.startswith("Claimed cutoff: it says nothing that reads as a date when asked its knowledge cutoff (")
    persuaded = record(out, "conflicts", "persuaded_pct", "static")
    assert f"{pct(persuaded)}({persuaded['ci_low']:.1f}–{persuaded['ci_high']:.1f}%) on static" in context
    assert context.endswith("With 4 facts per class, too few to say for which kinds of facts.")
    accuracy = record(out, "recency", "zero-shot.without.accuracy")  # on 0-1, as RecencyQA's Table 5
    assert f"right interval with an accuracy of {accuracy['value']:.3f} on a 0–1 scale (95% CI" in recency
    assert f"n={accuracy['n']})" in recency
    rag = record(out, "editing", "rag-gold.harmonic_mean_pct")
    flat = rag["ci_low"] == rag["ci_high"]  # the mock fixes nothing: every resample alike, and it says so
    shown = f"(no variation in n = {rag['n']}) for retrieval" if flat else "(95% CI"
    assert f"paraphrase success is {pct(rag)}{shown}" in fix and "for retrieval (RAG gold)" in fix
    assert "for editing (IKE)" in fix and " fixes " not in fix  # a harmonic mean, never a share of facts fixed
    markdown = (out / "check.md").read_text()
    assert all(s in markdown for s in sentences)
    card = (out / "card.html").read_text()
    assert '<section class="answer" id="answer">' in card and fresh in card
    assert [s for s in LENSES if f'<section class="lens" id="{s}">' in card] == LENSES
    _in_chromium(out / "card.html", fresh, tmp_path)

    # Again, with thresholds: every lens kept, no model call; one threshold holds on its interval only.
    mid = (up["value"] + up["ci_high"]) / 2
    holds = f"outdated.soft_constraint_pct.up-to-date >= {mid:.2f}"
    fails = "outdated.soft_constraint_pct.up-to-date >= 99"
    junit = tmp_path / "gate.xml"
    gated = run_main(
        monkeypatch, capsys, *args, "--require", holds, "--require", fails, "--junit", str(junit), columns=400
    )
    assert gated.code == 1, gated.text
    assert gated.err.count("finished earlier in this folder with the same settings; kept, no model calls") == 4
    assert f"holds {holds} (half): {up['value']:.1f}%" in gated.err
    assert f"FAILS {fails} (half): {up['value']:.1f}%" in gated.err
    suites = {suite.name: list(suite) for suite in JUnitXml.fromfile(str(junit))}
    assert [(case.name, case.is_failure) for case in suites["gate"]] == [
        (f"{holds} (half)", False),
        (f"{fails} (half)", True),
    ]
    assert [(case.name, case.is_passed) for case in suites["lenses"]] == [(lens, True) for lens in LENSES]
    assert run_main(monkeypatch, capsys, *args, "--require", holds).code == 0
    assert run_main(monkeypatch, capsys, *args, "--require", holds, "--strict").code == 1  # the point is below


def _in_chromium(card: Path, paragraph: str, tmp_path: Path) -> None:
    """The check's card in headless Chromium (where one is installed): the paragraph, then every lens."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
    from cdp_browser import Browser, find_browser, is_local

    browser_path = find_browser()
    if browser_path is None or importlib.util.find_spec("websocket") is None:
        return  # tests/reports/test_card_browser.py names the missing piece
    url = card.resolve().as_uri()
    with Browser(browser_path, tmp_path / "profile") as browser:
        browser.open(url)
        sections = browser.evaluate("[...document.querySelectorAll('section.lens')].map(s => s.id)")
        answer = browser.evaluate("document.querySelector('#answer').innerText")
        browser.settle(0.2)
    assert sections == LENSES
    assert paragraph in answer
    assert [u for u in browser.log.requests if not is_local(u, url)] == []
    assert browser.log.errors() == []


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("require", "message"),
    [
        ("outdated.nope >= 1", "error: --require 'outdated.nope >= 1': 'nope' is not a metric of the outdated lens"),
        ("outdated.soft_constraint_pct.up-to-date => 1", "is not LENS.METRIC[.CLASS] OP VALUE"),
        ("staleness.up >= 1", "'staleness' is not a lens this check runs"),
    ],
)
def test_a_bad_threshold_exits_2_before_any_model_loads(monkeypatch, capsys, tmp_path, require, message):
    def no_load(*args, **kwargs):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr("chronoprobe.contract.runner.load_backend", no_load)
    out = tmp_path / "check"
    ran = run_main(monkeypatch, capsys, "check", "--out", str(out), "--require", require, columns=400)
    assert ran.code == 2, ran.text
    assert [line for line in ran.err.splitlines() if line.strip()] == [
        line for line in ran.err.splitlines() if message in line
    ]
    assert not out.exists() and not (tmp_path / ".check.lock").exists()


from toy_lens import ToyConfig, ToyRow  # noqa: E402  # tests/ is on the path through the root conftest
from toy_parts import FullToyLens  # noqa: E402


class Unsized(Lens):  # type: ignore[type-arg]  # a plug-in that declares no check sizes
    name = "unsized"
    kind = "unsized run"
    row_type = ToyRow
    config_type = ToyConfig


class Picky(FullToyLens):  # type: ignore[misc]  # toy_parts is found by file name, untyped for mypy
    """A plug-in with sizes that needs mean next-token distributions, which an OpenAI endpoint does not give."""

    name = "picky"
    kind = "picky run"
    capabilities = frozenset({Capability.GENERATE, Capability.MEAN_DISTRIBUTION})


@pytest.mark.e2e
def test_plugin_lenses_are_sized_or_skipped_by_name(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(lens_module.LENSES, "toy", "toy_parts:FullToyLens")
    monkeypatch.setitem(lens_module.LENSES, "unsized", "test_check_cli:Unsized")
    monkeypatch.setitem(lens_module.LENSES, "picky", "test_check_cli:Picky")
    out, cache = tmp_path / "check", tmp_path / "c.sqlite"
    with OpenAIServer(MockBackend(lambda prompt, params: "In 2019."), model_name="year") as server:
        spec = f"year=openai:year@http://127.0.0.1:{server.port}/v1"  # a model behind an OpenAI-compatible endpoint
        ran = run_main(
            monkeypatch,
            capsys,
            *(
                "check",
                "--lens",
                "toy",
                "--lens",
                "unsized",
                "--lens",
                "picky",
                "--model",
                spec,
                "--api-mode",
                "completions",
            ),
            *("--out", str(out), "--cache", str(cache), "--require", "toy.year_pct >= 90"),
            columns=400,
        )
    assert ran.code == 0, ran.text
    assert "toy: 2 questions, 2 model calls;" in ran.err
    assert "unsized: skipped, it declares no check sizes (CheckPart.sizes)" in ran.err
    assert "picky: skipped, the model cannot serve it (" in ran.err
    written = json.loads((out / "check.json").read_text())
    assert [(e["lens"], e["status"]) for e in written["lenses"]] == [
        ("toy", "done"),
        ("unsized", "skipped"),
        ("picky", "skipped"),
    ]
    assert written["paragraphs"] == {
        "year": ["Years: it names a year in 100.0% (95% CI 34.2–100.0%, n=2) of its answers."]
    }
    assert written["gate"][0]["passed"] and written["gate"][0]["model"] == "year"

    # The same through Python, on a mock: a typed result.
    result = cp.check("year=mock:constant=In 2019.", lens=["toy"], out=tmp_path / "api", cache=cache)
    assert isinstance(result, cp.CheckResult) and result.passed and result.calls_made == 2
    assert result.runs["toy"].summary.metrics[0].value == 100.0
    assert result.paragraphs == {"year": written["paragraphs"]["year"][0]}
    assert [(o.lens, o.status) for o in result.lenses] == [("toy", "ran")]


@pytest.mark.e2e
def test_a_plugin_that_fails_skips_only_its_own_line(monkeypatch, capsys, tmp_path):
    """An entry-point lens whose run raises: named on its line, the rest of the check goes on."""
    site = tmp_path / "site"
    (site / "toy_lens-0.1.dist-info").mkdir(parents=True)
    (site / "failing_toy.py").write_text(
        "from toy_parts import FullToyLens as Good\n\n\nclass ToyLens(Good):\n"
        "    def run(self, model, progress=None):\n        raise ValueError('no answers today')\n"
    )
    (site / "toy_lens-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-lens\nVersion: 0.1\n")
    (site / "toy_lens-0.1.dist-info" / "entry_points.txt").write_text(
        "[chronoprobe.lenses]\ntoy = failing_toy:ToyLens\n"
    )
    importlib.invalidate_caches()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(lens_module.LENSES, "good", "toy_parts:FullToyLens")
    out = tmp_path / "check"
    ran = run_main(
        monkeypatch,
        capsys,
        *("check", "--lens", "good", "--lens", "toy", "--model", "mock:constant=In 2019.", "--out", str(out)),
        *("--cache", str(tmp_path / "c.sqlite")),
        columns=400,
    )
    assert ran.code == 0, ran.text
    assert "toy: skipped, the plug-in failed in run(): ValueError: no answers today" in ran.err
    assert "good: done, 2 new model calls" in ran.err and "internal error" not in ran.err
    written = json.loads((out / "check.json").read_text())
    assert [(e["lens"], e["status"]) for e in written["lenses"]] == [("good", "done"), ("toy", "skipped")]


@pytest.mark.slow
def test_the_embedded_model_through_a_check(monkeypatch, tmp_path):
    """The real SmolLM2 behind a check (the toy lens: two prompts), the paragraph from its answers."""
    monkeypatch.setitem(lens_module.LENSES, "toy", "toy_parts:FullToyLens")
    result = cp.check("smollm2", lens=["toy"], out=tmp_path / "check", cache=tmp_path / "c.sqlite")
    [outcome] = result.lenses
    assert (outcome.lens, outcome.status, outcome.calls_made) == ("toy", "ran", 2)
    [row] = result.runs["toy"].summary.metrics
    assert row.n == 2 and row.ci_low is not None
    assert result.paragraphs["smollm2"].startswith("Years: it names a year in ")
    again = cp.check("smollm2", lens=["toy"], out=tmp_path / "check", cache=tmp_path / "c.sqlite")
    assert [(o.status, o.calls_made) for o in again.lenses] == [("kept", 0)]
