"""IKE: the demonstration pool, retrieval with the real MiniLM, and the exact prompts of both variants."""

from __future__ import annotations

import pytest

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.judges.embedding import Embedder
from chronoprobe.lenses.editing.ike import IkeBuilder, demonstration_pool
from chronoprobe.models.base import Message

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
    answers=["Andy Jassy |S: +2021-07-06T00:00:00Z"],
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
    answers=["Giorgia Meloni |S: +2022-10-22T00:00:00Z"],
)
RONALDO = EditRecord(
    prompt="Cristiano Ronaldo is currently playing for",
    target="Al-Nassr",
    subject="Cristiano Ronaldo",
    domain="athletes_byPayment",
    element="Cristiano Ronaldo",
    prompt_type="rephrased_1",
    questions={
        "generic": "The current team of Cristiano Ronaldo is",
        "rephrased_1": "Cristiano Ronaldo is currently playing for",
        "rephrased_2": "The current football club of Cristiano Ronaldo is",
    },
    answers=["Al-Nassr |S: +2023-01-00T00:00:00Z"],
)
RECORDS = [AMAZON, ITALY, RONALDO]

AMAZON_FACT = "New Fact: The current Chief Executive Officer of Amazon is Andy Jassy\n"
ITALY_FACT = "New Fact: The head of government in Italy is Giorgia Meloni\n"
RONALDO_FACT = "New Fact: The current team of Cristiano Ronaldo is Al-Nassr\n"
CHAT_HEAD = (
    'Each example below states a new fact, then a sentence after "Prompt:" that is completed in line '
    'with that fact. Complete the last "Prompt:" line in the same way, with a name only, no explanation.\n\n'
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_pool_has_copy_update_and_seeded_retain_demos() -> None:
    pool = demonstration_pool(RECORDS, seed=42)
    assert [(d.fact_id.split("/")[0], d.kind) for d in pool] == [
        (domain, kind)
        for domain in ("companies_byRevenue", "countries_byGDP", "athletes_byPayment")
        for kind in ("copy", "update", "retain")
    ]
    assert [d.text for d in pool[:3]] == [
        AMAZON_FACT + "Prompt: The current Chief Executive Officer of Amazon is Andy Jassy\n\n",
        AMAZON_FACT + "Prompt: The CEO position at Amazon is currently held by Andy Jassy\n\n",
        AMAZON_FACT + "Prompt: The head of government in Italy is Giorgia Meloni\n\n",
    ]
    for demo in pool:  # a retained pair always comes from another domain
        if demo.kind == "retain":
            owner = next(r for r in RECORDS if r.fact_id == demo.fact_id)
            other = next(r for r in RECORDS if f"Prompt: {r.questions['generic']} {r.target}\n" in demo.text)
            assert other.domain != owner.domain
    assert demonstration_pool(RECORDS, seed=42) == pool
    # one domain only: nothing to retain
    assert [d.kind for d in demonstration_pool([AMAZON])] == ["copy", "update"]


@pytest.mark.e2e
def test_ike_null_prompt_matches_the_hand_written_one(embedder: Embedder) -> None:
    built = IkeBuilder("ike-null", RECORDS, embedder=embedder).build(ITALY, "The Prime Minister of Italy is")
    demos = (
        ITALY_FACT + "Prompt: The position of the Prime Minister of Italy is currently held by Giorgia Meloni\n\n"
        + ITALY_FACT + "Prompt: The head of government in Italy is Giorgia Meloni\n\n"
        + ITALY_FACT + "Prompt: The current Chief Executive Officer of Amazon is Andy Jassy\n\n"
        + RONALDO_FACT + "Prompt: The head of government in Italy is Giorgia Meloni\n\n"
        + AMAZON_FACT + "Prompt: The head of government in Italy is Giorgia Meloni\n\n"
        + AMAZON_FACT + "Prompt: The current Chief Executive Officer of Amazon is Andy Jassy\n\n"
        + RONALDO_FACT + "Prompt: The current team of Cristiano Ronaldo is Al-Nassr\n\n"
        + AMAZON_FACT + "Prompt: The CEO position at Amazon is currently held by Andy Jassy\n\n"
        + RONALDO_FACT + "Prompt: Cristiano Ronaldo is currently playing for Al-Nassr\n\n"
    )  # fmt: skip
    final = "New Fact: Not Available\n\nPrompt: The Prime Minister of Italy is"
    assert built.prompt.text == demos + final
    assert built.prompt.messages == (Message(role="user", content=CHAT_HEAD + demos + final),)
    assert len(built.demos) == 9  # fewer than k = 16 in the pool: all of them
    assert built.own_demos == 3  # the asked fact's new target leaks in through its own demos


@pytest.mark.e2e
def test_ike_prompt_gives_the_new_fact(embedder: Embedder) -> None:
    built = IkeBuilder("ike", RECORDS, embedder=embedder, k=2).build(AMAZON, "The current CEO of Amazon is")
    new_fact = "The CEO position at Amazon is currently held by Andy Jassy"
    demos = (
        AMAZON_FACT + "Prompt: The CEO position at Amazon is currently held by Andy Jassy\n\n"
        + AMAZON_FACT + "Prompt: The current Chief Executive Officer of Amazon is Andy Jassy\n\n"
        + f"New Fact: {new_fact}\nPrompt: {new_fact}\n\n"
    )  # fmt: skip
    final = f"New Fact: {new_fact}\nPrompt: The current CEO of Amazon is"
    assert built.prompt.text == demos + final
    assert built.prompt.messages == (Message(role="user", content=CHAT_HEAD + demos + final),)
    assert built.own_demos == 2


@pytest.mark.e2e
def test_ike_retrieval_is_by_the_edit_for_every_question(embedder: Embedder) -> None:
    builder = IkeBuilder("ike", RECORDS, embedder=embedder, k=4)
    first = builder.build(RONALDO, RONALDO.questions["rephrased_2"])
    second = builder.build(RONALDO, "Anything at all")
    assert first.demos == second.demos
    null = IkeBuilder("ike-null", RECORDS, embedder=embedder, k=4)
    assert null.build(RONALDO, "The current CEO of Amazon is").demos[0].startswith(AMAZON_FACT)
