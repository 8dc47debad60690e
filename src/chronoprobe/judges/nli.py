"""``nli:<hf id>``: bidirectional entailment with a sequence-classification NLI model.

The input is the pair (a, b), which the tokenizer renders as ``a [SEP] b`` (for
DeBERTa: ``[CLS] a [SEP] b [SEP]``); no question is prepended. a and b are
equivalent iff the argmax label is the entailment label for (a, b) and for
(b, a). Label probabilities per ordered pair are cached in the call cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chronoprobe.cache import CallCache, stable_hash
from chronoprobe.errors import ConfigError
from chronoprobe.judges.base import Judge
from chronoprobe.models.hub import ensure_available

DEFAULT_NLI = "microsoft/deberta-large-mnli"


class NLIModel:
    """Label probabilities for (premise, hypothesis) pairs, batched and cached."""

    def __init__(
        self,
        model: str = DEFAULT_NLI,
        *,
        revision: str = "main",
        cache: CallCache | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        trust_remote_code: bool = False,
    ) -> None:

        if not Path(model).is_dir():
            ensure_available(model, revision, f"NLI model {model!r}")  # fails in ~1 s offline, not after hub retries

        import torch  # deferred: torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer  # deferred: transformers

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(
                model, revision=revision, trust_remote_code=trust_remote_code
            )
            self.model = (
                AutoModelForSequenceClassification.from_pretrained(
                    model, revision=revision, trust_remote_code=trust_remote_code
                )
                .to(device)
                .eval()
            )
        except Exception as exc:  # hub/network/format errors come in many types
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ConfigError(f"NLI model {model!r}", f"could not load it offline or from the hub: {first}") from None
        labels = {int(i): str(name).lower() for i, name in self.model.config.id2label.items()}
        entail = [i for i, name in labels.items() if "entail" in name and "not" not in name]
        if not entail:
            raise ConfigError(f"NLI model {model!r}", f"no ENTAILMENT label among {sorted(labels.values())}")
        self.entailment_index = entail[0]
        self.model_id = model
        self.revision = str(getattr(self.model.config, "_commit_hash", None) or revision)
        self.cache = cache
        self.device = device
        self.batch_size = batch_size
        self._torch = torch
        self.forward_calls = 0

    def _key(self, premise: str, hypothesis: str) -> str:
        return stable_hash(
            {"nli": self.model_id, "revision": self.revision, "premise": premise, "hypothesis": hypothesis}
        )

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Softmax label probabilities, shape (len(pairs), n_labels)."""
        unique = list(dict.fromkeys(pairs))
        found: dict[tuple[str, str], np.ndarray] = {}
        if self.cache is not None and unique:
            hits = self.cache.get_many([self._key(*p) for p in unique])
            for p in unique:
                hit = hits.get(self._key(*p))
                if hit is not None:
                    found[p] = np.asarray(hit[0]["probs"], dtype=np.float64)
        missing = [p for p in unique if p not in found]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start : start + self.batch_size]
            probs = self._forward(chunk)
            for p, row in zip(chunk, probs, strict=True):
                found[p] = row
            if self.cache is not None:
                self.cache.put_many(
                    f"nli:{self.model_id}",
                    [(self._key(*p), {"probs": row.tolist()}, None) for p, row in zip(chunk, probs, strict=True)],
                )
        if not pairs:
            return np.zeros((0, len(self.model.config.id2label)))
        return np.stack([found[p] for p in pairs])

    def _forward(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        torch = self._torch
        self.forward_calls += 1
        with torch.inference_mode():
            batch = self.tokenizer(
                [a for a, _ in pairs],
                [b for _, b in pairs],
                padding=True,
                truncation=True,
                max_length=512,
                return_tensors="pt",
            )
            batch = {k: v.to(self.device) for k, v in batch.items()}
            logits = self.model(**batch).logits.float()
            probs: np.ndarray = torch.softmax(logits, dim=-1).cpu().numpy().astype(np.float64)
            return probs

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entailment) of each (premise, hypothesis)."""
        probs = self.probabilities(pairs)
        return [float(x) for x in probs[:, self.entailment_index]] if len(pairs) else []

    def entails(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        """Argmax label is entailment, per (premise, hypothesis)."""
        probs = self.probabilities(pairs)
        return [int(np.argmax(row)) == self.entailment_index for row in probs]


class NLIJudge(Judge):
    def __init__(self, nli: NLIModel) -> None:
        self.nli = nli
        self.name = f"nli:{nli.model_id}"

    def equivalent(self, pairs: Sequence[tuple[str, str]]) -> list[bool]:
        if not pairs:
            return []
        both = self.nli.entails([*pairs, *[(b, a) for a, b in pairs]])
        n = len(pairs)
        return [both[i] and both[n + i] for i in range(n)]

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "model": self.nli.model_id,
            "revision": self.nli.revision,
            "rule": "argmax=entailment both ways",
        }
