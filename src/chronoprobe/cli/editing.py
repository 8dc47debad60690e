"""``chronoprobe editing``: can the outdated facts be fixed? (DyKnow's editing and RAG experiments)

Every command is generated: ``run`` from the lens's config (:mod:`chronoprobe.cli.lens_command`);
``dataset`` (build or read DyKnow's ``editing_dataset.json``) and ``score`` (re-score generations in
DyKnow's editing result layout) from their tools' (:mod:`chronoprobe.editing.tools`).
"""

from __future__ import annotations

from chronoprobe.cli.lens_command import lens_app
from chronoprobe.cli.tool_command import tool_command
from chronoprobe.editing.lens import EditingLens
from chronoprobe.editing.tools import DatasetTool, ScoreTool

RENAMED = {"--seed": "--template-seed", "--limit": "--balanced-limit", "--prompts": "--wording"}
"""Options renamed for one meaning per flag, their old spellings kept for a release."""

app = lens_app(
    EditingLens,
    help_text="Can it be fixed? Edit the facts an audit found wrong, build DyKnow's editing dataset, score edited models.",
    deprecated=RENAMED,
)

app.command("dataset")(tool_command(DatasetTool, {"--model": "--for-model"}))
app.command("score")(tool_command(ScoreTool, {"--model": "--only-model"}))
