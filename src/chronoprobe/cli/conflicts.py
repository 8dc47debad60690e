"""``chronoprobe conflicts``: does context override the model's memory? (DynamicQA + MuLan)

Both commands are generated: ``run`` from the lens's config (:mod:`chronoprobe.cli.lens_command`),
``contexts`` from its tool's (:class:`~chronoprobe.conflicts.tools.ContextsTool`).
"""

from __future__ import annotations

from chronoprobe.cli.lens_command import lens_app
from chronoprobe.cli.tool_command import tool_command
from chronoprobe.conflicts.lens import ConflictsLens
from chronoprobe.conflicts.tools import ContextsTool

RENAMED = {"--aliases": "--aliases-file", "--limit": "--balanced-limit", "--prompt-file": "--wording"}
"""Options renamed for one meaning per flag, their old spellings kept for a release."""

app = lens_app(
    ConflictsLens,
    help_text="Does context override the model's memory? DynamicQA and MuLan, each through either methodology.",
    deprecated=RENAMED,
)
app.command("contexts")(tool_command(ContextsTool, {**RENAMED, "--seed": "--sample-seed"}))
