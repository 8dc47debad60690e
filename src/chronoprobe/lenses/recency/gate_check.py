"""How well a model routes with the recency gate, measured on a held-out RecencyQA split.

The gate (:mod:`chronoprobe.lenses.recency.gate`) trusts its model to tell a question whose answer
changes soon from one whose answer holds. Whether a model can is measured here, once per model
and gate setting, on questions nothing in the gate was chosen on:

- **split** (:data:`SPLIT`): one RecencyQA question in ten, picked by a hash of its ``q_id``
  (:func:`heldout_split`), less the few-shot demonstrations ``recency eval`` shows with its
  default seed (with and without context). RecencyQA ships no split of its own; the gate's
  prompt is zero-shot, so no demonstration reaches it, and its defaults (threshold, samples,
  temperature, share) were set before this split existed. Tune on the other nine tenths.
- **gold decision**: retrieve iff the question's ``majority_label`` is at or below the threshold
  (its answer changes within that horizon), the rule the gate applies to its own prediction.
- **measured**: the gate's sampled labels per question, kept in the :class:`GateCheck`, so
  every threshold and share is scored from one measurement (:func:`quality`): agreement with
  the gold decision, the two recalls and their mean, the balanced accuracy, which is 0.5 for a
  gate that always says the same or flips a coin.

A model is useful to route with when its balanced accuracy is at least
:data:`USEFUL_BALANCED_ACCURACY` and its 95% interval lies above 0.5. chronoprobe ships the
measurements of its embedded models (``data/gate_checks/``); ``chronoprobe recency gate-check``
measures any model and keeps the result in ``$CHRONOPROBE_HOME/gate_checks/``, which the gate
reads, so nothing is measured again on a gate call.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from chronoprobe.cache import CachedModel, model_identity, stable_hash
from chronoprobe.datasets.recency_taxonomy import RecencyClass
from chronoprobe.datasets.sources import packaged_root
from chronoprobe.errors import DataError
from chronoprobe.io import write_json_atomic
from chronoprobe.lenses.recency.evaluate import FewShotPicker
from chronoprobe.lenses.recency.gate_rule import GateSettings, decide_retrieval, gate_labels
from chronoprobe.lenses.recency.prompts import eval_template
from chronoprobe.metrics.recency import gate_estimates
from chronoprobe.metrics.uncertainty import Estimate, wilson_clustered
from chronoprobe.models.base import BackendInfo
from chronoprobe.paths import home_dir
from chronoprobe.version import __version__

SPLIT = "recencyqa-gate-heldout-v1"
"""Names the split's rule; a different rule must get a new name."""
HELDOUT_EVERY = 10
USEFUL_BALANCED_ACCURACY = 0.6
FORMAT = 1

log = logging.getLogger("chronoprobe.lenses.recency.gate")
_warned: set[str] = set()


# --- the split ---------------------------------------------------------------------------------


def _rank(q_id: object) -> str:
    return stable_hash([SPLIT, str(q_id)])


def demonstration_ids(pool: Sequence[Any], seed: int = 0) -> set[str]:
    """The q_ids ``recency eval --strategy few-shot`` can show as demonstrations with ``seed`` (both context modes)."""

    picker = FewShotPicker(pool, seed)
    return {
        str(item.q_id)
        for table in (picker.without, picker.with_)
        for candidates in table.values()
        for item, _ in candidates[:2]
    }


def heldout_split(pool: Sequence[Any]) -> list[Any]:
    """The held-out questions of a RecencyQA pool, in the order of their hash (any prefix is a random subset)."""
    shown = demonstration_ids(pool)
    chosen = [q for q in pool if int(_rank(q.q_id), 16) % HELDOUT_EVERY == 0 and str(q.q_id) not in shown]
    return sorted(chosen, key=lambda q: _rank(q.q_id))


def split_digest(items: Sequence[Any]) -> str:
    """sha256 of the split's questions and gold labels: two measurements on the same split share it."""
    rows = [[str(q.q_id), q.question, q.majority_label.label] for q in items]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


# --- a measurement -----------------------------------------------------------------------------


class GateCheckItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    q_id: str
    gold: str
    """The question's RecencyQA majority label."""
    labels: list[str | None]
    """The gate's sampled labels (None: the answer did not parse)."""


class GateCheck(BaseModel):
    """One model's gate labels on the held-out split, with what they depend on."""

    model_config = ConfigDict(frozen=True)

    format: int = FORMAT
    key: str
    model: dict[str, Any]
    """The model's identity as the call cache keys it (backend, id, revision, dtype, chat template)."""
    spec: str
    name: str | None = None
    settings: GateSettings
    prompt_sha256: str
    split: str = SPLIT
    dataset: str
    split_sha256: str
    created: str
    chronoprobe: str
    items: list[GateCheckItem]


def _identity(info: BackendInfo, settings: GateSettings) -> dict[str, Any]:
    identity = model_identity(info)
    if info.sampler is not None and settings.samples > 1:
        identity["sampler"] = info.sampler
    return identity


def _prompt_sha256() -> str:
    template = eval_template("zero-shot", False)
    return hashlib.sha256(f"{template.system or ''}\n\n{template.user}".encode()).hexdigest()


def check_key(info: BackendInfo, settings: GateSettings) -> str:
    return stable_hash(
        {
            "gate_check": FORMAT,
            "model": _identity(info, settings),
            "settings": settings.model_dump(mode="json"),
            "prompt": _prompt_sha256(),
            "split": SPLIT,
        }
    )


def measure(
    model: CachedModel,
    pool: Sequence[Any],
    settings: GateSettings,
    *,
    dataset: str,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> GateCheck:
    """Ask the gate's question of every held-out question (the first ``limit``), through the call cache."""
    items = heldout_split(pool)[:limit]
    if not items:
        raise DataError(dataset, "the held-out split is empty (too few questions)")
    labels = gate_labels([q.question for q in items], model, settings, progress=progress)
    return GateCheck(
        key=check_key(model.info, settings),
        model=_identity(model.info, settings),
        spec=model.info.spec,
        name=model.info.name,
        settings=settings,
        prompt_sha256=_prompt_sha256(),
        dataset=dataset,
        split_sha256=split_digest(items),
        created=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        chronoprobe=__version__,
        items=[
            GateCheckItem(q_id=str(q.q_id), gold=q.majority_label.label, labels=[x.label if x else None for x in drawn])
            for q, drawn in zip(items, labels, strict=True)
        ],
    )


# --- where measurements live -------------------------------------------------------------------


def shipped_dir() -> Path:

    return packaged_root() / "gate_checks"


def saved_dir() -> Path:

    return home_dir() / "gate_checks"


def save(check: GateCheck) -> Path:
    """Keep ``check`` where the gate finds it (``$CHRONOPROBE_HOME/gate_checks/<key>.json``)."""

    folder = saved_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{check.key}.json"
    write_json_atomic(path, check.model_dump(mode="json"))
    return path


def read_check(path: Path) -> GateCheck:
    try:
        return GateCheck.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError) as exc:
        raise DataError(str(path), f"not a gate measurement ({str(exc).splitlines()[0]})") from None


def _stored() -> list[tuple[Path, GateCheck]]:
    """Every readable measurement: the saved ones first (a user's own run wins), then the shipped ones."""
    found = []
    for folder in (saved_dir(), shipped_dir()):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            try:
                found.append((path, read_check(path)))
            except DataError:
                continue  # a damaged file is not a measurement; the gate still answers
    return found


class Found(BaseModel):
    check: GateCheck
    path: Path
    exact: bool
    """Measured with these settings; else the same model with other settings (the line says so)."""


def find(info: BackendInfo, settings: GateSettings) -> Found | None:
    """The measurement for this model and gate setting, else one of the same model with other settings."""
    key = check_key(info, settings)
    stored = _stored()
    for path, check in stored:
        if check.key == key:
            return Found(check=check, path=path, exact=True)
    identity = model_identity(info)
    for path, check in stored:
        if {k: v for k, v in check.model.items() if k != "sampler"} == identity and check.prompt_sha256 == (
            _prompt_sha256()
        ):
            return Found(check=check, path=path, exact=False)
    return None


# --- what it says -------------------------------------------------------------------------------


class GateQuality(BaseModel):
    """A measurement scored at one threshold and share."""

    model_config = ConfigDict(frozen=True)

    n: int
    threshold: str
    min_share: float
    agreement: Estimate
    retrieve_when_changing: Estimate
    keep_when_stable: Estimate
    balanced_accuracy: Estimate
    unparseable: Estimate
    """Share of the sampled answers that did not parse."""
    useful: bool
    exact: bool = True
    settings: GateSettings
    spec: str
    source: str

    def line(self) -> str:
        """One line for the console: the numbers, then whether the model is good enough to route with."""
        ba = self.balanced_accuracy
        text = (
            f"gate quality of {self.spec} on {self.n} held-out RecencyQA questions (threshold {self.threshold}): "
            f"balanced accuracy {ba.cell(2)} (0.5 = a coin), agrees with the gold decision on "
            f"{self.agreement.cell(1, 100.0, '%')}, retrieves for {self.retrieve_when_changing.cell(1, 100.0, '%')} "
            f"of the questions that need it; {self.unparseable.cell(1, 100.0, '%')} of its answers unparseable"
        )
        if not self.exact:
            s = self.settings
            text += (
                f" (measured with {s.samples} sample(s), temperature {s.temperature}, seed {s.seed}, "
                f"{s.max_new_tokens} tokens, not this call's settings)"
            )
        return text

    def verdict(self) -> str:
        if self.useful:
            return "good enough to route with"
        return (
            f"too weak to route with: below the useful level (balanced accuracy {USEFUL_BALANCED_ACCURACY}, "
            "its interval above 0.5); its decisions are close to chance, so use a larger --model"
        )


def is_useful(balanced_accuracy: Estimate) -> bool:
    value, low = balanced_accuracy.value, balanced_accuracy.ci_low
    return value is not None and low is not None and value >= USEFUL_BALANCED_ACCURACY and low > 0.5


def quality(found: Found, threshold: RecencyClass, min_share: float = 0.5) -> GateQuality:
    """Score a measurement as the gate would decide at ``threshold`` and ``min_share``."""
    check = found.check
    gold, decided, unparsed, questions = [], [], [], []
    for index, item in enumerate(check.items):
        drawn = [RecencyClass.parse(x) if x is not None else None for x in item.labels]
        gold.append(RecencyClass.parse(item.gold) <= threshold)
        decided.append(decide_retrieval(drawn, threshold, min_share, greedy=check.settings.samples == 1).retrieve)
        unparsed += [x is None for x in drawn]
        questions += [index] * len(drawn)  # a question's samples share it: the share clusters on the question
    estimates = gate_estimates(gold, decided)
    return GateQuality(
        n=len(check.items),
        threshold=threshold.label,
        min_share=min_share,
        unparseable=wilson_clustered(unparsed, questions),
        useful=is_useful(estimates["balanced_accuracy"]),
        exact=found.exact,
        settings=check.settings,
        spec=check.spec,
        source=str(found.path),
        **estimates,
    )


def gate_quality(
    info: BackendInfo, settings: GateSettings, threshold: RecencyClass, min_share: float = 0.5
) -> GateQuality | None:
    """The measured quality of the gate with this model and setting, or None when never measured."""
    found = find(info, settings)
    return None if found is None else quality(found, threshold, min_share)


def not_measured(spec: str) -> str:
    return (
        f"the gate's routing quality with {spec} was never measured: "
        f"`chronoprobe recency gate-check --model {spec}` measures it on the held-out RecencyQA split"
    )


def warn_if_weak(info: BackendInfo, settings: GateSettings, threshold: RecencyClass, min_share: float) -> None:
    """A logged warning (once per model and setting) when the measured quality is below the useful level."""
    key = check_key(info, settings) + threshold.label + str(min_share)
    if key in _warned:
        return
    _warned.add(key)
    measured = gate_quality(info, settings, threshold, min_share)
    if measured is None:
        log.warning(not_measured(info.spec))
    elif not measured.useful:
        log.warning(f"{measured.line()}; {measured.verdict()}")
