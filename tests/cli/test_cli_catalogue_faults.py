"""``catalogue build`` against an endpoint that misbehaves, bad template files and bad folders: a table.

Each row runs the real ``main()`` against the WDQS stand-in on 127.0.0.1, which answers the real
query (pyoxigraph) or, for the requests a row scripts, the faulty response instead: an HTTP error,
a Retry-After, a truncated, HTML, huge or trickling body, malformed bindings, odd labels or dates.
The template is the shipped club_head_coaches with four subjects: the first request selects them,
the second is their one statement page.

A row ends one of three ways:

* ``clean``: a transient fault, retried within the documented bound; the catalogue, snapshot and
  report are byte for byte those of a build that met no fault;
* ``built``: the answer is odd but usable (a right-to-left label, a date before year 1); the build
  succeeds and ``check`` says what became of the odd part, and no control character is written;
* refused: one line naming the place, exit 2, no catalogue written, nothing of the user's touched,
  and a rerun against a sound endpoint resumes to the clean build (what a failed build kept is
  only what it may keep).

The retry waits are recorded, not slept (the client's ``sleep``), and bounded per row.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from chronoprobe.cli.main import main
from chronoprobe.knowledge.templates import shipped_dir
from chronoprobe.knowledge.wikidata import WikidataClient
from chronoprobe.testing.wdqs import SPARQL_JSON, Fault, StubWDQS
from cli_driver import run_main

pytestmark = pytest.mark.e2e

RESULTS = ("catalogue.json", "snapshot.json", "report.json")
MIB = 2**20
PASS = Fault.passthrough()
"""Let the selection through, so that the next fault meets the statement page."""
Bindings = list[dict[str, Any]]


def _rows(change: Callable[[Bindings], None]) -> Fault:
    """The real answer with its bindings changed by ``change``."""

    def rewrite(body: bytes) -> bytes:
        data = json.loads(body)
        change(data["results"]["bindings"])
        return json.dumps(data).encode("utf-8")

    return Fault.rewritten(rewrite)


KEPT: set[str] = set()
"""The subjects the clean build keeps as facts (filled by the ``clean`` fixture): an edit aimed at one of
them shows in the snapshot."""


def _set(name: str, value: str) -> Fault:
    """The first row that binds ``?name`` binds it to ``value`` instead (a selection's cell)."""

    def change(bindings: Bindings) -> None:
        row = next(r for r in bindings if name in r)
        row[name] = {**row[name], "value": value}

    return _rows(change)


def _edit(name: str, value: str | Callable[[str], str], precision: str | None = None, kind: str | None = None) -> Fault:
    """``?name`` set to ``value`` (or to ``value(old)``) in every row of one statement of a kept subject (in every
    row of the subject, for its label)."""

    def change(bindings: Bindings) -> None:
        target = next(r for r in bindings if name in r and r["subject"]["value"].rsplit("/", 1)[-1] in KEPT)
        key = "subject" if name == "subjectLabel" else "statement"
        for row in bindings:
            if row.get(key) == target[key] and name in row:
                new = value(row[name]["value"]) if callable(value) else value
                row[name] = {**row[name], "value": new, **({"type": kind} if kind else {})}
                if precision is not None:
                    row[f"{name}Precision"] = {"type": "literal", "value": precision}

    return _rows(change)


def _drop(name: str) -> Fault:
    def change(bindings: Bindings) -> None:
        for row in bindings:
            row.pop(name, None)

    return _rows(change)


def _body(text: bytes, kind: str = SPARQL_JSON) -> Fault:
    return Fault(body=text, headers={"Content-Type": kind})


def _value_labels(out: Path) -> list[str]:
    snapshot = json.loads((out / "snapshot.json").read_text(encoding="utf-8"))
    return [s["label"] for answers in snapshot["answers"].values() for s in answers["statements"]]


def _refused(out: Path) -> dict[str, int]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return dict(report["templates"][0]["dropped"])


def _statements_dropped(out: Path) -> dict[str, int]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return dict(report["templates"][0]["statements_dropped"])


def _dates(out: Path) -> list[dict[str, Any]]:
    snapshot = json.loads((out / "snapshot.json").read_text(encoding="utf-8"))
    return [s[k] for a in snapshot["answers"].values() for s in a["statements"] for k in ("start", "end") if k in s]


@dataclass(frozen=True)
class Case:
    name: str
    faults: tuple[Fault, ...] = ()
    """The answers of the first requests, in order (then the real answers, or ``always``)."""
    always: Fault | None = None
    expected: str = ""
    """A part of the one error line; empty: the build succeeds."""
    waits_at_most: float = 0.0
    """Seconds of retry waits the row may take (recorded, not slept)."""
    args: str = ""
    template: str | bytes | None = None
    """A template file's content, written to {tmp}/t.toml and built instead of the shipped one."""
    damage: Callable[[Path, str], None] | None = None
    """Prepares {tmp} before the build (a user's file where the output goes), given the endpoint."""
    check: Callable[[Path, Path], None] | None = None
    """For a build that succeeds with odd data: what must hold of its folder beside the clean one's (else:
    identical to it)."""
    resumes: bool = True
    """A refused build reruns against a sound endpoint to the clean build (not for bad templates or folders)."""


def _template(change: Callable[[str], str]) -> str:
    return change((shipped_dir() / "club_head_coaches.toml").read_text(encoding="utf-8"))


def _replace(old: str, new: str) -> str:
    text = _template(lambda t: t.replace(old, new))
    assert text != _template(lambda t: t), old
    return text


def _rtl_kept(out: Path, clean: Path) -> None:
    assert "جوزيه مورينيو" in _value_labels(out) and _refused(out) == _refused(clean)


def _unlabelled_value(out: Path, clean: Path) -> None:
    assert _refused(out).get("unlabelled_value", 0) == _refused(clean).get("unlabelled_value", 0) + 1
    for name in RESULTS:
        text = (out / name).read_text(encoding="utf-8")
        assert "\\u001b" not in text and "\x1b" not in text and "A" * 300 not in text, name


def _unlabelled_subject(out: Path, clean: Path) -> None:
    assert _refused(out).get("unlabelled_subject", 0) == _refused(clean).get("unlabelled_subject", 0) + 1


def _not_an_item(out: Path, clean: Path) -> None:
    assert _statements_dropped(out).get("not_an_item", 0) == 1 and "not_an_item" not in _statements_dropped(clean)


def _bce_kept(out: Path, clean: Path) -> None:
    assert {"year": -44, "month": 3, "day": 15} in _dates(out) and _refused(out) == _refused(clean)


def _month_zero(stamp: str) -> str:
    """The same year, month and day 00 (as the JSON dumps write a year): ``+2019-00-00T00:00:00Z``."""
    return f"+{stamp.lstrip('+')[:4]}-00-00T00:00:00Z"


def _years_only(out: Path) -> int:
    return sum(1 for d in _dates(out) if set(d) == {"year"})


def _month_zero_is_a_year(out: Path, clean: Path) -> None:
    assert _years_only(out) == _years_only(clean) + 1 and _refused(out) == _refused(clean)


def _century(out: Path, clean: Path) -> None:
    assert {"year": 2000, "precision": 7} in _dates(out) and _refused(out) == _refused(clean)


def _user_file(tmp: Path, url: str) -> None:
    (tmp / "mine.txt").write_text("my notes\n")


def _user_folder(tmp: Path, url: str) -> None:
    (tmp / "mine").mkdir()
    (tmp / "mine" / "notes.txt").write_text("my notes\n")


def _other_build(tmp: Path, url: str) -> None:
    _chronoprobe("catalogue", "build", "city_mayors", "--out", str(tmp / "out"), "--endpoint", url)


def _not_items(bindings: Bindings) -> None:
    for row in bindings:
        row["subject"] = {"type": "uri", "value": "http://example.org/" + row["subject"]["value"].rsplit("/", 1)[-1]}


HUGE = b'{"head": {"vars": []}, "results": {"bindings": []}, "padding": "' + b"x" * (2 * MIB) + b'"}'
LATER = formatdate(timeval=None, usegmt=True)  # an HTTP-date of now: retry at once

CASES = [
    # --- transient faults: retried, then the clean build
    Case("http-500-then-answer", faults=(PASS, Fault(status=500)), waits_at_most=2),
    Case("http-500-always", always=Fault(status=500), expected="HTTP 500 (gave up after 4 attempts)", waits_at_most=14),
    Case("http-503-html-page", faults=(Fault.html(503),), waits_at_most=2),
    Case("429-retry-after-seconds", faults=(PASS, Fault.throttle(retry_after=3)), waits_at_most=3),
    Case("429-retry-after-http-date", faults=(Fault.throttle(retry_after=LATER),), waits_at_most=1),
    Case("429-retry-after-too-long", faults=(Fault.throttle(retry_after=3600),), expected="retry after 3600 s"),
    Case("truncated-json-then-answer", faults=(PASS, Fault.truncated(keep=300)), waits_at_most=2),
    Case(
        "truncated-json-always",
        always=Fault.truncated(keep=300),
        expected="truncated JSON answer (gave up",
        waits_at_most=14,
    ),
    Case("empty-page-then-answer", faults=(PASS, Fault.empty()), waits_at_most=2),
    Case("slow-then-answer", faults=(PASS, Fault.slow(2.5)), args="--timeout 1", waits_at_most=2),
    Case(
        "trickling-answer",  # every read is quick, the whole is not: bounded by --timeout all the same
        always=Fault.trickle(0.05),
        args="--timeout 1",
        expected="the answer took longer than 1 s (gave up after 4 attempts)",
        waits_at_most=14,
    ),
    Case(
        "connection-refused",
        args="--endpoint http://127.0.0.1:{port}/sparql",
        expected="connection failed",
        waits_at_most=14,
    ),
    # --- answers that are no SPARQL result: refused at once, never saved
    Case("html-instead-of-json", faults=(PASS, Fault.html()), expected="answered with non-JSON (text/html"),
    Case("huge-answer", faults=(PASS, _body(HUGE)), expected="answered more than 1 MiB"),
    Case("json-not-sparql", faults=(_body(b'{"surprise": 1}'),), expected="not a SPARQL result"),
    Case("bindings-not-a-list", faults=(_body(b'{"results": {"bindings": {}}}'),), expected="not a list of bindings"),
    Case("cell-not-an-object", faults=(_rows(lambda b: b[0].update(subject="Q1")),), expected="malformed SPARQL"),
    Case("row-without-statement", faults=(PASS, _drop("statement")), expected="lacks ?subject, ?statement or ?rank"),
    Case("sitelinks-not-a-number", faults=(_set("sitelinks", "many"),), expected="sitelinks 'many' of Q"),
    Case(
        "subjects-not-items",
        faults=(_rows(_not_items),),
        expected="none of the 4 subjects selected is a Wikidata item",
    ),
    Case(
        "statement-iri-not-a-statement",
        faults=(PASS, _edit("statement", "http://www.wikidata.org/entity/statement/Q1 x\x07")),
        expected="does not name a Wikidata statement",
    ),
    Case(
        "time-not-a-literal",
        faults=(PASS, _edit("start", "http://example.org/t", kind="uri")),
        expected="?start is not a time value",
    ),
    Case("date-month-13", faults=(PASS, _edit("start", "+2024-13-45T00:00:00Z")), expected="month 13"),
    Case("date-february-30", faults=(PASS, _edit("start", "2023-02-30T00:00:00Z")), expected="day 30"),
    Case(
        "precision-not-a-number",
        faults=(PASS, _edit("start", "2019-01-01T00:00:00Z", "abc")),
        expected="unreadable time value",
    ),
    Case(
        "precision-15",
        faults=(PASS, _edit("start", "2019-01-01T00:00:00Z", "15")),
        expected="precision 15, not a Wikidata precision",
    ),
    # --- odd but usable answers: built, with the odd part judged
    Case("label-right-to-left", faults=(PASS, _edit("label", "جوزيه مورينيو")), check=_rtl_kept),
    Case("label-control-characters", faults=(PASS, _edit("label", "Evil\x1b[31m coach\x07")), check=_unlabelled_value),
    Case("label-10000-characters", faults=(PASS, _edit("label", "A" * 10000)), check=_unlabelled_value),
    Case(
        "subject-label-control-characters", faults=(PASS, _edit("subjectLabel", "Club\x00")), check=_unlabelled_subject
    ),
    Case("value-not-an-item", faults=(PASS, _edit("value", "http://example.org/coach")), check=_not_an_item),
    Case("date-before-year-1", faults=(PASS, _edit("start", "-0044-03-15T00:00:00Z", "11")), check=_bce_kept),
    Case("date-month-00", faults=(PASS, _edit("start", _month_zero, "11")), check=_month_zero_is_a_year),
    Case("precision-7", faults=(PASS, _edit("start", "+2000-00-00T00:00:00Z", "7")), check=_century),
    # --- bad template files: refused before any request
    Case("template-not-toml", template="property = \n", expected="not valid TOML", resumes=False),
    Case("template-empty", template="", expected="name: Field required", resumes=False),
    Case("template-not-utf8", template=b'name = "caf\xe9"\n', expected="not UTF-8", resumes=False),
    Case(
        "template-unknown-key",
        template=_replace("stand_in_facts", "colour = 1\nstand_in_facts"),
        expected="colour",
        resumes=False,
    ),
    Case(
        "property-injection",
        template=_replace('property = "P286"', 'property = "P286 } ; ?s ?p ?o"'),
        expected="is not a Wikidata property id",
        resumes=False,
    ),
    Case(
        "qualifier-injection",
        template=_replace("[subjects]", '[validity]\nend = "P582> . } INSERT DATA { <a> <b> <c>"\n\n[subjects]'),
        expected="validity.end: 'P582> . } INSERT",
        resumes=False,
    ),
    Case(
        "class-injection",
        template=_replace('"Q476028"', '"Q476028 } UNION { ?s ?p ?o"'),
        expected="subjects.classes.0",
        resumes=False,
    ),
    Case(
        "pattern-service-call",
        template=_replace("[subjects]", '[subjects]\npattern = "?subject wdt:P31 wd:Q5 } SERVICE <http://x> {"'),
        expected="unexpected text",
        resumes=False,
    ),
    Case(
        "language-injection",
        template=_replace("[subjects]", "[values]\nlanguages = ['en\") } #']\n\n[subjects]"),
        expected="is not a language code",
        resumes=False,
    ),
    Case("property-too-long", template=_replace('"P286"', '"P9999999999"'), expected="P9999999999", resumes=False),
    Case(
        "page-size-zero",
        template=_replace('property = "P286"', 'property = "P286"\npage_size = 0'),
        expected="page_size",
        resumes=False,
    ),
    # --- the output folder: nothing of the user's touched
    Case("out-is-a-user-file", args="--out {tmp}/mine.txt", damage=_user_file, expected="is a file", resumes=False),
    Case(
        "out-is-a-user-folder",
        args="--out {tmp}/mine",
        damage=_user_folder,
        expected="not a catalogue build",
        resumes=False,
    ),
    Case("out-holds-another-build", damage=_other_build, expected="holds a build with other settings (", resumes=False),
]


def _chronoprobe(*args: str) -> None:
    """``chronoprobe ARGS`` through the real ``main()``, which must succeed (its output stays with pytest)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["chronoprobe", *args])
        try:
            main()
        except SystemExit as stopped:
            assert stopped.code in (0, None), f"chronoprobe {' '.join(args)} exited {stopped.code}"


@pytest.fixture(scope="module")
def wdqs() -> Iterator[StubWDQS]:
    with StubWDQS() as server:
        yield server


@pytest.fixture(scope="module")
def clean(wdqs: StubWDQS, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build that met no fault, in a folder named as every row's (``out``)."""
    out = tmp_path_factory.mktemp("clean") / "out"
    _chronoprobe(*_base(out, wdqs.url, "club_head_coaches"))
    facts = json.loads((out / "catalogue.json").read_text(encoding="utf-8"))["facts"]
    KEPT.update(f["subject_qid"] for f in facts)
    return out


def _base(out: Path, url: str, template: str) -> list[str]:
    return ["catalogue", "build", template, "--out", str(out), "--endpoint", url, "--per-template", "4"]


def _argv(case: Case, tmp: Path, url: str) -> list[str]:
    template = str(tmp / "t.toml") if case.template is not None else "club_head_coaches"
    extra = shlex.split(case.args.replace("{tmp}", str(tmp)).replace("{port}", str(_free_port())))
    argv = _base(tmp / "out", url, template)
    for option in ("--out", "--endpoint"):
        if option in extra:
            at = argv.index(option)
            del argv[at : at + 2]
    return argv + extra


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the chronoprobe home aside) with a digest of its content."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).parts[0] != "home"
    }


def _same_as_clean(out: Path, clean: Path) -> None:
    for name in RESULTS:
        assert (out / name).read_bytes() == (clean / name).read_bytes(), name


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_catalogue_build_meets_a_fault(
    case: Case,
    wdqs: StubWDQS,
    clean: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path / "home"))
    waits: list[float] = []
    client = functools.partial(WikidataClient, sleep=waits.append, max_answer_bytes=MIB)
    monkeypatch.setattr("chronoprobe.knowledge.catalogue_build.WikidataClient", client)
    if case.template is not None:
        content = case.template if isinstance(case.template, bytes) else case.template.encode("utf-8")
        (tmp_path / "t.toml").write_bytes(content)
    if case.damage is not None:
        case.damage(tmp_path, wdqs.url)
    before = _tree(tmp_path)
    wdqs.faults[:] = list(case.faults)
    wdqs.always = case.always
    try:
        ran = run_main(monkeypatch, capsys, *_argv(case, tmp_path, wdqs.url))
    finally:
        wdqs.faults.clear()
        wdqs.always = None
    assert "Traceback" not in ran.text and "internal error" not in ran.text, ran.text
    assert sum(waits) <= case.waits_at_most, waits
    out = tmp_path / "out"
    if not case.expected:
        assert ran.code == 0, ran.text
        if case.check is None:
            _same_as_clean(out, clean)
        else:
            case.check(out, clean)
        return
    lines = [line for line in ran.err.splitlines() if line.strip()]
    assert ran.code == 2 and len(lines) == 1 and lines[0].startswith("error: "), ran.err
    assert case.expected in lines[0], lines[0]
    assert all(char.isprintable() for char in lines[0]), repr(lines[0])
    after = _tree(tmp_path)
    assert {path: after.get(path) for path in before} == before, "a file that was there changed"
    new = sorted(set(after) - set(before))
    assert all(path.startswith("out/") and Path(path).name not in RESULTS for path in new), new
    if case.resumes:
        ran = run_main(monkeypatch, capsys, *_base(out, wdqs.url, "club_head_coaches"))
        assert ran.code == 0, ran.text
        _same_as_clean(out, clean)


@pytest.mark.parametrize("request_killed", [1, 2], ids=["during-the-selection", "during-the-page"])
def test_kill_9_mid_request_then_rerun_gives_the_clean_build(
    request_killed: int,
    wdqs: StubWDQS,
    clean: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Killed while request 1 (nothing saved yet) or 2 (the selection saved) is answered slowly."""
    out = tmp_path / "out"
    wdqs.faults[:] = [PASS] * (request_killed - 1) + [Fault.slow(30)]
    seen = wdqs.count
    build = subprocess.Popen(
        [sys.executable, "-m", "chronoprobe.cli.main", *_base(out, wdqs.url, "club_head_coaches")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "CHRONOPROBE_HOME": str(tmp_path / "home")},
    )
    try:
        deadline = time.monotonic() + 60
        while wdqs.count - seen < request_killed and build.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert build.poll() is None, build.communicate()[1]
        os.kill(build.pid, signal.SIGKILL)
        build.communicate()  # waits, and closes the pipe
    finally:
        wdqs.faults.clear()
    assert not any((out / name).exists() for name in RESULTS)
    ran = run_main(monkeypatch, capsys, *_base(out, wdqs.url, "club_head_coaches"))
    assert ran.code == 0, ran.text
    _same_as_clean(out, clean)
