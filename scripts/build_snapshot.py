"""Build the shipped snapshot src/chronoprobe/data/snapshots/dyknow-2023-12-18.json.

Usage: python scripts/build_snapshot.py [path/to/grc_generated.json]

DyKnow's authors retrieved their answer sets from Wikidata on 2023-12-18 and
published them in ``grc_generated.json`` (MIT; the underlying Wikidata data is
CC0). chronoprobe never queried Wikidata for this snapshot: this script
re-expresses the authors' file as a chronoprobe Snapshot so audits can be
reproduced offline against the paper's gold answers. The snapshot says so:
``endpoint`` names the file (not query.wikidata.org), ``source`` names the file,
its commit and its sha256, and ``query_hash`` is ``-`` (no chronoprobe query
was run; the authors' retrieval code is not public).

* fact ids are the catalogue's (``category/subject[/attribute]``); the script
  fails if the two sets differ;
* only statements with a start qualifier (P580) are kept: an answer without a
  validity start cannot be placed in time (4 of 1151 answers are dropped);
* a point in time (P585) stays a point in time (the original code read it as
  an end date);
* the statements carry no QIDs, aliases or ranks: the file has only English
  labels.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
from pathlib import Path

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.knowledge.grc import load_grc
from chronoprobe.knowledge.snapshot import DEFAULT_SNAPSHOT, save_snapshot, shipped_dir
from chronoprobe.knowledge.types import Snapshot

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_GRC = ROOT / ".." / "shared" / "data" / "dyknow" / "grc_generated.json"
DYKNOW = "github.com/sislab-unitn/DyKnow @ 1182dd8"


def build(grc_path: Path) -> Snapshot:
    _, answers = load_grc(grc_path)
    catalogue_ids = {fact.fact_id for fact in load_catalogue()}
    if set(answers) != catalogue_ids:
        missing = sorted(catalogue_ids - set(answers))[:5]
        extra = sorted(set(answers) - catalogue_ids)[:5]
        raise SystemExit(f"catalogue and {grc_path} disagree: missing {missing}, extra {extra}")
    return Snapshot(
        name=DEFAULT_SNAPSHOT,
        retrieved=dt.date(2023, 12, 18),
        endpoint=f"file grc_generated.json ({DYKNOW})",
        query_hash="-",
        source=(
            f"Wikidata as of 2023-12-18, as published in DyKnow's grc_generated.json ({DYKNOW}, "
            f"sha256 {hashlib.sha256(grc_path.read_bytes()).hexdigest()[:16]}); converted by "
            "scripts/build_snapshot.py, not retrieved by chronoprobe"
        ),
        license="CC0-1.0 (Wikidata); DyKnow file MIT",
        answers={fact_id: fact_answers.counted() for fact_id, fact_answers in sorted(answers.items())},
    )


def main(grc_path: Path) -> None:
    snapshot = build(grc_path)
    path = save_snapshot(snapshot, shipped_dir(), replace=True)
    kept = sum(len(a.statements) for a in snapshot.answers.values())
    print(f"wrote {len(snapshot.answers)} facts, {kept} statements to {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_GRC)
