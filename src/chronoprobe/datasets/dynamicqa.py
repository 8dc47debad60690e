"""DynamicQA (Marjanović et al., 2024): questions with a Wikipedia context.

Source: a local folder with ``Static_final.csv``, ``Temporal_final.csv`` and
``Disputable_final.csv`` (first column an unnamed pandas index; each may be gzipped,
``.csv.gz``), or the hub id ``copenlu/dynamicqa`` (needs ``huggingface_hub`` and network;
files ``static.csv``/``temporal.csv``/``disputable.csv``, a later upload that differs).
Without a source, :func:`default_source`: the GitHub files, shipped gzipped in the package.

Each row becomes two :class:`ContextItem` s: the context filled with the true
answer (``obj``), and the counterfactual context filled with the substitute
(``replace_name``). Static and temporal contexts hold the placeholder
``[ENTITY]``; disputable contexts hold the true answer itself, which is replaced
(case-insensitively, every occurrence) by the substitute for the counterfactual.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chronoprobe.datasets.balance import take_balanced as spread
from chronoprobe.datasets.sources import describe, packaged_dir, shared_copy
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import read_text
from chronoprobe.models.hub import fetch_dataset_file

PLACEHOLDER = "[ENTITY]"
HUB_ID = "copenlu/dynamicqa"
ORIGIN = "github.com/copenlu/dynamicqa@4c6d2cb, MIT"
FILES: dict[str, tuple[str, str]] = {
    # class: (local file, hub file)
    "static": ("Static_final.csv", "static.csv"),
    "temporal": ("Temporal_final.csv", "temporal.csv"),
    "disputed": ("Disputable_final.csv", "disputable.csv"),
}
DynamicClass = Literal["static", "temporal", "disputed"]


class ContextFact(BaseModel):
    """One question with a context that can be filled with the true answer or a substitute."""

    model_config = ConfigDict(frozen=True)

    fact_id: str
    dataset: str
    fact_class: str
    subject: str
    relation: str | None = None
    question: str
    answer: str
    substitute: str
    context: str
    """Context with ``[ENTITY]`` where the answer goes (or holding ``answer`` itself if ``placeholder`` is False)."""
    placeholder: bool = True
    possible_answers: tuple[str, ...] = ()
    source: str = ""
    """File and row, for error messages and provenance."""

    def filled(self, value: str) -> str:
        if self.placeholder:
            return self.context.replace(PLACEHOLDER, value).strip()
        return re.sub(re.escape(self.answer), lambda _: value, self.context, flags=re.IGNORECASE).strip()


class ContextItem(BaseModel):
    """One (question, context) input: the true context or the counterfactual one."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    fact_id: str
    dataset: str
    fact_class: str
    subject: str
    relation: str | None = None
    question: str
    context: str
    inserted: str
    """The answer written into the context (the reference for with-context accuracy)."""
    true_answer: str
    substitute: str
    counterfactual: bool
    possible_answers: tuple[str, ...] = Field(default_factory=tuple)


def expand(fact: ContextFact) -> list[ContextItem]:
    """The two items of a fact: true context first, counterfactual second."""
    common = dict(
        fact_id=fact.fact_id,
        dataset=fact.dataset,
        fact_class=fact.fact_class,
        subject=fact.subject,
        relation=fact.relation,
        question=fact.question,
        true_answer=fact.answer,
        substitute=fact.substitute,
        possible_answers=fact.possible_answers,
    )
    return [
        ContextItem(
            item_id=f"{fact.fact_id}/true",
            context=fact.filled(fact.answer),
            inserted=fact.answer,
            counterfactual=False,
            **common,
        ),
        ContextItem(
            item_id=f"{fact.fact_id}/cf",
            context=fact.filled(fact.substitute),
            inserted=fact.substitute,
            counterfactual=True,
            **common,
        ),
    ]


def _require(row: dict[str, str | None], names: Sequence[str], where: str) -> None:
    missing = [n for n in names if not (row.get(n) or "").strip()]
    if missing:
        raise DataError(where, f"missing or empty column(s): {', '.join(missing)}")


def parse_rows(rows: Iterable[dict[str, str | None]], fact_class: str, source: str) -> list[ContextFact]:
    """Rows of one DynamicQA CSV (as csv.DictReader yields them) -> facts. Row numbers are 1-based data rows."""
    facts: list[ContextFact] = []
    for number, row in enumerate(rows, start=1):
        where = f"{source} row {number}"
        _require(row, ["id", "question", "context", "obj", "replace_name"], where)
        context = str(row["context"])
        answer = str(row["obj"]).strip()
        if fact_class == "disputed":
            placeholder = False
            if answer.lower() not in context.lower():
                raise DataError(where, f"disputable context does not contain the answer {answer!r}")
        else:
            placeholder = True
            if PLACEHOLDER not in context:
                raise DataError(where, f"context has no {PLACEHOLDER} placeholder")
        possible: tuple[str, ...] = ()
        raw = (row.get("possible_answers") or "").strip()
        if raw:
            try:
                parsed = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise DataError(where, f"possible_answers is not a JSON list ({exc.msg})") from None
            if not isinstance(parsed, list) or not all(isinstance(x, str) for x in parsed):
                raise DataError(where, "possible_answers must be a JSON list of strings")
            possible = tuple(parsed)
        facts.append(
            ContextFact(
                fact_id=f"dynamicqa/{fact_class}/{str(row['id']).strip()}",
                dataset="dynamicqa",
                fact_class=fact_class,
                subject=(row.get("subj") or "").strip(),
                relation=(row.get("prop_id") or "").strip() or None,
                question=str(row["question"]).strip(),
                answer=answer,
                substitute=str(row["replace_name"]).strip(),
                context=context,
                placeholder=placeholder,
                possible_answers=possible,
                source=where,
            )
        )
    return facts


def read_csv(path: Path, fact_class: str) -> list[ContextFact]:
    if not path.is_file():
        raise DataError(str(path), "file not found")
    reader = csv.DictReader(io.StringIO(read_text(path, encoding="utf-8-sig"), newline=""))
    if reader.fieldnames is None:
        raise DataError(str(path), "empty file")
    return parse_rows(reader, fact_class, str(path))


def _hub_files(hub_id: str) -> dict[str, Path]:
    if importlib.util.find_spec("huggingface_hub") is None:
        raise ConfigError(
            f"dataset {hub_id}", "loading from the hub needs huggingface_hub; pass --data <folder> instead"
        )

    paths: dict[str, Path] = {}
    for fact_class, (_, hub_file) in FILES.items():
        try:
            paths[fact_class] = Path(fetch_dataset_file(hub_id, hub_file))
        except Exception as exc:  # network and hub errors come in many types
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConfigError(
                f"dataset {hub_id}",
                f"could not download {hub_file} (needs network: {first[:120]}); "
                "without --data the shipped copy is used, or give --data a folder with the CSV files",
            ) from None
    return paths


def default_source() -> Path:
    """``$CHRONOPROBE_SHARED_DATA/dynamicqa`` if there is one, else the copy shipped in the package."""
    return shared_copy("dynamicqa") or packaged_dir("dynamicqa")


def describe_source(source: str | Path) -> str:
    """The source as provenance records it (the shipped copy by its origin)."""
    return describe(source, ORIGIN)


def _local_file(folder: Path, name: str) -> Path:
    """``name`` in ``folder``, or its gzipped copy when only that is there."""
    plain = folder / name
    packed = folder / f"{name}.gz"
    return packed if not plain.exists() and packed.is_file() else plain


def load_dynamicqa(
    source: str | Path, classes: Sequence[str] = ("static", "temporal", "disputed")
) -> list[ContextFact]:
    """Facts of the given classes, from a local folder or the hub id ``copenlu/dynamicqa``."""
    unknown = [c for c in classes if c not in FILES]
    if unknown:
        raise ConfigError("dynamicqa classes", f"unknown class(es) {unknown}; known: {list(FILES)}")
    folder = Path(source).expanduser()
    if folder.is_dir():
        paths = {c: _local_file(folder, FILES[c][0]) for c in classes}
    elif str(source) == HUB_ID:
        paths = _hub_files(HUB_ID)
    else:
        raise DataError(
            str(source),
            f"not a folder with {', '.join(f for f, _ in FILES.values())} (nor the hub id {HUB_ID}); "
            "give --data such a folder (the files may be .csv.gz)",
        )
    facts: list[ContextFact] = []
    for fact_class in classes:
        facts.extend(read_csv(paths[fact_class], fact_class))
    return facts


def take_balanced(facts: Sequence[ContextFact], limit: int | None) -> list[ContextFact]:
    """At most ``limit`` facts in total, spread evenly over classes (file order within a class)."""

    return spread(facts, limit, lambda fact: fact.fact_class)
