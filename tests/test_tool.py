"""The Tool shape: each command that is not a lens run, declared once and run the same way from the
CLI and from ``chronoprobe.produce``; the one "is this file ours?" rule (``publish.RecordedFile``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chronoprobe as cp
from chronoprobe.cli.model_options import MODEL_OPTIONS
from chronoprobe.contract.tool import TOOLS, option_of, tool_class
from chronoprobe.errors import ConfigError
from chronoprobe.records.fields import spelling
from chronoprobe.records.publish import Output, RecordedFile, ResultFolder, text_digest
from chronoprobe.testing import register_mock, unregister_mock
from cli_driver import run_main

ASSETS = Path(__file__).resolve().parent / "assets"
TABLES = json.loads((Path(__file__).resolve().parent / "cli" / "option_tables.json").read_text(encoding="utf-8"))
MULAN = {
    "data": ASSETS / "mulan_queries.jsonl",
    "aliases_file": ASSETS / "mulan_aliases.jsonl",
    "templates": ASSETS / "mulan_templates.json",
}
BORDERS = "mock:constant=France shares a long border with Spain, its neighbour to the south."


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


# --- the declaration -----------------------------------------------------------------------------


def _help_texts(command: str) -> dict[str, str]:
    import typer.main

    from chronoprobe.cli.main import _register, app

    _register()
    found: Any = typer.main.get_command(app)
    for part in command.split():
        found = found.commands[part]
    return {p.name: " ".join((getattr(p, "help", None) or "").split()) for p in found.params}


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_config_declares_the_command_as_it_is(name: str) -> None:
    """Field for field, the config is the command's signature: names, option spellings, positional
    arguments, requiredness, defaults and help text. A generator reading the tool makes the same command."""
    tool = tool_class(name)
    fields = tool.config_type.model_fields
    hidden = {p["name"] for p in TABLES[tool.command] if p["name"].startswith("deprecated_")}  # older spellings
    table = [p for p in TABLES[tool.command] if p["name"] not in {*MODEL_OPTIONS, *hidden}]
    assert [p["name"] for p in table] == list(fields)
    assert tool.model_options == any(p["name"] in MODEL_OPTIONS for p in TABLES[tool.command])
    helps = _help_texts(tool.command)
    for param in table:
        field, info = param["name"], fields[param["name"]]
        assert (param["kind"] == "argument") == (field in spelling(tool.config_type).arguments), field
        if param["kind"] == "option":
            assert option_of(tool.config_type, field) in param["opts"], field
        assert param["required"] == info.is_required(), field
        if not info.is_required():
            default = info.default
            expected = str(default) if isinstance(default, Path) else default
            given = param["default"] is None and (default == () or field == "models")  # --model: the config's default
            assert param["default"] == expected or given, field
        if field != "models":  # --model's help is the shared spec list
            assert " ".join((info.description or "").split()) == helps[field], field


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_the_api_page_names_each_tools_command_and_config(name: str) -> None:
    import importlib
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `{re.escape(name)}` \| `([^`]+)` \| `([\w.]+)` \|", text, re.MULTILINE)
    assert row, f"docs/api.md has no row for {name}"
    module, _, attribute = row.group(2).rpartition(".")
    assert row.group(1) == tool_class(name).command
    assert getattr(importlib.import_module(module), attribute) is tool_class(name).config_type


def test_produce_names_the_tools_and_refuses_unknown_ones_and_options() -> None:
    assert cp.tools() == sorted(TOOLS)
    with pytest.raises(ConfigError, match=r"'recency\.labels' is not one of"):
        cp.produce("recency.labels")
    with pytest.raises(ConfigError, match=r"unknown; known: .*labeller"):
        cp.produce("recency.label", questions=ASSETS / "recency_questions.jsonl", labeler="mock:x")
    with pytest.raises(ConfigError, match=r"^--voter: at most three voters, got 4$"):
        cp.produce("recency.label", questions=ASSETS / "recency_questions.jsonl", voter=("a", "b", "c", "d"))


# --- ownership: one rule for every file a command writes ----------------------------------------


def test_a_recorded_file_is_ours_only_while_its_record_says_so(tmp_path: Path) -> None:
    rule = RecordedFile(".build.json", frozenset({"sha256"}), "a dataset", "build record", checksum=True)
    out = tmp_path / "set.v1.json"
    record = tmp_path / "set.v1.build.json"
    assert rule.record(out) == record and Output("--out", out, rule).written() == [out, record]
    out.write_text("[1, 2]")
    assert not rule.ours(out)  # no record beside it: the user's
    record.write_text("[]")
    assert not rule.ours(out) and not rule.is_record(record)  # a record must be an object
    record.write_text(json.dumps({"sha256": text_digest("[1, 2]")}))
    assert rule.ours(out) and rule.is_record(record)
    out.write_text("[1, 2, 3]")  # changed by hand: no longer ours
    assert not rule.ours(out)
    assert text_digest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # SHA-256 of UTF-8
    plain = RecordedFile(".report.json", frozenset({"report", "provenance"}), "a dataset", "report")
    (tmp_path / "d.report.json").write_text(json.dumps({"report": {}}))
    assert not plain.ours(tmp_path / "d.json")  # one key short
    (tmp_path / "d.report.json").write_text(json.dumps({"report": {}, "provenance": {}, "more": 1}))
    assert plain.ours(tmp_path / "d.json")


def test_a_folder_of_another_kind_is_refused_at_the_claim(tmp_path: Path) -> None:
    out = tmp_path / "scored"
    cp.produce("editing.score", generations=ASSETS / "editing_results", dataset=_datasets(), out=out)
    with (
        pytest.raises(ConfigError, match="holds a report from `editing score`"),
        Output("--out", out, ResultFolder("outdated score")).claim(),
    ):
        pass


def _datasets() -> Path:
    return ASSETS / "editing_results" / "models_editing" / "editing_datasets"


# --- one command, two entry points --------------------------------------------------------------


@pytest.mark.e2e
def test_contexts_from_python_are_the_commands_and_keep_the_answers_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    options: dict[str, Any] = {"models": BORDERS, **MULAN, "no_nli_filter": True, "cache": tmp_path / "c.sqlite"}
    made = cp.produce("conflicts.contexts", **options, out=tmp_path / "api" / "c.jsonl", progress=False)
    args = ["conflicts", "contexts", "-m", BORDERS, "--no-nli-filter", "--cache", str(tmp_path / "c.sqlite")]
    args += [f"--{k.replace('_', '-')}={v}" for k, v in MULAN.items()]
    ran = run_main(monkeypatch, capsys, *args, "--out", str(tmp_path / "cli" / "c.jsonl"))
    assert ran.code == 0, ran.err
    assert (tmp_path / "api" / "c.jsonl").read_bytes() == (tmp_path / "cli" / "c.jsonl").read_bytes()
    [france] = [row for row in made.rows if row.subject == "France"]
    query = next(json.loads(line) for line in MULAN["data"].read_text().splitlines() if "France shares" in line)
    aliases = {
        json.loads(line)["id"]: json.loads(line)["aliases"] for line in MULAN["aliases_file"].read_text().splitlines()
    }
    named = [a["name"] for a in query["answer"]]
    expected = list(dict.fromkeys(named + [al for a in query["answer"] for al in aliases.get(a["wikidata_id"], [])]))
    assert france.possible_answers == expected  # the query's order, then the aliases (not a set's order)
    provenance = json.loads((tmp_path / "api" / "c.provenance.json").read_text())
    assert provenance["extra"]["kept"] == len(made.rows) and provenance["models"][0]["spec"] == BORDERS


def test_label_from_python_replaces_its_own_dataset_and_refuses_a_users(tmp_path: Path) -> None:
    register_mock("labels", lambda prompt, params: '{"label": "A-Year", "stationary": "YES"}')
    try:
        options: dict[str, Any] = {"labeller": "mock:labels", "samples": 2, "verify_samples": 1, "candidates": 1}
        options |= {"context_rounds": 1, "cache": tmp_path / "c.sqlite", "progress": False}
        questions = ASSETS / "recency_questions.jsonl"
        first = cp.produce("recency.label", questions=questions, out="d.json", **options)
        assert first.report.questions == 3 and first.provenance.models[0].spec == "mock:labels"
        again = cp.produce("recency.label", questions=questions, out=tmp_path / "d.json", **options)
        assert again.items == first.items  # an earlier dataset of ours: replaced
        mine = tmp_path / "mine.json"
        mine.write_text("mine")
        with pytest.raises(ConfigError, match="exists and is not a dataset written by `chronoprobe recency label`"):
            cp.produce("recency.label", questions=questions, out=mine, **options)
        assert mine.read_text() == "mine"
    finally:
        unregister_mock("labels")


@pytest.mark.e2e
def test_editing_dataset_from_python_writes_the_build_record_the_command_writes(tmp_path: Path) -> None:
    audit = cp.run("outdated", models="mock:constant=Mario Draghi", limit=2, out="audit", cache="c.sqlite").path
    built = cp.produce("editing.dataset", from_=audit, select="not-up-to-date", out="sets/d.json")
    assert built.built is not None and built.path == Path("sets/d.json")
    record = json.loads((tmp_path / "sets" / "d.build.json").read_text())
    assert list(record) == ["sha256", "run", "model", "select", "notes", "skipped"]
    assert record["sha256"] == text_digest((tmp_path / "sets" / "d.json").read_text())
    read = cp.produce("editing.dataset", dataset=tmp_path / "sets" / "d.json")
    assert read.built is None and read.records == built.records
    with pytest.raises(ConfigError, match=r"^--out/--for-model: only with --from$"):
        cp.produce("editing.dataset", dataset=tmp_path / "sets" / "d.json", out="x.json")
