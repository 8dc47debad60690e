"""``chronoprobe outdated``: is the model outdated? (DyKnow)

Both commands are generated: ``run`` from the lens's config (:mod:`chronoprobe.cli.lens_command`),
``score`` (generations made elsewhere, judged again: no model calls) from its tool's
(:class:`~chronoprobe.integrations.harness_scoring.HarnessScoreTool`).
"""

from __future__ import annotations

from chronoprobe.cli.lens_command import lens_app
from chronoprobe.cli.tool_command import tool_command
from chronoprobe.integrations.harness_scoring import HarnessScoreTool
from chronoprobe.outdated.lens import OutdatedLens

app = lens_app(
    OutdatedLens, help_text="Is the model outdated? Ask time-sensitive facts, judge answers against Wikidata."
)
app.command("score")(tool_command(HarnessScoreTool))
