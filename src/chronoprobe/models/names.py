"""Short display names for models: ``--model NAME=SPEC`` or one derived from the spec.

Plots and tables need a name that fits under an axis; the full spec stays in
the provenance. ``qwen=hf:Qwen/Qwen2.5-0.5B-Instruct`` names the model
``qwen``; without a name, the last path component of the spec's target is used,
without revision or file extension (``hf:Qwen/Qwen2.5-0.5B-Instruct@main`` ->
``Qwen2.5-0.5B-Instruct``).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

from chronoprobe.errors import ConfigError
from chronoprobe.models.registry import canonical_spec

# A name is letters (any script), digits and _ . + -, starting with a letter or digit. It has no ':', so
# "openai:m@https://h/v1?a=b" or "mock:constant=x" (a ':' before the '=') is never read as NAME=SPEC.
_NAME = re.compile(r"[^\W_][\w.+-]{0,63}")
NAME_RULE = "a name is up to 64 letters (any script), digits, _ . + or -, starting with a letter or digit"


def split_model_name(raw: str) -> tuple[str | None, str]:
    """``"qwen=hf:Qwen/X"`` -> ``("qwen", "hf:Qwen/X")``; a spec without a name -> ``(None, spec)``.

    Text before the first ``=`` that holds no ``:`` can only be meant as a name, so one that
    breaks the naming rule is refused here rather than read as an unknown backend.
    """
    before, equals, spec = raw.strip().partition("=")
    if not equals or ":" in before:
        return None, raw
    name = unicodedata.normalize("NFC", before.strip())  # "è" typed as e + combining accent is one letter
    if not _NAME.fullmatch(name):
        raise ConfigError(f"--model {canonical_spec(raw)}", f"{before!r} is not a model name; {NAME_RULE}")
    if not spec.strip():
        raise ConfigError(f"--model {canonical_spec(raw)}", f"no model spec after {name}=")
    return name, spec.strip()


def model_label(raw: str) -> str:
    """What a run calls the model of a ``--model`` value: its NAME, else its canonical spec.

    The same as the loaded model's ``info.label``, so items chosen before a model loads can be
    matched to it; credentials never take part.
    """
    name, spec = split_model_name(raw)
    return name or canonical_spec(spec)


def display_name(spec: str) -> str:
    """The short name a spec gets when the user gave none."""
    name, spec = split_model_name(spec)
    if name:
        return name
    kind, sep, rest = spec.strip().partition(":")
    if not sep:
        return spec.strip()
    if kind == "openai":
        target = rest.partition("@")[0]
    elif kind in {"hf", "vllm"}:
        target = rest.rpartition("@")[0] if "@" in rest else rest
    else:
        target = rest
    last = target.rstrip("/").rsplit("/", 1)[-1] or target
    if kind == "gguf" and last.lower().endswith(".gguf"):
        last = last[: -len(".gguf")]
    return last or spec


def unique_names(names: Iterable[str]) -> list[str]:
    """Make repeated display names distinct: ``x``, ``x (2)``, ..."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        result.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return result


_UNSAFE = re.compile(r"[^\w.+-]+")


FILE_PART_LIMIT = 80
"""Longest name part ``file_safe`` returns: a folder name must stay well under the 255 bytes filesystems allow."""


def file_safe(name: str, limit: int = FILE_PART_LIMIT) -> str:
    """``name`` as a file or folder name part: other characters become ``_`` (``model`` if nothing is left).

    A longer result is cut to ``limit`` characters, the last nine a hash of the whole name,
    so two long names that share their start stay distinct.
    """
    safe = _UNSAFE.sub("_", name).strip("._") or "model"
    if len(safe) <= limit:
        return safe
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{safe[: limit - 9].rstrip('._+-')}-{digest}"
