"""Every invalid option value or unreadable input is the user's mistake: one line, exit 2, no model loaded.

The table runs the real ``main()`` in this process (fast); model loading is replaced by a
function that raises, so a case that got as far as loading a model ends in exit 3 and fails.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from chronoprobe.cli.main import main

LATIN1 = "Qu\xe9bec, na\xefve, \xa9".encode("latin-1")


def _refuse_models(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("a model was loaded before the bad value was reported")


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str]:
    monkeypatch.setattr("chronoprobe.contract.runner.load_backend", _refuse_models)
    monkeypatch.setattr("chronoprobe.lenses.conflicts.lens.load_judge", _refuse_models)  # where the name is used
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main()
    code = stopped.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def _latin1(tmp: Path, name: str) -> str:
    path = tmp / name
    path.write_bytes(b'{"question": "' + LATIN1 + b'"}\n')
    return str(path)


def _latin1_folder(tmp: Path, name: str) -> str:
    folder = tmp / name
    folder.mkdir()
    for name in ("Static_final.csv", "Temporal_final.csv", "Disputable_final.csv"):
        (folder / name).write_bytes(b"question,answer\n" + LATIN1 + b",x\n")
    (folder / "countries_byGDP_answers.json").write_bytes(b'[{"subject": "' + LATIN1 + b'"}]')
    return str(folder)


def _not_sqlite(tmp: Path, name: str) -> str:
    path = tmp / name
    path.write_text("these are my notes, not a database\n" * 200)
    return str(path)


def _folder(tmp: Path, name: str) -> str:
    (tmp / name).mkdir()
    return str(tmp / name)


Arg = str | Callable[[Path, str], str]
FUTURE = (dt.date.today() + dt.timedelta(days=400)).isoformat()
CASES: list[tuple[str, list[Arg], str]] = [
    # outdated run
    ("outdated run", ["--batch-size", "0"], "--batch-size"),
    ("outdated run", ["--batch-size", "-4"], "--batch-size"),
    ("outdated run", ["--batch-size", "many"], "--batch-size"),
    ("outdated run", ["--batch-size", "2.5"], "--batch-size"),
    ("outdated run", ["--quantize", "3bit"], "--quantize"),
    ("outdated run", ["--device-map", "balanced"], "--device-map"),
    ("outdated run", ["--concurrency", "0"], "--concurrency"),
    ("outdated run", ["--limit", "0"], "--limit"),
    ("outdated run", ["--limit", "-1"], "--limit"),
    ("outdated run", ["--max-new-tokens", "0"], "--max-new-tokens"),
    ("outdated run", ["--dtype", "float8"], "--dtype"),
    ("outdated run", ["--device", "gpu"], "--device"),
    ("outdated run", ["--device", "cuda:x"], "--device"),
    ("outdated run", ["--api-mode", "stream"], "--api-mode"),
    ("outdated run", ["--cache", _folder], "--cache"),
    ("outdated run", ["--cache", _not_sqlite], "not an SQLite"),
    ("outdated run", ["--as-of", FUTURE], "--as-of"),
    ("outdated run", ["--snapshot", "x" * 300], "--snapshot"),
    ("outdated run", ["--snapshot", "a\0b"], "--snapshot"),
    ("outdated run", ["--facts", _latin1], "not UTF-8"),
    ("outdated run", ["--instruction-file", _latin1], "not UTF-8"),
    ("outdated run", ["--live", "--endpoint", "not-a-url"], "--endpoint"),
    # outdated score
    ("outdated score", ["--generations", _latin1_folder, "--out", "{tmp}/scored", "--as-of", FUTURE], "--as-of"),
    ("outdated score", ["--generations", _latin1_folder, "--out", "{tmp}/scored"], "not UTF-8"),
    # conflicts run
    ("conflicts run dynamicqa", ["--balanced-limit", "0"], "--balanced-limit"),
    ("conflicts run dynamicqa", ["--samples", "0"], "--samples"),
    ("conflicts run dynamicqa", ["--batch-size", "0"], "--batch-size"),
    ("conflicts run dynamicqa", ["--batch-size", "Auto"], "--batch-size"),
    ("conflicts run dynamicqa", ["--quantize", "16bit"], "--quantize"),
    ("conflicts run dynamicqa", ["--concurrency", "-2"], "--concurrency"),
    ("conflicts run mulan", ["--min-confidence", "1.5"], "--min-confidence"),
    ("conflicts run mulan", ["--min-confidence", "-0.1"], "--min-confidence"),
    ("conflicts run dynamicqa", ["--data", _latin1_folder], "not UTF-8"),
    ("conflicts run mulan", ["--data", _latin1], "not UTF-8"),
    ("conflicts run mulan", ["--wording", _latin1], "not UTF-8"),
    # conflicts contexts
    ("conflicts contexts", ["--per-class", "0"], "--per-class"),
    ("conflicts contexts", ["--min-entailment", "1.5"], "--min-entailment"),
    ("conflicts contexts", ["--max-new-tokens", "0"], "--max-new-tokens"),
    ("conflicts contexts", ["--balanced-limit", "0"], "--balanced-limit"),
    ("conflicts contexts", ["--sample-seed", "-1"], "--sample-seed"),
    # recency eval
    ("recency eval", ["--sample", "0"], "--sample"),
    ("recency eval", ["--temperature", "-0.5"], "--temperature"),
    ("recency eval", ["--max-new-tokens", "0"], "--max-new-tokens"),
    ("recency eval", ["--seed", "-1"], "--seed"),
    ("recency eval", ["--sample-seed", "-1"], "--sample-seed"),
    ("recency eval", ["--data", _latin1], "not UTF-8"),
    ("recency eval", ["--prompt-file", _latin1], "not UTF-8"),
    ("recency eval", ["--dtype", "int4"], "--dtype"),
    # recency label
    ("recency label {tmp}/q.jsonl", ["--samples", "0"], "--samples"),
    ("recency label {tmp}/q.jsonl", ["--candidates", "0"], "--candidates"),
    ("recency label {tmp}/q.jsonl", ["--verify-samples", "0"], "--verify-samples"),
    ("recency label {tmp}/q.jsonl", ["--context-rounds", "0"], "--context-rounds"),
    ("recency label {tmp}/q.jsonl", ["--label-max-new-tokens", "0"], "--label-max-new-tokens"),
    ("recency label {tmp}/q.jsonl", ["--vote-max-new-tokens", "-1"], "--vote-max-new-tokens"),
    ("recency label {tmp}/q.jsonl", ["--context-max-new-tokens", "0"], "--context-max-new-tokens"),
    ("recency label {tmp}/q.jsonl", ["--temperature", "-1"], "--temperature"),
    ("recency label {tmp}/q.jsonl", ["--label-prompt", _latin1], "not UTF-8"),
    ("recency label", [_latin1], "not UTF-8"),
    # recency gate
    ("recency gate 'Who is the CEO?'", ["--samples", "0"], "--samples"),
    ("recency gate 'Who is the CEO?'", ["--temperature", "-1"], "--temperature"),
    ("recency gate 'Who is the CEO?'", ["--min-share", "1.5"], "--min-share"),
    ("recency gate 'Who is the CEO?'", ["--min-share", "0"], "--min-share"),
    ("recency gate 'Who is the CEO?'", ["--batch-size", "0"], "--batch-size"),
    ("recency gate 'Who is the CEO?'", ["--cache", _not_sqlite], "not an SQLite"),
    # snapshot
    ("snapshot fetch", ["--name", "x" * 300], "--name"),
    ("snapshot fetch", ["--name", "../escape"], "--name"),
    ("snapshot fetch", ["--limit", "0"], "--limit"),
    ("snapshot fetch", ["--catalogue", _latin1], "not UTF-8"),
    ("snapshot show", ["x" * 300], "x" * 20),
    ("snapshot show", [_latin1], "not UTF-8"),
]


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("command", "args", "expected"),
    CASES,
    ids=[
        f"{c.split()[0]}-{c.split()[1]}-{a[0] if isinstance(a[0], str) else a[0].__name__}-{i}"
        for i, (c, a, _) in enumerate(CASES)
    ],
)
def test_invalid_value_is_one_line_exit_2(tmp_path, monkeypatch, capsys, command, args, expected):
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.jsonl").write_text('{"question": "Who is the CEO of Walmart?"}\n')
    import shlex

    argv = [part.replace("{tmp}", str(tmp_path)) for part in shlex.split(command)]
    for i, arg in enumerate(args):
        if isinstance(arg, str):
            argv.append(arg.replace("{tmp}", str(tmp_path)))
        else:
            argv.append(arg(tmp_path, f"input{i}.json"))
    if (
        command.startswith(("outdated run", "conflicts", "recency eval", "recency label {tmp}", "recency gate"))
        and "--cache" not in argv
    ):
        argv += ["--cache", str(tmp_path / "calls.sqlite")]
    if command.startswith(("outdated run", "recency eval")):
        argv += ["--out", str(tmp_path / "report")]
    if command.startswith("conflicts run") and "--data" not in argv:
        data = "dynamicqa_small" if "dynamicqa" in command else "mulan_queries.jsonl"
        argv += ["--data", str(Path(__file__).parents[1] / "assets" / data)]
    if command.startswith("conflicts run mulan") and "--templates" not in argv:
        argv += ["--templates", str(Path(__file__).parents[1] / "assets" / "mulan_templates.json")]
        argv += ["--aliases-file", str(Path(__file__).parents[1] / "assets" / "mulan_aliases.jsonl")]
    if command.startswith("recency eval") and "--data" not in argv:
        argv += ["--data", str(Path(__file__).parents[1] / "assets" / "recency_sample.json")]

    code, err = invoke(monkeypatch, capsys, argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    assert expected in lines[0], err
    assert "internal error" not in err and "Traceback" not in err


def _loaders() -> list[tuple[str, Callable[[Path], object]]]:
    from chronoprobe.datasets import dynamicqa, mulan, recencyqa
    from chronoprobe.knowledge.catalogue import load_catalogue
    from chronoprobe.knowledge.grc import load_grc
    from chronoprobe.knowledge.snapshot import load_snapshot
    from chronoprobe.lenses.conflicts.contexts import load_context_file
    from chronoprobe.lenses.conflicts.prompts import PromptWording
    from chronoprobe.lenses.conflicts.templates import load_converted_templates
    from chronoprobe.lenses.outdated.score import load_gold
    from chronoprobe.lenses.recency.label import read_questions
    from chronoprobe.lenses.recency.prompts import load_template

    return [
        ("dynamicqa csv", lambda p: dynamicqa.read_csv(p, "temporal")),
        ("mulan queries", mulan.load_queries),
        ("mulan aliases", mulan.load_aliases),
        ("mulan templates", mulan.load_templates),
        ("recencyqa", recencyqa.load_recencyqa),
        ("contexts", load_context_file),
        ("conflicts prompt file", PromptWording.from_file),
        ("converted templates", load_converted_templates),
        ("catalogue", load_catalogue),
        ("grc", load_grc),
        ("snapshot", lambda p: load_snapshot(str(p))),
        ("score gold", load_gold),
        ("recency questions", read_questions),
        ("recency prompt", load_template),
    ]


@pytest.mark.parametrize("index", range(14))
def test_every_loader_names_a_file_that_is_not_utf8(tmp_path, index):
    from chronoprobe.errors import ChronoprobeError

    name, loader = _loaders()[index]
    path = tmp_path / "input.json"
    path.write_bytes(b'{"x": "' + LATIN1 + b'"}\n')
    with pytest.raises(ChronoprobeError) as caught:
        loader(path)
    assert str(path) in str(caught.value) and "not UTF-8" in str(caught.value), name


def test_cache_that_is_a_folder_names_it(tmp_path):
    from chronoprobe.cache import CallCache
    from chronoprobe.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        CallCache(tmp_path)
    assert str(tmp_path) in str(caught.value) and "folder" in str(caught.value)


def test_corrupt_cache_names_the_file_and_how_to_recover(tmp_path):
    from chronoprobe.cache import CallCache
    from chronoprobe.errors import DataError

    path = tmp_path / "calls.sqlite"
    cache = CallCache(path)
    cache.put_many("model:x", [(f"k{i}", {"text": "y" * 2000}, None) for i in range(200)])
    cache.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    blob = bytearray(path.read_bytes())
    blob[4096 : 4096 * 4] = b"\xff" * (4096 * 3)  # trash b-tree pages, keep the header
    path.write_bytes(bytes(blob))
    before = path.read_bytes()
    with pytest.raises(DataError) as caught:
        cache = CallCache(path)
        cache.get_many([f"k{i}" for i in range(200)])
    message = str(caught.value)
    assert str(path) in message and "move it aside" in message
    assert path.read_bytes() == before  # never silently started over


def test_other_sqlite_database_is_not_taken_over(tmp_path):
    from chronoprobe.cache import CallCache
    from chronoprobe.errors import ConfigError

    path = tmp_path / "mine.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
    with pytest.raises(ConfigError, match="not a chronoprobe call cache"):
        CallCache(path)
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"recipes"}


def test_cache_still_opens_and_reads_back(tmp_path):
    from chronoprobe.cache import CallCache

    cache = CallCache(tmp_path / "sub" / "calls.sqlite")
    cache.put_many("ns", [("a", {"text": "x"}, None)])
    cache.close()
    again = CallCache(tmp_path / "sub" / "calls.sqlite")
    assert again.get_many(["a"])["a"][0] == {"text": "x"}


@pytest.mark.parametrize("device", ["auto", "cpu", "cuda", "cuda:0", "cuda:12", "mps"])
def test_valid_devices_pass(device):
    from chronoprobe.models.placement import device_name

    assert device_name(device) == device


def _screen(stream: str) -> list[str]:
    """What a terminal shows after ``stream``: enough of VT100 for rich's live display."""
    import re

    lines, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", stream):
        if token == "\r":
            col = 0
        elif token == "\n":
            row, col = row + 1, 0
            lines += [""] * (row + 1 - len(lines))
        elif token.startswith("\x1b["):
            if token.endswith("A"):
                row = max(0, row - int(token[2:-1] or 1))
            elif token.endswith("K"):
                lines[row] = ""
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token) :]
            col += len(token)
    return [line for line in lines if line.strip()]


@pytest.mark.e2e
def test_failed_live_query_leaves_only_the_error_on_a_terminal(tmp_path, monkeypatch, capsys):
    import io

    from rich.console import Console

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "knowledge"))
    from wdqs_stub import Fault, StubWDQS

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=100)
    monkeypatch.setattr("chronoprobe.cli.console.console", terminal)
    monkeypatch.setattr("chronoprobe.cli.main.err_console", terminal)
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    with StubWDQS(always=Fault(status=400, body=b"bad query")) as wdqs:
        code, _ = invoke(
            monkeypatch,
            capsys,
            [
                "outdated",
                "run",
                "--live",
                "--endpoint",
                wdqs.url,
                "--limit",
                "2",
                "--out",
                str(tmp_path / "r"),
                "--cache",
                str(tmp_path / "c.sqlite"),
            ],
        )
    shown = _screen(screen.getvalue())
    assert code == 2
    assert len(shown) == 1 and shown[0].startswith("error: ") and wdqs.url in shown[0], shown


@pytest.mark.e2e
@pytest.mark.parametrize("offline", [True, False])
def test_uncached_hub_model_fails_fast_when_the_hub_is_out_of_reach(tmp_path, offline):
    import os
    import subprocess
    import time

    env = {k: v for k, v in os.environ.items() if k not in {"HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"}}
    env["HF_HUB_CACHE"] = str(tmp_path / "hub")  # nothing cached
    env["CHRONOPROBE_HOME"] = str(tmp_path / "home")
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    else:
        env["HF_ENDPOINT"] = "http://127.0.0.1:9"  # nothing listens there: the hub is unreachable
    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "chronoprobe.cli.main",
            "outdated",
            "run",
            "--model",
            "hf:nonexistent-org/nonexistent-model",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "r"),
            "--cache",
            str(tmp_path / "c.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    elapsed = time.monotonic() - started
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "hf:nonexistent-org/nonexistent-model" in lines[0], result.stderr
    assert ("HF_HUB_OFFLINE" if offline else "cannot be reached") in lines[0]
    assert elapsed < 15, f"took {elapsed:.1f} s"
