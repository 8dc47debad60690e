"""Where weights will go, in which dtype, and whether they fit: answered before any weights load.

Importing torch takes seconds. On a machine with no GPU driver, torch cannot see a GPU either,
so these answers come without it there: the device is the CPU, ``auto`` is float32 and the
free memory is the RAM's. Where a driver is present, torch is asked.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any, Literal

from chronoprobe.errors import ConfigError
from chronoprobe.models.gguf_header import gguf_parameters

DType = Literal["auto", "float32", "bfloat16", "float16"]
Quantize = Literal["8bit", "4bit"]
DeviceMap = Literal["auto"]

DTYPE_BYTES = {"float32": 4.0, "bfloat16": 2.0, "float16": 2.0}
QUANT_BYTES = {"8bit": 1.0, "4bit": 0.5}
QUANT_LABEL = {"8bit": "bnb-8bit", "4bit": "bnb-4bit-nf4"}

GPU_DRIVER_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version", "/dev/kfd", "/dev/dxg")
"""NVIDIA's driver, ROCm's (torch's cuda namespace serves both) and WSL's GPU bridge: without one, no CUDA device."""


_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")


def device_name(value: str) -> str:
    """``value`` when it names a device (auto, cpu, mps, cuda or cuda:<index>); ValueError otherwise. The
    spelling only: whether this machine has it is :func:`chronoprobe.models.loading.check_device`'s question."""
    if not _DEVICE.fullmatch(value):
        raise ValueError(f"{value!r} is not a device (use auto, cpu, cuda, cuda:<index> or mps)")
    return value


def gpu_driver_present() -> bool:
    return any(Path(name).exists() for name in GPU_DRIVER_FILES)


def cuda_available() -> bool:
    """``torch.cuda.is_available()``, without importing torch where no GPU driver is installed."""
    if "torch" not in sys.modules and not gpu_driver_present():
        return False
    import torch  # deferred: torch

    return bool(torch.cuda.is_available())


def resolve_device(device: str) -> str:
    """``auto`` is the first CUDA GPU when there is one, else the CPU."""
    if device != "auto":
        return device
    return "cuda" if cuda_available() else "cpu"


def device_kind(device: str) -> str:
    """``cuda:1`` -> ``cuda``."""
    return device.partition(":")[0].strip().lower()


def dtype_name(dtype: DType, device: str) -> str:
    """The dtype weights load in on ``device``: the one asked for, or for ``auto`` bfloat16 on GPUs with native
    bf16 (compute capability 8.0, Ampere, or newer), float16 on other GPUs and on mps, float32 on CPU."""
    if dtype != "auto":
        return dtype
    kind = device_kind(device)
    if kind == "cuda" and cuda_available():
        import torch  # deferred: torch

        index = device.partition(":")[2]
        major = torch.cuda.get_device_capability(int(index) if index.isdigit() else 0)[0]
        return "bfloat16" if major >= 8 else "float16"
    if kind in {"cuda", "mps"}:
        return "float16"
    return "float32"


def dtype_label(name: str, quantize: Quantize | None) -> str:
    """What ``BackendInfo.dtype`` records; quantised weights get a suffix, so they never share cache keys."""
    return name if quantize is None else f"{name}+{QUANT_LABEL[quantize]}"


# --- memory -------------------------------------------------------------------------------------


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_ram() -> int:
    """Bytes this process can still allocate: MemAvailable, lowered to the cgroup's limit inside a container."""
    available: int | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        available = None
    if available is None:
        psutil: Any = importlib.import_module("psutil")  # an accelerate dependency
        available = int(psutil.virtual_memory().available)
    limit = _read_int(Path("/sys/fs/cgroup/memory.max"))  # "max" (no limit) reads as None
    used = _read_int(Path("/sys/fs/cgroup/memory.current"))
    if limit is not None and used is not None:
        available = min(available, max(0, limit - used))
    return available


def free_memory(device: str, device_map: DeviceMap | None) -> tuple[int, str] | None:
    """(bytes free where the weights will go, how to say where), or None where we cannot tell (mps)."""
    if device_map == "auto":
        on_gpus, count = 0, 0
        if cuda_available():
            import torch  # deferred: torch

            count = torch.cuda.device_count()
            on_gpus = sum(torch.cuda.mem_get_info(i)[0] for i in range(count))
        where = f"free on {count} GPU(s) and in RAM together" if on_gpus else "of RAM available"
        return on_gpus + available_ram(), where
    kind = device_kind(device)
    if kind == "cpu":
        return available_ram(), "of RAM available"
    if kind == "cuda":
        import torch  # deferred: torch

        index = device.partition(":")[2]
        number = int(index) if index.isdigit() else torch.cuda.current_device()
        return torch.cuda.mem_get_info(number)[0], f"free on {device}"
    return None


def weight_bytes(parameters: int, dtype: str, quantize: Quantize | None) -> int:
    per = QUANT_BYTES[quantize] if quantize else DTYPE_BYTES[dtype]
    return int(parameters * per)


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def check_gguf_fits(where: str, path: Path, dtype: DType, device: str, device_map: DeviceMap | None) -> None:
    """Refuse a GGUF whose dequantised weights would not fit, pointing to llama.cpp, which runs it as it is.

    Reads only the file's tensor table (milliseconds); a file it cannot read is left to the conversion,
    which says what is wrong with it.
    """

    parameters = gguf_parameters(path)
    resolved = resolve_device(device)
    name = dtype_name(dtype, resolved)
    free = free_memory(resolved, device_map)
    if parameters is None or free is None or weight_bytes(parameters, name, None) <= free[0]:
        return
    raise ConfigError(
        where,
        f"does not fit in memory once dequantised: {parameters / 1e9:.2f}B parameters in {name} "
        f"need about {gib(weight_bytes(parameters, name, None))}, but only {gib(free[0])} is {free[1]}; "
        f"llamacpp:{path} runs the file as it is, in about {gib(path.stat().st_size)} "
        "(pip install 'chronoprobe[llamacpp]')",
    )
