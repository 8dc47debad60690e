"""``chronoprobe outdated``: is the model outdated? (DyKnow)

``outdated run`` is generated from the lens's config (:mod:`chronoprobe.cli.lens_command`);
``outdated score`` re-scores generations that already exist.
"""

from __future__ import annotations

from chronoprobe.cli.lens_command import lens_app
from chronoprobe.cli.outdated_score import score
from chronoprobe.outdated.lens import OutdatedLens

app = lens_app(
    OutdatedLens, help_text="Is the model outdated? Ask time-sensitive facts, judge answers against Wikidata."
)
app.command("score")(score)  # the re-scoring command lives in its own module
