"""``chronoprobe check``'s options, declared once: the command, ``chronoprobe.check``, ``chronoprobe.produce("check")``
and what the check tells each lens (:class:`~chronoprobe.contract.lens.CheckContext`) all read this config."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.contract.lens import Budget
from chronoprobe.knowledge.snapshot import SnapshotRef
from chronoprobe.models.registry import ModelList, default_models
from chronoprobe.records.fields import OUTPUT, SWITCH, TEXT_PATH
from chronoprobe.values import HttpUrl

__all__ = ["CheckToolConfig"]


class CheckToolConfig(BaseModel):
    """``chronoprobe check``: every option, as the command takes it (the shared model options beside them)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    models: ModelList = Field(default_factory=default_models)
    """The model specs to check (default: the embedded SmolLM2)."""
    budget: Budget = "quick"
    """quick (SmolLM2 on 2 CPU cores: 4 min at load 2, 7 min at load 5), standard (44 min at load 5), full (the
    papers' runs; hours). chronoprobe docs check gives each one's sizes and times."""
    out: Path | None = None
    """Where to write the check folder (default: a new results/check/<model>-<timestamp>). The same folder again
    resumes: lenses that finished with the same settings are kept."""
    lens: tuple[str, ...] = ()
    """Only this lens (repeatable; the lenses it needs run too). Default: every lens."""
    live: Annotated[bool, SWITCH] = False
    """Judge against today's answers (queries --endpoint; saves a snapshot)."""
    snapshot: Annotated[SnapshotRef | None, TEXT_PATH] = None
    """Snapshot name or file to judge against (default: shipped 2023-12-18)."""
    endpoint: HttpUrl | None = None
    """SPARQL endpoint for --live (default: the Wikidata Query Service)."""
    deployed_at: str | None = None
    """Forecast staleness for a model shipped on this date (YYYY-MM or YYYY-MM-DD): the share of what it knows
    that is stale then, 6 and 12 months later."""
    require: tuple[str, ...] = ()
    """A threshold, 'LENS.METRIC[.CLASS] OP VALUE' with the metric as `chronoprobe results` names it (class all
    unless named), e.g. 'outdated.soft_constraint_pct.up-to-date >= 40' (repeatable). It fails only when the
    whole 95% interval misses it (--strict: the point value). Exit 1 if one fails."""
    strict: Annotated[bool, SWITCH] = False
    """Compare thresholds with point values."""
    junit: Annotated[Path | None, OUTPUT] = None
    """Write a JUnit XML file: one test case per threshold and per lens."""
    baseline: Path | None = None
    """An earlier check folder to compare this one with, paired on the same items (the same model or another):
    the paragraph says what changed, and --require 'LENS.METRIC[.CLASS].delta OP VALUE' gates the change."""
    precision: float | None = None
    """Size each lens for a 95% interval of this half-width in points on its headline rate, from the items it has
    (capped at all of them; the plan line says so)."""
    allow_different_items: Annotated[bool, SWITCH] = False
    """Compare with a --baseline asked other items (another budget, snapshot or sample), on the items they share
    (refused otherwise)."""
