"""The typed rows and per-method records an editing run produces."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from chronoprobe.metrics.dyknow import Verdict

UNEDITED = "unedited"
"""The ``method`` of the rows asked of the model before any edit."""

Role = Literal["edit", "paraphrase", "locality", "fluency"]


class EditingRow(BaseModel):
    """One answer of a (possibly edited) model to one question."""

    model: str
    method: str
    """An editing method, or ``unedited`` for the model as it was."""
    fraction: float = 1.0
    """Share of the facts edited together (below 1 only in the scaling runs)."""
    role: Role
    """``edit`` (the edit prompt), ``paraphrase``, ``locality`` (a fact that was not edited) or ``fluency``."""
    fact_id: str
    group: str
    question_kind: str | None = None
    question: str
    rendered_prompt: str
    response: str
    verdict: Verdict | None = None
    """None for fluency generations, which are not judged."""
    before: Verdict | None = None
    """The unedited model's verdict on the same question."""
    routed: bool | None = None
    """SERAC: whether the scope classifier sent the question to the edit memory."""
    similarity: float | None = None
    """SERAC: the scope classifier's best similarity."""


class MethodRun(BaseModel):
    """How one method was applied to one set of facts, and what it cost."""

    model: str
    method: str
    fraction: float = 1.0
    mode: str
    facts: int
    """Facts edited (for RAG: facts with a passage)."""
    edit_seconds: list[float] = []
    """Seconds per edit (ROME), per batch (MEMIT, SERAC) or per prompt construction (in-context methods)."""
    seconds_per_edit: float | None = None
    reused: bool = False
    """True when every answer came from the cache, so the weights were not edited again (times are the first run's)."""
    hparams: dict[str, object] | None = None
    hparams_source: str | None = None
    stats: dict[str, object] | None = None
    skipped: dict[str, str] = {}
    """Fact id -> why the method could not be applied to it (e.g. no passage)."""
    notes: list[str] = []
