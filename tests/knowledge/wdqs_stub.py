"""The WDQS stand-in of the older tests: ``chronoprobe.testing.wdqs`` over ``tests/assets/wikidata_fixture.ttl``.

New tests import ``chronoprobe.testing.wdqs`` directly (its default data is the stand-in built
from the shipped DyKnow snapshot); these keep the small hand-written fixture.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chronoprobe.testing.wdqs import EMPTY_RESULT, Fault, Seen, load_store
from chronoprobe.testing.wdqs import StubWDQS as _StubWDQS

FIXTURE = Path(__file__).resolve().parents[1] / "assets" / "wikidata_fixture.ttl"
__all__ = ["EMPTY_RESULT", "FIXTURE", "Fault", "Seen", "StubWDQS", "fixture_store"]


def fixture_store() -> Any:
    return load_store(FIXTURE)


class StubWDQS(_StubWDQS):
    def __init__(self, always: Fault | None = None) -> None:
        super().__init__(FIXTURE, always=always)
