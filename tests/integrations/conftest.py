"""What the harness tests share: our own audit of the first facts, to set the harnesses' verdicts beside."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from chronoprobe.cli.main import main

AUDITED_FACTS = 4
"""`--limit 10` in a harness asks the first 10 paraphrases: the first 4 facts cover them."""


@pytest.fixture(scope="session")
def our_audit(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], dict[str, Any]]:
    """`chronoprobe outdated run` on the embedded SmolLM2 (first facts): row by (fact id, paraphrase)."""
    tmp = tmp_path_factory.mktemp("our-audit")
    args = [
        "outdated",
        "run",
        "--limit",
        str(AUDITED_FACTS),
        "--out",
        str(tmp / "run"),
        "--cache",
        str(tmp / "c.sqlite"),
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["chronoprobe", *args])
        try:
            main()
        except SystemExit as stopped:
            assert stopped.code in (0, None)
    rows = [json.loads(line) for line in (tmp / "run" / "items.jsonl").read_text().splitlines()]
    return {(r["fact_id"], r["template_index"]): r for r in rows}
