"""The editing lens end to end: a mock reader for the prompt methods, the real SmolLM2 for ROME/MEMIT."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.api import load, model, run
from chronoprobe.cli.main import main
from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.errors import ChronoprobeError
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.lenses.editing.dataset import _record, write_dataset
from chronoprobe.reports.card import render_card
from chronoprobe.reports.tidy_table import find_runs, results_frame
from chronoprobe.testing import register_mock, unregister_mock

ASSETS = Path(__file__).resolve().parents[1] / "assets"
FACTS = ("companies_byRevenue/Amazon", "athletes_byPayment/LeBron James")


def _records() -> list[EditRecord]:
    facts = {f.fact_id: f for f in load_catalogue()}
    snapshot = load_snapshot(None)
    records = []
    for fact_id in FACTS:
        built = _record(facts[fact_id], snapshot.answers[fact_id].counted().statements, [])
        assert isinstance(built, EditRecord)
        records.append(built)
    return records


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "editing_dataset.json"
    write_dataset(path, _records())
    return path


TARGETS = ("Andy Jassy", "Los Angeles Lakers")


def _reader(prompt: str, params: object) -> str:
    """Answers with the first edited target its prompt mentions, else with nobody in particular."""
    found = [(prompt.find(t), t) for t in TARGETS if t in prompt]
    return f"It is {min(found)[1]}." if found else "I do not know."


@pytest.fixture
def reader():
    register_mock("reader", _reader, chat_template=True)
    yield "mock:reader"
    unregister_mock("reader")


@pytest.mark.e2e
def test_prompt_methods_fix_the_facts_and_leave_others_alone(tmp_path: Path, dataset: Path, reader: str) -> None:
    result = run(
        "editing",
        reader,
        dataset=dataset,
        method=("rag-gold", "rag-noisy", "serac", "ike"),
        out=tmp_path / "run",
        cache=tmp_path / "calls.sqlite",
    )
    detail = json.loads((result.path / "summary.json").read_text())["models"][reader]
    by_method = {r["method"]: r for r in detail["results"]}
    # unedited: the plain questions never mention a target
    assert by_method["unedited"]["scores"]["All"]["soft_constraint"]["value"] == 0.0
    # the gold passages name the current holders, so the reader answers every question up-to-date
    gold = by_method["rag-gold"]["scores"]["All"]
    assert (gold["efficacy"]["value"], gold["paraphrase"]["value"], gold["harmonic_mean"]["value"]) == (1.0, 1.0, 1.0)
    assert gold["efficacy"]["n"] == 2 and gold["paraphrase"]["n"] == 4
    # SERAC: every question about an edited fact is in scope; the audit of the other facts is the locality check
    serac = by_method["serac"]
    assert serac["scope_hits"]["n"] == 6  # 2 facts x 3 questions
    assert all(r.routed for r in result.rows if r.method == "serac" and r.role == "edit")  # the memory keys
    assert serac["locality"]["facts"] == 130 - 2 - len(_no_gold())
    assert serac["locality"]["up_to_date_before"] == 0  # the reader never names a current holder of another fact
    assert by_method["ike"]["scores"]["All"]["harmonic_mean"]["value"] == 1.0
    # the run folder holds the DyKnow-format dataset, the report and the shared run log
    folder = tmp_path / "run"
    assert (
        json.loads((folder / "editing_dataset.json").read_text())[0]["subject"] == "Amazon"
    )  # our wording lacks DyKnow's "CEO position at Amazon"
    report = (folder / "report.md").read_text()
    assert "Table 3 shape" in report and "Locality" in report and "SERAC*" in report
    assert load(folder).lens == "editing"
    frame, warnings = results_frame([folder])
    assert not warnings
    harmonic = frame[(frame["metric"] == "rag-gold.harmonic_mean_pct") & (frame["class"] == "all")]
    assert harmonic["value"].tolist() == [100.0]
    card = render_card(find_runs([folder]).runs)
    assert "Can it be fixed?" in card and "harmonic mean of efficacy and paraphrase · RAG gold" in card


def _no_gold() -> list[str]:
    snapshot = load_snapshot(None)
    return [f for f, a in snapshot.answers.items() if not a.counted().statements]


@pytest.fixture
def invoke(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[[list[str]], tuple[int, str]]:
    """Run the real ``main()`` with ``args``; (exit code, stderr)."""

    def call(args: list[str]) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
        capsys.readouterr()
        with pytest.raises(SystemExit) as stopped:
            main()
        code = stopped.value.code
        return (code if isinstance(code, int) else 1), capsys.readouterr().err

    return call


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--method", "rome,ike"], r"rome edit weights.*mock backend.*ike, ike-null, serac, rag-gold"),
        (["--method", "teleport"], r"--method: unknown method\(s\) teleport"),
        (["--scaling", "0.5,nope"], r"--scaling: 'nope' is not a number"),
        (["--mode", "batch", "--method", "rome"], r"ROME edits one fact at a time"),
    ],
)
def test_bad_options_give_one_line(
    tmp_path: Path, dataset: Path, invoke: Callable[[list[str]], tuple[int, str]], extra: list[str], expected: str
) -> None:
    code, output = invoke(
        ["editing", "run", "--model", "mock:echo", "--dataset", str(dataset), "--out", str(tmp_path / "o"), *extra]
    )
    assert code == 2, output
    assert len(output.strip().splitlines()) == 1, output
    assert re.search(expected, output), output
    assert not (tmp_path / "o" / "report.md").exists()


@pytest.mark.e2e
def test_bad_datasets_give_one_line(
    tmp_path: Path, dataset: Path, invoke: Callable[[list[str]], tuple[int, str]]
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    rows = json.loads(dataset.read_text())
    rows[1]["subject"] = "Michael Jordan"
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(rows))
    for path, expected in ((empty, "no facts to edit"), (wrong, "row 1.*Michael Jordan.*not in its prompt")):
        code, output = invoke(["editing", "run", "--model", "mock:echo", "--method", "ike", "--dataset", str(path)])
        assert code == 2, output
        assert len(output.strip().splitlines()) == 1 and re.search(expected, output), output


def _weights_digest(model: object) -> str:
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():  # type: ignore[attr-defined]
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


@pytest.mark.slow
def test_rome_and_memit_through_the_lens_restore_and_resume(tmp_path: Path, dataset: Path) -> None:
    hparams = tmp_path / "fast.yaml"
    hparams.write_text("v_num_grad_steps: 3\n")
    smol = model("smollm2", cache=tmp_path / "calls.sqlite")
    backend = smol.backend
    before = _weights_digest(backend.model)  # type: ignore[attr-defined]
    options: dict[str, Any] = {
        "method": ("rome", "memit"),
        "dataset": dataset,
        "balanced_limit": 1,
        "locality": False,
        "fluency": False,
        "hparams": hparams,
        "stats_corpus": ASSETS / "editing" / "mom2_corpus.txt",
        "stats_documents": 3,
    }
    first = run("editing", smol, out=tmp_path / "first", **options)
    assert _weights_digest(backend.model) == before  # type: ignore[attr-defined]
    assert backend.info.edit is None
    calls = smol.calls_made
    assert calls > 0
    from chronoprobe.cache import speed_subject

    for method in ("rome", "memit"):  # the next run's plan line estimates edits by these
        timing = smol.cache.timing(speed_subject("smollm2", f"edit:{method}"))
        assert timing is not None and timing.count == 1 and timing.seconds > 0
    second = run("editing", smol, out=tmp_path / "second", **options)
    assert smol.calls_made == calls  # every answer of the edited models came from the cache
    runs = {
        r["method"]: r for r in json.loads((second.path / "summary.json").read_text())["models"]["smollm2"]["results"]
    }
    assert runs["rome"]["reused"] and runs["memit"]["reused"]
    assert (
        runs["rome"]["seconds_per_edit"]
        == next(
            r
            for r in json.loads((first.path / "summary.json").read_text())["models"]["smollm2"]["results"]
            if r["method"] == "rome"
        )["seconds_per_edit"]
    )
    assert [r.response for r in first.rows] == [r.response for r in second.rows]
    edited = [r for r in first.rows if r.method == "rome"]
    unedited = [r for r in first.rows if r.method == "unedited"]
    assert len(edited) == len(unedited) == 3
    settings = first.provenance.extra["method_settings"]
    assert settings["smollm2|memit|1"]["stats"]["documents"] == 3
    assert "layers scaled 32->30" in settings["smollm2|rome|1"]["hparams_source"]


@pytest.mark.e2e
def test_an_unsupported_architecture_is_one_line_before_any_edit(
    tmp_path: Path, dataset: Path, invoke: Callable[[list[str]], tuple[int, str]]
) -> None:
    """A real (tiny, untrained) GPT-NeoX model: transformers runs it, ROME/MEMIT do not support it."""
    from transformers import AutoTokenizer, GPTNeoXConfig, GPTNeoXForCausalLM

    from chronoprobe.models.embedded import minilm_dir

    folder = tmp_path / "neox"
    config = GPTNeoXConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
    )
    GPTNeoXForCausalLM(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(minilm_dir()).save_pretrained(folder)  # any real tokenizer will do
    out = tmp_path / "o"
    code, output = invoke(
        ["editing", "run", "--model", f"hf:{folder}", "--dataset", str(dataset), "--method", "rome", "--out", str(out)]
    )
    assert code == 2, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "gpt_neox is not supported" in errors[0] and "llama" in errors[0], output
    assert "Traceback" not in output
    assert not (out / "report.md").exists()


@pytest.mark.e2e
def test_serac_counterfactual_model_answers_in_scope_questions(tmp_path: Path, dataset: Path, reader: str) -> None:
    result = run(
        "editing",
        reader,
        dataset=dataset,
        method=("serac",),
        serac_counterfactual="mock:constant=Andy Jassy",
        locality=False,
        out=tmp_path / "run",
        cache=tmp_path / "calls.sqlite",
    )
    rows = [r for r in result.rows if r.method == "serac" and r.role in ("edit", "paraphrase")]
    assert any(r.routed for r in rows)
    for row in rows:
        if row.routed:
            assert row.response == "Andy Jassy"  # the counterfactual model, whatever the question
        else:
            assert row.response == "I do not know."  # the edited model, asked plainly
    verdicts = {(r.fact_id, r.role): r.verdict for r in rows if r.role == "edit"}
    assert verdicts[("companies_byRevenue/Amazon", "edit")] == "up-to-date"
    assert verdicts[("athletes_byPayment/LeBron James", "edit")] == "irrelevant"


@pytest.mark.e2e
def test_from_an_outdated_run_with_too_few_outdated_facts(tmp_path: Path) -> None:
    """The default edits the facts to edit (DyKnow's rule): none here, and the error names the wider selection.
    auto: a model that answers nothing outdated gets every fact it does not answer up-to-date, and is told so."""
    spec = "mock:constant=nobody in particular"
    audit = run("outdated", spec, limit=4, out=tmp_path / "audit", cache=tmp_path / "calls.sqlite")
    assert {r.verdict for r in audit.rows} == {"irrelevant"}
    with pytest.raises(ChronoprobeError, match=r"no facts to edit .*--select not-up-to-date takes every fact"):
        run("editing", spec, from_=tmp_path / "audit", method=("rag-gold",), cache=tmp_path / "calls.sqlite")
    result = run(
        "editing",
        spec,
        from_=tmp_path / "audit",
        select="auto",
        method=("rag-gold",),
        out=tmp_path / "editing",
        cache=tmp_path / "calls.sqlite",
    )
    dataset = json.loads((result.path / "summary.json").read_text())["models"][spec]["dataset"]
    assert dataset["select"] == "not-up-to-date" and dataset["facts"] == 4
    assert dataset["notes"][0].startswith("only 0 fact(s) are outdated")
    written = json.loads((tmp_path / "editing" / "editing_dataset.json").read_text())
    assert len(written) == 4


@pytest.mark.e2e
def test_the_summary_layout_is_read_through_its_typed_view(tmp_path: Path, dataset: Path, reader: str) -> None:
    from chronoprobe.errors import DataError
    from chronoprobe.lenses.editing.metric_records import read_detail

    result = run("editing", reader, dataset=dataset, method=("rag-gold",), out=tmp_path / "run", cache=tmp_path / "c")
    detail = {k: v for k, v in json.loads((result.path / "summary.json").read_text()).items() if k != "provenance"}
    assert read_detail(detail) is detail  # the view is the stored dict: its layout is not rewritten
    assert [r["method"] for r in read_detail(detail)["models"][reader]["results"]] == ["unedited", "rag-gold"]
    folder = tmp_path / "run"
    (folder / "run.json").unlink()
    summary = json.loads((folder / "summary.json").read_text())
    assert load(folder).summary.models == [reader]  # the old layout reads
    del summary["models"][reader]["results"][1]["method"]
    (folder / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(
        DataError, match=rf"summary\.json: unexpected editing run layout \(models\.{reader}\.results\.1\.method"
    ):
        load(folder)


@pytest.mark.e2e
def test_a_serac_scope_naming_an_embedder_uses_that_embedder(tmp_path: Path, dataset: Path, reader: str) -> None:
    """``--serac-scope embedding:<model>`` was ignored: the packaged MiniLM scored the scope whatever was named."""
    from chronoprobe.models.embedded import minilm_dir

    folder = str(minilm_dir())
    result = run(
        "editing",
        reader,
        dataset=dataset,
        method=("serac",),
        serac_scope=f"embedding:{folder}",
        locality=False,
        fluency=False,
        out=tmp_path / "run",
        cache=tmp_path / "calls.sqlite",
    )
    [settings] = result.provenance.extra["method_settings"].values()
    assert settings["hparams"]["scope_model"] == folder
