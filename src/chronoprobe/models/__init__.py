"""Model backends behind one typed interface."""

from chronoprobe.models.base import (
    Backend,
    BackendInfo,
    Capability,
    DecodingParams,
    Generation,
    Message,
    Prompt,
    Sample,
    require,
)
from chronoprobe.models.registry import (
    DEFAULT_MODEL,
    BackendKind,
    BackendOptions,
    ModelRequest,
    load_backend,
    parse_model,
    parse_model_spec,
)

__all__ = [
    "DEFAULT_MODEL",
    "Backend",
    "BackendInfo",
    "BackendKind",
    "BackendOptions",
    "Capability",
    "DecodingParams",
    "Generation",
    "Message",
    "ModelRequest",
    "Prompt",
    "Sample",
    "load_backend",
    "parse_model",
    "parse_model_spec",
    "require",
]
