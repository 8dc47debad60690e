"""Embedded models from PyPI packages: Gemma 3 270M joined from chunk packages and checked by SHA-256."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.models import embedded
from chronoprobe.models.registry import known_specs, parse_model_spec

needs_gemma = pytest.mark.skipif(
    not embedded.gemma3_available(), reason="Gemma 3 270M packages not installed (./setup.sh installs them)"
)


def _chunks(tmp_path: Path, parts: list[bytes]) -> list[Path]:
    paths = []
    for i, data in enumerate(parts):
        path = tmp_path / f"model.gguf.part{i:02d}"
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_published_sha256_reads_sha256sum_format(tmp_path: Path) -> None:
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{'a' * 64}  other.gguf\n{'B' * 64} *model.gguf\n")
    assert embedded.published_sha256(sums, "model.gguf") == "b" * 64
    with pytest.raises(ConfigError, match=r"lists no SHA-256 for absent\.gguf"):
        embedded.published_sha256(sums, "absent.gguf")
    with pytest.raises(ConfigError, match="cannot read it"):
        embedded.published_sha256(tmp_path / "missing", "model.gguf")


def test_chunks_are_joined_in_order(tmp_path: Path) -> None:
    parts = [b"first-", b"second-", b"third"]
    target = tmp_path / "out" / "model.gguf"
    expected = hashlib.sha256(b"".join(parts)).hexdigest()
    assert embedded.assemble_chunks(_chunks(tmp_path, parts), target, expected) == target
    assert target.read_bytes() == b"first-second-third"


def test_hash_mismatch_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    parts = [b"first-", b"second-"]
    target = tmp_path / "out" / "model.gguf"
    wrong = hashlib.sha256(b"second-first-").hexdigest()  # the right bytes in the wrong order
    with pytest.raises(ConfigError) as caught:
        embedded.assemble_chunks(_chunks(tmp_path, parts), target, wrong)
    message = str(caught.value)
    assert "does not match the published" in message and "\n" not in message
    assert list((tmp_path / "out").iterdir()) == []  # neither the file nor a staging folder


def test_missing_chunk_is_a_config_error(tmp_path: Path) -> None:
    chunks = [*_chunks(tmp_path, [b"x"]), tmp_path / "absent.part01"]
    with pytest.raises(ConfigError, match=r"absent\.part01: missing"):
        embedded.assemble_chunks(chunks, tmp_path / "model.gguf", "0" * 64)


@pytest.mark.e2e
def test_missing_package_names_the_install_command() -> None:
    with pytest.raises(ConfigError, match="not installed; run the setup command"):
        embedded._package_dir("chronoprobe_no_such_package", embedded.GEMMA3_INSTALL)


def test_gemma_spec_is_known_and_listed() -> None:
    spec = parse_model_spec("gemma3-270m")
    assert (spec.kind, spec.target) == ("gemma3-270m", "gemma3-270m")
    assert any(name == "gemma3-270m" and "Gemma Terms of Use" in text for name, text in known_specs())


@pytest.mark.e2e
@needs_gemma
def test_real_chunks_assemble_to_the_published_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONOPROBE_HOME", str(tmp_path))
    path = embedded.gemma3_gguf()
    assert path.parent == tmp_path / "models" / "assembled"
    package = embedded._package_dir(embedded.GEMMA3_PACKAGE, "")
    expected = embedded.published_sha256(package / "data" / "SHA256SUMS", embedded.GEMMA3_FILE)
    assert embedded.file_digest(path) == expected
    assert path.read_bytes()[:4] == b"GGUF"

    stamp = path.stat().st_mtime_ns
    assert embedded.gemma3_gguf() == path and path.stat().st_mtime_ns == stamp  # verified file is reused

    with path.open("r+b") as handle:  # damage it: the next call must notice and rebuild
        handle.seek(1000)
        handle.write(b"\x00" * 16)
    # A new mtime gives the damaged file a new key in the hash index, as a real rewrite would.
    os.utime(path, ns=(stamp + 5_000_000_000, stamp + 5_000_000_000))
    assert embedded.file_digest(embedded.gemma3_gguf()) == expected
