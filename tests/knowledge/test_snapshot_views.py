"""The snapshot views as data (``knowledge/snapshot_views.py``) and their drawing (``tables.TableView``),
hand-checked on two small snapshots written to files."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from rich.console import Console

from chronoprobe.errors import ConfigError
from chronoprobe.knowledge.snapshot_views import diff_view, fact_view, snapshot_view
from chronoprobe.knowledge.types import FactAnswers, Snapshot, Statement, WikidataDate


def _statement(label: str, start: str, end: str | None = None, qid: str | None = None) -> Statement:
    return Statement(
        label=label,
        qid=qid,
        start=WikidataDate.parse(start),
        end=WikidataDate.parse(end) if end else None,
    )


def _write(tmp_path: Path, name: str, answers: dict[str, tuple[Statement, ...]]) -> str:
    snapshot = Snapshot(
        name=name,
        retrieved=dt.date(2024, 1, 2),
        endpoint="http://127.0.0.1/sparql",
        query_hash="h",
        answers={fact: FactAnswers(fact_id=fact, statements=s) for fact, s in answers.items()},
    )
    path = tmp_path / f"{name}.json"
    path.write_text(snapshot.model_dump_json(), encoding="utf-8")
    return str(path)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[str, str]:
    mattarella = _statement("Mattarella", "+2015-02-03T00:00:00Z")
    napolitano = _statement("Napolitano", "+2006-05-15T00:00:00Z", "+2015-01-14T00:00:00Z")
    old = _write(tmp_path, "old", {"italy": (napolitano, mattarella), "gone": (mattarella,)})
    moved = _statement("Mattarella", "+2015-02-03T00:00:00Z", "+2029-01-01T00:00:00Z")
    new = _write(tmp_path, "new", {"italy": (napolitano, moved, _statement("Next", "+2029-01-02T00:00:00Z"))})
    return old, new


def test_a_statement_spans_its_dates_with_open_ends_named() -> None:
    assert _statement("A", "+2015-02-03T00:00:00Z").span() == "2015-02-03 - now"
    assert Statement(label="B", end=WikidataDate(year=2001)).span() == "? - 2001"
    at = Statement(label="C", point_in_time=WikidataDate(year=1999, month=5))
    assert at.span() == "? - now (at 1999-05)"


def test_the_diff_lists_the_changed_current_answer_and_every_statement(pair: tuple[str, str]) -> None:
    view = diff_view(*pair, statements=True)
    assert view.title == "Current answers: old -> new"
    # on the new snapshot's day (2024-01-02) Mattarella's term ends only in 2029: still current
    assert list(view.rows) == [("italy", "Mattarella", "Mattarella; Next", "2", "1")]
    assert view.after == (
        "+ italy: Mattarella [2015-02-03 - 2029-01-01]",
        "+ italy: Next [2029-01-02 - now]",
        "- italy: Mattarella [2015-02-03 - now]",
        "1 facts with changed current answers, 1 with any statement change, 1 only in old, 0 only in new",
    )
    assert diff_view(*pair).after == view.after[-1:]


def test_a_fact_view_orders_statements_and_drops_empty_columns(pair: tuple[str, str]) -> None:
    view = fact_view(pair[1], "italy")
    assert view.columns == ("answer", "valid", "current")  # labels only: no QID or alias column
    assert [row[0] for row in view.rows] == ["Napolitano", "Mattarella", "Next"]
    assert list(view.rows[1:]) == [
        ("Mattarella", "2015-02-03 - 2029-01-01", "yes"),
        ("Next", "2029-01-02 - now", "yes"),
    ]
    assert view.after == ("new has labels only (no QIDs or aliases); source: wikidata",)
    with pytest.raises(ConfigError, match="not in snapshot new"):
        fact_view(pair[1], "gone")


def test_a_view_draws_as_one_table_with_every_cell_whole(pair: tuple[str, str]) -> None:
    view = snapshot_view(pair[0])
    assert list(view.rows) == [("italy", "Mattarella", "2"), ("gone", "Mattarella", "1")]
    buffer = io.StringIO()
    Console(file=buffer, width=40, force_terminal=False).print(view.rich())
    drawn = buffer.getvalue()
    assert "source: wikidata" in drawn and drawn.count("Mattarella") == 2
