"""``outdated score`` whole: a DyKnow answers folder (the outdated lens's tool), or a harness log.

An inspect or lm-eval log is judged as ``outdated run`` judges its own answers and written as the
run folder ``outdated run`` writes (:mod:`.harness_logs`, :mod:`.run_folder`); anything else goes to
:class:`chronoprobe.lenses.outdated.tools.ScoreTool`. ``chronoprobe.produce("outdated.score", ...)`` is this tool.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from chronoprobe.contract.tool import Tool, ToolContext
from chronoprobe.errors import ConfigError
from chronoprobe.integrations.harness_logs import is_harness_log, judge_harness_log
from chronoprobe.integrations.run_folder import HarnessRun, write_outdated_run
from chronoprobe.lenses.outdated.knowledge_report import knowledge_console_lines
from chronoprobe.lenses.outdated.lens import VERDICT_ORDER, OutdatedLens, share_text
from chronoprobe.lenses.outdated.metric_records import read_run_detail
from chronoprobe.lenses.outdated.score import ScoreSummary
from chronoprobe.lenses.outdated.tools import ScoreTool, ScoreToolConfig
from chronoprobe.records.publish import Output, ResultFolder

__all__ = ["HarnessScoreTool", "harness_lines"]


class HarnessScoreTool(Tool[ScoreSummary | HarnessRun]):
    """Judge existing generations (a DyKnow answers folder, an inspect or lm-eval log); date the model's knowledge."""

    name = ScoreTool.name
    command = ScoreTool.command
    config_type = ScoreToolConfig
    config: ScoreToolConfig

    def __init__(self, config: BaseModel) -> None:
        super().__init__(config)
        self.folder = ScoreTool(config)
        """What judges a DyKnow answers folder."""
        self.harness = is_harness_log(self.config.generations)

    def check_inputs(self) -> None:
        if not self.harness:
            self.folder.check_inputs()
        elif self.config.gold is not None:
            raise ConfigError("--gold", "judges DyKnow answer folders; for a harness log pass --snapshot")

    def output(self) -> Output:
        if not self.harness:
            return self.folder.output()
        return Output("--out", self.config.out, ResultFolder(OutdatedLens.kind))

    def load(self) -> None:
        if not self.harness:
            self.folder.load()

    def run(self, context: ToolContext) -> ScoreSummary | HarnessRun:
        if not self.harness:
            return self.folder.run(context)
        config = self.config
        return judge_harness_log(
            config.generations,
            config.out,
            snapshot=config.snapshot,
            use_aliases=config.aliases,
            as_of=config.as_of,
            cutoffs=config.cutoff,
            deployed_at=config.deployed_at,
        )

    def write(self, folder: Path, result: ScoreSummary | HarnessRun) -> None:

        if isinstance(result, HarnessRun):
            write_outdated_run(folder, result)
        else:
            self.folder.write(folder, result)

    def present(self, result: ScoreSummary | HarnessRun) -> list[str]:
        if isinstance(result, HarnessRun):
            return harness_lines(result)
        return self.folder.present(result)


def harness_lines(run: HarnessRun) -> list[str]:
    """The console's lines for a judged harness log: soft constraint per model (its metric records), the knowledge date."""

    harness = run.provenance.extra["harness"]
    lines = []
    for spec, numbers in read_run_detail(run.summary_layout)["models"].items():
        found = {m.name: m for m in run.summary.metrics if m.model == spec and m.group == "all"}
        shares = "  ".join(share_text(v, found.get(f"soft_constraint_pct.{v}")) for v in VERDICT_ORDER)
        facts = numbers["per_category"]["all"]["facts"]
        lines.append(f"[bold]{spec}[/] ({harness}): {shares} (soft constraint, 95% Wilson intervals; {facts} facts)")
        lines += knowledge_console_lines(spec, numbers.get("knowledge_date"))
    return [*lines, f"report: {run.path / 'report.md'} (a run folder: chronoprobe results / card read it)"]
