"""A plug-in lens gets ``chronoprobe <lens> run`` from its config, with the shared model options.

The toy lens lives only here: registered by adding it to ``LENSES``, run on the mock backend
through the real ``main()``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from chronoprobe.cache import CachedModel
from chronoprobe.cli.generate import DeclarationError, config_options
from chronoprobe.contract.lens import LENSES, Lens, ProgressFactory, RunRecipe, Summary
from chronoprobe.contract.lens_run import lens_tool
from chronoprobe.errors import ConfigError
from chronoprobe.models.base import DecodingParams, Prompt
from chronoprobe.provenance import Provenance
from chronoprobe.records.fields import INTERNAL, spelling
from cli_driver import run_main

pytestmark = pytest.mark.e2e


class ToyConfig(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    questions: tuple[str, ...] = ("What is the capital of France?", "Where is the Louvre?")
    """A question to ask."""
    expected: str
    """The answer counted as right."""
    style: Literal["plain", "polite"] = "plain"
    """How each question is put."""
    shout: bool = False
    """Ask in capitals."""
    limit: int | None = None
    """Only the first N questions."""
    max_new_tokens: int = 8
    """Tokens per answer."""
    notes: Annotated[dict[str, str], INTERNAL] = {}
    """Not offered: the CLI has no option type for a mapping (so the config marks it internal)."""


class ToyRow(BaseModel):
    model: str
    question: str
    answer: str
    right: bool


class ToyLens(Lens[ToyRow]):
    """Does the model say the expected answer? (a toy lens for the tests)"""

    name = "toy"
    kind = "toy run"
    row_type = ToyRow
    config_type = ToyConfig

    def load(self) -> None:
        config: ToyConfig = self.config  # type: ignore[assignment]  # Lens keeps the config as a BaseModel
        asked = [q.upper() if config.shout else q for q in config.questions[: config.limit]]
        self.questions = [f"Please tell me: {q}" if config.style == "polite" else q for q in asked]
        if not self.questions:
            raise ConfigError("--questions", "no question to ask")
        self.loaded = True

    def run(self, model: CachedModel, progress: ProgressFactory | None = None) -> list[ToyRow]:
        config: ToyConfig = self.config  # type: ignore[assignment]  # as in load
        tick = progress(model.info.label, len(self.questions)) if progress else None
        answers = model.generate(
            [Prompt(text=q) for q in self.questions], DecodingParams(max_new_tokens=config.max_new_tokens)
        )
        if tick:
            tick(len(answers))
        return [
            ToyRow(model=model.info.spec, question=q, answer=a.text, right=config.expected in a.text)
            for q, a in zip(self.questions, answers, strict=True)
        ]

    def summarise(self, models: Sequence[CachedModel], rows: Sequence[ToyRow]) -> Summary:
        right = {m.info.spec: sum(r.right for r in rows if r.model == m.info.spec) for m in models}
        share = {spec: {"right": count / len(self.questions)} for spec, count in right.items()}
        return Summary(lens=self.name, models=list(share), headline=share)

    def recipe(self) -> RunRecipe:
        return RunRecipe(decoding={"max_new_tokens": self.config.max_new_tokens}, seeds=[0])  # type: ignore[attr-defined]

    def report(self, folder: Path, rows: Sequence[ToyRow], summary: Summary, provenance: Provenance) -> None:
        lines = [f"- {r.model}: {r.question} -> {r.answer} ({'right' if r.right else 'wrong'})" for r in rows]
        (folder / "report.md").write_text("# Toy run\n\n" + "\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(LENSES, "toy", f"{__name__}:ToyLens")


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``chronoprobe ARGS`` in this process: exit code, stdout and stderr."""
    ran = run_main(monkeypatch, capsys, *args, columns=250)
    return ran.code, ran.out, ran.err


def test_a_registered_lens_runs_from_its_generated_command(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, _, err = invoke(
        monkeypatch,
        capsys,
        *("toy", "run", "-m", "mock:constant=Paris", "--expected", "Paris", "--style", "polite", "--shout"),
        *("--questions", "Capital of France?", "--questions", "Capital of Spain?", "--max-new-tokens", "4"),
        *("--batch-size", "1", "--cache", str(tmp_path / "calls.sqlite"), "--out", str(out)),
    )
    assert code == 0, err
    log = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert log["lens"] == "toy" and log["kind"] == "toy run"
    assert log["config"]["questions"] == ["Capital of France?", "Capital of Spain?"]
    assert (log["config"]["style"], log["config"]["shout"], log["config"]["max_new_tokens"]) == ("polite", True, 4)
    assert log["summary"]["headline"] == {"mock:constant=Paris": {"right": 1.0}}
    rows = [json.loads(line) for line in (out / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["question"] for r in rows] == ["Please tell me: CAPITAL OF FRANCE?", "Please tell me: CAPITAL OF SPAIN?"]
    assert "Please tell me: CAPITAL OF SPAIN? -> Paris (right)" in (out / "report.md").read_text(encoding="utf-8")
    assert "mock:constant=Paris: right 1" in err and f"report: {out / 'report.md'}" in err


def test_its_help_lists_the_config_fields_and_the_shared_model_options(
    toy: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, help_text, _ = invoke(monkeypatch, capsys, "toy", "run", "--help")
    text = " ".join(help_text.replace("│", " ").split())
    assert code == 0
    for shown in (
        "--questions <str> A question to ask. (repeatable)",
        "* --expected <str> The answer counted as right. [required]",
        "--style <str> How each question is put. One of: plain, polite. [default: plain]",
        "--shout --no-shout Ask in capitals. [default: no-shout]",
        "--limit <int> Only the first N questions.",
        "--out <path> Where to write the report folder (default: a new results/toy/<model>-<timestamp>;",
        "--dtype <str> Weights dtype: auto, float32, bfloat16, float16. [default: auto]",
        "--engine <str> Where",
        "--sampler <str> hf: how",
    ):
        assert shown in text, shown
    assert "--notes" not in text
    _, root, _ = invoke(monkeypatch, capsys, "--help")
    assert "toy" in root and "Does the model say the expected answer?" in root


def test_bad_values_are_one_line_before_any_model_loads(
    toy: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("toy", "run", "-m", "mock:constant=Paris", "--cache", str(tmp_path / "calls.sqlite"))
    cases = {
        ("--expected", "Paris", "--style", "rude"): "'rude' is not one of plain, polite",
        ("--style", "plain"): "Missing option '--expected'",
        ("--expected", "Paris", "--limit", "0", "--questions", "x"): "--questions: no question to ask",
        ("--expected", "Paris", "--dtype", "float8"): "'float8' is not one of auto, float32, bfloat16, float16",
    }
    for args, message in cases.items():
        out = tmp_path / "never"
        code, _, err = invoke(monkeypatch, capsys, *base, *args, "--out", str(out))
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, (args, err)
        assert not out.exists()


def test_the_generated_command_goes_when_the_lens_does(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with monkeypatch.context() as registered:
        registered.setitem(LENSES, "toy", f"{__name__}:ToyLens")
        assert "toy" in invoke(monkeypatch, capsys, "--help")[1]
    code, _, err = invoke(monkeypatch, capsys, "toy", "run")
    assert code == 2 and "No such command 'toy'" in err


class _Weights(ToyConfig):
    weights: dict[str, float] = {}
    """A mapping of numbers: no option can take it."""


class _WeightsInternal(_Weights):
    weights: Annotated[dict[str, float], INTERNAL] = {}
    """Marked internal: not offered."""


class _Device(ToyConfig):
    device: str = "cpu"
    """Named like the shared --device."""


def test_a_field_its_command_cannot_offer_is_refused_when_the_command_is_made() -> None:
    """No field is left out silently: one the generator cannot offer, and the declaration does not keep internal,
    is an error naming it, when the command is made (for a built-in lens: when the CLI starts)."""

    class Weighing(ToyLens):
        config_type = _Weights

    class OnADevice(ToyLens):
        config_type = _Device

    with pytest.raises(DeclarationError, match=r"toy\.run: config field 'weights' \(dict\[str, float\]\) has a type"):
        config_options(lens_tool(Weighing))
    with pytest.raises(DeclarationError, match=r"config field 'device' is named like the shared model option --device"):
        config_options(lens_tool(OnADevice))

    class Internal(ToyLens):
        config_type = _WeightsInternal

    assert "weights" not in {o.field for o in config_options(lens_tool(Internal))}  # declared internal: not offered


class _Legacy(ToyConfig):
    weights: dict[str, float] = {}
    """A mapping of numbers: no option can take it."""
    loud: bool = False
    """Shout."""


def test_a_plug_in_spelling_its_command_as_0_2_0_did_still_works_with_a_warning() -> None:
    """0.2.0's Lens attributes (``internal_fields``, ``input_options``, ``command_help`` ...) are read into the
    config's spelling until 0.4.0, with a DeprecationWarning naming them."""
    with pytest.warns(DeprecationWarning, match=r"Older: the Lens attributes input_options, internal_fields, "):

        class Older(ToyLens):
            config_type = _Legacy
            input_options = {"loud": "--loud"}  # noqa: RUF012  # as 0.2.0 declared it
            internal_fields = frozenset({"weights"})
            command_help = "An older toy."

    tool = lens_tool(Older)
    offered = {o.field: o for o in config_options(tool)}
    assert "weights" not in offered and "notes" not in offered  # the old attribute, and the config's own marker
    assert offered["loud"].parameter.annotation.__metadata__[0].default == "--loud"  # a switch: no --no-loud
    assert spelling(tool.config_type).command.help == "An older toy."
