"""``chronoprobe export lm-eval``: the outdated question as an lm-evaluation-harness task folder.

The folder holds ``chronoprobe_outdated.yaml``, ``chronoprobe_outdated.jsonl`` (one document per
paraphrase, with the fact's gold answers from the chosen snapshot, so the folder judges on its own)
and ``utils.py``, whose ``process_results`` calls chronoprobe's classifier::

    lm_eval --model hf --model_args pretrained=<folder> --tasks chronoprobe_outdated \\
        --include_path DIR --apply_chat_template --log_samples --output_path OUT

lm-eval loads ``utils.py`` itself, so this module is imported by lm-eval's process, not ours; it
needs chronoprobe but never lm-eval.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chronoprobe.integrations.outdated_items import load_items
from chronoprobe.io import write_jsonl_atomic, write_text_atomic
from chronoprobe.knowledge.types import Fact, FactAnswers
from chronoprobe.metrics.dyknow import VERDICTS, Verdict, classify_response, soft_constraint

TASK_NAME = "chronoprobe_outdated"
MAX_NEW_TOKENS = 20
"""As ``outdated run``'s default --max-new-tokens."""
FACT_SUFFIX = "per fact"
EXPORT_KIND = "lm-eval task export"


def _yaml(data_file: Path, as_of: dt.date | None) -> str:
    """The task config; metric names are the verdicts, as ``outdated run`` reports them."""
    per_prompt = "\n".join(
        f"  - metric: {v}\n    aggregation: mean\n    higher_is_better: {str(v == 'up-to-date').lower()}"
        for v in VERDICTS
    )
    per_fact = "\n".join(
        f"  - metric: {v} {FACT_SUFFIX}\n    aggregation: !function utils.{_soft_function(v)}\n"
        f"    higher_is_better: {str(v == 'up-to-date').lower()}"
        for v in VERDICTS
    )
    return f"""# Written by `chronoprobe export lm-eval`{f" (judged as of {as_of})" if as_of else ""}; see chronoprobe docs harnesses.
# Greedy, {MAX_NEW_TOKENS} new tokens, stopping only at the model's end-of-turn token: as `chronoprobe outdated run`.
# Run chat models with --apply_chat_template, as our audit renders their chat template.
# lm-eval renders it with the machine's date: a template that reads one (Llama 3.x) is not told the snapshot's day.
task: {TASK_NAME}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data_file}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{fact_id}}}}"
process_results: !function utils.process_results
generation_kwargs:
  until: []
  do_sample: false
  temperature: 0.0
  max_gen_toks: {MAX_NEW_TOKENS}
metric_list:
{per_prompt}
{per_fact}
metadata:
  version: 1.0
"""


def _soft_function(verdict: str) -> str:
    return "soft_" + verdict.replace("-", "_")


UTILS = '''"""Written by `chronoprobe export lm-eval`: lm-eval calls these, the verdicts are chronoprobe's."""

from chronoprobe.integrations.lm_eval_export import per_fact_share, score_document


def process_results(doc, results):
    return score_document(doc, results)


{functions}
'''


def _utils_py() -> str:
    functions = "\n\n".join(
        f"def {_soft_function(v)}(items):\n    return per_fact_share(items, {v!r})\n" for v in VERDICTS
    )
    return UTILS.format(functions=functions).rstrip() + "\n"


def documents(
    facts: Sequence[Fact], gold: dict[str, FactAnswers], instruction: str, *, use_aliases: bool, as_of: dt.date | None
) -> list[dict[str, Any]]:
    """One lm-eval document per paraphrase, carrying what the classifier needs."""
    rows = []
    for fact in facts:
        gold_answers = gold[fact.fact_id]
        answers = gold_answers.model_dump(mode="json")
        if gold_answers.retrieved is not None:  # the snapshot's day, which judges a scheduled end
            answers["retrieved"] = gold_answers.retrieved.isoformat()
        for index, template in enumerate(fact.templates):
            rows.append(
                {
                    "fact_id": fact.fact_id,
                    "category": fact.category,
                    "subject": fact.subject,
                    "attribute": fact.attribute,
                    "template_index": index,
                    "template": template,
                    "prompt": instruction.format(sentence=template),
                    "gold": answers,
                    "use_aliases": use_aliases,
                    "as_of": as_of.isoformat() if as_of else None,
                }
            )
    return rows


def task_documents(
    *,
    snapshot: str | None = None,
    facts: Path | None = None,
    limit: int | None = None,
    use_aliases: bool = False,
    as_of: dt.date | None = None,
) -> list[dict[str, Any]]:
    """The task's documents: one per paraphrase of the first ``limit`` facts, with their gold answers from ``snapshot``."""

    items, snap = load_items(snapshot=snapshot, facts=facts, limit=limit)
    asked = list({i.fact.fact_id: i.fact for i in items}.values())
    instruction = items[0].instruction if items else ""
    return documents(asked, dict(snap.answers), instruction, use_aliases=use_aliases, as_of=as_of)


def write_task(folder: Path, rows: Sequence[dict[str, Any]], *, out: Path, as_of: dt.date | None) -> None:
    """The task folder's files, written into ``folder`` (a staging folder published as ``out``)."""
    data_name = f"{TASK_NAME}.jsonl"
    write_jsonl_atomic(folder / data_name, rows)
    # lm-eval resolves data_files from its working directory: name the published file absolutely.
    write_text_atomic(folder / f"{TASK_NAME}.yaml", _yaml(Path(out).resolve() / data_name, as_of))
    write_text_atomic(folder / "utils.py", _utils_py())


# --- called from the exported utils.py, inside lm-eval -------------------------------------------


def document_verdict(doc: dict[str, Any], text: str) -> Verdict:

    answers = FactAnswers.model_validate(doc["gold"])
    as_of = dt.date.fromisoformat(doc["as_of"]) if doc.get("as_of") else None
    index = int(doc["template_index"])
    return classify_response(
        text,
        answers,
        as_of=as_of,
        use_aliases=bool(doc.get("use_aliases")),
        prompt=doc["template"] if index >= 0 else None,
        subject=doc["subject"],
    ).verdict


def score_document(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """Per-answer indicators for the mean rates, and (fact id, verdict) pairs for the per-fact ones."""
    verdict = document_verdict(doc, results[0])
    scores: dict[str, Any] = {v: float(v == verdict) for v in VERDICTS}
    scores.update({f"{v} {FACT_SUFFIX}": (doc["fact_id"], verdict) for v in VERDICTS})
    return scores


def per_fact_share(items: Sequence[tuple[str, Verdict]], verdict: str) -> float:
    """Share of facts whose soft-constraint verdict (DyKnow) is ``verdict``."""
    by_fact: dict[str, list[Verdict]] = defaultdict(list)
    for fact_id, found in items:
        by_fact[str(fact_id)].append(found)
    facts = soft_constraint(by_fact)
    return sum(v == verdict for v in facts.values()) / len(facts) if facts else 0.0
