"""RecencyQA: questions labelled with how soon their answer changes.

The file is a JSON list; each row carries the question, its 13-sample label
distribution, the majority label, the stationarity label and one verified
context per recency label. We read it from a path (gzipped if it ends in ``.gz``),
or from a Hugging Face dataset repo (``hf:<owner>/<name>[/<file>]``), which needs the
network. Without a source, :func:`default_source`: the authors' file, shipped gzipped.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from chronoprobe.datasets.recency_taxonomy import RecencyClass, Stationarity, parse_label
from chronoprobe.datasets.sources import describe, packaged_dir, shared_copy
from chronoprobe.errors import DataError
from chronoprobe.io import read_text, write_json_atomic
from chronoprobe.models.hub import fetch_dataset_file

DEFAULT_HUB_FILE = "Dataset/RecencyQA.json"
ORIGIN = "github.com/DataScienceUIBK/RecencyQA@2d460b5, MIT"


def default_source() -> Path:
    """``$CHRONOPROBE_SHARED_DATA/recencyqa/RecencyQA.json`` if there is one, else the shipped copy."""
    return shared_copy("recencyqa/RecencyQA.json") or packaged_dir("recencyqa") / "RecencyQA.json.gz"


def describe_source(source: str | Path) -> str:
    """The source as provenance records it (the shipped copy by its origin)."""
    return describe(source, ORIGIN)


class LabelContext(BaseModel):
    model_config = ConfigDict(frozen=True)

    recency_label: RecencyClass
    context: str

    @field_validator("recency_label", mode="before")
    @classmethod
    def _parse_label(cls, value: Any) -> RecencyClass:
        return _to_class(value)


class RecencyItem(BaseModel):
    """One RecencyQA question (the dataset's field names, typed)."""

    model_config = ConfigDict(frozen=True)

    q_id: int | str
    question: str
    source: str = "unknown"
    hop_type: str = "unknown"
    unique_labels: tuple[RecencyClass, ...]
    label_distribution: dict[RecencyClass, float]
    majority_label: RecencyClass
    confidence: float
    entropy: float
    label_contexts: tuple[LabelContext, ...] = ()
    final_stationary_label: Stationarity
    extra: dict[str, Any] = Field(default_factory=dict)
    """Fields our labeller adds (samples, votes, rule); ignored by the evaluation."""

    @field_validator("unique_labels", mode="before")
    @classmethod
    def _parse_labels(cls, value: Any) -> tuple[RecencyClass, ...]:
        return tuple(_to_class(v) for v in value)

    @field_validator("majority_label", mode="before")
    @classmethod
    def _parse_majority(cls, value: Any) -> RecencyClass:
        return _to_class(value)

    @field_validator("label_distribution", mode="before")
    @classmethod
    def _parse_distribution(cls, value: Any) -> dict[RecencyClass, float]:
        return {_to_class(k): float(v) for k, v in dict(value).items()}

    @field_validator("final_stationary_label", mode="before")
    @classmethod
    def _parse_stationarity(cls, value: Any) -> Stationarity:
        parsed = Stationarity.parse(value)
        if parsed is None:
            raise ValueError(f"unknown stationarity label {value!r}")
        return parsed

    @property
    def stationary(self) -> bool:
        return self.final_stationary_label is Stationarity.STATIONARY

    def to_json(self) -> dict[str, Any]:
        """The dataset's own JSON layout (labels as strings, extras last)."""
        row: dict[str, Any] = {
            "q_id": self.q_id,
            "question": self.question,
            "source": self.source,
            "hop_type": self.hop_type,
            "unique_labels": [c.label for c in self.unique_labels],
            "label_distribution": {c.label: p for c, p in self.label_distribution.items()},
            "majority_label": self.majority_label.label,
            "confidence": self.confidence,
            "entropy": self.entropy,
            "label_contexts": [
                {"recency_label": c.recency_label.label, "context": c.context} for c in self.label_contexts
            ],
            "final_stationary_label": self.final_stationary_label.value,
        }
        row.update(self.extra)
        return row


def _to_class(value: Any) -> RecencyClass:
    if isinstance(value, RecencyClass):
        return value
    parsed = parse_label(str(value))
    if parsed is None:
        raise ValueError(f"unknown recency label {value!r}")
    return parsed


_KNOWN_FIELDS = set(RecencyItem.model_fields) - {"extra"}


def parse_items(rows: Any, where: str) -> list[RecencyItem]:
    if not isinstance(rows, list):
        raise DataError(where, "expected a JSON list of questions")
    items: list[RecencyItem] = []
    seen: set[str] = set()
    for number, row in enumerate(rows):
        if not isinstance(row, dict):
            raise DataError(f"{where} row {number}", "expected a JSON object")
        known = {k: v for k, v in row.items() if k in _KNOWN_FIELDS}
        extra = {k: v for k, v in row.items() if k not in _KNOWN_FIELDS}
        try:
            item = RecencyItem(**known, extra=extra)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise DataError(f"{where} row {number} (q_id {row.get('q_id')!r})", f"{field}: {first['msg']}") from None
        if str(item.q_id) in seen:
            raise DataError(f"{where} row {number}", f"duplicate q_id {item.q_id!r}")
        seen.add(str(item.q_id))
        items.append(item)
    return items


def load_recencyqa(source: str | Path) -> list[RecencyItem]:
    """Load RecencyQA from a JSON file, or from the hub with ``hf:<owner>/<repo>[/<file in repo>]``."""
    text = str(source)
    if text.startswith("hf:"):
        path = _download_from_hub(text)
        where = text
    else:
        path = Path(text).expanduser()
        where = str(path)
        if not path.is_file():
            raise DataError(where, "no such file; give --data the RecencyQA JSON file (or hf:<owner>/<repo>)")
    try:
        rows = json.loads(read_text(path, where))
    except json.JSONDecodeError as exc:
        raise DataError(f"{where} line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    return parse_items(rows, where)


def _download_from_hub(spec: str) -> Path:
    target = spec.removeprefix("hf:").strip("/")
    parts = target.split("/")
    if len(parts) < 2:
        raise DataError(spec, "expected hf:<owner>/<repo>[/<file in repo>]")
    repo_id = "/".join(parts[:2])
    filename = "/".join(parts[2:]) or DEFAULT_HUB_FILE
    try:
        return Path(fetch_dataset_file(repo_id, filename))
    except Exception as exc:  # offline, missing repo, auth: all one line for the user
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(
            spec,
            f"could not fetch {filename} from the hub dataset {repo_id} ({first[:160]}); "
            "give --data a RecencyQA JSON file instead (without --data the shipped copy is used)",
        ) from None


def write_recencyqa(path: Path, items: Sequence[RecencyItem]) -> None:

    write_json_atomic(path, [item.to_json() for item in items])


def stratum(item: RecencyItem) -> tuple[str, str]:
    return (item.final_stationary_label.value, item.majority_label.label)


def stratified_sample(items: Sequence[RecencyItem], n: int | None, seed: int = 0) -> list[RecencyItem]:
    """A sample of ``n`` items keeping the (stationarity, majority label) mix of ``items``.

    Each stratum gets ``floor(n * share)`` items; the remaining slots go to the
    strata with the largest fractional remainders (ties: larger stratum, then
    name). Items inside a stratum are drawn with ``random.Random(seed)``; the
    result keeps the input order. ``n=None`` or ``n >= len(items)`` returns all.
    """
    if n is None or n >= len(items):
        return list(items)
    if n <= 0:
        return []
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, item in enumerate(items):
        groups[stratum(item)].append(position)
    total = len(items)
    quotas = {key: n * len(members) / total for key, members in groups.items()}
    counts = {key: int(q) for key, q in quotas.items()}
    left = n - sum(counts.values())
    by_remainder = sorted(groups, key=lambda k: (-(quotas[k] - counts[k]), -len(groups[k]), k))
    for key in by_remainder[:left]:
        counts[key] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for key in sorted(groups):
        chosen += rng.sample(groups[key], counts[key])
    return [items[i] for i in sorted(chosen)]
