"""`chronoprobe export lm-eval` run by the real lm-evaluation-harness (chronoprobe[lm-eval]), offline, and read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.cli.main import main
from chronoprobe.integrations.lm_eval_export import per_fact_share, score_document
from chronoprobe.integrations.outdated_items import load_items

pytestmark = pytest.mark.e2e  # the harness libraries

LM_EVAL = Path(sys.executable).parent / "lm_eval"
# OMP_NUM_THREADS=1: lm-eval imports torch before chronoprobe could set a passive OpenMP wait
# policy, and spinning threads make a shared 2-core machine many times slower (chronoprobe/threads.py).
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def needs_lm_eval() -> None:
    pytest.importorskip("lm_eval", reason="chronoprobe[lm-eval] is not installed (pip install 'chronoprobe[lm-eval]')")


def run_chronoprobe(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
    code: object = 0
    try:
        main()
    except SystemExit as stopped:
        code = stopped.code
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 0), " ".join((captured.out + captured.err).split())


def run_lm_eval(*args: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **OFFLINE, "HF_DATASETS_CACHE": str(cwd / "hf-datasets")}  # not the user's cache
    return subprocess.run(
        [str(LM_EVAL), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, check=False
    )


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "chronoprobe-task"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["chronoprobe", "export", "lm-eval", "--out", str(out), "--limit", "4"])
        try:
            main()
        except SystemExit as stopped:
            assert stopped.code in (0, None)
    return out


def test_export_writes_yaml_dataset_and_utils(task_dir: Path) -> None:
    assert {p.name for p in task_dir.iterdir()} >= {
        "chronoprobe_outdated.yaml",
        "chronoprobe_outdated.jsonl",
        "utils.py",
    }
    docs = [json.loads(line) for line in (task_dir / "chronoprobe_outdated.jsonl").read_text().splitlines()]
    assert len(docs) == 12  # 4 facts x 3 paraphrases
    assert docs[0]["prompt"].startswith("Complete this sentence with a name only")
    yaml_text = (task_dir / "chronoprobe_outdated.yaml").read_text()
    assert f"test: {task_dir.resolve() / 'chronoprobe_outdated.jsonl'}" in yaml_text
    assert "process_results: !function utils.process_results" in yaml_text


def test_process_results_is_our_classifier(task_dir: Path) -> None:
    docs = [json.loads(line) for line in (task_dir / "chronoprobe_outdated.jsonl").read_text().splitlines()][:3]
    _, gold = load_items(limit=1)
    answers = gold.answers[docs[0]["fact_id"]]
    current = answers.current()[0].label
    past = next(s.label for s in answers.counted().statements if not s.is_current)
    scored = [score_document(doc, [text]) for doc, text in zip(docs, [current, past, "nobody"], strict=True)]
    assert [s["up-to-date"] for s in scored] == [1.0, 0.0, 0.0]
    assert [s["outdated"] for s in scored] == [0.0, 1.0, 0.0]
    assert [s["irrelevant"] for s in scored] == [0.0, 0.0, 1.0]
    pairs = [s["up-to-date per fact"] for s in scored] + [("other fact", "outdated")]
    assert per_fact_share(pairs, "up-to-date") == 0.5  # soft constraint: one fact up-to-date, one outdated
    assert per_fact_share(pairs, "outdated") == 0.5


def test_export_refuses_a_folder_it_did_not_write(tmp_path: Path, monkeypatch, capsys) -> None:
    taken = tmp_path / "mine"
    taken.mkdir()
    (taken / "notes.txt").write_text("keep me")
    code, said = run_chronoprobe(monkeypatch, capsys, "export", "lm-eval", "--out", str(taken))
    assert code == 2 and said.startswith("error:")
    assert (taken / "notes.txt").read_text() == "keep me"


def test_lm_eval_runs_the_export_and_its_samples_read_back(
    task_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """lm-eval's own dummy model (answers "lol"): every verdict irrelevant, per prompt and per fact."""
    needs_lm_eval()
    done = run_lm_eval(
        "--model", "dummy", "--tasks", "chronoprobe_outdated", "--include_path", str(task_dir),
        "--limit", "6", "--log_samples", "--output_path", str(tmp_path / "lm"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [results_file] = (tmp_path / "lm").rglob("results_*.json")
    found = json.loads(results_file.read_text())["results"]["chronoprobe_outdated"]
    assert found["irrelevant,none"] == 1.0 and found["up-to-date,none"] == 0.0
    assert found["irrelevant per fact,none"] == 1.0
    out = tmp_path / "rescored"
    code, said = run_chronoprobe(
        monkeypatch, capsys, "outdated", "score", "--generations", str(tmp_path / "lm"), "--out", str(out)
    )
    assert code == 0, said
    read_back = rows(out)
    assert len(read_back) == 6 and {r["verdict"] for r in read_back} == {"irrelevant"}
    run = json.loads((out / "run.json").read_text())
    assert run["kind"] == "outdated run" and run["provenance"]["extra"]["harness"] == "lm-eval"


@pytest.mark.slow
def test_lm_eval_hf_on_local_smollm2_agrees_with_our_audit(
    task_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    our_audit: dict[tuple[str, int], dict[str, Any]],
) -> None:
    """lm-eval's hf model on the prepared SmolLM2 folder, greedy with the chat template, beside `outdated run`."""
    needs_lm_eval()
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    folder, _ = converted_gguf(smollm2_gguf())
    done = run_lm_eval(
        "--model", "hf", "--model_args", f"pretrained={folder}", "--device", "cpu",
        "--tasks", "chronoprobe_outdated", "--include_path", str(task_dir), "--limit", "10",
        "--apply_chat_template", "--log_samples", "--output_path", str(tmp_path / "lm"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "up-to-date" in done.stdout and "outdated" in done.stdout and "irrelevant" in done.stdout
    rescored = tmp_path / "rescored"
    code, said = run_chronoprobe(
        monkeypatch, capsys, "outdated", "score", "--generations", str(tmp_path / "lm"), "--out", str(rescored)
    )
    assert code == 0, said
    mine = {key: row["verdict"] for key, row in our_audit.items()}
    theirs = {(r["fact_id"], r["template_index"]): r["verdict"] for r in rows(rescored)}
    assert len(theirs) == 10
    agree = sum(mine[key] == verdict for key, verdict in theirs.items())
    assert agree / len(theirs) >= 0.9, f"{agree} of {len(theirs)} verdicts agree with chronoprobe outdated run"


def test_export_from_python_writes_the_folder_the_command_writes(
    task_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chronoprobe as cp

    monkeypatch.chdir(tmp_path)
    made = cp.produce("export.lm-eval", out="api-task", limit=4)
    assert made.path == Path("api-task") and len(made.documents) == 12  # 4 facts x 3 paraphrases
    assert [d["template_index"] for d in made.documents[:4]] == [0, 1, 2, 0]
    written = (tmp_path / "api-task" / "chronoprobe_outdated.jsonl").read_text()
    assert [json.loads(line) for line in written.splitlines()] == made.documents
    assert written == (task_dir / "chronoprobe_outdated.jsonl").read_text()
    again = cp.produce("export.lm-eval", out="api-task", limit=1, as_of="2020-01-01")  # our own folder: replaced
    assert len(again.documents) == 3 and {d["as_of"] for d in again.documents} == {"2020-01-01"}
