"""gguf: refuses, before converting, a GGUF whose dequantised weights would not fit, and names llamacpp:."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.models import gguf_header, placement
from chronoprobe.models.embedded import smollm2_gguf
from chronoprobe.models.registry import load_backend


@pytest.mark.e2e
def test_gguf_that_would_not_fit_dequantised_points_to_llamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    path = smollm2_gguf()
    monkeypatch.setattr(placement, "available_ram", lambda: 100 * 2**20)  # 100 MiB free
    with pytest.raises(ConfigError) as caught:
        load_backend(f"gguf:{path}")
    message = str(caught.value)
    assert "\n" not in message and "does not fit in memory once dequantised" in message
    assert f"llamacpp:{path}" in message


@pytest.mark.e2e
def test_parameters_are_read_from_the_tensor_table() -> None:
    parameters = gguf_header.gguf_parameters(smollm2_gguf())
    assert parameters is not None and 130e6 < parameters < 140e6  # SmolLM2-135M


# --- the header, read without gguf.GGUFReader ---------------------------------------------------------


def write_gguf(path: Path, endian: Any) -> None:
    """A small GGUF file with every kind of metadata value, a long string array and three tensors."""
    import numpy as np
    from gguf import GGUFWriter

    writer = GGUFWriter(str(path), "llama", endianess=endian)
    writer.add_uint32("llama.block_count", 2)
    writer.add_float32("llama.rope.freq_base", 10000.0)
    writer.add_bool("tokenizer.ggml.add_bos_token", True)
    writer.add_string("tokenizer.chat_template", "{{ messages }}")
    writer.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(5000)])
    writer.add_array("tokenizer.ggml.scores", [0.5] * 100)
    writer.add_tensor("token_embd.weight", np.zeros((12, 8), dtype=np.float32))
    writer.add_tensor("blk.0.attn_norm.weight", np.zeros(8, dtype=np.float16))
    writer.add_tensor("output.weight", np.zeros((2, 3, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


@pytest.mark.parametrize("big_endian", [False, True])
def test_the_header_reader_agrees_with_gguf_reader(tmp_path: Path, big_endian: bool) -> None:
    from gguf import GGUFEndian, GGUFReader

    path = tmp_path / "small.gguf"
    write_gguf(path, GGUFEndian.BIG if big_endian else GGUFEndian.LITTLE)
    header = gguf_header.read_gguf_header(path)
    reference = GGUFReader(str(path), "r")
    assert [(t.name, t.shape, t.type) for t in header.tensors] == [
        (t.name, tuple(int(d) for d in t.shape), int(t.tensor_type)) for t in reference.tensors
    ]
    assert header.parameters == sum(int(t.n_elements) for t in reference.tensors) == 96 + 8 + 24
    assert header.metadata["llama.block_count"] == 2 and header.metadata["tokenizer.ggml.add_bos_token"] is True
    assert header.metadata["tokenizer.chat_template"] == "{{ messages }}"
    assert header.metadata["tokenizer.ggml.tokens.length"] == 5000  # arrays are stepped over, not read


@pytest.mark.e2e
def test_the_shipped_models_tensor_table_is_read_whole() -> None:
    header = gguf_header.read_gguf_header(smollm2_gguf())
    assert len(header.tensors) == 272 and header.parameters == 134_515_008  # as gguf.GGUFReader counts them
    assert header.metadata["general.architecture"] == "llama" and header.metadata["general.file_type"] == 3


@pytest.mark.e2e
@pytest.mark.parametrize("cut", [3, 30, 2000, 300_000])
def test_a_cut_or_foreign_file_reads_as_no_parameters(tmp_path: Path, cut: int) -> None:
    damaged = tmp_path / "cut.gguf"
    with smollm2_gguf().open("rb") as whole:
        damaged.write_bytes(whole.read(cut))
    assert gguf_header.gguf_parameters(damaged) is None
    with pytest.raises(gguf_header.GGUFHeaderError):
        gguf_header.read_gguf_header(damaged)
    foreign = tmp_path / "foreign.gguf"
    foreign.write_bytes(b"PK\x03\x04" + bytes(100))
    assert gguf_header.gguf_parameters(foreign) is None
