"""The editing lens's outcomes item by item: each method against itself in another run on the same facts
(``chronoprobe compare``), and retrieval against editing inside one run (the check's "what to do").

Per method (and scaling share) and Table 3 group: per fact whether the edit prompt's answer is up to date
(efficacy) and whether any scored prompt's is (soft constraint), per paraphrase answer whether it is up to
date (clustered on its fact), and per fact its edit hit, paraphrase hits and paraphrases asked for the
harmonic mean of efficacy and paraphrase success (a statistic of the facts' summed components).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from chronoprobe.lenses.editing.rows import UNEDITED, EditingRow
from chronoprobe.metrics.paired import Comparable, Draws, ItemOutcomes, Kind, compare_outcomes
from chronoprobe.metrics.records import ALL
from chronoprobe.records.runlog import Run

UP = "up-to-date"
MEASURE = "harmonic_mean_pct"


def harmonic_mean(sums: np.ndarray) -> np.ndarray:
    """2EP / (E + P) of summed (edit hits, paraphrase hits, paraphrases asked, facts); 0 when both are 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        efficacy = sums[:, 0] / sums[:, 3]
        paraphrase = sums[:, 1] / np.maximum(sums[:, 2], 1.0)
        total = efficacy + paraphrase
        result: np.ndarray = np.where(total > 0, 2 * efficacy * paraphrase / np.where(total > 0, total, 1.0), 0.0)
    return result


def _name(row: EditingRow) -> str:
    return row.method if row.fraction == 1.0 else f"{row.method}@{100 * row.fraction:g}%"


def _facts(rows: Sequence[EditingRow]) -> dict[str, dict[str, Any]]:
    """Per fact: its group, the edit prompt's verdict and its paraphrases' (question kind -> verdict)."""
    facts: dict[str, dict[str, Any]] = defaultdict(lambda: {"group": "", "edit": None, "paraphrases": {}})
    for row in rows:
        if row.role not in ("edit", "paraphrase") or row.verdict is None:
            continue
        entry = facts[row.fact_id]
        entry["group"] = row.group
        if row.role == "edit":
            entry["edit"] = row.verdict
        else:
            entry["paraphrases"][row.question_kind or str(len(entry["paraphrases"]))] = row.verdict
    return {fact: entry for fact, entry in facts.items() if entry["edit"] is not None}


def method_outcomes(rows: Sequence[EditingRow], method: str) -> list[ItemOutcomes]:
    """One method's outcomes per Table 3 group and over all its facts (``all``)."""
    facts = _facts(rows)
    groups = {ALL: list(facts)}
    for fact, entry in facts.items():
        groups.setdefault(entry["group"], []).append(fact)
    found = []
    for group, members in groups.items():

        def outcome(measure: str, kind: Kind, values: dict[str, Any], group: str = group, **extra: Any) -> ItemOutcomes:
            return ItemOutcomes(
                metric=f"{method}.{measure}", group=group, kind=kind, values=values, scale=100.0, unit="facts", **extra
            )

        edit = {f: float(facts[f]["edit"] == UP) for f in members}
        soft = {f: float(facts[f]["edit"] == UP or UP in facts[f]["paraphrases"].values()) for f in members}
        answers = {f"{f}#{k}": float(v == UP) for f in members for k, v in facts[f]["paraphrases"].items()}
        owners = {f"{f}#{k}": f for f in members for k in facts[f]["paraphrases"]}
        parts = {
            f: (
                edit[f],
                float(sum(v == UP for v in facts[f]["paraphrases"].values())),
                float(len(facts[f]["paraphrases"])),
                1.0,
            )
            for f in members
        }
        found += [
            outcome("efficacy_pct", "rate", edit, phrase="fixes the edit prompt"),
            outcome("paraphrase_pct", "rate", answers, clusters=owners),
            outcome(MEASURE, "statistic", parts, statistic=harmonic_mean),
            outcome("soft_constraint_pct", "rate", soft, phrase="answers up to date"),
        ]
    return found


def comparable(run: Run, model: str) -> Comparable:
    """``model``'s outcomes in an editing run folder, per method (the unedited model too), and its edit set."""
    by_method: dict[str, list[EditingRow]] = defaultdict(list)
    for row in run.rows:
        if row.model == model:
            by_method[_name(row)].append(row)
    found = [outcome for method, rows in by_method.items() for outcome in method_outcomes(rows, method)]
    return Comparable(source=f"edit set {run.dataset}", outcomes=found)


def paired_fixes(rows: Sequence[EditingRow]) -> list[dict[str, Any]]:
    """Every retrieval method against every editing method (all facts, no scaling share) on the facts both were
    applied to: the harmonic mean's paired difference (editing minus retrieval) over all facts, as the summary
    records it for the check's "what to do"."""
    by_method: dict[str, list[EditingRow]] = defaultdict(list)
    for row in rows:
        if row.fraction == 1.0 and row.method != UNEDITED:
            by_method[row.method].append(row)
    overall = {
        method: next(o for o in method_outcomes(mine, method) if o.group == ALL and o.metric.endswith(MEASURE))
        for method, mine in by_method.items()
        if _facts(mine)
    }
    draws = Draws()
    found = []
    for rag, first in overall.items():
        if not rag.startswith("rag-"):
            continue
        for edit, second in overall.items():
            if edit.startswith("rag-"):
                continue
            paired = compare_outcomes(first, second, draws=draws)
            found.append({"retrieval": rag, "editing": edit, "metric": MEASURE, **paired.__dict__})
    return found
