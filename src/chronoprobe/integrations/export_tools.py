"""``chronoprobe export``: chronoprobe's questions as task folders for other harnesses (docs/harnesses.md), as tools.

Each is declared as a lens's tools are (:mod:`chronoprobe.contract.tool`): a config whose field docstrings are
the help text, the command generated from it and ``chronoprobe.produce("export.lm-eval", ...)`` taking
the same values. The task folder itself is :mod:`chronoprobe.integrations.lm_eval_export`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.contract.tool import Tool, ToolContext
from chronoprobe.integrations.lm_eval_export import EXPORT_KIND, TASK_NAME, task_documents, write_task
from chronoprobe.knowledge.snapshot import SnapshotRef
from chronoprobe.records.fields import TEXT_PATH
from chronoprobe.records.publish import Output, ResultFolder
from chronoprobe.values import PastDate

__all__ = ["LmEvalExport", "LmEvalExportTool", "LmEvalExportToolConfig"]


class LmEvalExportToolConfig(BaseModel):
    """``chronoprobe export lm-eval``: every option, as the command takes it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    out: Path
    """Where to write the task folder (YAML, JSONL dataset, utils.py)."""
    snapshot: Annotated[SnapshotRef | None, TEXT_PATH] = None
    """Snapshot name or file to judge against (default: shipped 2023-12-18)."""
    facts: Path | None = None
    """Fact catalogue JSON (default: the shipped one)."""
    limit: int | None = Field(default=None, ge=1)
    """Only the first N facts."""
    aliases: bool = False
    """Also match Wikidata aliases (off reproduces the paper)."""
    as_of: PastDate | None = None
    """Judge against what was current on this date (YYYY-MM-DD)."""


@dataclass(frozen=True)
class LmEvalExport:
    """What ``export lm-eval`` wrote: the task folder and its documents (one per paraphrase)."""

    path: Path
    documents: list[dict[str, Any]]


class LmEvalExportTool(Tool[LmEvalExport]):
    """The outdated question as an lm-evaluation-harness task (chronoprobe_outdated)."""

    name = "export.lm-eval"
    command = "export lm-eval"
    config_type = LmEvalExportToolConfig
    config: LmEvalExportToolConfig

    def output(self) -> Output:

        return Output("--out", self.config.out, ResultFolder(EXPORT_KIND))

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self._documents: list[dict[str, Any]] = []

    def load(self) -> None:

        config = self.config
        self._documents = task_documents(
            snapshot=config.snapshot,
            facts=config.facts,
            limit=config.limit,
            use_aliases=config.aliases,
            as_of=config.as_of,
        )

    def run(self, context: ToolContext) -> LmEvalExport:
        return LmEvalExport(path=self.config.out, documents=self._documents)

    def write(self, folder: Path, result: LmEvalExport) -> None:

        write_task(folder, result.documents, out=self.config.out, as_of=self.config.as_of)

    def present(self, result: LmEvalExport) -> list[str]:

        out = result.path
        return [
            f"{len(result.documents)} prompts written to {out}; run them with",
            f"  lm_eval --model hf --model_args pretrained=<model folder> --tasks {TASK_NAME} --include_path {out} "
            "--apply_chat_template --log_samples --output_path <folder>",
        ]
