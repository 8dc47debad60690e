"""A lens's config parses what its command line parses: ``chronoprobe.run`` takes the same strings, and the
generated command builds the same config from them (comma lists, ``all``, fractions, NAME=DATE, a file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chronoprobe.cli.generate import check_arguments, config_options
from chronoprobe.contract.lens import Lens
from chronoprobe.contract.lens_run import lens_tool
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.conflicts.lens import ConflictsConfig, ConflictsLens
from chronoprobe.lenses.editing.config import EditingConfig
from chronoprobe.lenses.editing.lens import EditingLens
from chronoprobe.lenses.outdated.audit import AuditConfig
from chronoprobe.lenses.outdated.lens import OutdatedLens
from chronoprobe.lenses.recency.lens import RecencyLens, RecencyRunConfig

EDIT_SET = Path("editing_dataset.json")


def _from_command(lens: type[Lens[Any]], models: list[str] | None = None, **given: Any) -> Any:
    """The lens's config the generated command builds from these option values (named as its parameters)."""
    tool = lens_tool(lens)
    offered = config_options(tool)
    values = {o.parameter.name: None for o in offered} | given | {"models": models}
    check_arguments(tool, offered, values)
    return tool.from_options(**values).lens.config


def test_comma_lists_all_and_fractions_read_alike() -> None:
    from_python = EditingConfig(dataset=EDIT_SET, method="ike,rag-gold", scaling="0.5,0.25")
    from_command = _from_command(EditingLens, dataset=EDIT_SET, method=["ike,rag-gold"], scaling=["0.5", "0.25"])
    assert from_python == from_command
    assert (from_python.method, from_python.scaling) == (("ike", "rag-gold"), (0.25, 0.5))
    assert RecencyRunConfig(strategy="all").strategy == ("zero-shot", "few-shot", "cot")
    assert _from_command(RecencyLens, strategy=["cot", "few-shot,cot"]).strategy == ("cot", "few-shot")


def test_the_audit_reads_cutoffs_and_the_instruction_file(tmp_path: Path) -> None:
    instruction = tmp_path / "ask.txt"
    instruction.write_text("Say only a name: {sentence}\n", encoding="utf-8")
    config = AuditConfig(models=("q=mock:echo",), cutoff=["2024-01"], instruction_file=instruction, as_of="2023-06-01")
    assert (config.cutoff, config.instruction, str(config.as_of)) == (
        {"q": "2024-01"},
        "Say only a name: {sentence}",
        "2023-06-01",
    )
    assert "instruction_file" not in config.model_dump()  # the text is recorded, not the way it came
    assert config == _from_command(
        OutdatedLens, ["q=mock:echo"], cutoff=["2024-01"], instruction_file=instruction, as_of="2023-06-01"
    )


def test_the_conflicts_options_set_each_methodologys_settings() -> None:
    config = ConflictsConfig(dataset="mulan", samples=3, temperature=0.2, seed=5, fidelity="original")
    assert config.methodology == "mulan"
    assert (config.persuasion.n_samples, config.persuasion.temperature, config.persuasion.seed) == (3, 0.2, 5)
    assert (config.completion.temperature, config.completion.seed, config.completion.fidelity) == (0.2, 5, "original")
    untouched = ConflictsConfig(dataset="dynamicqa", persuasion={"topk_approximation": True})  # check's sizes
    assert untouched.persuasion.topk_approximation and untouched.persuasion.seed == 10
    assert "samples" not in untouched.model_dump()  # the sub-configs are what the run log records
    assert config == _from_command(
        ConflictsLens, dataset="mulan", samples=3, temperature=0.2, seed=5, fidelity="original"
    )


@pytest.mark.parametrize(
    ("lens", "given", "where", "problem"),
    [
        (RecencyLens, {"context_mode": "sometimes"}, "--context-mode", "'sometimes' is not one of with, without, both"),
        (RecencyLens, {"strategy": ["guess"]}, "--strategy", "'guess' is not one of zero-shot, few-shot, cot, all"),
        (EditingLens, {"dataset": EDIT_SET, "scaling": ["half"]}, "--scaling", "'half' is not a number"),
        (EditingLens, {"dataset": EDIT_SET, "method": ["finetune"]}, "--method", "unknown method(s) finetune"),
        (OutdatedLens, {"as_of": "2999-01-01"}, "--as-of", "is in the future"),
        (OutdatedLens, {"endpoint": "ftp://x"}, "--endpoint", "is not an http(s) URL"),
        (ConflictsLens, {}, "DATASET", "missing; give one of dynamicqa, mulan"),
        (ConflictsLens, {"dataset": "trivia"}, "DATASET", "'trivia' is not one of dynamicqa, mulan"),
    ],
)
def test_a_refused_value_names_the_option_the_command_takes(
    lens: type[Lens[Any]], given: dict[str, Any], where: str, problem: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        _from_command(lens, **given)
    assert refused.value.where == where and problem in refused.value.problem
