"""The outdated audit: ask every fact's paraphrases, classify each answer.

config → prompts → cached model calls → metrics → results. Report writing is
in :mod:`chronoprobe.lenses.outdated.report`.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chronoprobe.cache import CachedModel
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import read_text
from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.grc import load_grc
from chronoprobe.knowledge.snapshot import SnapshotRef, load_snapshot, save_snapshot, unused_name
from chronoprobe.knowledge.types import Fact, FactAnswers, Snapshot
from chronoprobe.knowledge.wikidata import WikidataClient, check_coverage
from chronoprobe.lenses.outdated.cutoffs import cutoff_names, parse_cutoffs
from chronoprobe.lenses.outdated.prompts import CHAT_INSTRUCTION, fact_prompts
from chronoprobe.metrics.dyknow import Verdict, classify_response
from chronoprobe.metrics.knowledge_date import parse_month
from chronoprobe.models.base import DecodingParams, NewTokens
from chronoprobe.models.registry import ModelList, default_models
from chronoprobe.records.fields import INTERNAL, SWITCH, TEXT_PATH, Command
from chronoprobe.renames import accept_renamed
from chronoprobe.values import HttpUrl, KeyValues, PastDate

WDQS_ENDPOINT = "https://query.wikidata.org/sparql"


class AuditConfig(BaseModel):
    """Everything that determines an audit's results (each field's docstring is its option's help)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)
    renamed_fields: ClassVar[dict[str, str]] = {"facts_file": "facts", "use_aliases": "aliases"}
    """Keywords 0.1.0 released, accepted until 0.4.0 (:mod:`chronoprobe.renames`)."""
    cli: ClassVar[Command] = Command(
        help="Is the model outdated? Ask time-sensitive facts, judge answers against Wikidata.",
        omit_model_options=("sampler",),  # every answer is decoded greedily
    )

    models: ModelList = Field(default_factory=default_models)
    """The ``--model`` values, parsed (recorded as their redacted text)."""
    snapshot: Annotated[SnapshotRef | None, TEXT_PATH] = None
    """Snapshot name or file to judge against (default: shipped 2023-12-18)."""
    live: Annotated[bool, SWITCH] = False
    """Judge against today's answers: query the Wikidata Query Service now (and save them as a snapshot)."""
    endpoint: HttpUrl = WDQS_ENDPOINT
    """SPARQL endpoint for --live."""
    facts: Path | None = None
    """Fact catalogue JSON, or an original grc_generated.json (its own prompts and answers)."""
    as_of: PastDate | None = None
    """Also judge answers against what was current on this date (YYYY-MM-DD), e.g. the model's release."""
    aliases: bool = False
    """Also match Wikidata aliases (off reproduces the paper)."""
    limit: int | None = Field(None, ge=1)
    """Only the first N facts."""
    max_new_tokens: NewTokens = 20
    """Tokens to generate per answer."""
    instruction_file: Path | None = Field(None, exclude=True)
    """Chat instruction to use instead of ours; must contain {sentence} (the paraphrase)."""
    instruction: Annotated[str, INTERNAL] = CHAT_INSTRUCTION
    """The chat instruction around each paraphrase (``instruction_file`` reads it from a file)."""
    cutoff: KeyValues = Field(default_factory=dict)
    """A model's published knowledge cutoff, NAME=YYYY-MM (repeatable; NAME as in --model NAME=SPEC, or the spec):
    a marker on the knowledge-date plot and a row in results."""
    claimed_cutoff: bool = True
    """Also ask each model, in three paraphrases, what its knowledge cutoff is (3 more calls per model), and report
    the date it claims beside the knowledge date its answers describe."""
    deployed_at: str | None = None
    """Forecast staleness for a model shipped on this date (YYYY-MM or YYYY-MM-DD): the share of what it knows
    that is stale then, 6 and 12 months later."""

    @model_validator(mode="before")
    @classmethod
    def _given_as_text(cls, data: Any) -> Any:
        """``cutoff`` as ``NAME=DATE`` texts (the command's ``--cutoff``), named after ``models``; the
        instruction from ``instruction_file``."""
        if not isinstance(data, dict):
            return data
        cutoffs = data.get("cutoff")
        if isinstance(cutoffs, list | tuple):
            models = data.get("models") or default_models()
            data = {**data, "cutoff": parse_cutoffs(cutoffs, cutoff_names(models))}
        if isinstance(data.get("instruction_file"), str | os.PathLike):  # anything else: the field refuses it
            data = {**data, "instruction": read_instruction(Path(data["instruction_file"]))}
        return data

    @field_validator("cutoff")
    @classmethod
    def _cutoff_dates(cls, cutoffs: dict[str, str]) -> dict[str, str]:
        for name, date in cutoffs.items():
            try:
                parse_month(date)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return cutoffs

    @field_validator("deployed_at")
    @classmethod
    def _deployment_date(cls, deployed_at: str | None) -> str | None:
        if deployed_at is not None:
            parse_month(deployed_at)  # its ValueError names the value and the forms it may take
        return deployed_at

    def decoding(self) -> DecodingParams:
        return DecodingParams(max_new_tokens=self.max_new_tokens, temperature=0.0, seed=0)

    _renamed = accept_renamed()  # last: the validators above see the new names


class ResponseRecord(BaseModel):
    """One model answer to one paraphrase, with its verdicts."""

    model: str
    fact_id: str
    category: str
    subject: str
    attribute: str | None
    template_index: int
    template: str
    rendered_prompt: str
    response: str
    verdict: Verdict
    matched: list[str]
    matched_start_years: list[int]
    match_rule: str | None = None
    verdict_as_of: Verdict | None = None
    """Verdict against what was current at ``--as-of`` (None when not asked)."""


def read_instruction(path: Path) -> str:
    """A chat instruction from a file: its text, which must hold the ``{sentence}`` placeholder."""
    text = read_text(path, f"instruction file {path}").strip()
    if "{sentence}" not in text:
        raise ConfigError(f"instruction file {path}", "must contain the placeholder {sentence}")
    return text


def is_grc_file(path: Path) -> bool:
    """True for the original DyKnow layout (category → subject → ...), False for our catalogue."""
    try:
        data = json.loads(read_text(path, f"facts file {path}"))
    except (OSError, ValueError) as exc:
        raise DataError(f"facts file {path}", f"cannot read JSON ({exc})") from None
    return isinstance(data, dict) and "facts" not in data and all(isinstance(v, dict) for v in data.values())


def load_gold(
    config: AuditConfig, *, fetch_progress: Callable[[int], None] | None = None
) -> tuple[list[Fact], Snapshot]:
    """Facts to ask and the snapshot to judge them against, per the config."""
    facts, grc_answers = _facts(config)
    if config.live:
        # A second live run on the same day saves wikidata-<day>-2 and so on, never over an earlier one.
        name = unused_name(f"wikidata-{dt.date.today().isoformat()}")
        with WikidataClient(endpoint=config.endpoint) as client:
            snapshot = client.fetch(_with_catalogue_qids(facts), progress=fetch_progress, name=name)
        save_snapshot(snapshot)
    elif grc_answers is not None and config.snapshot is None:
        snapshot = Snapshot(
            name=f"grc:{config.facts}",
            retrieved=dt.date(2023, 12, 18),
            endpoint="file",
            query_hash="-",
            answers=grc_answers,
        )
    else:
        snapshot = load_snapshot(config.snapshot)
    missing = [f.fact_id for f in facts if f.fact_id not in snapshot.answers]
    if missing:
        raise DataError(
            f"snapshot {snapshot.name}",
            f"has no answers for {len(missing)} fact(s), e.g. {missing[0]!r}; fetch a new snapshot or pass --snapshot",
        )

    counted = {f.fact_id: snapshot.answers[f.fact_id].counted() for f in facts}
    check_coverage(counted, [f.fact_id for f in facts], f"snapshot {snapshot.name}", DataError)
    return facts, snapshot


def _facts(config: AuditConfig) -> tuple[list[Fact], dict[str, FactAnswers] | None]:
    """The facts to ask, and their answers when the facts file is an original grc file."""
    grc_answers: dict[str, FactAnswers] | None = None
    if config.facts is not None and is_grc_file(config.facts):
        facts, grc_answers = load_grc(config.facts)
    else:
        facts = load_catalogue(config.facts)
    return (facts[: config.limit] if config.limit is not None else facts), grc_answers


def audit_facts(config: AuditConfig) -> list[Fact]:
    """The facts an audit asks (before the gold answers tell which of them can be judged)."""
    return _facts(config)[0]


def facts_without_gold(facts: Sequence[Fact], snapshot: Snapshot) -> dict[str, str]:
    """``fact_id -> category`` of the facts with no dated gold answer in ``snapshot``.

    Such a fact cannot be judged (every answer would look irrelevant): it is not
    asked, and the summary lists it as "no gold" outside every rate.
    """
    return {f.fact_id: f.category for f in facts if not snapshot.answers[f.fact_id].counted().statements}


def _with_catalogue_qids(facts: list[Fact]) -> list[Fact]:
    """Facts from an original grc file carry no QIDs; take them from our catalogue by fact id."""
    if all(f.subject_qid for f in facts):
        return facts

    known = {f.fact_id: f for f in load_catalogue()}
    resolved = []
    for fact in facts:
        if fact.subject_qid is None:
            if fact.fact_id not in known or known[fact.fact_id].subject_qid is None:
                raise DataError(f"fact {fact.fact_id}", "has no subject QID, so it cannot be queried live")
            fact = fact.model_copy(update={"subject_qid": known[fact.fact_id].subject_qid})
        resolved.append(fact)
    return resolved


def run_audit(
    config: AuditConfig,
    model: CachedModel,
    facts: Sequence[Fact],
    snapshot: Snapshot,
    *,
    progress: Callable[[int], None] | None = None,
) -> list[ResponseRecord]:
    """Ask one model every paraphrase of every fact and classify the answers (facts without gold are skipped)."""
    skipped = facts_without_gold(facts, snapshot)
    prompts = []
    owners: list[tuple[Fact, int]] = []
    for fact in facts:
        if fact.fact_id in skipped:
            continue
        for index, prompt in enumerate(fact_prompts(fact, config.instruction)):
            prompts.append(prompt)
            owners.append((fact, index))
    generations = model.generate(prompts, config.decoding(), progress=progress)
    records = []
    for (fact, index), generation in zip(owners, generations, strict=True):
        answers = snapshot.answers[fact.fact_id]
        template = fact.templates[index]
        judge = functools.partial(classify_response, use_aliases=config.aliases, prompt=template, subject=fact.subject)
        now = judge(generation.text, answers)
        then = judge(generation.text, answers, as_of=config.as_of) if config.as_of else None
        records.append(
            ResponseRecord(
                model=model.info.label,
                fact_id=fact.fact_id,
                category=fact.category,
                subject=fact.subject,
                attribute=fact.attribute,
                template_index=index,
                template=template,
                rendered_prompt=generation.rendered_prompt,
                response=generation.text,
                verdict=now.verdict,
                matched=[s.label for s in now.matched],
                matched_start_years=[s.start.year for s in now.matched if s.start is not None],
                match_rule=now.rule,
                verdict_as_of=then.verdict if then is not None else None,
            )
        )
    return records
