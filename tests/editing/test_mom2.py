"""Second-moment statistics: corpus loading, correctness against a full forward pass, the disk cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

from chronoprobe.errors import DataError
from chronoprobe.lenses.editing.architectures import detect, get_module
from chronoprobe.lenses.editing.mom2 import load_corpus, second_moments

CORPUS = Path(__file__).resolve().parents[1] / "assets" / "editing" / "mom2_corpus.txt"


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    from chronoprobe.models.embedded import converted_gguf, smollm2_gguf

    return AutoTokenizer.from_pretrained(converted_gguf(smollm2_gguf())[0])


def tiny_gpt2(vocab_size: int) -> GPT2LMHeadModel:
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=3, n_embd=32, n_head=2, n_positions=64, vocab_size=vocab_size, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(config).eval()


def test_load_corpus_txt_and_jsonl(tmp_path: Path) -> None:
    corpus = load_corpus(CORPUS)
    assert corpus.name == "mom2_corpus" and len(corpus.texts) == 20 and len(corpus.sha256) == 64
    assert corpus.limited(5).texts == corpus.texts[:5] and corpus.limited(5).describe()["documents"] == 5
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "one"}\n\n{"text": "two", "id": 2}\n', encoding="utf-8")
    assert load_corpus(path).texts == ("one", "two")


@pytest.mark.parametrize(
    ("name", "content", "where", "problem"),
    [
        ("c.jsonl", '{"text": "ok"}\n{"text": \n', "c.jsonl line 2", "not valid JSON"),
        ("c.jsonl", '{"text": "ok"}\n{"body": "x"}\n', "c.jsonl line 2", 'expected an object with a string "text"'),
        ("c.txt", "\n  \n", "c.txt", "the corpus has no documents"),
        ("c.csv", "a,b\n", "c.csv", "a corpus is a .txt"),
    ],
)
def test_bad_corpus_is_one_line_data_error(tmp_path: Path, name: str, content: str, where: str, problem: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_corpus(path)
    assert caught.value.where == str(tmp_path / where)
    assert problem in caught.value.problem and "\n" not in str(caught.value)


def test_missing_corpus(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="cannot read the corpus"):
        load_corpus(tmp_path / "absent.txt")


@pytest.mark.e2e
def test_matches_full_forward_stops_early_and_caches(tmp_path: Path, tokenizer) -> None:  # type: ignore[no-untyped-def]
    model = tiny_gpt2(len(tokenizer))
    arch = detect(model)
    corpus = load_corpus(CORPUS).limited(6)
    last_block_calls = []
    get_module(model, arch.layer_name(2)).register_forward_hook(lambda *_: last_block_calls.append(1))
    progress: list[tuple[int, int]] = []
    cold = second_moments(
        model, tokenizer, arch, [0, 1], corpus, revision="r1", model_id="tiny/gpt2", cache_dir=tmp_path,
        progress=lambda done, total: progress.append((done, total)),
    )  # fmt: skip
    assert not last_block_calls, "the pass must stop after the deepest layer needed"
    assert progress[-1] == (6, 6)

    # the same statistic from plain full forward passes, one document at a time (no padding)
    expected = torch.zeros(128, 128, dtype=torch.float64)
    tokens = 0
    captured: list[torch.Tensor] = []
    handle = get_module(model, arch.rewrite_name(1)).register_forward_hook(
        lambda _m, args, _o: captured.append(args[0])
    )
    with torch.no_grad():
        for text in corpus.texts:
            ids = tokenizer(text, return_tensors="pt")["input_ids"][:, :64]
            model(input_ids=ids)
            x = captured.pop()[0].double()
            expected += x.T @ x
            tokens += x.shape[0]
    handle.remove()
    record = cold.records[1]
    assert record.tokens == tokens and record.documents == 6 and not record.from_cache
    assert torch.allclose(cold.matrix(1).double(), expected / tokens, rtol=1e-4, atol=1e-6)

    cache_file = Path(record.cache_file)
    assert cache_file.is_file() and cache_file.is_relative_to(tmp_path)
    assert "tiny_gpt2@r1" in str(cache_file) and cache_file.name == "transformer.h.1.mlp.c_proj_float32_mom2_6.npz"
    with np.load(cache_file) as data:
        assert int(data["count"]) == tokens and data["mom2"].shape == (128, 128)

    warm = second_moments(
        model, tokenizer, arch, [1, 0], corpus, revision="r1", model_id="tiny/gpt2", cache_dir=tmp_path
    )
    assert warm.records[1].from_cache and warm.records[1].tokens == tokens
    assert torch.equal(warm.matrix(1), cold.matrix(1)) and torch.equal(warm.matrix(0), cold.matrix(0))
    assert warm.describe()["layers"]["transformer.h.0.mlp.c_proj"]["from_cache"] is True
    # fewer documents or another revision: another file
    other = second_moments(
        model, tokenizer, arch, [1], corpus.limited(3), revision="r1", model_id="tiny/gpt2", cache_dir=tmp_path
    )
    assert not other.records[1].from_cache
    assert (
        second_moments(model, tokenizer, arch, [1], corpus, revision="r2", model_id="tiny/gpt2", cache_dir=tmp_path)
        .records[1]
        .from_cache
        is False
    )


@pytest.mark.e2e
def test_unreadable_cache_file_is_recomputed(tmp_path: Path, tokenizer) -> None:  # type: ignore[no-untyped-def]
    model = tiny_gpt2(len(tokenizer))
    arch = detect(model)
    corpus = load_corpus(CORPUS).limited(2)
    first = second_moments(model, tokenizer, arch, [0], corpus, revision="r", model_id="m", cache_dir=tmp_path)
    Path(first.records[0].cache_file).write_bytes(b"truncated")
    again = second_moments(model, tokenizer, arch, [0], corpus, revision="r", model_id="m", cache_dir=tmp_path)
    assert not again.records[0].from_cache and torch.equal(again.matrix(0), first.matrix(0))
