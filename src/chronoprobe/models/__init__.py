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
    BackendOptions,
    load_backend,
    parse_model_spec,
)

__all__ = [
    "DEFAULT_MODEL",
    "Backend",
    "BackendInfo",
    "BackendOptions",
    "Capability",
    "DecodingParams",
    "Generation",
    "Message",
    "Prompt",
    "Sample",
    "load_backend",
    "parse_model_spec",
    "require",
]
