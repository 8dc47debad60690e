"""A GGUF file's header, read in milliseconds: its metadata scalars and its tensor table.

``gguf.GGUFReader`` builds a Python object for every part of every field, the tokenizer's
vocabulary included (147k parts for SmolLM2, seconds of work); the memory check and the
backend's description need only the tensor shapes and types and a few scalars. Arrays are
stepped over without being read, and no tensor data is touched.

Layout (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): ``GGUF``, a version, the
tensor and metadata counts, the metadata (key, type, value), then one entry per tensor (name,
dimensions, type, offset). Version 1 counts in 32 bits, later versions in 64; a file whose
version reads as big-endian is read big-endian.
"""

from __future__ import annotations

import math
import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

MAGIC = b"GGUF"
_STRING, _ARRAY = 8, 9
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
MetadataValue = int | float | bool | str


class GGUFHeaderError(ValueError):
    """The file is not a GGUF file, or its header is cut short or inconsistent."""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    type: int
    """The ggml type number (0 F32, 1 F16, 2 Q4_0, 3 Q4_1, ...)."""

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    metadata: dict[str, MetadataValue] = field(default_factory=dict)
    """Every scalar and string value; an array appears as its length under ``<key>.length``."""
    tensors: tuple[TensorInfo, ...] = ()

    @property
    def parameters(self) -> int:
        return sum(t.n_elements for t in self.tensors)


class _Cursor:
    def __init__(self, data: mmap.mmap | bytes, order: str, wide: bool) -> None:
        self.data, self.at, self.order, self.wide = data, 0, order, wide

    def take(self, fmt: str) -> int | float | bool:
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise GGUFHeaderError("the header is cut short")
        (value,) = struct.unpack_from(self.order + fmt, self.data, self.at)
        self.at += size
        result: int | float | bool = value
        return result

    def count(self) -> int:
        return int(self.take("Q" if self.wide else "I"))

    def string(self) -> str:
        length = self.count()
        if self.at + length > len(self.data):
            raise GGUFHeaderError("a string runs past the end of the file")
        raw = bytes(self.data[self.at : self.at + length])
        self.at += length
        return raw.decode("utf-8", errors="replace")

    def _skip_strings(self, count: int) -> None:
        # the vocabulary: hundreds of thousands of strings, so the loop is kept to one unpack and one add
        unpack = struct.Struct(self.order + ("Q" if self.wide else "I")).unpack_from
        width = 8 if self.wide else 4
        data, at, end = self.data, self.at, len(self.data)
        try:
            for _ in range(count):
                at += width + unpack(data, at)[0]
        except struct.error:
            raise GGUFHeaderError("a string runs past the end of the file") from None
        if at > end:
            raise GGUFHeaderError("a string runs past the end of the file")
        self.at = at

    def value(self, kind: int) -> MetadataValue:
        if kind == _STRING:
            return self.string()
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        raise GGUFHeaderError(f"unknown metadata type {kind}")

    def skip_array(self) -> int:
        """Step over an array; its length."""
        kind, length = int(self.take("I")), self.count()
        if kind == _STRING:
            self._skip_strings(length)
        elif kind == _ARRAY:
            for _ in range(length):
                self.skip_array()
        elif kind in _SCALARS:
            self.at += length * struct.calcsize(_SCALARS[kind])
            if self.at > len(self.data):
                raise GGUFHeaderError("an array runs past the end of the file")
        else:
            raise GGUFHeaderError(f"unknown array type {kind}")
        return length


def read_gguf_header(path: Path) -> GGUFHeader:
    """The header of the GGUF file at ``path``; :class:`GGUFHeaderError` if it is not one, OSError if unreadable."""
    with path.open("rb") as handle:
        if path.stat().st_size < 24:
            raise GGUFHeaderError("too short to be a GGUF file")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _parse(data)


def _parse(data: mmap.mmap | bytes) -> GGUFHeader:
    if bytes(data[:4]) != MAGIC:
        raise GGUFHeaderError("no GGUF magic at the start")
    (version,) = struct.unpack_from("<I", data, 4)
    order = "<"
    if version & 0xFFFF == 0:  # a small version number read in the wrong byte order
        (version,) = struct.unpack_from(">I", data, 4)
        order = ">"
    if not 1 <= version <= 3:
        raise GGUFHeaderError(f"unsupported GGUF version {version}")
    cursor = _Cursor(data, order, wide=version > 1)
    cursor.at = 8
    tensor_count, kv_count = cursor.count(), cursor.count()
    if tensor_count > len(data) or kv_count > len(data):
        raise GGUFHeaderError("impossible tensor or metadata counts")
    metadata: dict[str, MetadataValue] = {}
    for _ in range(kv_count):
        key, kind = cursor.string(), int(cursor.take("I"))
        if kind == _ARRAY:
            metadata[f"{key}.length"] = cursor.skip_array()
        else:
            metadata[key] = cursor.value(kind)
    tensors = []
    for _ in range(tensor_count):
        name, dims = cursor.string(), int(cursor.take("I"))
        if dims > 8:
            raise GGUFHeaderError(f"tensor {name!r} claims {dims} dimensions")
        shape = tuple(cursor.count() for _ in range(dims))
        kind = int(cursor.take("I"))
        cursor.take("Q")  # the data offset
        tensors.append(TensorInfo(name, shape, kind))
    return GGUFHeader(version, metadata, tuple(tensors))


def gguf_parameters(path: Path) -> int | None:
    """Parameters stored in a GGUF file, from its tensor table (no weight is read); None if unreadable."""
    try:
        return read_gguf_header(path).parameters
    except (OSError, ValueError):
        return None
