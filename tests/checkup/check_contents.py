"""What two runs of one check folder share: every file, scrubbed of times, paths and counts of new calls,
and the number of answers in a call cache (so a test can say no finished call was asked again)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

VOLATILE = {
    "created",
    "seconds",
    "model_calls_made",
    "from_cache",
    "computed",
    "written_first",
    "written_last",
    "threads",
    "call_cache",
    "command",
    "written",
    "handler",
}
"""What differs between two runs of one check: times, paths, new calls, and the mock handler's Python name
(the uninterrupted run calls the same answers in this process, without the pauses)."""


def cached_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def scrub(value: object, roots: tuple[str, ...]) -> object:
    """Drop what differs between two runs of the same check (times, paths, counts of new calls)."""
    if isinstance(value, dict):
        return {k: scrub(v, roots) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<out>")
    return value


def contents(out: Path) -> dict[str, object]:
    """Every file of the check folder, JSON files scrubbed, the card by its number cells."""
    found: dict[str, object] = {}
    roots = (str(out), str(out.parent))
    for path in sorted(out.rglob("*")):
        name = str(path.relative_to(out))
        if path.is_dir() or path.name in (".chronoprobe-run", "card.html", "report.md"):
            continue
        if path.suffix == ".json":
            found[name] = scrub(json.loads(path.read_text()), roots)
        elif path.suffix == ".jsonl":
            found[name] = [scrub(json.loads(line), roots) for line in path.read_text().splitlines()]
        elif path.suffix in (".md", ".csv"):
            found[name] = scrub(path.read_text(), roots)
        else:
            found[name] = path.read_bytes()
    card = (out / "card.html").read_text()
    found["card cells"] = sorted(set(part.split(">")[0] for part in card.split('<td class="num" ')[1:]))
    found["card answer"] = card.split('<section class="answer"')[1].split("</section>")[0]
    return found
