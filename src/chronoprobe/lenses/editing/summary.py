"""One model's editing results: Table 3/7 measures per method, locality, fluency and time per edit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.lenses.editing.compare import paired_fixes
from chronoprobe.lenses.editing.config import COLUMN
from chronoprobe.lenses.editing.metric_records import EditSetRecord
from chronoprobe.lenses.editing.rows import UNEDITED, EditingRow, MethodRun
from chronoprobe.metrics.dyknow import Verdict
from chronoprobe.metrics.editing import editing_scores, ngram_entropy, score_facts
from chronoprobe.metrics.uncertainty import wilson, wilson_clustered

UP = "up-to-date"


def _verdicts(rows: Sequence[EditingRow]) -> dict[str, dict[str, Verdict]]:
    found: dict[str, dict[str, Verdict]] = defaultdict(dict)
    for row in rows:
        if row.role in ("edit", "paraphrase") and row.verdict is not None and row.question_kind:
            found[row.fact_id][row.question_kind] = row.verdict
    return found


def locality(rows: Sequence[EditingRow]) -> dict[str, Any] | None:
    """How the edit changed answers about facts that were not edited (None when not measured)."""
    asked = [r for r in rows if r.role == "locality" and r.before is not None]
    if not asked:
        return None
    per_fact: dict[str, list[EditingRow]] = defaultdict(list)
    for row in asked:
        per_fact[row.fact_id].append(row)
    was_up = [f for f, rs in per_fact.items() if any(r.before == UP for r in rs)]
    lost = [f for f in was_up if not any(r.verdict == UP for r in per_fact[f])]
    gained = [f for f, rs in per_fact.items() if f not in was_up and any(r.verdict == UP for r in rs)]
    facts_changed = [f for f, rs in per_fact.items() if any(r.verdict != r.before for r in rs)]
    # a fact's locality answers share it: the answer-level rates cluster on the fact
    answers_changed = wilson_clustered([r.verdict != r.before for r in asked], [r.fact_id for r in asked])
    result: dict[str, Any] = {
        "facts": len(per_fact),
        "answers": len(asked),
        "answers_changed": answers_changed.to_json(),
        "facts_changed": wilson(len(facts_changed), len(per_fact)).to_json(),
        "up_to_date_before": len(was_up),
        "up_to_date_lost": wilson(len(lost), len(was_up)).to_json(),
        "up_to_date_lost_facts": lost,
        "up_to_date_gained": len(gained),
    }
    routed = [r for r in asked if r.routed is not None]
    if routed:
        result["false_scope_hits"] = wilson_clustered(
            [bool(r.routed) for r in routed], [r.fact_id for r in routed]
        ).to_json()
    return result


def _fluency(rows: Sequence[EditingRow]) -> float | None:
    texts = [r.response for r in rows if r.role == "fluency"]
    return round(ngram_entropy(texts), 4) if texts else None


def _result(
    method: str, fraction: float, records: Sequence[EditRecord], rows: Sequence[EditingRow], run: MethodRun | None
) -> dict[str, Any]:
    verdicts = _verdicts(rows)
    scored = [r for r in records if all(k in verdicts.get(r.fact_id, {}) for k in r.scored_types)]
    scores = editing_scores(scored, verdicts)
    entry: dict[str, Any] = {
        "method": method,
        "column": COLUMN.get(method, method),
        "fraction": fraction,
        "facts": len(scored),
        "scores": {group: s.model_dump(mode="json") for group, s in scores.items()},
        "fluency": _fluency(rows),
        "locality": locality(rows) if fraction == 1.0 and method != UNEDITED else None,
    }
    routed = [r for r in rows if r.role in ("edit", "paraphrase") and r.routed is not None]
    if routed:
        entry["scope_hits"] = wilson_clustered([bool(r.routed) for r in routed], [r.fact_id for r in routed]).to_json()
    if run is not None:
        entry.update(
            mode=run.mode,
            seconds_per_edit=run.seconds_per_edit,
            edit_seconds=run.edit_seconds,
            reused=run.reused,
            skipped=run.skipped,
            notes=run.notes,
            hparams_source=run.hparams_source,
        )
    return entry


def summarise_model(
    records: Sequence[EditRecord],
    rows: Sequence[EditingRow],
    runs: Sequence[MethodRun],
    *,
    dataset: EditSetRecord,
) -> dict[str, Any]:
    """The model's summary layout (``summary.json`` per model spec)."""
    by_key: dict[tuple[str, float], list[EditingRow]] = defaultdict(list)
    for row in rows:
        by_key[(row.method, row.fraction)].append(row)
    results = [_result(UNEDITED, 1.0, records, by_key[(UNEDITED, 1.0)], None)]
    for run in runs:
        subset_ids = {r.fact_id for r in by_key[(run.method, run.fraction)]}
        subset = [r for r in records if r.fact_id in subset_ids]
        results.append(_result(run.method, run.fraction, subset, by_key[(run.method, run.fraction)], run))
    _add_shared(results, records, by_key)
    return {"dataset": dataset, "results": results, "paired": paired_fixes(rows)}


def _add_shared(
    results: Sequence[dict[str, Any]], records: Sequence[EditRecord], by_key: dict[tuple[str, float], list[EditingRow]]
) -> None:
    """When the methods on all the facts were scored on different facts (RAG gold skips a fact without a gold
    passage), each one's measures on the facts every one of them was scored on, so that two can be compared on
    the same facts (``shared``, with ``facts`` its count)."""
    whole = [entry for entry in results if entry["fraction"] == 1.0]
    verdicts = {entry["method"]: _verdicts(by_key[(entry["method"], 1.0)]) for entry in whole}
    scored = {
        method: {r.fact_id for r in records if all(k in found.get(r.fact_id, {}) for k in r.scored_types)}
        for method, found in verdicts.items()
    }
    shared_ids = set.intersection(*scored.values()) if scored else set()
    if not shared_ids or all(ids == shared_ids for ids in scored.values()):
        return
    shared = [r for r in records if r.fact_id in shared_ids]
    for entry in whole:
        entry["shared"] = score_facts(shared, verdicts[entry["method"]]).model_dump(mode="json")
