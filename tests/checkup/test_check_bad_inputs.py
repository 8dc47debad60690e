"""``chronoprobe check`` under careless input: each case is one line naming the place, exit 2, and the directory
tree exactly as it was (nothing written, nothing of the user's touched).

In the style of ``tests/cli/test_bad_inputs.py``: the real ``main()`` in this process, model loading refused
(a case that gets as far as loading a model fails), and every file under the test's folder compared by its
bytes before and after. ``{tmp}/check`` is a finished check of ``mock:constant=Paris`` (the outdated lens),
``{tmp}/run`` a finished ``outdated run``; the damage functions change them before the command runs.
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chronoprobe.cli.main import main
from chronoprobe.knowledge import wikidata
from cli_driver import changes, run_main, said_lines, tree_state

PARIS = "mock:constant=Paris"
CHECK = f"check -m {PARIS} --lens outdated"
SHIPPED = Path(__file__).resolve().parents[2] / "src" / "chronoprobe" / "data" / "snapshots" / "dyknow-2023-12-18.json"
LIVE_TIMEOUT_S = 0.5
"""The stand-in's wait per request in the --live cases (the real client waits 30 s; docs/check.md)."""


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished check (``check``) and ``outdated run`` (``run``) of mock:constant=Paris, copied by each case."""
    root = tmp_path_factory.mktemp("finished")
    argv = [*shlex.split(CHECK), "--out", str(root / "check"), "--cache", str(root / "calls.sqlite")]
    run = ["outdated", "run", "-m", PARIS, "--limit", "2", "--out", str(root / "run")]
    with pytest.MonkeyPatch.context() as patch:
        for args in (argv, [*run, "--cache", str(root / "calls.sqlite")]):
            patch.setattr(sys, "argv", ["chronoprobe", *args])
            try:
                main()
            except SystemExit as stopped:
                assert stopped.code in (0, None), args
    return root


@pytest.fixture(scope="module")
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never answers (an endpoint that hangs)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield int(server.getsockname()[1])


def _free_port() -> int:
    with socket.socket() as probe:  # bound, then released: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- damage: each changes the copies under tmp --------------------------------------------------


def _write(name: str, text: str) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")

    return damage


def _remove(name: str) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        path = tmp / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return damage


def _both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def damage(tmp: Path) -> None:
        for step in steps:
            step(tmp)

    return damage


def _user_lens_folder(tmp: Path) -> None:
    """The check's outdated folder replaced by one of the user's own."""
    shutil.rmtree(tmp / "check" / "outdated")
    (tmp / "check" / "outdated").mkdir()
    (tmp / "check" / "outdated" / "mine.txt").write_text("my own notes\n")


def _cut_short(name: str) -> Callable[[Path], None]:
    """The file cut in the middle of a line, as a copy interrupted by a full disk leaves it."""

    def damage(tmp: Path) -> None:
        data = (tmp / name).read_bytes()
        (tmp / name).write_bytes(data[: len(data) // 2])

    return damage


def _without(name: str, text: str) -> Callable[[Path], None]:
    """The lines of the file that hold ``text`` removed (the rest as written)."""

    def damage(tmp: Path) -> None:
        lines = (tmp / name).read_text(encoding="utf-8").splitlines(keepends=True)
        (tmp / name).write_text("".join(line for line in lines if text not in line), encoding="utf-8")

    return damage


def _rename_facts(tmp: Path) -> None:
    """Every fact id of the baseline's answers renamed: it reads whole, but shares no fact with a new check."""
    items = tmp / "check" / "outdated" / "items.jsonl"
    rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    items.write_text("".join(json.dumps({**r, "fact_id": f"elsewhere/{r['fact_id']}"}) + "\n" for r in rows))


def _future_snapshot(tmp: Path) -> None:
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    (tmp / "future.json").write_text(json.dumps({**data, "name": "future", "retrieved": "2999-01-01"}))


@dataclass(frozen=True)
class Case:
    name: str
    argv: str
    expected: str
    """Text the error line must contain (the place it names)."""
    damage: Callable[[Path], object] | None = None
    spec: bool = False
    """The bad value is a model spec: the loader refuses it, so loading is not refused here."""
    live: bool = False
    """Queries a loopback endpoint: the Wikidata client waits ``LIVE_TIMEOUT_S`` and never backs off."""


BASELINE = f"{CHECK} --baseline {{tmp}}/check"
DELTA = "--require 'outdated.soft_constraint_pct.up-to-date.delta >= -2'"
THOUSAND = " ".join(f"--require 'outdated.inconsistency_pct <= {i % 100}'" for i in range(999))

CASES: list[Case] = [
    # --- the --require grammar
    Case("require-unknown-lens", f"{CHECK} --require 'staleness.up >= 1'", "'staleness' is not a lens this check runs"),
    Case("require-unknown-metric", f"{CHECK} --require 'outdated.nope >= 1'", "'nope' is not a metric of the outdated"),
    Case("require-no-metric", f"{CHECK} --require 'outdated >= 1'", "names no metric after 'outdated'"),
    Case("require-bad-operator", f"{CHECK} --require 'outdated.inconsistency_pct => 1'", "is not LENS.METRIC"),
    Case("require-equals", f"{CHECK} --require 'outdated.inconsistency_pct == 1'", "is not LENS.METRIC"),
    Case("require-unicode-operator", f"{CHECK} --require 'outdated.inconsistency_pct ≥ 1'", "≥ 1': is not LENS"),
    Case(
        "require-unicode-metric",
        f"{CHECK} --require 'outdated.soft_constraint_pct.up-to-dáte >= 1'",
        "'soft_constraint_pct.up-to-dáte' is not a metric of the outdated lens",
    ),
    Case("require-control-character", f"{CHECK} --require $'outdated.incon\\x1bsistency_pct >= 1'", "\\x1b"),
    Case("require-non-numeric", f"{CHECK} --require 'outdated.inconsistency_pct >= forty'", "'forty' is not a number"),
    Case("require-nan", f"{CHECK} --require 'outdated.inconsistency_pct >= nan'", "'nan' is not a finite number"),
    Case("require-infinite", f"{CHECK} --require 'outdated.inconsistency_pct <= inf'", "'inf' is not a finite number"),
    Case("require-overflow", f"{CHECK} --require 'outdated.inconsistency_pct <= 1e999'", "not a finite number"),
    Case("require-empty", f"{CHECK} --require ''", "--require '': is not LENS.METRIC"),
    Case("require-blank", f"{CHECK} --require '   '", "': is not LENS.METRIC"),
    Case(
        "require-empty-part",
        f"{CHECK} --require 'outdated.soft_constraint_pct. >= 1'",
        "'soft_constraint_pct.' is not a metric of the outdated lens",
    ),
    Case(
        "require-empty-class",
        f"{CHECK} --require 'outdated.inconsistency_pct. >= 1'",
        "'inconsistency_pct.' is not a metric of the outdated lens",
    ),
    Case(
        "require-percent-on-a-date",
        f"{CHECK} --require 'outdated.knowledge_date >= 40%'",
        "knowledge_date is not a percentage",
    ),
    Case("require-bad-date", f"{CHECK} --require 'outdated.knowledge_date >= 2023-13'", "'2023-13' is not a date"),
    Case(
        "require-unknown-class",
        f"{CHECK} --require 'outdated.soft_constraint_pct.up-to-date.Politicians >= 1'",
        "'Politicians' is not a class of the outdated lens's items; its classes: all, athletes_byPayment",
    ),
    Case(
        "require-misspelt-class",
        f"{CHECK} --require 'outdated.inconsistency_pct.organisations <= 50'",
        "'organisations' is not a class of the outdated lens's items; its classes: ",
    ),
    Case(
        "require-lens-not-selected",
        f"{CHECK} --require 'recency.zero-shot.without.accuracy >= 0.5'",
        "'recency' is not a lens this check runs; its lenses: outdated",
    ),
    Case(
        "require-a-thousand-one-bad",
        f"{CHECK} {THOUSAND} --require 'outdated.inconsistency_pct <= ten'",
        "--require 'outdated.inconsistency_pct <= ten': 'ten' is not a number",
    ),
    # --- --baseline: read whole before any model loads, and every .delta threshold parsed against it
    Case(
        "baseline-items-empty",
        f"{BASELINE} {DELTA}",
        "{tmp}/check/outdated/items.jsonl: holds no answers (empty or missing)",
        _write("check/outdated/items.jsonl", ""),
    ),
    Case(
        "baseline-items-missing",
        f"{BASELINE} {DELTA}",
        "{tmp}/check/outdated/items.jsonl: holds no answers (empty or missing)",
        _remove("check/outdated/items.jsonl"),
    ),
    Case(
        "baseline-items-cut-short",
        f"{BASELINE} {DELTA}",
        "{tmp}/check/outdated/items.jsonl line ",
        _cut_short("check/outdated/items.jsonl"),
    ),
    Case(
        "baseline-items-cut-short-without-a-gate",
        BASELINE,
        "{tmp}/check/outdated/items.jsonl line ",
        _cut_short("check/outdated/items.jsonl"),
    ),
    Case(
        "baseline-no-items-for-the-gated-class",
        f"{BASELINE} --require 'outdated.soft_constraint_pct.up-to-date.organizations.delta >= -2'",
        "items.jsonl: holds no items for soft_constraint_pct.up-to-date over organizations",
        _without("check/outdated/items.jsonl", '"category": "organizations"'),
    ),
    Case(
        "baseline-shares-no-fact",
        f"{BASELINE} {DELTA}",
        "{tmp}/check/outdated/items.jsonl: shares no item with the 130 this check's outdated lens will ask (it "
        "holds 130 others): a change over nothing cannot be gated",
        _rename_facts,
    ),
    Case(
        "baseline-lacks-the-gated-lens",
        f"check -m {PARIS} --lens outdated --lens recency --baseline {{tmp}}/check "
        "--require 'recency.zero-shot.without.accuracy.delta >= 0'",
        "the baseline {tmp}/check has no finished recency run to compare with (it has outdated)",
    ),
    Case(
        "require-delta-a-date",
        f"{BASELINE} --require 'outdated.knowledge_date.delta >= 2023-01'",
        "a change in knowledge_date is in years (e.g. -1 or 0.5), and '2023-01' is a date",
    ),
    Case(
        "require-delta-in-the-middle",
        f"{BASELINE} --require 'outdated.soft_constraint_pct.delta.up-to-date >= 0'",
        "'.delta' comes once, last: LENS.METRIC[.CLASS].delta OP VALUE",
    ),
    Case(
        "require-delta-twice",
        f"{BASELINE} --require 'outdated.soft_constraint_pct.up-to-date.delta.delta >= 0'",
        "the outdated lens's metrics: soft_constraint_pct.<…>, average_pct.<…>",
    ),
    Case(
        "require-delta-in-the-middle-without-a-baseline",
        f"{CHECK} --require 'outdated.soft_constraint_pct.delta.up-to-date >= 0'",
        "'.delta' comes once, last",
    ),
    Case(
        "require-delta-unknown-class",
        f"{BASELINE} --require 'outdated.soft_constraint_pct.up-to-date.Nowhere.delta >= 0'",
        "the baseline's outdated run records it for the classes athletes_byPayment, companies_byRevenue",
    ),
    Case(
        "require-delta-metric-the-baseline-lacks",
        f"{BASELINE} --require 'outdated.knowledge_date.delta >= -1'",
        "the baseline's outdated run does not record knowledge_date",
    ),
    Case(
        "require-delta-without-a-baseline",
        f"{CHECK} {DELTA}",
        "a .delta threshold is a change against --baseline DIR; give one",
    ),
    # --- --junit
    Case("junit-user-file", f"{CHECK} --junit {{tmp}}/notes.txt", "exists and is not a JUnit file"),
    Case("junit-folder", f"{CHECK} --junit {{tmp}}/folder", "--junit {tmp}/folder: is a folder"),
    Case("junit-unwritable", f"{CHECK} --junit /proc/chronoprobe-junit.xml", "cannot write in /proc"),
    Case("junit-under-a-file", f"{CHECK} --junit {{tmp}}/notes.txt/j.xml", "notes.txt is a file"),
    Case("junit-is-the-new-out", f"{CHECK} --out {{tmp}}/new --junit {{tmp}}/new", "lies in --out {tmp}/new"),
    Case("junit-inside-the-new-out", f"{CHECK} --out {{tmp}}/new --junit {{tmp}}/new/j.xml", "lies in --out"),
    Case("junit-is-the-out", f"{CHECK} --out {{tmp}}/check --junit {{tmp}}/check", "is a folder"),
    Case("junit-inside-the-out", f"{CHECK} --out {{tmp}}/check --junit {{tmp}}/check/j.xml", "is a result folder"),
    Case("junit-onto-check-md", f"{CHECK} --out {{tmp}}/check --junit {{tmp}}/check/check.md", "is not a JUnit"),
    Case(
        "junit-is-the-cache",
        f"{CHECK} --junit {{tmp}}/new.sqlite --cache {{tmp}}/new.sqlite",
        "--junit {tmp}/new.sqlite: is the --cache input",
    ),
    # --- --out
    Case("out-user-folder", f"{CHECK} --out {{tmp}}/mine", "does not hold an earlier chronoprobe report"),
    Case("out-file", f"{CHECK} --out {{tmp}}/notes.txt", "--out {tmp}/notes.txt: is a file"),
    Case("out-under-a-file", f"{CHECK} --out {{tmp}}/notes.txt/check", "notes.txt is a file"),
    Case("out-another-kind", f"{CHECK} --out {{tmp}}/run", "holds a report from `outdated run`"),
    Case("out-holds-the-cache", f"{CHECK} --out {{tmp}}/check --cache {{tmp}}/check/c.sqlite", "--cache"),
    Case(
        "out-of-another-model",
        "check -m mock:constant=Rome --lens outdated --out {tmp}/check",
        "--out {tmp}/check: holds a check of mock:constant=Paris, not of mock:constant=Rome",
    ),
    Case(
        "out-of-another-model-and-one-more",
        f"check -m {PARIS} -m mock:constant=Rome --lens outdated --out {{tmp}}/check",
        "holds a check of mock:constant=Paris, not of mock:constant=Paris, mock:constant=Rome",
    ),
    Case(
        "out-of-another-model-check-json-damaged",
        "check -m mock:constant=Rome --lens outdated --out {tmp}/check",
        "holds a check of mock:constant=Paris",
        _write("check/check.json", "{not json"),
    ),
    Case(
        "out-of-another-model-check-json-gone",
        "check -m mock:constant=Rome --lens outdated --out {tmp}/check",
        "holds a check of mock:constant=Paris",
        _remove("check/check.json"),
    ),
    Case(
        "out-lens-folder-of-the-user",
        f"{CHECK} --out {{tmp}}/check",
        "--out {tmp}/check/outdated: exists and does not hold an earlier chronoprobe report",
        _user_lens_folder,
    ),
    Case(
        "out-lens-folder-is-a-file",
        f"{CHECK} --out {{tmp}}/check",
        "--out {tmp}/check/outdated: is a file",
        _both(_remove("check/outdated"), _write("check/outdated", "mine\n")),
    ),
    Case(
        "out-second-lens-folder-of-the-user",
        f"{CHECK} --lens recency --out {{tmp}}/check",
        "--out {tmp}/check/recency: exists and does not hold an earlier chronoprobe report",
        _write("check/recency/mine.txt", "my own notes\n"),
    ),
    # --- models
    Case(
        "models-one-name-twice",
        "check -m a=mock:constant=Paris -m a=mock:constant=Rome --lens outdated",
        "--model: two models are named 'a' (a=mock:constant=Paris, a=mock:constant=Rome)",
    ),
    Case(
        "models-one-spec-twice",
        f"check -m {PARIS} -m {PARIS} --lens outdated",
        "--model: two models are named 'constant=Paris'",
    ),
    Case(
        "models-one-derived-name",
        "check -m hf:org-a/tiny -m hf:org-b/tiny --lens outdated",
        "two models are named 'tiny' (hf:org-a/tiny, hf:org-b/tiny); give each its own NAME=SPEC",
    ),
    # --- snapshot, --live, budget, lens
    Case("snapshot-damaged", f"{CHECK} --snapshot {{tmp}}/bad.json", "bad.json: not valid JSON"),
    Case(
        "snapshot-from-the-future",
        f"{CHECK} --snapshot {{tmp}}/future.json",
        "future.json: retrieved 2999-01-01, after today",
        _future_snapshot,
    ),
    Case("snapshot-and-live", f"{CHECK} --live --snapshot dyknow-2023-12-18", "--live/--snapshot"),
    Case(
        "live-endpoint-refuses",
        f"{CHECK} --live --endpoint http://127.0.0.1:{{port}}/sparql",
        "WDQS http://127.0.0.1:{port}/sparql: connection failed (ConnectError) (gave up after 4 attempts)",
        live=True,
    ),
    Case(
        "live-endpoint-never-answers",
        f"{CHECK} --live --endpoint http://127.0.0.1:{{silent}}/sparql",
        "WDQS http://127.0.0.1:{silent}/sparql: timed out (gave up after 4 attempts)",
        live=True,
    ),
    Case("live-endpoint-not-http", f"{CHECK} --live --endpoint ftp://example.org/sparql", "--endpoint"),
    Case("budget-unknown", f"{CHECK} --budget huge", "--budget"),
    Case("lens-unknown", "check -m mock:constant=Paris --lens staleness", "--lens staleness: is not a lens"),
]


class _FastClient(wikidata.WikidataClient):
    """The Wikidata client with a short wait and no backoff, so that a dead endpoint fails at once."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.update(timeout_s=LIVE_TIMEOUT_S, backoff_s=0.0)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def _prepare(tmp: Path, finished: Path) -> None:
    for name in ("check", "run"):
        shutil.copytree(finished / name, tmp / name)
    (tmp / "notes.txt").write_text("my own notes\n")
    (tmp / "bad.json").write_text("{not json")
    (tmp / "folder").mkdir()
    (tmp / "mine").mkdir()
    (tmp / "mine" / "thesis.tex").write_text("\\section{Mine}\n")


def _refuse_models(*_args: object, **_kwargs: object) -> None:
    raise AssertionError("a model was loaded before the bad input was reported")


def _argv(case: Case, tmp: Path, silent: int) -> list[str]:
    text = case.argv.replace("{tmp}", str(tmp)).replace("{silent}", str(silent))
    argv = shlex.split(text.replace("{port}", str(_free_port())), posix=True)
    if "$'" in case.argv:  # the one ANSI-C quoted case: a real escape character in the threshold
        argv = [a.replace("$", "", 1).replace("\\x1b", "\x1b") if "\\x1b" in a else a for a in argv]
    if "--cache" not in argv:
        argv += ["--cache", str(tmp / "calls.sqlite")]
    if "--out" not in argv:
        argv += ["--out", str(tmp / "new")]
    return argv


@pytest.mark.e2e
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_check_input_is_one_line_and_touches_nothing(
    case: Case,
    finished: Path,
    silent_port: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if not case.spec:
        monkeypatch.setattr("chronoprobe.contract.runner.load_backend", _refuse_models)
    if case.live:
        monkeypatch.setattr("chronoprobe.lenses.outdated.audit.WikidataClient", _FastClient)  # where --live makes one
    _prepare(tmp_path, finished)
    if case.damage is not None:
        case.damage(tmp_path)
    argv = _argv(case, tmp_path, silent_port)
    before = tree_state(tmp_path)
    started = time.monotonic()
    ran = run_main(monkeypatch, capsys, *argv)
    took = time.monotonic() - started
    lines = [line for line in said_lines(ran.err) if not line.startswith(("outdated: ", "total: "))]
    assert ran.code == 2, ran.text
    assert "Traceback" not in ran.text and "internal error" not in ran.text, ran.text
    assert len(lines) == 1 and lines[0].startswith("error: "), ran.err
    expected = case.expected.replace("{tmp}", str(tmp_path)).replace("{silent}", str(silent_port))
    if "{port}" in expected:  # the refused port is chosen in _argv: match around it
        head, tail = expected.split("{port}")
        assert head in lines[0] and tail in lines[0], lines[0]
    else:
        assert expected in lines[0], lines[0]
    assert changes(before, tree_state(tmp_path)) == []
    if case.live:  # four attempts of LIVE_TIMEOUT_S at most, and no backoff: a dead endpoint is not a hang
        assert took < 4 * LIVE_TIMEOUT_S + 5, took


@pytest.mark.slow
def test_live_against_a_refusing_endpoint_fails_in_one_line_within_its_documented_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real client (30 s a request, four attempts 2, 4 and 8 s apart): about 15 s, as docs/check.md says."""
    monkeypatch.setattr("chronoprobe.contract.runner.load_backend", _refuse_models)
    port = _free_port()
    argv = [*shlex.split(CHECK), "--live", "--endpoint", f"http://127.0.0.1:{port}/sparql"]
    started = time.monotonic()
    ran = run_main(monkeypatch, capsys, *argv, "--out", str(tmp_path / "check"), "--cache", str(tmp_path / "c.sqlite"))
    took = time.monotonic() - started
    errors = [line for line in ran.err.splitlines() if line.startswith("error: ")]
    assert ran.code == 2 and errors == [
        f"error: WDQS http://127.0.0.1:{port}/sparql: connection failed (ConnectError) (gave up after 4 attempts)"
    ]
    assert 14 <= took < 30, took
    assert not (tmp_path / "check").exists()


@pytest.mark.e2e
def test_a_lens_with_nothing_to_do_in_the_checks_own_folder_is_skipped_not_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model with no outdated answer leaves editing no fact to edit: that lens is skipped, the check ends."""
    out = tmp_path / "check"
    ran = run_main(monkeypatch, capsys, "check", "-m", PARIS, "--lens", "editing", "--out", str(out),
                   "--cache", str(tmp_path / "c.sqlite"), "--require", "editing.ike.efficacy_pct >= 1")  # fmt: skip
    assert ran.code == 1, ran.text  # the threshold on editing fails: not measured
    assert "editing: skipped, nothing to do: no facts to edit for mock:constant=Paris" in ran.err
    record = json.loads((out / "check.json").read_text())
    assert record["complete"] and [(e["lens"], e["status"]) for e in record["lenses"]] == [
        ("outdated", "done"),
        ("editing", "skipped"),
    ]
    assert (out / "check.md").is_file() and (out / "card.html").is_file()
