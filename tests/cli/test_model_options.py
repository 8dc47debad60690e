"""The model options are declared once (``ModelOptions``) and reach the backend by name."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest
import typer
import typer.main

from chronoprobe.cli.generate import model_options
from chronoprobe.cli.main import _register, app, main
from chronoprobe.cli.model_options import MODEL_OPTIONS, ModelOptions
from chronoprobe.models.registry import BackendOptions, option_default, option_fields

ALL = set(MODEL_OPTIONS)
OFFERED = {
    ("outdated", "run"): ALL - {"sampler"},
    ("conflicts", "run"): ALL,
    ("conflicts", "contexts"): ALL - {"engine", "sampler"},
    ("recency", "eval"): ALL,
    ("recency", "label"): ALL - {"engine"},
    ("recency", "gate"): ALL - {"engine"},
    ("editing", "run"): ALL - {"device_map", "quantize", "sampler"},
}
"""Which shared options each command that loads a model offers (unchanged from before the shared declaration)."""


def _command(path: tuple[str, ...]) -> Any:
    _register()
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


def _literal_values(annotation: Any) -> set[object]:
    if get_origin(annotation) is Literal:
        return set(get_args(annotation))
    return {value for member in get_args(annotation) for value in _literal_values(member)}


def test_the_allowed_values_are_the_registrys_own() -> None:
    from chronoprobe.cli.model_options import API_MODES, DEVICE_MAPS, DTYPES, QUANTIZE, SAMPLERS

    fields = option_fields()  # every registered backend's options, one type per name
    for field, shown in (
        ("dtype", DTYPES),
        ("api_mode", API_MODES),
        ("device_map", DEVICE_MAPS),
        ("quantize", QUANTIZE),
        ("sampler", SAMPLERS),
    ):
        assert set(shown) == _literal_values(fields[field]) != set(), field


def test_each_value_reaches_its_own_backend_option() -> None:
    chosen = ModelOptions(
        dtype="float16",
        device="cpu",
        batch_size="auto",
        device_map="auto",
        quantize="4bit",
        chat_template=False,
        api_mode="completions",
        concurrency=7,
        cache=Path("calls.sqlite"),
        engine="local",
        sampler="multinomial",
    )
    assert chosen.backend() == BackendOptions(
        dtype="float16",
        device="cpu",
        batch_size="auto",
        device_map="auto",
        quantize="4bit",
        chat_template=False,
        api_mode="completions",
        concurrency=7,
        sampler="multinomial",
    )
    assert ModelOptions(batch_size=3).backend().value("batch_size") == 3
    assert ModelOptions().backend() == BackendOptions()


def test_each_flag_defaults_to_the_one_default_its_backends_declare() -> None:
    for name in MODEL_OPTIONS:
        if name in option_fields():
            assert getattr(ModelOptions(), name) == option_default(name), name
    assert option_default("batch_size") is None  # each backend's own: hf's policy, llamacpp's 16, vllm's 256


@pytest.mark.parametrize(("given", "parsed"), [("3", 3), ("auto", "auto")])
def test_batch_size_is_typed_on_the_command_line(given: str, parsed: object) -> None:
    from chronoprobe.cli.model_options import parse_batch_size

    assert parse_batch_size(given) == parsed


@pytest.mark.parametrize("given", ["0", "-2", "lots", "2.5"])
def test_a_bad_batch_size_is_refused_by_the_flag(given: str) -> None:
    from chronoprobe.cli.model_options import parse_batch_size

    with pytest.raises(typer.BadParameter, match="is not a batch size"):
        parse_batch_size(given)


@pytest.mark.parametrize("path", sorted(OFFERED), ids=" ".join)
def test_every_command_offers_the_one_declaration(path: tuple[str, str]) -> None:
    declared = {o.field: o.parameter for o in model_options()}
    params = [p for p in _command(path).params if p.name in ALL]
    assert [p.name for p in params] == [name for name in MODEL_OPTIONS if name in OFFERED[path]]
    for param in params:
        typer_info = declared[param.name].annotation.__metadata__[0]
        assert param.help == typer_info.help and param.default == declared[param.name].default, param.name


@pytest.mark.e2e
def test_the_values_given_on_the_command_line_reach_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["outdated", "run", "-m", "mock:constant=Paris", "--limit", "1", "--batch-size", "3", "--no-chat-template"]
    monkeypatch.setattr(sys, "argv", ["chronoprobe", *args, "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)])
    try:
        main()
    except SystemExit as stopped:
        assert stopped.code in (0, None), capsys.readouterr().err
    [model] = json.loads((out / "run.json").read_text(encoding="utf-8"))["provenance"]["models"]
    assert (model["batch_size"], model["chat_template"]) == (3, False)
