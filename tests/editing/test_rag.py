"""RAG prompts (gold, retrieved, noisy), the splitter, MiniLM retrieval and the prompts file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.passages import Passage, gold_passage, noisy_passages
from chronoprobe.lenses.editing.prompts import EditingPrompts, load_prompts
from chronoprobe.lenses.editing.rag import RagBuilder
from chronoprobe.lenses.editing.retrieval import PassageRetriever, split_text
from chronoprobe.models.base import Message, Prompt

AMAZON = EditRecord(
    prompt="The CEO position at Amazon is currently held by",
    target="Andy Jassy",
    subject="CEO position at Amazon",
    domain="companies_byRevenue",
    element="Amazon",
    prompt_type="rephrased_2",
    questions={
        "generic": "The current Chief Executive Officer of Amazon is",
        "rephrased_1": "The current CEO of Amazon is",
        "rephrased_2": "The CEO position at Amazon is currently held by",
    },
    answers=["Andy Jassy |S: +2021-07-06T00:00:00Z", "Jeff Bezos |S: +1996-05-00T00:00:00Z |E: +2021-07-05T00:00:00Z"],
)
ITALY = EditRecord(
    prompt="The position of the Prime Minister of Italy is currently held by",
    target="Giorgia Meloni",
    subject="Prime Minister of Italy",
    domain="countries_byGDP",
    element="Italy",
    attribute="Prime Minister of Italy",
    prompt_type="rephrased_2",
    questions={
        "generic": "The head of government in Italy is",
        "contextualized": "The Prime Minister of Italy is",
        "rephrased_2": "The position of the Prime Minister of Italy is currently held by",
    },
    answers=[
        "Mario Draghi |S: +2021-02-13T00:00:00Z |E: +2022-10-22T00:00:00Z",
        "Giorgia Meloni |S: +2022-10-22T00:00:00Z",
    ],
)
APPLE = EditRecord(  # DyKnow found no Wikipedia paragraph for Apple's CEO
    prompt="The CEO position at Apple is currently held by",
    target="Tim Cook",
    subject="CEO position at Apple",
    domain="companies_byRevenue",
    element="Apple",
    prompt_type="rephrased_2",
    questions={"rephrased_2": "The CEO position at Apple is currently held by"},
    answers=["Tim Cook |S: +2011-08-24T00:00:00Z"],
)
RECORDS = [AMAZON, ITALY, APPLE]


def _expected(chat: str, text: str) -> Prompt:
    return Prompt(messages=(Message(role="user", content=chat),), text=text)


def test_gold_prompt_matches_the_hand_written_one() -> None:
    passage = gold_passage(ITALY.fact_id)
    assert passage is not None and "Giorgia Meloni" in passage.text
    built = RagBuilder("rag-gold", RECORDS).build(ITALY, "The Prime Minister of Italy is")
    assert built is not None
    assert built.prompt == _expected(
        f"Read this passage:\n{passage.text}\n\n"
        'Going by the passage, complete this sentence with a name only, no explanation: "The Prime Minister of Italy is ..."',
        f"{passage.text}\n\nThe Prime Minister of Italy is",
    )
    assert built.sources == (ITALY.fact_id,)


def test_noisy_prompt_puts_the_noise_first() -> None:
    gold = gold_passage(AMAZON.fact_id)
    assert gold is not None
    noise = noisy_passages(RECORDS, seed=42)[AMAZON.fact_id].split("\n")[0]
    built = RagBuilder("rag-noisy", RECORDS, seed=42).build(AMAZON, "The current CEO of Amazon is")
    assert built is not None
    assert built.context == f"{noise}\n{gold.text}"
    assert built.prompt == _expected(
        f"Read this passage:\n{noise}\n{gold.text}\n\n"
        'Going by the passage, complete this sentence with a name only, no explanation: "The current CEO of Amazon is ..."',
        f"{noise}\n{gold.text}\n\nThe current CEO of Amazon is",
    )


def test_facts_without_a_gold_passage_get_no_prompt() -> None:
    for method in ("rag-gold", "rag-noisy"):
        assert RagBuilder(method, RECORDS).build(APPLE, APPLE.prompt) is None


def test_split_text_follows_the_recursive_character_rules() -> None:
    # pieces keep their separator in front; a full chunk hands on the tail that fits in the overlap
    assert split_text("aaaa bbbb cccc", chunk_size=10, chunk_overlap=5) == ["aaaa bbbb", "bbbb cccc"]
    assert split_text("first\n\nsecond", chunk_size=100, chunk_overlap=0) == ["first\n\nsecond"]
    assert split_text("first\n\nsecond", chunk_size=8, chunk_overlap=0) == ["first", "second"]
    assert split_text("abcdefghij", chunk_size=4, chunk_overlap=0) == ["abcd", "efgh", "ij"]
    assert split_text("abcdefghij", chunk_size=4, chunk_overlap=2) == ["abcd", "cdef", "efgh", "ghij"]
    assert split_text("short", chunk_size=1000, chunk_overlap=200) == ["short"]


@pytest.fixture(scope="module")
def retriever() -> PassageRetriever:
    return PassageRetriever()


@pytest.mark.e2e
def test_retrieval_puts_the_facts_own_passage_first(retriever: PassageRetriever) -> None:
    for record, question in [
        (AMAZON, "The current CEO of Amazon is"),
        (None, "Which club does Cristiano Ronaldo play for now?"),
    ]:
        hits = retriever.retrieve(question)
        assert len(hits) == 4
        own = record.fact_id if record else "athletes_byPayment/Cristiano Ronaldo"
        assert hits[0].chunk.fact_id == own, question
        assert [h.distance for h in hits] == sorted(h.distance for h in hits)


@pytest.mark.e2e
def test_retrieved_prompt_joins_the_top_chunks(retriever: PassageRetriever) -> None:
    question = "The current CEO of Amazon is"
    chunks = [hit.chunk.text for hit in retriever.retrieve(question)]
    built = RagBuilder("rag-retrieved", RECORDS, retriever=retriever).build(AMAZON, question)
    assert built is not None
    context = "\n\n".join(chunks)
    assert built.prompt == _expected(
        f"Here are some passages found for this question:\n{context}\n\n"
        'Using only these passages, complete this sentence with a name only, no explanation: "The current CEO of Amazon is ..."',
        f"{context}\n\nThe current CEO of Amazon is",
    )
    assert built.sources[0] == AMAZON.fact_id
    assert RagBuilder("rag-retrieved", RECORDS, retriever=retriever).build(APPLE, APPLE.prompt) is None


@pytest.mark.e2e
def test_equal_distances_keep_corpus_order(retriever: PassageRetriever) -> None:
    same = "Andy Jassy is the chief executive of Amazon."
    passages = [
        Passage(fact_id="x/first", source="curated", page_url=None, header=None, text="Bananas are yellow fruit."),
        Passage(fact_id="x/second", source="curated", page_url=None, header=None, text=same),
        Passage(fact_id="x/third", source="curated", page_url=None, header=None, text=same),
    ]
    small = PassageRetriever(passages, embedder=retriever.embedder, k=2)
    assert [h.chunk.fact_id for h in small.retrieve("Who runs Amazon?")] == ["x/second", "x/third"]


def test_long_passages_are_chunked() -> None:
    long = Passage(fact_id="x/long", source="full", page_url=None, header=None, text=" ".join(["word"] * 400))
    small = PassageRetriever([long], embedder=object(), k=1)  # type: ignore[arg-type]
    # 400 words of 5 characters with their space: words 1-200, then 161-360 (the last 40 again), then 321-400
    assert [len(c.text) for c in small.chunks] == [999, 999, 399]
    assert small.chunks[1].text.count("word") == 200 and small.chunks[2].text.count("word") == 80
    assert all(c.passage == 0 for c in small.chunks)


def test_prompts_file_replaces_templates(tmp_path: Path) -> None:
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps({"rag_gold_text": "CONTEXT: {context}\nQ: {question}"}), encoding="utf-8")
    prompts = load_prompts(path)
    assert prompts.rag_gold_chat == EditingPrompts().rag_gold_chat
    built = RagBuilder("rag-gold", RECORDS, prompts=prompts).build(ITALY, "Q?")
    passage = gold_passage(ITALY.fact_id)
    assert built is not None and passage is not None
    assert built.prompt.text == f"CONTEXT: {passage.text}\nQ: Q?"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"rag_gold_chat": "Context: {context}"}, "key 'rag_gold_chat': missing placeholder {question}"),
        ({"ike_final": "{fact} {question} {target}"}, "key 'ike_final': unknown placeholder {target}"),
        ({"serac_text": "{memory"}, "key 'serac_text': not a valid template"),
        ({"rag_gold": "x"}, "key 'rag_gold': unknown template"),
        ({"rag_gold_text": 3}, "key 'rag_gold_text': expected a string"),
        (["x"], "expected a JSON object of templates"),
    ],
)
def test_bad_prompts_file_is_one_config_error(tmp_path: Path, content: object, message: str) -> None:
    path = tmp_path / "prompts.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_prompts(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.e2e
def test_embeddings_go_through_the_call_cache(tmp_path: Path) -> None:
    from chronoprobe.cache import CallCache

    cache = CallCache(tmp_path / "calls.sqlite")
    passages = [
        Passage(fact_id="x/a", source="curated", page_url=None, header=None, text="Andy Jassy runs Amazon."),
        Passage(fact_id="x/b", source="curated", page_url=None, header=None, text="Bananas are yellow fruit."),
    ]
    first = PassageRetriever(passages, cache=cache, k=1).retrieve("Who runs Amazon?")
    assert cache.count() == 3  # two chunks and the question
    again = PassageRetriever(passages, cache=cache, k=1).retrieve("Who runs Amazon?")
    assert again == first and cache.count() == 3
