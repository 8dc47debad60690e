"""Build src/chronoprobe/data/editing/ from DyKnow's RAG passages.

Usage: python scripts/build_editing_data.py [path/to/dyknow/RAG]

Reads ``editing_passages.json`` (one hand-curated paragraph for each of 79 facts) and
``passages.json`` (0-16 matched Wikipedia paragraphs for each of the 130 facts) from
DyKnow (MIT, sislab-unitn/DyKnow@1182dd8) and writes:

- ``passages.json``: one gold passage per fact id: the curated paragraph when there is one,
  else the first paragraph of ``passages.json`` by match strength full > em > simplified > head;
  facts with no paragraph at all are listed under ``no_passage``;
- ``wikipedia_paragraphs.txt``: every distinct paragraph of ``passages.json``, one per line, in
  file order (the text corpus for MEMIT's second-moment statistics).

The output is deterministic, so running the script again reproduces the shipped files.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chronoprobe.io import write_text_atomic
from chronoprobe.knowledge.grc import fact_id

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RAG = ROOT / ".." / "shared" / "data" / "dyknow" / "RAG"
OUT = ROOT / "src" / "chronoprobe" / "data" / "editing"

STRENGTHS = ("full", "em", "simplified", "head")
SOURCE = {
    "repository": "https://github.com/sislab-unitn/DyKnow",
    "commit": "1182dd89b981d32b41eecc473c9ebebc75366e69",
    "licence": "MIT (Copyright (c) 2024 sislab-unitn)",
    "files": ["RAG/editing_passages.json", "RAG/passages.json"],
}


def _facts(tree: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(fact id, entry) for each fact; countries and organizations have an attribute level."""
    for category, subjects in tree.items():
        for subject, value in subjects.items():
            if "matches" in value:
                yield fact_id(category, subject, None), value
            else:
                for attribute, entry in value.items():
                    yield fact_id(category, subject, attribute), entry


def _paragraphs(entry: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(match strength, paragraph) in strength order, then file order."""
    for strength in STRENGTHS:
        for match in entry["matches"].get(strength, []):
            yield strength, match["paragraph"]


def _row(fid: str, source: str, page_url: str | None, paragraph: dict[str, Any]) -> dict[str, Any]:
    return {
        "fact_id": fid,
        "source": source,
        "page_url": page_url,
        "header": paragraph.get("header_name"),
        "text": paragraph["text"],
    }


def build(rag_dir: Path) -> dict[str, str]:
    """File name -> content of every generated file."""
    curated = dict(_facts(json.loads((rag_dir / "editing_passages.json").read_text(encoding="utf-8"))))
    matched = list(_facts(json.loads((rag_dir / "passages.json").read_text(encoding="utf-8"))))
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    corpus: dict[str, None] = {}
    for fid, entry in matched:
        ranked = list(_paragraphs(entry))
        for _, paragraph in ranked:
            corpus.setdefault(paragraph["text"].strip(), None)
        if fid in curated:
            chosen = list(_paragraphs(curated[fid]))
            if len(chosen) != 1:
                raise SystemExit(f"{fid}: expected exactly one curated paragraph, found {len(chosen)}")
            rows.append(_row(fid, "curated", curated[fid].get("page_url"), chosen[0][1]))
        elif ranked:
            strength, paragraph = ranked[0]
            rows.append(_row(fid, strength, entry.get("page_url"), paragraph))
        else:
            missing.append(fid)
    unknown = sorted(set(curated) - {fid for fid, _ in matched})
    if unknown:
        raise SystemExit(f"curated facts missing from passages.json: {', '.join(unknown)}")
    lines = [text for text in corpus if text]
    if any("\n" in text for text in lines):
        raise SystemExit("a paragraph spans several lines; the one-per-line corpus cannot hold it")
    passages = {
        "name": "dyknow-passages",
        "description": (
            "Gold Wikipedia passage per DyKnow fact: DyKnow's curated paragraph when there is one "
            "(source 'curated'), else the strongest matched paragraph (source full/em/simplified/head)."
        ),
        "source": SOURCE,
        "passages": rows,
        "no_passage": missing,
    }
    return {
        "passages.json": json.dumps(passages, ensure_ascii=False, separators=(",", ":")) + "\n",
        "wikipedia_paragraphs.txt": "\n".join(lines) + "\n",
    }


def main(argv: list[str]) -> None:
    rag_dir = Path(argv[0]) if argv else DEFAULT_RAG
    files = build(rag_dir)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        write_text_atomic(OUT / name, content)
    rows = json.loads(files["passages.json"])
    lines = files["wikipedia_paragraphs.txt"].splitlines()
    by_source: dict[str, int] = {}
    for row in rows["passages"]:
        by_source[row["source"]] = by_source.get(row["source"], 0) + 1
    print(f"passages.json: {len(rows['passages'])} facts with a passage {by_source}, {len(rows['no_passage'])} without")
    print(f"wikipedia_paragraphs.txt: {len(lines)} paragraphs, {sum(len(line) for line in lines)} characters")


if __name__ == "__main__":
    main(sys.argv[1:])
