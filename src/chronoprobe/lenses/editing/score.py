"""Re-score editing and RAG generations in DyKnow's result layout (no model calls).

Input (``--generations``): DyKnow's root (holding ``models_editing/results`` and ``RAG/``) or the
``results`` folder itself, with ``<METHOD>/<single_edits|batch_editing>/<model>/<category>_answers.json``
and, under ``RAG/``, ``results/<model>``, ``RAG_RETRIEVAL/results/<model>`` and ``noisy_results/<model>``.
Each folder is one column of Tables 3/7/8 (:data:`EDIT_COLUMNS`, :data:`RAG_COLUMNS`); a method
folder not in the tables is scored under ``<METHOD>/<mode>``.

Input (``--dataset``): the ``editing_dataset.json`` the answers were made for, or a folder like
DyKnow's ``editing_datasets/`` with one per model (its folder names are mapped to the result
folders' model names, :func:`dataset_folder_names`).

Labels: ``ours`` re-classifies every answer with our classifier; the prediction is the text after
the *last* occurrence of the stored question (DyKnow's rule, notes §3.2), or the whole text when the
question does not occur. ``original`` takes DyKnow's labels from ``<category>_analysis.json``
(reproduces the paper's numbers); a folder with no analysis file at all is left out and listed (the
paper's "-"), one with only some is an error naming the missing file.

Output, staged and published whole: ``scores.json`` (per model, method and group: E, P, HM and soft
constraint with n and 95% intervals) and ``report.md`` (Table 3- and Table 7-shaped tables).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from chronoprobe.datasets.editing_records import GROUPS, EditRecord
from chronoprobe.errors import ConfigError, DataError
from chronoprobe.io import read_text, write_json_atomic, write_text_atomic
from chronoprobe.knowledge.grc import fact_id as make_fact_id
from chronoprobe.knowledge.types import FactAnswers
from chronoprobe.lenses.editing.dataset import read_dataset
from chronoprobe.lenses.outdated.score import ANSWERS_SUFFIX, read_answers_file
from chronoprobe.metrics.dyknow import Verdict, classify_response
from chronoprobe.metrics.editing import ALL, EditScores, editing_scores
from chronoprobe.metrics.uncertainty import Estimate
from chronoprobe.provenance import Provenance

Labels = Literal["ours", "original"]
LABELS: tuple[Labels, ...] = ("ours", "original")

EDIT_COLUMNS = {
    ("ROME", "single_edits"): "ROME",
    ("MEMIT", "batch_editing"): "MEMIT",
    ("SERAC", "batch_editing"): "SERAC",
    ("IKE_REALISTIC_NULL", "single_edits"): "IKE",
}
"""The editing folders behind Table 3/7's columns (IKE is DyKnow's IKE_REALISTIC_NULL run)."""
RAG_COLUMNS = {
    ("RAG_RETRIEVAL", "results"): "RAG Retrieved",
    ("results",): "RAG Gold",
    ("noisy_results",): "Noisy",
}
"""Folders under ``RAG/``: retrieved and gold document (Tables 3/7), noise + gold (Table 8)."""
COLUMN_ORDER = ("ROME", "MEMIT", "SERAC", "IKE", "RAG Retrieved", "RAG Gold", "Noisy")
EDIT_MODES = ("single_edits", "batch_editing")
DATASET_FILE = "editing_dataset.json"
_DATASET_FOLDER = {"Llama-2-7b-chat-hf": "llama2-7b-chat", "Llama-2-7b-hf": "llama2-7b"}
_ORIGINAL_VERDICT: dict[str, Verdict] = {
    "correct": "up-to-date",
    "outdated": "outdated",
    "irrelevant": "irrelevant",
    "ambiguous": "ambiguous",
}


class GenerationsFolder(BaseModel):
    """One folder of answers: a model under one method."""

    model: str
    method: str
    path: Path


class MethodScores(BaseModel):
    """One model under one method: the measures per group and what could not be scored."""

    folder: str
    dataset: str
    groups: dict[str, EditScores]
    """Politicians, Teams, Positions and All."""
    missing: list[str] = Field(default_factory=list)
    """Dataset facts without an answer (or label) for every scored question: left out of n."""
    not_in_dataset: list[str] = Field(default_factory=list)
    """Facts answered in the folder but absent from the dataset: ignored."""


class EditingScoreSummary(BaseModel):
    generations: str
    dataset: str
    labels: Labels
    models: dict[str, dict[str, MethodScores]]
    """model folder -> method (table column) -> scores."""
    unlabelled: dict[str, str] = Field(default_factory=dict)
    """With ``--labels original``: folder -> why it was left out (no analysis files)."""
    no_dataset: dict[str, str] = Field(default_factory=dict)
    """Folder -> why it was left out: no editing dataset for its model (e.g. DyKnow's unused ``*-full-context``)."""
    provenance: Provenance


# --- finding the folders ------------------------------------------------------------------------


def _answer_dirs(parent: Path) -> Iterable[Path]:
    if parent.is_dir():
        for child in sorted(parent.iterdir()):
            if child.is_dir() and any(child.glob(f"*{ANSWERS_SUFFIX}")):
                yield child


def find_generations(root: Path | str) -> list[GenerationsFolder]:
    """Every answers folder under ``root`` (DyKnow's root, or its ``models_editing/results``)."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(str(root), "not a folder")
    dyknow_root = (root / "models_editing" / "results").is_dir() or (root / "RAG").is_dir()
    results = root / "models_editing" / "results" if dyknow_root else root
    found: list[GenerationsFolder] = []
    if results.is_dir():
        for method in sorted(p for p in results.iterdir() if p.is_dir()):
            for mode in EDIT_MODES:
                column = EDIT_COLUMNS.get((method.name, mode), f"{method.name}/{mode}")
                found += [GenerationsFolder(model=d.name, method=column, path=d) for d in _answer_dirs(method / mode)]
    if dyknow_root:
        for parts, column in RAG_COLUMNS.items():
            found += [
                GenerationsFolder(model=d.name, method=column, path=d)
                for d in _answer_dirs(root.joinpath("RAG", *parts))
            ]
    if not found:
        raise DataError(
            str(root),
            f"no *{ANSWERS_SUFFIX} in DyKnow's editing layout (<METHOD>/<single_edits|batch_editing>/<model>/, "
            "or a root holding models_editing/results and RAG/)",
        )
    return found


def dataset_folder_names(model: str) -> list[str]:
    """Folder names in DyKnow's ``editing_datasets/`` that may hold ``model``'s dataset, best first."""
    names = [model, _DATASET_FOLDER.get(model, model)]
    simple = model.removesuffix("-hf").replace("Llama-2", "llama2")
    names += [simple, simple.lower()]
    return list(dict.fromkeys(names))


class _Datasets:
    """The dataset for each model folder, read once."""

    def __init__(self, source: Path) -> None:
        self.source = source
        if not source.exists():
            raise DataError(str(source), "not found; give an editing_dataset.json or a folder of them")
        self.single = (
            source if source.is_file() else source / DATASET_FILE if (source / DATASET_FILE).is_file() else None
        )
        self._read: dict[Path, list[EditRecord]] = {}

    def find(self, model: str) -> Path | None:
        """The dataset for ``model``'s folder, or None when the dataset folder has none for it."""
        if self.single is not None:
            return self.single
        for name in dataset_folder_names(model):
            candidate = self.source / name / DATASET_FILE
            if candidate.is_file():
                return candidate
        return None

    def path_for(self, model: str) -> Path:
        found = self.find(model)
        if found is not None:
            return found
        present = sorted(p.name for p in self.source.iterdir() if (p / DATASET_FILE).is_file())
        raise DataError(
            f"--dataset {self.source}",
            f"no {DATASET_FILE} for model {model} (looked in {', '.join(dataset_folder_names(model))}; "
            f"present: {', '.join(present) or 'none'})",
        )

    def records(self, path: Path) -> list[EditRecord]:
        if path not in self._read:
            self._read[path] = read_dataset(path)
        return self._read[path]


# --- labels -------------------------------------------------------------------------------------


def prediction(answer: str, question: str | None) -> str:
    """The text after the last occurrence of the stored question (DyKnow's rule), else the whole answer."""
    if question:
        at = answer.rfind(question)
        if at >= 0:
            return answer[at + len(question) :]
    return answer


def scoring_gold(record: EditRecord) -> FactAnswers:
    """The record's answers as the judge uses them: for athletes, a current national team is left out
    (generalising DyKnow's EXCEPTIONS, as :func:`chronoprobe.lenses.editing.dataset.current_targets` does)."""
    gold = record.gold()
    if record.domain != "athletes_byPayment":
        return gold
    kept = tuple(s for s in gold.statements if not (s.is_current and "national" in s.label.casefold()))
    return FactAnswers(fact_id=gold.fact_id, statements=kept)


def _labels_ours(folder: Path, records: dict[str, EditRecord], strangers: set[str]) -> dict[str, dict[str, Verdict]]:
    verdicts: dict[str, dict[str, Verdict]] = {}
    golds: dict[str, FactAnswers] = {}
    for path in sorted(folder.glob(f"*{ANSWERS_SUFFIX}")):
        for response in read_answers_file(path):
            record = records.get(response.fact_id)
            if record is None:
                strangers.add(response.fact_id)
                continue
            if response.prompt_key not in record.scored_types:
                continue
            gold = golds.setdefault(record.fact_id, scoring_gold(record))
            text = prediction(response.text, response.prompt)
            verdict = classify_response(text, gold, subject=record.element).verdict
            verdicts.setdefault(record.fact_id, {})[response.prompt_key] = verdict
    return verdicts


def _read_json(path: Path) -> Any:
    try:
        return json.loads(read_text(path))
    except ValueError as exc:
        raise DataError(str(path), f"not valid JSON ({exc})") from None


def _labels_original(
    folder: Path, records: dict[str, EditRecord], strangers: set[str]
) -> dict[str, dict[str, Verdict]]:
    verdicts: dict[str, dict[str, Verdict]] = {}
    for answers in sorted(folder.glob(f"*{ANSWERS_SUFFIX}")):
        category = answers.name[: -len(ANSWERS_SUFFIX)]
        path = folder / f"{category}_analysis.json"
        if not path.is_file():
            raise DataError(str(path), "not found; --labels original needs DyKnow's analysis file beside the answers")
        data = _read_json(path)
        if not isinstance(data, dict):
            raise DataError(str(path), "expected {question kind: {label: [items]}}")
        for kind, by_label in data.items():
            if not isinstance(by_label, dict):
                raise DataError(f"{path} [{kind}]", "expected {label: [items]}")
            for label, items in by_label.items():
                if label not in _ORIGINAL_VERDICT or not isinstance(items, list):
                    raise DataError(
                        f"{path} [{kind}]", f"unknown label {label!r} (expected correct/outdated/irrelevant/ambiguous)"
                    )
                for item in items:
                    if not isinstance(item, dict) or not isinstance(item.get("element"), str):
                        raise DataError(f"{path} [{kind}/{label}]", "each item needs an 'element'")
                    attribute = item.get("attribute")
                    fid = make_fact_id(category, item["element"], attribute if isinstance(attribute, str) else None)
                    if fid not in records:
                        strangers.add(fid)
                        continue
                    verdicts.setdefault(fid, {})[kind] = _ORIGINAL_VERDICT[label]
    return verdicts


# --- scoring ------------------------------------------------------------------------------------


def score_folder(
    folder: GenerationsFolder, records: Sequence[EditRecord], dataset: Path, labels: Labels
) -> MethodScores:
    """The measures for one answers folder against its dataset."""
    by_id = {r.fact_id: r for r in records}
    strangers: set[str] = set()
    reader = _labels_ours if labels == "ours" else _labels_original
    verdicts = reader(folder.path, by_id, strangers)
    complete = [r for r in records if all(k in verdicts.get(r.fact_id, {}) for k in r.scored_types)]
    missing = [r.fact_id for r in records if r not in complete]
    return MethodScores(
        folder=str(folder.path),
        dataset=str(dataset),
        groups=editing_scores(complete, verdicts),
        missing=missing,
        not_in_dataset=sorted(strangers),
    )


def _method_key(method: str) -> tuple[int, str]:
    return (COLUMN_ORDER.index(method), "") if method in COLUMN_ORDER else (len(COLUMN_ORDER), method)


SCORE_KIND = "editing score"
"""What the folder marker of a scores folder says wrote it."""


def scoring_extra(generations: Path | str, dataset: Path | str, labels: Labels) -> dict[str, Any]:
    """What produced a scores folder, as its provenance's ``extra`` records it."""
    return {
        "generations": str(generations),
        "dataset": str(dataset),
        "labels": labels,
        "classifier": "chronoprobe.metrics.dyknow after the last occurrence of the stored question"
        if labels == "ours"
        else "DyKnow's <category>_analysis.json labels",
    }


def scores_summary(
    generations: Path | str,
    dataset: Path | str,
    provenance: Provenance,
    *,
    labels: Labels = "ours",
    models: Sequence[str] | None = None,
) -> EditingScoreSummary:
    """Score every answers folder under ``generations`` (everything read and scored, nothing written).

    ``models``: only these model folders (default: all).
    """
    if labels not in LABELS:
        raise ConfigError("--labels", f"{labels!r} is not one of {', '.join(LABELS)}")
    generations, dataset = Path(generations), Path(dataset)
    folders = find_generations(generations)
    if models:
        unknown = sorted(set(models) - {f.model for f in folders})
        if unknown:
            present = ", ".join(sorted({f.model for f in folders}))
            raise ConfigError(
                f"--model {unknown[0]}", f"no answers for it under {generations}; models there: {present}"
            )
        folders = [f for f in folders if f.model in models]
    datasets = _Datasets(dataset)
    scored: dict[str, dict[str, MethodScores]] = {}
    unlabelled: dict[str, str] = {}
    no_dataset: dict[str, str] = {}
    for folder in sorted(folders, key=lambda f: (f.model, _method_key(f.method))):
        if labels == "original" and not any(folder.path.glob("*_analysis.json")):
            unlabelled[str(folder.path)] = "no *_analysis.json (DyKnow did not label it)"
            continue
        path = datasets.find(folder.model)
        if path is None:  # e.g. DyKnow's IKE/single_edits/<model>-full-context: an older run of no table
            no_dataset[str(folder.path)] = f"no {DATASET_FILE} for model folder {folder.model!r} in {dataset}"
            continue
        scored.setdefault(folder.model, {})[folder.method] = score_folder(folder, datasets.records(path), path, labels)
    if not scored and no_dataset:
        datasets.path_for(folders[0].model)  # nothing could be scored: the missing dataset is the error
    if not scored:
        first = folders[0].path / "<category>_analysis.json"
        raise DataError(str(first), "not found; --labels original needs DyKnow's analysis files beside the answers")
    return EditingScoreSummary(
        generations=str(generations),
        dataset=str(dataset),
        labels=labels,
        models=scored,
        unlabelled=unlabelled,
        no_dataset=no_dataset,
        provenance=provenance,
    )


def write_scores(folder: Path, summary: EditingScoreSummary) -> None:
    """``scores.json`` and ``report.md`` in ``folder`` (a staging folder)."""
    write_json_atomic(folder / "scores.json", summary.model_dump(mode="json"))
    write_text_atomic(folder / "report.md", report_markdown(summary))


# --- report -------------------------------------------------------------------------------------


def _pct(estimate: Estimate) -> str:
    return estimate.cell(1, 100.0, "%")


def _table(model: str, methods: dict[str, MethodScores], measure: str) -> list[str]:
    columns = list(methods)
    lines = [
        "| group | facts | " + " | ".join(columns) + " |",
        "|---|---:|" + "---:|" * len(columns),
    ]
    for group in (*GROUPS, ALL):
        facts = {m.groups[group].facts for m in methods.values()}
        shown = str(facts.pop()) if len(facts) == 1 else "/".join(str(m.groups[group].facts) for m in methods.values())
        cells = [_pct(getattr(methods[c].groups[group], measure)) for c in columns]
        lines.append(f"| {group} | {shown} | " + " | ".join(cells) + " |")
    return lines


def report_markdown(summary: EditingScoreSummary) -> str:
    """Table 3- (harmonic mean) and Table 7- (soft constraint) shaped tables per model, then E and P."""
    lines = [
        "# Editing scores",
        "",
        f"Generations: `{summary.generations}`; dataset: `{summary.dataset}`; labels: {summary.labels}.",
        "Each cell: value [95% interval]. HM = 2EP/(E+P), E = efficacy (edit prompt up to date), "
        "P = paraphrase success (pooled over the two paraphrases); intervals: Wilson for E and the soft constraint, "
        "Wilson for P clustered on the fact (its two paraphrases), a seeded bootstrap over facts for HM.",
        "",
    ]
    for model, methods in summary.models.items():
        lines += [f"## {model}", "", "### Harmonic mean of efficacy and paraphrase success (Table 3)", ""]
        lines += _table(model, methods, "harmonic_mean")
        lines += ["", "### Soft constraint: any scored prompt up to date (Table 7)", ""]
        lines += _table(model, methods, "soft_constraint")
        if "RAG Gold" in methods and "Noisy" in methods:
            lines += ["", "### Noisy retrieval: harmonic mean, gold document vs noise + gold (Table 8)", ""]
            lines += _table(model, {m: methods[m] for m in ("RAG Gold", "Noisy")}, "harmonic_mean")
            lines += [
                "",
                "Table 8's caption names the soft constraint; its numbers are the harmonic mean (chronoprobe docs editing).",
            ]
        lines += ["", "### Efficacy and paraphrase success (All)", "", "| method | E | P |", "|---|---:|---:|"]
        for method, scores in methods.items():
            everything = scores.groups[ALL]
            lines.append(f"| {method} | {_pct(everything.efficacy)} | {_pct(everything.paraphrase)} |")
        gaps = [(m, s) for m, s in methods.items() if s.missing or s.not_in_dataset]
        if gaps:
            lines += [""]
            for method, scores in gaps:
                if scores.missing:
                    lines.append(
                        f"- {method}: {len(scores.missing)} fact(s) without every answer, left out: "
                        + ", ".join(scores.missing)
                    )
                if scores.not_in_dataset:
                    lines.append(
                        f"- {method}: {len(scores.not_in_dataset)} answered fact(s) not in the dataset, ignored"
                    )
        lines.append("")
    left_out = {**summary.unlabelled, **summary.no_dataset}
    if left_out:
        lines += ["## Not scored", ""]
        lines += [f"- `{folder}`: {why}" for folder, why in left_out.items()]
        lines.append("")
    return "\n".join(lines)
