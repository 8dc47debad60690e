"""NLI judge on a tiny randomly initialised classifier built here; embedding judge on the packaged MiniLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chronoprobe.cache import CallCache
from chronoprobe.errors import ConfigError
from chronoprobe.judges import load_judge
from chronoprobe.judges.nli import NLIJudge, NLIModel

WORDS = ["paris", "lyon", "france", "capital", "the", "is", "of", "city", "berlin", "rome"]


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-nli")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizer(str(folder / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(  # type: ignore[call-arg]  # num_labels goes through PretrainedConfig's **kwargs
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=3,
        id2label={0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
        label2id={"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2},
    )
    model = BertForSequenceClassification(config)
    model.eval()
    # Shift the entailment bias so that about half of the word pairs come out as entailment:
    # a random classifier would otherwise answer the same label for everything.
    pairs = [(a, b) for a in WORDS[:5] for b in WORDS[:5] if a != b]
    with torch.no_grad():
        model.classifier.weight.mul_(50.0)
        batch = tokenizer([a for a, _ in pairs], [b for _, b in pairs], return_tensors="pt", padding=True)
        logits = model(**batch).logits
        margin = logits[:, 2] - logits[:, :2].max(dim=1).values
        model.classifier.bias[2] -= margin.median() + 1e-4
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_nli_probabilities_match_a_direct_forward_pass(tiny_nli: Path, tmp_path: Path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    cache = CallCache(tmp_path / "c.sqlite")
    nli = NLIModel(str(tiny_nli), cache=cache, batch_size=2)
    assert nli.entailment_index == 2
    pairs = [("paris", "the capital of france"), ("lyon", "paris"), ("rome", "berlin city")]
    probs = nli.probabilities(pairs)
    tok = AutoTokenizer.from_pretrained(tiny_nli)
    ref = AutoModelForSequenceClassification.from_pretrained(tiny_nli).eval()
    for (a, b), row in zip(pairs, probs, strict=True):
        with torch.no_grad():
            logits = ref(**tok(a, b, return_tensors="pt")).logits[0]
        assert row == pytest.approx(torch.softmax(logits, -1).numpy(), abs=1e-5)
    assert probs.sum(axis=1) == pytest.approx(np.ones(3))
    assert nli.forward_calls == 2  # 3 pairs in batches of 2
    again = NLIModel(str(tiny_nli), cache=cache, batch_size=2)
    assert again.probabilities(pairs) == pytest.approx(probs)
    assert again.forward_calls == 0  # all from the cache


def test_nli_judge_needs_entailment_both_ways(tiny_nli: Path):
    nli = NLIModel(str(tiny_nli))
    judge = NLIJudge(nli)
    pairs = [(a, b) for a in WORDS[:5] for b in WORDS[:5] if a != b]
    verdicts = judge.equivalent(pairs)
    forward = nli.entails(pairs)
    backward = nli.entails([(b, a) for a, b in pairs])
    assert 0 < sum(forward) < len(forward)  # the tiny model says both yes and no
    assert verdicts == [f and b for f, b in zip(forward, backward, strict=True)]
    assert judge.name == f"nli:{tiny_nli}"


@pytest.mark.e2e
def test_unloadable_nli_fails_or_falls_back_visibly(tmp_path: Path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ConfigError, match="judge-fallback"):
        load_judge(f"nli:{missing}")
    choice = load_judge(f"nli:{missing}", allow_fallback=True)
    assert choice.judge.name.startswith("embedding")
    assert "fallback" in choice.record and str(missing) in choice.record


@pytest.mark.e2e
def test_embedding_judge_threshold_and_cache(tmp_path: Path):
    cache = CallCache(tmp_path / "c.sqlite")
    choice = load_judge("embedding", cache=cache)
    judge = choice.judge
    assert choice.record == "embedding:minilm"
    assert judge.equivalent([("Paris", "paris"), ("Paris", "London"), ("Stanley Kubrick", "Kubrick")]) == [
        True,
        False,
        True,
    ]
    assert cache.count() == 5  # one cached embedding per distinct text
    with pytest.raises(ConfigError):
        load_judge("bogus")
