"""The Wikipedia passages the in-context methods put in front of a model.

Shipped in ``chronoprobe/data/editing/`` (built by ``scripts/build_editing_data.py`` from DyKnow's
RAG folder, MIT), so nothing here needs ``../shared``:

- a gold passage per fact id: DyKnow's hand-curated paragraph for the 79 facts it edited, else the
  strongest matched paragraph of its ``passages.json``; 9 of the 130 facts have none;
- the retrieval corpus: every distinct gold passage (a superset of DyKnow's 79-paragraph corpus);
- the text corpus for MEMIT's second-moment statistics: every distinct matched paragraph, one per line.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from chronoprobe.datasets.editing_records import EditRecord
from chronoprobe.errors import DataError

PassageSource = Literal["curated", "full", "em", "simplified", "head"]


class Passage(BaseModel):
    """One Wikipedia paragraph and the fact it is the gold passage of."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact_id: str
    source: PassageSource
    """``curated``: DyKnow's hand-picked paragraph; else how the paragraph matched the answer (strongest first)."""
    page_url: str | None
    header: str | None
    text: str

    @property
    def domain(self) -> str:
        """The DyKnow category of the fact (the first part of its id)."""
        return self.fact_id.split("/", 1)[0]


def data_dir() -> Path:
    return Path(str(files("chronoprobe") / "data" / "editing"))


def stats_corpus_path() -> Path:
    """``wikipedia_paragraphs.txt``: 575 distinct Wikipedia paragraphs (about 445k characters), one per line."""
    return data_dir() / "wikipedia_paragraphs.txt"


@lru_cache(maxsize=1)
def _shipped() -> tuple[Passage, ...]:
    path = data_dir() / "passages.json"
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        rows = data["passages"]
        return tuple(Passage.model_validate(row) for row in rows)
    except OSError as exc:
        raise DataError(
            str(path), f"cannot read the shipped passages ({exc.strerror or exc}); reinstall chronoprobe"
        ) from None
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        raise DataError(
            str(path), f"the shipped passages are damaged ({type(exc).__name__}); reinstall chronoprobe"
        ) from None


@lru_cache(maxsize=1)
def _by_fact() -> dict[str, Passage]:
    return {passage.fact_id: passage for passage in _shipped()}


def gold_passages() -> list[Passage]:
    """Every fact's gold passage, in the shipped order (one per fact; two facts may share a text)."""
    return list(_shipped())


def gold_passage(fact_id: str) -> Passage | None:
    """The gold passage of ``fact_id`` (``category/subject[/attribute]``), or None when DyKnow found none."""
    return _by_fact().get(fact_id)


def retrieval_corpus() -> list[Passage]:
    """Every distinct gold passage, first occurrence kept, in the shipped order.

    DyKnow's retrieval corpus held only the 79 curated paragraphs of the facts it edited; this one also
    holds the best-matching paragraph of the other facts (115 passages), so retrieval is over a
    superset and a question may retrieve a passage about a fact that was not edited.
    """
    seen: dict[str, Passage] = {}
    for passage in _shipped():
        seen.setdefault(passage.text, passage)
    return list(seen.values())


def _fact_ids(facts: Iterable[EditRecord | str]) -> list[str]:
    return [fact.fact_id if isinstance(fact, EditRecord) else fact for fact in facts]


def noisy_passages(facts: Sequence[EditRecord | str], seed: int = 42) -> dict[str, str]:
    """Table 8's noisy context per fact: a gold passage from another domain, a newline, then the fact's gold passage.

    As DyKnow: the noise is drawn with ``random.Random(seed).choice`` from the passages of any of the
    other three domains, one draw per fact. The draws follow the order of ``facts`` (facts without a
    gold passage are skipped and draw nothing), and the pool is our whole retrieval corpus, so the
    result is deterministic for a seed but not DyKnow's exact draw.
    """
    rng = random.Random(seed)
    corpus = retrieval_corpus()
    contexts: dict[str, str] = {}
    for fid in _fact_ids(facts):
        gold = gold_passage(fid)
        if gold is None or fid in contexts:
            continue
        pool = [p for p in corpus if p.domain != gold.domain]
        if not pool:
            raise DataError(fid, "no passage from another domain to use as noise")
        noise = rng.choice(pool)
        contexts[fid] = noise.text + "\n" + gold.text
    return contexts
