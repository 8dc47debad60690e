"""ROME and MEMIT hyperparameters: DyKnow's values per model, scaled by depth for other models.

DyKnow ran EasyEdit's stock YAMLs for GPT-2 XL, GPT-J 6B, Llama-2-7B(-chat) and Mistral-7B(-instruct).
A model whose id names one of those (and has its depth) gets those values. Any other model of a
supported family gets its family's values with the layer indices scaled by depth from the family's
reference model, and ``v_loss_layer`` set to the last layer. Overrides come from a YAML or JSON
file with EasyEdit's key names.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml  # type: ignore[import-untyped]  # no stubs installed; pyyaml comes with transformers
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chronoprobe.errors import ConfigError
from chronoprobe.lenses.editing.architectures import Architecture, Family

OVERRIDE_KEYS = (
    "layers",
    "v_num_grad_steps",
    "v_lr",
    "v_loss_layer",
    "v_weight_decay",
    "clamp_norm_factor",
    "kl_factor",
    "mom2_adjustment",
    "mom2_update_weight",
    "mom2_n_samples",
    "context_template_length_params",
    "fact_token",
)
"""The keys an overrides file may set (EasyEdit's names)."""


class EditHparams(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    layers: tuple[int, ...] = Field(min_length=1)
    v_num_grad_steps: int = Field(ge=1)
    v_lr: float = Field(gt=0)
    v_loss_layer: int = Field(ge=0)
    v_weight_decay: float = Field(ge=0)
    clamp_norm_factor: float = Field(gt=0)
    kl_factor: float = Field(ge=0)
    mom2_adjustment: bool
    mom2_update_weight: float = Field(default=15000.0, gt=0)
    """MEMIT's λ; ROME ignores it."""
    mom2_n_samples: int = Field(default=100000, ge=1)
    context_template_length_params: tuple[tuple[int, int], ...]
    """(total length in tokens, number of texts) per group of generated context prefixes."""
    fact_token: Literal["subject_last"] = "subject_last"
    source: str = ""
    """Where the values came from (provenance; not settable from an overrides file)."""


class RomeHparams(EditHparams):
    mom2_adjustment: bool = False
    """DyKnow ran ROME without the covariance; True uses u = C⁻¹k (the ROME paper)."""
    context_template_length_params: tuple[tuple[int, int], ...] = ((5, 10), (10, 10))


class MemitHparams(EditHparams):
    mom2_adjustment: bool = True
    """Recorded for EasyEdit parity; MEMIT always uses the covariance."""
    context_template_length_params: tuple[tuple[int, int], ...] = ((10, 5),)


Method = Literal["rome", "memit"]

# DyKnow's YAML values (notes §2.1, §2.2), without the layer indices' dependence on depth.
_REFERENCE: dict[str, dict[Method, dict[str, Any]]] = {
    "gpt2-xl": {
        "rome": dict(layers=(17,), v_num_grad_steps=20, v_lr=0.5, v_loss_layer=47, v_weight_decay=0.5,
                     clamp_norm_factor=4.0, kl_factor=0.0625),
        "memit": dict(layers=(13, 14, 15, 16, 17), v_num_grad_steps=20, v_lr=0.5, v_loss_layer=47,
                      v_weight_decay=0.5, clamp_norm_factor=0.75, kl_factor=0.0625, mom2_update_weight=20000.0),
    },
    "gpt-j-6B": {
        "rome": dict(layers=(5,), v_num_grad_steps=20, v_lr=0.5, v_loss_layer=27, v_weight_decay=0.5,
                     clamp_norm_factor=4.0, kl_factor=0.0625),
        "memit": dict(layers=(3, 4, 5, 6, 7, 8), v_num_grad_steps=25, v_lr=0.5, v_loss_layer=27,
                      v_weight_decay=0.5, clamp_norm_factor=0.75, kl_factor=0.0625, mom2_update_weight=15000.0),
    },
    "llama2-7b": {
        "rome": dict(layers=(5,), v_num_grad_steps=25, v_lr=0.5, v_loss_layer=31, v_weight_decay=1e-3,
                     clamp_norm_factor=4.0, kl_factor=0.0625),
        "memit": dict(layers=(4, 5, 6, 7, 8), v_num_grad_steps=25, v_lr=0.5, v_loss_layer=31,
                      v_weight_decay=1e-3, clamp_norm_factor=4.0, kl_factor=0.0625, mom2_update_weight=15000.0),
    },
}  # fmt: skip
_REFERENCE["mistral-7b"] = _REFERENCE["llama2-7b"]  # DyKnow reused the Llama-2 values

_FAMILY_REFERENCE: dict[Family, tuple[str, int]] = {
    "gpt2": ("gpt2-xl", 48),
    "gptj": ("gpt-j-6B", 28),
    "llama": ("llama2-7b", 32),
}
"""Per family: the DyKnow model whose values it takes, and that model's depth."""

# Substrings of a (lower-cased) model id that name a DyKnow model, with its family.
_ID_PATTERNS: tuple[tuple[tuple[str, ...], str, Family], ...] = (
    (("gpt2-xl",), "gpt2-xl", "gpt2"),
    (("gpt-j-6b", "gptj-6b"), "gpt-j-6B", "gptj"),
    (("llama-2-7b", "llama2-7b"), "llama2-7b", "llama"),
    (("mistral-7b",), "mistral-7b", "llama"),
)


def _dyknow_model(arch: Architecture, model_id: str) -> str | None:
    lowered = model_id.lower()
    for needles, name, family in _ID_PATTERNS:
        if (
            family == arch.family
            and any(n in lowered for n in needles)
            and arch.n_layers == _FAMILY_REFERENCE[family][1]
        ):
            return name
    return None


def _scale(layer: int, ref_depth: int, depth: int) -> int:
    # round half up (Python's round() would send 7.5 to 8 but 4.5 to 4)
    return min(depth - 1, max(0, math.floor(layer * depth / ref_depth + 0.5)))


def hparams_source(arch: Architecture, model_id: str) -> str:
    """Where the default values for this model come from, in words (for the run's provenance)."""
    exact = _dyknow_model(arch, model_id)
    if exact is not None:
        return f"DyKnow {exact} YAML"
    ref_name, ref_depth = _FAMILY_REFERENCE[arch.family]
    return f"{arch.family} family (DyKnow {ref_name} values), layers scaled {ref_depth}->{arch.n_layers}"


def _defaults(method: Method, arch: Architecture, model_id: str) -> dict[str, Any]:
    exact = _dyknow_model(arch, model_id)
    ref_name, ref_depth = _FAMILY_REFERENCE[arch.family]
    values = dict(_REFERENCE[exact or ref_name][method])
    if exact is None:
        values["layers"] = tuple(sorted({_scale(layer, ref_depth, arch.n_layers) for layer in values["layers"]}))
        values["v_loss_layer"] = arch.n_layers - 1
    values["source"] = hparams_source(arch, model_id)
    return values


H = TypeVar("H", bound=EditHparams)


def load_overrides(path: Path) -> dict[str, Any]:
    """The keys of a YAML/JSON overrides file; one-line ConfigError naming the file for anything wrong."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(where, f"cannot read the hyperparameter file ({exc.__class__.__name__})") from exc
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ConfigError(where, f"not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {first}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(where, "expected a mapping of hyperparameter names to values")
    for key in data:
        if key not in OVERRIDE_KEYS:
            raise ConfigError(where, f"unknown key {key!r}; allowed: {', '.join(OVERRIDE_KEYS)}")
    _check_types(data, where)
    return data


def _check_types(overrides: dict[str, Any], where: str) -> None:
    """Each value's type and range, before any model loads (the layers against its depth come later)."""
    kinds: tuple[tuple[type[EditHparams], Method], ...] = ((RomeHparams, "rome"), (MemitHparams, "memit"))
    for hparams, method in kinds:
        try:
            hparams.model_validate({**_REFERENCE["gpt2-xl"][method], **overrides})
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(part) for part in error["loc"]) or "value"
            raise ConfigError(where, f"{key}: {error['msg']}") from None


def with_overrides(hp: H, overrides: dict[str, Any], arch: Architecture, where: str) -> H:
    """``hp`` with ``overrides`` applied and checked against the model's depth."""
    if not overrides:
        return hp
    merged = {**hp.model_dump(), **overrides, "source": f"{hp.source}; overrides from {where}: {', '.join(overrides)}"}
    try:
        result = type(hp).model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or "value"
        raise ConfigError(where, f"{key}: {error['msg']}") from None
    check_layers(result, arch, where)
    return result


def check_layers(hp: EditHparams, arch: Architecture, where: str) -> None:
    bad = [layer for layer in hp.layers if not 0 <= layer < arch.n_layers]
    if bad:
        raise ConfigError(where, f"layers {bad} outside the model's 0..{arch.n_layers - 1}")
    if not 0 <= hp.v_loss_layer < arch.n_layers:
        raise ConfigError(where, f"v_loss_layer {hp.v_loss_layer} outside the model's 0..{arch.n_layers - 1}")


def rome_hparams(arch: Architecture, model_id: str, overrides: Path | None = None) -> RomeHparams:
    hp = RomeHparams.model_validate(_defaults("rome", arch, model_id))
    return with_overrides(hp, load_overrides(overrides), arch, str(overrides)) if overrides else hp


def memit_hparams(arch: Architecture, model_id: str, overrides: Path | None = None) -> MemitHparams:
    hp = MemitHparams.model_validate(_defaults("memit", arch, model_id))
    return with_overrides(hp, load_overrides(overrides), arch, str(overrides)) if overrides else hp
