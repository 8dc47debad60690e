"""Score existing generations in the DyKnow layout (no model calls).

Input: a folder with ``<category>_answers.json`` files, each
``subject → [attribute →] {"answers": {prompt key: text}, "questions": {prompt key: prompt}}``
(the layout of the original DyKnow ``models_output/results/<model>/``).

Output, staged and published as a whole into ``out_dir`` (:mod:`chronoprobe.records.publish`):

- ``<category>_answer_sheet.json``: ``subject → [attribute →] prompt key → verdict`` with the
  original's verdict names (``correct|outdated|irrelevant|ambiguous``), for every prompt key;
- ``classifications.jsonl``: one row per response with what matched and by which rule;
- ``summary.json``: per category and overall: per-prompt counts, soft constraint, averages,
  inconsistency, facts to edit, start years, plus provenance.

The statistics use the paraphrases only (every prompt key but ``generic``), as the paper does.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from chronoprobe.errors import DataError
from chronoprobe.io import read_text, write_json_atomic, write_jsonl_atomic
from chronoprobe.knowledge.grc import load_grc
from chronoprobe.knowledge.snapshot import load_snapshot
from chronoprobe.knowledge.types import FactAnswers
from chronoprobe.lenses.outdated.knowledge_date import check_deployed_at, dated_answers, knowledge_summary
from chronoprobe.lenses.outdated.knowledge_report import write_score_report
from chronoprobe.metrics.dyknow import (
    EXCLUDED_PROMPT_KEYS,
    VERDICTS,
    Classification,
    Verdict,
    VerdictEstimates,
    average_counts,
    classify_response,
    facts_to_edit,
    inconsistent_facts,
    soft_constraint,
    start_years,
    verdict_estimates,
    verdict_shares,
)
from chronoprobe.provenance import Provenance, build_provenance
from chronoprobe.records import publish

ANSWERS_SUFFIX = "_answers.json"
ORIGINAL_VERDICT_NAMES: dict[Verdict, str] = {
    "up-to-date": "correct",
    "outdated": "outdated",
    "irrelevant": "irrelevant",
    "ambiguous": "ambiguous",
}


class Response(BaseModel):
    """One generation read from an answers file."""

    category: str
    subject: str
    attribute: str | None
    prompt_key: str
    prompt: str | None
    text: str

    @property
    def fact_id(self) -> str:
        return fact_id_of(self.category, self.subject, self.attribute)


class ScoredResponse(BaseModel):
    response: Response
    classification: Classification


class CategoryScore(BaseModel):
    """Aggregates over one category (or all of them)."""

    facts: int
    responses: int
    """Paraphrase responses in the statistics (facts x 3 in DyKnow)."""
    per_prompt: dict[str, dict[str, int]]
    """Verdict counts per prompt key, ``generic`` included."""
    soft_constraint_counts: dict[str, int]
    soft_constraint: dict[str, float]
    average: dict[str, float]
    """Per-paraphrase verdict shares: counts / (facts x paraphrases)."""
    inconsistent: list[str]
    inconsistency: float
    facts_to_edit: list[str]
    start_years: list[int]
    estimates: VerdictEstimates | None = None
    """n and 95% Wilson intervals for ``soft_constraint``, ``average`` and ``inconsistency`` (same scale)."""


class ScoreSummary(BaseModel):
    model: str
    generations_dir: str
    gold: dict[str, Any]
    use_aliases: bool
    as_of: dt.date | None
    paraphrase_keys_excluded: list[str] = Field(default_factory=lambda: list(EXCLUDED_PROMPT_KEYS))
    categories: dict[str, CategoryScore]
    overall: CategoryScore
    no_gold: list[str] = Field(default_factory=list)
    """Facts whose gold has no dated answer: not judged, outside every rate and sheet."""
    knowledge_date: dict[str, Any] | None = None
    """The effective knowledge date and staleness (:mod:`chronoprobe.lenses.outdated.knowledge_date`)."""
    provenance: Provenance


def fact_id_of(category: str, subject: str, attribute: str | None) -> str:
    return f"{category}/{subject}" if attribute is None else f"{category}/{subject}/{attribute}"


# --- reading ------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except OSError as exc:
        raise DataError(str(path), f"cannot read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise DataError(str(path), f"not valid JSON ({exc})") from None


def _is_leaf(node: Any) -> bool:
    return isinstance(node, dict) and "answers" in node


def _leaf_responses(path: Path, category: str, subject: str, attribute: str | None, node: Any) -> list[Response]:
    where = f"{path} [{subject}{' / ' + attribute if attribute else ''}]"
    answers = node.get("answers")
    questions = node.get("questions", {})
    if not isinstance(answers, dict) or not answers:
        raise DataError(where, "'answers' must be a non-empty object of prompt key -> generated text")
    if not isinstance(questions, dict):
        raise DataError(where, "'questions' must be an object of prompt key -> prompt")
    responses = []
    for key, text in answers.items():
        if not isinstance(text, str):
            raise DataError(f"{where} answers.{key}", f"expected a string, got {type(text).__name__}")
        prompt = questions.get(key)
        if prompt is not None and not isinstance(prompt, str):
            raise DataError(f"{where} questions.{key}", f"expected a string, got {type(prompt).__name__}")
        responses.append(
            Response(category=category, subject=subject, attribute=attribute, prompt_key=key, prompt=prompt, text=text)
        )
    return responses


def read_answers_file(path: Path) -> list[Response]:
    """Every response in one ``<category>_answers.json``, in file order."""
    if not path.name.endswith(ANSWERS_SUFFIX):
        raise DataError(str(path), f"expected a file named <category>{ANSWERS_SUFFIX}")
    category = path.name[: -len(ANSWERS_SUFFIX)]
    data = _read_json(path)
    if not isinstance(data, dict) or not data:
        raise DataError(str(path), "expected a non-empty object: subject -> [attribute ->] {answers, questions}")
    responses: list[Response] = []
    for subject, node in data.items():
        if _is_leaf(node):
            responses += _leaf_responses(path, category, subject, None, node)
        elif isinstance(node, dict) and node and all(_is_leaf(v) for v in node.values()):
            for attribute, leaf in node.items():
                responses += _leaf_responses(path, category, subject, attribute, leaf)
        else:
            raise DataError(f"{path} [{subject}]", "expected {answers, questions} or attribute -> {answers, questions}")
    return responses


def answers_files(generations_dir: Path) -> list[Path]:
    if not generations_dir.is_dir():
        raise DataError(str(generations_dir), "not a folder")
    files = sorted(generations_dir.glob(f"*{ANSWERS_SUFFIX}"))
    if not files:
        raise DataError(str(generations_dir), f"no *{ANSWERS_SUFFIX} files")
    return files


# --- gold ---------------------------------------------------------------------------------------


def _looks_like_grc(path: Path) -> bool:
    """True for the original's ``category -> subject -> [attribute ->] {questions, answers}`` file."""
    data = _read_json(path)
    if not isinstance(data, dict) or "answers" in data:
        return False
    for subjects in data.values():
        if not isinstance(subjects, dict):
            continue
        for node in subjects.values():
            if isinstance(node, dict) and (
                "questions" in node or any(isinstance(v, dict) and "questions" in v for v in node.values())
            ):
                return True
    return False


def load_gold(gold: Path | str | None) -> tuple[dict[str, FactAnswers], dict[str, Any]]:
    """Gold answers by fact id, and a description for provenance.

    ``gold`` is a ``grc_generated.json`` file (the original format), a snapshot name or
    path, or None for the shipped default snapshot.
    """
    if gold is not None and Path(gold).is_file() and _looks_like_grc(Path(gold)):
        path = Path(gold)
        _, answers = load_grc(path)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return dict(answers), {"kind": "grc", "path": str(path), "sha256": digest, "retrieved": "2023-12-18"}

    snapshot = load_snapshot(None if gold is None else str(gold))
    description = {
        "kind": "snapshot",
        "name": snapshot.name,
        "retrieved": snapshot.retrieved.isoformat(),
        "endpoint": snapshot.endpoint,
        "query_hash": snapshot.query_hash,
    }
    return dict(snapshot.answers), description


# --- scoring ------------------------------------------------------------------------------------


def classify_all(
    responses: list[Response],
    gold: Mapping[str, FactAnswers],
    *,
    source: Path,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
    no_gold: set[str] | None = None,
) -> list[ScoredResponse]:
    """Classify each response; facts whose gold has no dated answer are skipped and added to ``no_gold``."""
    scored = []
    for response in responses:
        answers = gold.get(response.fact_id)
        if answers is None:
            where = f"{source} [{response.subject}{' / ' + response.attribute if response.attribute else ''}]"
            raise DataError(where, f"no gold answers for fact {response.fact_id!r}")
        if not answers.counted().statements:
            if no_gold is not None:
                no_gold.add(response.fact_id)
            continue
        classification = classify_response(
            response.text,
            answers,
            as_of=as_of,
            use_aliases=use_aliases,
            prompt=response.prompt,
            subject=response.subject,
        )
        scored.append(ScoredResponse(response=response, classification=classification))
    return scored


def aggregate(scored: list[ScoredResponse]) -> CategoryScore:
    per_prompt: dict[str, dict[str, int]] = {}
    verdicts: dict[str, list[Verdict]] = {}
    classifications: dict[str, list[Classification]] = {}
    for item in scored:
        key = item.response.prompt_key
        counts = per_prompt.setdefault(key, {v: 0 for v in VERDICTS})
        counts[item.classification.verdict] += 1
        fact_id = item.response.fact_id
        verdicts.setdefault(fact_id, [])
        classifications.setdefault(fact_id, [])
        if key not in EXCLUDED_PROMPT_KEYS:
            verdicts[fact_id].append(item.classification.verdict)
            classifications[fact_id].append(item.classification)
    soft = soft_constraint(verdicts)
    inconsistent = inconsistent_facts(classifications)
    paraphrases = [c for fact in classifications.values() for c in fact]
    return CategoryScore(
        facts=len(verdicts),
        responses=len(paraphrases),
        per_prompt=per_prompt,
        soft_constraint_counts={v: list(soft.values()).count(v) for v in VERDICTS},
        soft_constraint={str(v): share for v, share in verdict_shares(soft.values()).items()},
        average={str(v): share for v, share in average_counts(verdicts).items()},
        inconsistent=inconsistent,
        inconsistency=len(inconsistent) / len(verdicts) if verdicts else 0.0,
        facts_to_edit=facts_to_edit(verdicts),
        start_years=start_years(paraphrases),
        estimates=verdict_estimates(verdicts, inconsistent),
    )


def answer_sheet(scored: list[ScoredResponse]) -> dict[str, Any]:
    """The original's answer-sheet shape: subject → [attribute →] prompt key → verdict."""
    sheet: dict[str, Any] = {}
    for item in scored:
        r = item.response
        node = sheet.setdefault(r.subject, {})
        if r.attribute is not None:
            node = node.setdefault(r.attribute, {})
        node[r.prompt_key] = ORIGINAL_VERDICT_NAMES[item.classification.verdict]
    return sheet


def _classification_row(item: ScoredResponse) -> dict[str, Any]:
    r, c = item.response, item.classification
    return {
        "fact_id": r.fact_id,
        "category": r.category,
        "subject": r.subject,
        "attribute": r.attribute,
        "prompt_key": r.prompt_key,
        "verdict": c.verdict,
        "rule": c.rule,
        "position": c.position,
        "matched": list(c.matched_labels),
        "matched_text": list(c.matched_text),
        "matched_start": [str(s.start) if s.start else None for s in c.matched],
        "searched": c.searched,
    }


SCORE_KIND = "outdated score"
"""What the folder marker of a scored folder says wrote it."""


class Judged(BaseModel):
    """Every response of a generations folder judged: the summary and the responses per category."""

    summary: ScoreSummary
    by_category: dict[str, list[ScoredResponse]]


def score_recipe(
    generations_dir: Path, files: list[Path], gold_description: dict[str, Any], use_aliases: bool, as_of: dt.date | None
) -> dict[str, Any]:
    """What produced a scored folder, as the provenance records it (``snapshot`` and ``extra``)."""
    return {
        "snapshot": gold_description,
        "extra": {
            "generations_dir": str(generations_dir),
            "answers_files": [p.name for p in files],
            "use_aliases": use_aliases,
            "as_of": as_of.isoformat() if as_of else None,
            "classifier": "chronoprobe.metrics.dyknow (docs/dyknow-classifier.md)",
        },
    }


def judge_generations(
    generations_dir: Path,
    files: list[Path],
    gold_map: Mapping[str, FactAnswers],
    gold_description: dict[str, Any],
    provenance: Provenance,
    *,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
    cutoff: str | None = None,
    deployed_at: str | None = None,
) -> Judged:
    """Classify every response in ``files`` (read and judged before anything is written)."""
    by_category: dict[str, list[ScoredResponse]] = {}
    no_gold: set[str] = set()
    for path in files:
        responses = read_answers_file(path)
        category = responses[0].category
        by_category[category] = classify_all(
            responses, gold_map, source=path, use_aliases=use_aliases, as_of=as_of, no_gold=no_gold
        )
    everything = [item for items in by_category.values() for item in items]
    summary = ScoreSummary(
        model=generations_dir.name,
        generations_dir=str(generations_dir),
        gold=gold_description,
        use_aliases=use_aliases,
        as_of=as_of,
        categories={category: aggregate(items) for category, items in by_category.items()},
        overall=aggregate(everything),
        no_gold=sorted(no_gold),
        knowledge_date=_knowledge_date(everything, gold_map, gold_description, cutoff, deployed_at),
        provenance=provenance,
    )
    return Judged(summary=summary, by_category=by_category)


def write_scores(folder: Path, judged: Judged) -> None:
    """The answer sheets, ``classifications.jsonl``, ``summary.json`` (and the knowledge-date report) in ``folder``."""
    everything = [item for items in judged.by_category.values() for item in items]
    for category, items in judged.by_category.items():
        write_json_atomic(folder / f"{category}_answer_sheet.json", answer_sheet(items))
    write_jsonl_atomic(folder / "classifications.jsonl", (_classification_row(i) for i in everything))
    summary = judged.summary
    write_json_atomic(folder / "summary.json", summary.model_dump(mode="json"))
    if summary.knowledge_date is not None:
        write_score_report(folder, summary.model, summary.knowledge_date)


def load_scoring_inputs(
    generations_dir: Path,
    gold: Path | str | None = None,
    gold_answers: Mapping[str, FactAnswers] | None = None,
    deployed_at: str | None = None,
) -> tuple[list[Path], dict[str, FactAnswers], dict[str, Any]]:
    """The answers files, the gold answers and their description; every one-line error before any judging."""
    files = answers_files(Path(generations_dir))
    if gold_answers is None:
        gold_map, gold_description = load_gold(gold)
    else:
        gold_map, gold_description = dict(gold_answers), {"kind": "in-memory", "source": str(gold)}
    if deployed_at is not None:
        check_deployed_at(deployed_at, gold_map, "the gold answers")
    return files, gold_map, gold_description


def score_generations(
    generations_dir: Path,
    out_dir: Path,
    *,
    gold: Path | str | None = None,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
    gold_answers: Mapping[str, FactAnswers] | None = None,
    cutoff: str | None = None,
    deployed_at: str | None = None,
) -> ScoreSummary:
    """Classify every response in ``generations_dir`` and write sheets and summary to ``out_dir``.

    ``gold``: a ``grc_generated.json``, a snapshot name/path, or None (shipped snapshot).
    ``gold_answers`` bypasses loading (already-loaded gold answers by fact id).
    ``cutoff``: the model's published knowledge cutoff (YYYY-MM), a marker on the knowledge-date plot;
    ``deployed_at``: forecast the staleness from that date on. ``chronoprobe.produce("outdated.score", ...)``
    does the same with the output claimed first, as the command does.
    """
    generations_dir = Path(generations_dir)
    files, gold_map, gold_description = load_scoring_inputs(generations_dir, gold, gold_answers, deployed_at)
    recorded = score_recipe(generations_dir, files, gold_description, use_aliases, as_of)
    judged = judge_generations(
        generations_dir,
        files,
        gold_map,
        gold_description,
        build_provenance([], snapshot=recorded["snapshot"], extra=recorded["extra"]),
        use_aliases=use_aliases,
        as_of=as_of,
        cutoff=cutoff,
        deployed_at=deployed_at,
    )
    with publish.staged(Path(out_dir), SCORE_KIND) as staging:
        write_scores(staging, judged)
    return judged.summary


def _knowledge_date(
    scored: list[ScoredResponse],
    gold: Mapping[str, FactAnswers],
    description: Mapping[str, Any],
    cutoff: str | None,
    deployed_at: str | None,
) -> dict[str, Any] | None:
    """The knowledge-date block over the paraphrase answers; None when the gold carries no retrieval date."""

    retrieved = description.get("retrieved")
    if retrieved is None:
        return None
    answers, excluded = dated_answers(
        (
            (i.response.fact_id, i.response.category, i.classification.verdict, i.classification.matched_labels)
            for i in scored
            if i.response.prompt_key not in EXCLUDED_PROMPT_KEYS
        ),
        gold,
    )
    return knowledge_summary(
        answers, excluded, dt.date.fromisoformat(str(retrieved)), cutoff=cutoff, deployed_at=deployed_at, gold=gold
    )
