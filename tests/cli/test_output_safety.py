"""Output paths that would lose or mix results (issue 17, §1, §2, §6), through the real ``main()``:

- an ``--out`` that is, lies inside or holds an input of the same command;
- an ``--out`` holding another lens's (or kind's) report;
- a user's file at ``results``/``card``/``editing dataset`` ``--out``;
- places that cannot be written, and default folder names too long for the filesystem;
- folders left behind by a failed command, and file writers that publish half their files.

Each case is refused with one line (exit 2) that leaves every input as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import chronoprobe as cp
import chronoprobe.io
from chronoprobe.errors import ConfigError
from chronoprobe.models.names import file_safe
from cli_driver import run_main

ASSETS = Path(__file__).resolve().parents[1] / "assets"
EDITING_RESULTS = ASSETS / "editing_results"
DATASETS = EDITING_RESULTS / "models_editing" / "editing_datasets"
MOCK = "mock:constant=Paris"
EDIT_FAST = ["-m", MOCK, "--select", "auto", "--method", "rag-gold", "--no-locality", "--no-fluency"]


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run ``chronoprobe ARGS`` in this process: exit code and stderr."""
    ran = run_main(monkeypatch, capsys, *args)
    return ran.code, ran.err


def one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes: what must not change."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small real report of each kind the cases need: an outdated, an editing and a conflicts run."""
    root = tmp_path_factory.mktemp("reports")
    cache = root / "c.sqlite"
    audit = cp.run("outdated", models=MOCK, limit=2, out=root / "audit", cache=cache).path
    editing = cp.run(
        "editing",
        models=MOCK,
        from_=audit,
        select="auto",
        method=("rag-gold",),
        locality=False,
        fluency=False,
        out=root / "editing",
        cache=cache,
    ).path
    conflicts = cp.run(
        "conflicts",
        models=MOCK,
        dataset="dynamicqa",
        data=ASSETS / "dynamicqa_small",
        balanced_limit=1,
        judge="exact",
        out=root / "conflicts",
        cache=cache,
    ).path
    return {"audit": audit, "editing": editing, "conflicts": conflicts}


@pytest.fixture()
def copies(reports: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """Fresh copies for each test, so a case that fails to refuse cannot spoil the next."""
    copied = {name: Path(shutil.copytree(path, tmp_path / name)) for name, path in reports.items()}
    copied["generations"] = Path(shutil.copytree(EDITING_RESULTS, tmp_path / "generations"))
    return copied


# --- §1: an output that is, lies inside or holds an input ---------------------------------------

INPUT_CASES = {
    "editing run --from X --out X": (
        ["editing", "run", *EDIT_FAST, "--from", "{audit}", "--out", "{audit}"],
        "audit",
        "is the --from input",
    ),
    "editing run --out inside --from": (
        ["editing", "run", *EDIT_FAST, "--from", "{audit}", "--out", "{audit}/edits"],
        "audit",
        "lies inside the --from input",
    ),
    "editing run --out holding --dataset": (
        ["editing", "run", *EDIT_FAST, "--dataset", "{editing}/editing_dataset.json", "--out", "{editing}"],
        "editing",
        "holds the --dataset input",
    ),
    "outdated run --out holding --cache": (
        ["outdated", "run", "-m", MOCK, "--limit", "1", "--cache", "{audit}/calls.sqlite", "--out", "{audit}"],
        "audit",
        "holds the --cache input",
    ),
    "editing dataset --out inside --from": (
        ["editing", "dataset", "--from", "{audit}", "--out", "{audit}/editing_dataset.json"],
        "audit",
        "result folder",
    ),
    "editing score --out inside --generations": (
        ["editing", "score", "--generations", "{generations}", "--dataset", str(DATASETS), "--out", "{generations}/s"],
        "generations",
        "lies inside the --generations input",
    ),
    "card --out inside a run it reads": (
        ["card", "{audit}", "--out", "{audit}/card.html"],
        "audit",
        "result folder",
    ),
}


@pytest.mark.e2e
@pytest.mark.parametrize("case", list(INPUT_CASES))
def test_an_output_that_is_in_or_holds_an_input_is_refused(
    case: str, copies: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args, guarded, expected = INPUT_CASES[case]
    before = tree(copies[guarded])
    line = one_line_error(*invoke(monkeypatch, capsys, *(a.format(**copies) for a in args)))
    assert expected in line
    assert tree(copies[guarded]) == before, "an input of the command changed"


def test_the_api_refuses_an_output_that_is_an_input(copies: dict[str, Path]) -> None:
    before = tree(copies["audit"])
    with pytest.raises(ConfigError, match="is the --from input"):
        cp.run("editing", models=MOCK, from_=copies["audit"], method=("rag-gold",), out=copies["audit"])
    assert tree(copies["audit"]) == before


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["{editing}", "{editing}/weights"])
def test_saved_weights_may_not_lie_in_the_report_folder(
    where: str, copies: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report replaces --out whole: edited weights saved in it would be deleted with the old report."""
    before = tree(copies["editing"])
    args = ["editing", "run", "-m", MOCK, "--method", "rome", "--from", str(copies["audit"])]
    args += ["--save-edited", where.format(**copies), "--out", str(copies["editing"])]
    line = one_line_error(*invoke(monkeypatch, capsys, *args))
    assert line.startswith("error: --save-edited") and "which the report replaces whole" in line
    assert tree(copies["editing"]) == before
    with pytest.raises(ConfigError, match="which the report replaces whole"):
        cp.run(
            "editing",
            models=MOCK,
            from_=copies["audit"],
            method=("rome",),
            save_edited=copies["editing"] / "weights",
            out=copies["editing"],
        )


# --- §1: another lens's report -----------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "guarded", "there"),
    [
        (["outdated", "run", "-m", MOCK, "--limit", "1", "--out", "{conflicts}"], "conflicts", "conflicts run"),
        (["editing", "run", *EDIT_FAST, "--from", "{audit}", "--out", "{conflicts}"], "conflicts", "conflicts run"),
        (["editing", "run", *EDIT_FAST, "--from", "{audit}", "--out", "{other}"], "other", "outdated run"),
    ],
    ids=["outdated over conflicts", "editing over conflicts", "editing over outdated"],
)
def test_another_kind_of_report_is_refused_naming_it(
    args: list[str],
    guarded: str,
    there: str,
    copies: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    copies = {**copies, "other": Path(shutil.copytree(copies["audit"], copies["audit"].parent / "other"))}
    before = tree(copies[guarded])
    line = one_line_error(*invoke(monkeypatch, capsys, *(a.format(**copies) for a in args)))
    assert f"holds a report from `{there}`" in line
    assert tree(copies[guarded]) == before


@pytest.mark.e2e
def test_a_report_of_the_same_kind_is_still_replaced(
    copies: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = copies["audit"]
    code, err = invoke(monkeypatch, capsys, "outdated", "run", "-m", MOCK, "--limit", "1", "--out", str(audit))
    assert code == 0, err
    assert json.loads((audit / "run.json").read_text())["config"]["limit"] == 1


# --- §1: a user's file at a file output ----------------------------------------------------------

FILE_COMMANDS = {
    "results": ["results", "{audit}", "--out"],
    "card": ["card", "{audit}", "--out"],
    "editing dataset": ["editing", "dataset", "--from", "{audit}", "--out"],
}


@pytest.mark.e2e
@pytest.mark.parametrize("command", list(FILE_COMMANDS))
@pytest.mark.parametrize("name", ["mine.csv", "mine.json", "mine.html"])
def test_a_users_file_is_never_overwritten(
    command: str,
    name: str,
    copies: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mine = tmp_path / name
    mine.write_text("my,own\n1,2\n")
    args = [a.format(**copies) for a in FILE_COMMANDS[command]]
    line = one_line_error(
        *invoke(monkeypatch, capsys, *args, str(mine), *(["--format", "csv"] if command == "results" else []))
    )
    assert f"--out {mine}: exists and is not" in line and "refusing to overwrite it" in line
    assert mine.read_text() == "my,own\n1,2\n"


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["t.csv", "t.json", "t.parquet"])
def test_results_replaces_its_own_table(
    name: str,
    copies: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "tables" / name
    for folder in ("audit", "conflicts"):
        code, err = invoke(monkeypatch, capsys, "results", str(copies[folder]), "--out", str(out))
        assert code == 0, err
    assert sorted(p.name for p in out.parent.iterdir()) == [name]  # no staging folder or lock left


# --- §2: places that cannot be written -----------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "place"),
    [
        (["results", "{audit}", "--out", "/proc/chronoprobe-table.csv"], "cannot write in /proc"),
        (["card", "{audit}", "--out", "/proc/chronoprobe-card.html"], "cannot write in /proc"),
        (["card", "{audit}", "--out", "{blocker}/c.html"], "{blocker} is a file, not a folder"),
        (["results", "{audit}", "--out", "{blocker}/t.csv"], "{blocker} is a file, not a folder"),
    ],
)
def test_an_unwritable_place_is_one_line(
    args: list[str],
    place: str,
    copies: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    names = {**copies, "blocker": blocker}
    line = one_line_error(*invoke(monkeypatch, capsys, *(a.format(**names) for a in args)))
    assert place.format(**names) in line
    assert blocker.read_text() == "x"


@pytest.mark.e2e
def test_a_long_model_spec_gets_a_short_default_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "mock:constant=" + "an answer that goes on " * 20
    for _ in range(2):  # the rerun too: each run gets its own folder
        code, err = invoke(monkeypatch, capsys, "outdated", "run", "-m", spec, "--limit", "1", "--cache", "c.sqlite")
        assert code == 0, err
    folders = sorted((tmp_path / "results" / "outdated").iterdir())
    assert len(folders) == 2 and all(len(f.name) <= 120 for f in folders)
    assert all((f / "report.md").is_file() for f in folders)


def test_long_names_are_cut_with_a_hash_that_keeps_them_distinct() -> None:
    first, second = "x" * 200 + "-a", "x" * 200 + "-b"
    assert len(file_safe(first)) == 80 and len(file_safe(second)) == 80
    assert file_safe(first) != file_safe(second)
    assert file_safe("qwen2.5") == "qwen2.5"


# --- §2: no stray folders ------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "created"),
    [
        (["outdated", "run", "-m", MOCK, "--facts", "missing.json"], "results"),
        (["conflicts", "contexts", "--data", "missing.jsonl", "--out", "out/ctx.jsonl"], "out"),
        (["editing", "score", "--generations", "missing", "--dataset", str(DATASETS), "--out", "new/deep/o"], "new"),
        (["results", "missing", "--out", "tables/t.csv"], "tables"),
        (["card", "missing", "--out", "cards/c.html"], "cards"),
    ],
)
def test_a_failed_command_leaves_no_folder(
    args: list[str], created: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    one_line_error(*invoke(monkeypatch, capsys, *args))
    assert not (tmp_path / created).exists()


# --- §6: file writers publish all their files or none --------------------------------------------


def _fail_on(monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    """Make writing the companion file fail, as a full disk would."""
    real = chronoprobe.io.write_json_atomic

    def failing(path: Path, data: object) -> None:
        if str(path).endswith(suffix):
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(chronoprobe.io, "write_json_atomic", failing)


LABEL = [
    "recency",
    "label",
    str(ASSETS / "recency_questions.jsonl"),
    "--labeller",
    "mock:constant=A-Year",
    "--samples",
    "2",
    "--verify-samples",
    "1",
    "--candidates",
    "1",
    "--context-rounds",
    "1",
    "--cache",
    "c.sqlite",
]
CONTEXTS = [
    "conflicts",
    "contexts",
    "-m",
    MOCK,
    "--data",
    str(ASSETS / "mulan_queries.jsonl"),
    "--aliases-file",
    str(ASSETS / "mulan_aliases.jsonl"),
    "--templates",
    str(ASSETS / "mulan_templates.json"),
    "--no-nli-filter",
    "--balanced-limit",
    "2",
    "--cache",
    "c.sqlite",
]


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "out", "companion"),
    [(LABEL, "d.json", "d.report.json"), (CONTEXTS, "c.jsonl", "c.provenance.json")],
    ids=["recency label", "conflicts contexts"],
)
def test_a_file_writer_publishes_all_its_files_or_none(
    args: list[str],
    out: str,
    companion: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = tmp_path / "made" / out
    code, err = invoke(monkeypatch, capsys, *args, "--out", str(target))
    assert code == 0, err
    assert sorted(p.name for p in target.parent.iterdir()) == sorted([out, companion])
    (target.parent / out).write_text("[]")  # mark the earlier output, to see whether it is replaced
    before = tree(target.parent)

    _fail_on(monkeypatch, companion)
    code, err = invoke(monkeypatch, capsys, *args, "--out", str(target))
    assert code != 0
    assert tree(target.parent) == before, "half of the new output was published"
    assert sorted(p.name for p in target.parent.iterdir()) == sorted([out, companion])  # nothing staged is left


@pytest.mark.e2e
@pytest.mark.parametrize(("args", "out"), [(LABEL, "d.json"), (CONTEXTS, "c.jsonl")], ids=["label", "contexts"])
def test_a_file_writer_refuses_a_users_file(
    args: list[str], out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / out
    mine.write_text("mine")
    line = one_line_error(*invoke(monkeypatch, capsys, *args, "--out", str(mine)))
    assert "refusing to overwrite it" in line and mine.read_text() == "mine"
    assert not (tmp_path / "c.sqlite").exists(), "no model may load before the check"
