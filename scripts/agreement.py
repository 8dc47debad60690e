"""Agreement of our DyKnow classifier with the original authors' verdicts.

For every model folder under the results directory, score the generations with
``chronoprobe.lenses.outdated.score`` and compare each verdict with the authors':
their ``*_answer_sheet.json`` where present, else the verdict buckets of their
``*_analysis.json`` (Mistral-7B-Instruct-v0.1 ships no answer sheet).

    python scripts/agreement.py [--results DIR] [--gold grc_generated.json] [--aliases] [--show 5]

Prints a per-model agreement table (overall, paraphrases only, per category), the
confusion of (authors, ours) verdicts, and every disagreement grouped by class.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "dyknow"
OURS_TO_AUTHORS = {
    "up-to-date": "correct",
    "outdated": "outdated",
    "irrelevant": "irrelevant",
    "ambiguous": "ambiguous",
}

Key = tuple[str, str, str | None, str]  # category, subject, attribute, prompt key


def authors_verdicts(model_dir: Path) -> tuple[dict[Key, str], str]:
    """The authors' verdict per response, and where it came from."""
    verdicts: dict[Key, str] = {}
    sheets = sorted(model_dir.glob("*_answer_sheet.json"))
    if sheets:
        for path in sheets:
            category = path.name[: -len("_answer_sheet.json")]
            for subject, node in json.loads(path.read_text(encoding="utf-8")).items():
                for key, value in node.items():
                    if isinstance(value, dict):
                        for prompt_key, verdict in value.items():
                            verdicts[(category, subject, key, prompt_key)] = verdict
                    else:
                        verdicts[(category, subject, None, key)] = value
        return verdicts, "answer_sheet"
    for path in sorted(model_dir.glob("*_analysis.json")):
        category = path.name[: -len("_analysis.json")]
        for prompt_key, buckets in json.loads(path.read_text(encoding="utf-8")).items():
            for verdict, items in buckets.items():
                for item in items:
                    verdicts[(category, item["element"], item["attribute"], prompt_key)] = verdict
    return verdicts, "analysis"


def authors_analysis(model_dir: Path) -> dict[Key, dict[str, Any]]:
    """The authors' analysis entry (verdict bucket, matches, match types) per response."""
    entries: dict[Key, dict[str, Any]] = {}
    for path in sorted(model_dir.glob("*_analysis.json")):
        category = path.name[: -len("_analysis.json")]
        for prompt_key, buckets in json.loads(path.read_text(encoding="utf-8")).items():
            for verdict, items in buckets.items():
                for item in items:
                    entries[(category, item["element"], item["attribute"], prompt_key)] = dict(item, verdict=verdict)
    return entries


def explain(key: Key, their: str, row: dict[str, Any], analysis: dict[str, Any] | None, redo: Any) -> str:
    """The class of one disagreement, by re-running the original's behaviour where we can."""
    mine = OURS_TO_AUTHORS[row["verdict"]]
    if analysis is not None and analysis["verdict"] != their and analysis["verdict"] == mine:
        return "authors' answer sheet contradicts their own analysis file"
    if redo("rfind") == their:
        return "authors cut the response at the LAST repeat of the prompt (rfind)"
    if row["verdict"] == "ambiguous" or (analysis and len(analysis["matched_answers"]) > 1):
        return "several entities at the same position: authors resolved by hand"
    if any("national" in label for label in row["matched"]):
        return "national team: removed from the gold by the authors' hand-made exception list"
    if redo("p585") == their:
        return "authors' P585 bug (point in time read as an end date)"
    if row["rule"] == "head-noun" or (analysis and "head" in analysis["match_type"]):
        return "head noun differs (authors: spaCy parse; ours: documented rule)"
    return "other"


def our_rows(out_dir: Path) -> dict[Key, dict[str, Any]]:
    rows = {}
    for line in (out_dir / "classifications.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[(row["category"], row["subject"], row["attribute"], row["prompt_key"])] = row
    return rows


def load_gold(grc: Path) -> dict[str, Any]:
    from chronoprobe.knowledge.grc import load_grc

    return dict(load_grc(grc)[1])


def prompts_of(model_dir: Path) -> dict[Key, tuple[str, str | None]]:
    """(generated text, prompt) per response, straight from the answers files."""
    from chronoprobe.lenses.outdated.score import read_answers_file

    return {
        (r.category, r.subject, r.attribute, r.prompt_key): (r.text, r.prompt)
        for path in sorted(model_dir.glob("*_answers.json"))
        for r in read_answers_file(path)
    }


def reclassifier(key: Key, prompts: dict[Key, tuple[str, str | None]], gold: dict[str, Any], aliases: bool) -> Any:
    """redo(variant) -> the authors'-style verdict name with one original behaviour switched back on."""
    from chronoprobe.knowledge.types import FactAnswers
    from chronoprobe.lenses.outdated.score import fact_id_of
    from chronoprobe.metrics.dyknow import classify_response

    category, subject, attribute, _ = key
    text, prompt = prompts[key]
    answers: FactAnswers = gold[fact_id_of(category, subject, attribute)]

    def redo(variant: str) -> str:
        response, use_prompt = text, prompt
        if variant == "rfind" and prompt and prompt in text:
            response, use_prompt = text[text.rfind(prompt) + len(prompt) :], None
        if variant == "p585":
            answers_v = FactAnswers(
                fact_id=answers.fact_id,
                statements=tuple(
                    s.model_copy(update={"end": s.point_in_time}) if s.point_in_time and not s.end else s
                    for s in answers.statements
                ),
            )
        else:
            answers_v = answers
        c = classify_response(response, answers_v, use_aliases=aliases, prompt=use_prompt, subject=subject)
        return OURS_TO_AUTHORS[c.verdict]

    return redo


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f}%" if b else "   - "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=SHARED / "models_output" / "results")
    parser.add_argument("--gold", type=Path, default=SHARED / "grc_generated.json")
    parser.add_argument("--aliases", action="store_true")
    parser.add_argument("--show", type=int, default=100, help="examples listed per disagreement class")
    parser.add_argument("--out", type=Path, default=None, help="keep our outputs here (default: a temp folder)")
    args = parser.parse_args(argv)

    from chronoprobe.lenses.outdated.score import score_generations

    gold = load_gold(args.gold)
    out_root = args.out or Path(tempfile.mkdtemp(prefix="dyknow-agreement-"))
    models = sorted(p for p in args.results.iterdir() if p.is_dir() and any(p.glob("*_answers.json")))
    table = []
    classes: dict[tuple[str, str], list[tuple[str, Key, dict[str, Any]]]] = defaultdict(list)
    for model_dir in models:
        out = out_root / model_dir.name
        score_generations(model_dir, out, gold=args.gold, gold_answers=gold, use_aliases=args.aliases)
        theirs, source = authors_verdicts(model_dir)
        analysis = authors_analysis(model_dir)
        ours = our_rows(out)
        prompts = prompts_of(model_dir)
        per_cat: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        all_keys = [0, 0]
        para = [0, 0]
        for key, their in theirs.items():
            row = ours.get(key)
            if row is None:
                continue
            mine = OURS_TO_AUTHORS[row["verdict"]]
            ok = int(mine == their)
            per_cat[key[0]][0] += ok
            per_cat[key[0]][1] += 1
            all_keys[0] += ok
            all_keys[1] += 1
            if key[3] != "generic":
                para[0] += ok
                para[1] += 1
            if not ok:
                redo = reclassifier(key, prompts, gold, args.aliases)
                why = explain(key, their, row, analysis.get(key), redo)
                classes[(why, f"{their} -> {mine}")].append((model_dir.name, key, row))
        table.append((model_dir.name, source, all_keys, para, dict(per_cat)))

    categories = sorted({c for *_, per in table for c in per})
    print(f"outputs in {out_root}\n")
    header = ["model", "authors' file", "all prompts", "paraphrases"] + categories
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for name, source, all_keys, para, per in table:
        cells = [name, source, f"{pct(*all_keys)} ({all_keys[0]}/{all_keys[1]})", f"{pct(*para)} ({para[0]}/{para[1]})"]
        cells += [f"{pct(*per[c])} ({per[c][0]}/{per[c][1]})" if c in per else "-" for c in categories]
        print(" | ".join(cells))
    print("\nDisagreements by class (authors -> ours):")
    for (why, change), items in sorted(classes.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        by_model = Counter(m for m, _, _ in items)
        print(f"\n## {why}: {change}: {len(items)}  {dict(by_model)}")
        for model, key, row in items[: args.show]:
            category, subject, attribute, prompt_key = key
            where = f"{subject}{' / ' + attribute if attribute else ''} [{prompt_key}]"
            match = (
                f"{row['rule']}: {row['matched_text']} -> {row['matched']} {row['matched_start']}"
                if row["rule"]
                else "-"
            )
            print(f"- {model} {category} {where}: {match}\n    {row['searched'][:160]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
