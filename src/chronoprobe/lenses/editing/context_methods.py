"""The methods that edit prompts, not weights (SERAC, IKE, RAG): the questions each one asks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chronoprobe.cache import CachedModel
from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.knowledge.types import Fact
from chronoprobe.lenses.editing.config import EditingConfig
from chronoprobe.lenses.editing.ike import IkeBuilder, IkeVariant
from chronoprobe.lenses.editing.rag import RagBuilder, RagMethod
from chronoprobe.lenses.editing.rows import Role
from chronoprobe.lenses.editing.serac import Serac, SeracConfig
from chronoprobe.models.base import Prompt


@dataclass
class Asked:
    """One question to put to a model, and how to record the answer."""

    record_or_fact: EditRecord | Fact
    role: Role
    kind: str | None
    question: str
    prompt: Prompt
    routed: bool | None = None
    similarity: float | None = None
    template_index: int | None = None
    answered_by: CachedModel | None = None
    """Another model that answers this question (SERAC*'s counterfactual model); None: the model being edited."""


class Editor(Protocol):
    """What the methods here need of the model being edited (``editing.run.ModelEditor``)."""

    config: EditingConfig
    records: list[EditRecord]
    tools: Any

    def scored(self, records: Sequence[EditRecord]) -> list[Asked]: ...

    def fluency(
        self, records: Sequence[EditRecord], prompt_of: Callable[[EditRecord], Prompt] | None = None
    ) -> list[Asked]: ...

    def locality(self, edited: Sequence[EditRecord]) -> list[Asked]: ...


@dataclass
class Built:
    asked: list[Asked]
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)


def build(editor: Editor, method: str, subset: list[EditRecord]) -> Built:
    if method == "serac":
        return _serac(editor, subset)
    if method in ("ike", "ike-null"):
        return _ike(editor, method, subset)
    return _rag(editor, method, subset)


def _serac(editor: Editor, subset: list[EditRecord]) -> Built:

    tools = editor.tools
    serac = Serac(
        subset,
        SeracConfig(
            scope=editor.config.serac_scope,
            threshold=editor.config.serac_threshold,
            counterfactual=str(editor.config.serac_counterfactual),
        ),
        embedder=tools.scope_embedder or tools.embedder,  # a scope naming its own embedder uses that one
        prompts=tools.prompts,
        instruction=editor.config.instruction,
    )
    plain = editor.scored(subset) + editor.fluency(subset)
    if editor.config.locality and len(subset) == len(editor.records):
        plain += editor.locality(subset)
    routed = serac.build([a.question for a in plain])
    asked = [
        Asked(
            a.record_or_fact,
            a.role,
            a.kind,
            a.question,
            built.prompt,
            routed=built.route.hit,
            similarity=round(built.route.similarity, 4),
            template_index=a.template_index,
            answered_by=tools.counterfactual if built.model is not None else None,
        )
        for a, built in zip(plain, routed, strict=True)
    ]
    return Built(asked=asked, settings=serac.describe(), notes=[serac.config.label])


def _ike(editor: Editor, method: str, subset: list[EditRecord]) -> Built:

    variant: IkeVariant = "ike-null" if method == "ike-null" else "ike"
    builder = IkeBuilder(variant, subset, embedder=editor.tools.embedder, prompts=editor.tools.prompts)
    asked: list[Asked] = []
    own = 0
    for a in editor.scored(subset) + editor.fluency(subset):
        assert isinstance(a.record_or_fact, EditRecord)
        built = builder.build(a.record_or_fact, a.question)
        own += built.own_demos > 0
        asked.append(Asked(a.record_or_fact, a.role, a.kind, a.question, built.prompt))
    notes = []
    if method == "ike-null":
        notes.append(
            f"{own} of {len(asked)} prompts hold a demonstration of the asked fact with its new target "
            "(the pool is built from every edited fact, as in DyKnow's Table 3 run)"
        )
    return Built(asked=asked, settings=builder.describe(), notes=notes)


def _rag(editor: Editor, method: str, subset: list[EditRecord]) -> Built:

    rag_methods: dict[str, RagMethod] = {
        "rag-gold": "rag-gold",
        "rag-retrieved": "rag-retrieved",
        "rag-noisy": "rag-noisy",
    }
    builder = RagBuilder(rag_methods[method], subset, prompts=editor.tools.prompts, retriever=editor.tools.retriever)
    asked: list[Asked] = []
    skipped: dict[str, str] = {}
    for a in editor.scored(subset) + editor.fluency(subset):
        assert isinstance(a.record_or_fact, EditRecord)
        built = builder.build(a.record_or_fact, a.question)
        if built is None:
            skipped[a.record_or_fact.fact_id] = "no gold passage"
            continue
        asked.append(Asked(a.record_or_fact, a.role, a.kind, a.question, built.prompt))
    notes = [f"{len(skipped)} fact(s) without a gold passage: not asked, outside the rates"] if skipped else []
    return Built(asked=asked, skipped=skipped, settings=builder.describe(), notes=notes)
