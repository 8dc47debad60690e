"""The shipped passages (no ../shared needed), the noisy draw, and the build script."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from chronoprobe.knowledge.catalogue import load_catalogue
from chronoprobe.lenses.editing.passages import (
    data_dir,
    gold_passage,
    gold_passages,
    noisy_passages,
    retrieval_corpus,
    stats_corpus_path,
)

REPO = Path(__file__).resolve().parents[2]
FACTS = [
    "companies_byRevenue/Amazon",
    "countries_byGDP/Italy/Prime Minister of Italy",
    "athletes_byPayment/Cristiano Ronaldo",
]


def test_shipped_passages_load_and_cover_the_catalogue() -> None:
    passages = gold_passages()
    assert len(passages) == 121
    catalogue = {fact.fact_id for fact in load_catalogue()}
    assert {p.fact_id for p in passages} <= catalogue
    sources = {p.source for p in passages}
    assert sources == {"curated", "full", "em", "simplified", "head"}
    assert sum(p.source == "curated" for p in passages) == 79
    meloni = gold_passage("countries_byGDP/Italy/Prime Minister of Italy")
    assert meloni is not None and meloni.source == "curated" and "Meloni" in meloni.text
    assert meloni.page_url == "https://en.wikipedia.org/wiki/Italy" and meloni.domain == "countries_byGDP"
    assert gold_passage("companies_byRevenue/Apple") is None  # DyKnow matched no paragraph
    assert gold_passage("no/such fact") is None


def test_retrieval_corpus_is_the_distinct_gold_passages() -> None:
    corpus = retrieval_corpus()
    texts = [p.text for p in corpus]
    assert len(texts) == len(set(texts)) == 115
    assert set(texts) == {p.text for p in gold_passages()}


def test_stats_corpus_is_one_paragraph_per_line() -> None:
    lines = stats_corpus_path().read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(set(lines)) == 575
    assert sum(len(line) for line in lines) == 444_716
    assert all(line.strip() for line in lines)


def test_noisy_passage_comes_from_another_domain_and_is_seeded() -> None:
    contexts = noisy_passages([*FACTS, "companies_byRevenue/Apple"], seed=42)
    assert list(contexts) == FACTS  # no gold passage, no noisy context
    corpus = retrieval_corpus()
    for fid, context in contexts.items():
        gold = gold_passage(fid)
        assert gold is not None
        noise, _, rest = context.partition("\n")
        assert rest == gold.text
        source = next(p for p in corpus if p.text == noise)
        assert source.domain != gold.domain
    assert noisy_passages(FACTS, seed=42) == contexts
    assert noisy_passages(FACTS, seed=7) != contexts
    # the draws follow the given order: the first fact gets the first draw
    assert noisy_passages(FACTS[:1], seed=42)[FACTS[0]] == contexts[FACTS[0]]


def _build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_editing_data", REPO / "scripts" / "build_editing_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_script_reproduces_the_shipped_files(shared_data: Path) -> None:
    rag = shared_data / "dyknow" / "RAG"
    if not rag.is_dir():
        pytest.skip("../shared/data/dyknow/RAG is not present")
    built = _build_script().build(rag)
    assert set(built) == {"passages.json", "wikipedia_paragraphs.txt"}
    for name, content in built.items():
        assert (data_dir() / name).read_text(encoding="utf-8") == content, name
