"""The prefix-cached value optimisation computes what running every row whole computes."""

from __future__ import annotations

import pytest
import torch

from chronoprobe.datasets.editing_records import EditRequest
from chronoprobe.lenses.editing.architectures import detect
from chronoprobe.lenses.editing.hparams import memit_hparams, rome_hparams
from chronoprobe.lenses.editing.rome import context_templates, optimise_value
from chronoprobe.lenses.outdated.prompts import audit_prompt
from chronoprobe.models.registry import BackendOptions, load_backend


@pytest.fixture(scope="module")
def smollm2():  # type: ignore[no-untyped-def]
    return load_backend("smollm2", BackendOptions())


@pytest.mark.slow
@pytest.mark.parametrize("method", ["rome", "memit"])
def test_cached_prefix_gives_the_same_value(smollm2, method: str) -> None:  # type: ignore[no-untyped-def]
    """ROME's 21 context templates are thinned to the empty one and two of each generated length.

    The optimisation is exact row by row, so what it must get right is a row of each kind (no
    template, short and long templates, the KL row) and the groups they form; ROME's other 16 rows
    repeat those kinds and made the uncached side 30 s of this test. MEMIT's 6 are all kept.
    """
    model, tokenizer = smollm2.model, smollm2.tokenizer
    arch = detect(model, smollm2.info.model_id)
    chooser = rome_hparams if method == "rome" else memit_hparams
    hp = chooser(arch, smollm2.info.model_id).model_copy(update={"v_num_grad_steps": 3})
    rendered = smollm2.render(audit_prompt("The person currently serving as CEO of Apple is"))
    # a chat prompt: the subject sits after the system text and the instruction, so most tokens are cached
    request = EditRequest(prompt=rendered, subject="Apple", target="Tim Cook<|im_end|>")
    templates = context_templates(model, tokenizer, hp.context_template_length_params, 0)
    if method == "rome":
        assert len(templates) == 21  # "" + 10 of 5 tokens + 10 of 10 tokens
        templates = [templates[0], templates[1], templates[2], templates[11], templates[12]]
    module = arch.mlp_name(hp.layers[0]) if method == "rome" else arch.layer_name(max(hp.layers))
    loss_layer = None if method == "rome" else hp.v_loss_layer
    results = [
        optimise_value(
            model,
            tokenizer,
            arch,
            request,
            hp,
            templates,
            module,
            add_special_tokens=False,
            loss_layer=loss_layer,
            prefix_cache=cached,
        )
        for cached in (False, True)
    ]
    whole, cached = results
    assert whole.steps == cached.steps == 3
    assert torch.allclose(whole.initial, cached.initial, atol=1e-4)
    assert torch.allclose(whole.target, cached.target, atol=1e-3, rtol=1e-4)
    assert abs(whole.loss - cached.loss) < 1e-3
    assert not torch.equal(cached.target, cached.initial)  # the optimisation moved the value
