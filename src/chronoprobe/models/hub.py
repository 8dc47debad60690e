"""Is a hub model (or dataset file) on disk, or can it be fetched? Answered in about a second, before torch loads.

Without this check, an id that is neither cached nor reachable spends tens of seconds
in the hub client's retries before transformers (or the dataset loader) gives up.
"""

from __future__ import annotations

import os
import socket
import threading
from urllib.parse import urlsplit

from chronoprobe.errors import ConfigError

PROBE_TIMEOUT_S = 1.0
_TRUE = {"1", "on", "yes", "true"}


def hub_offline() -> bool:
    """HF_HUB_OFFLINE (or the older TRANSFORMERS_OFFLINE) is set."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_reachable(endpoint: str | None = None, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """A TCP connection to the hub opens within ``timeout_s`` (name lookup included)."""
    parts = urlsplit(endpoint or hub_endpoint())
    host = parts.hostname
    if not host:
        return False
    port = parts.port or (443 if parts.scheme == "https" else 80)
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                result.append(True)
        except OSError:
            result.append(False)

    # In a thread, so that a name lookup stuck on an unreachable resolver cannot hold us past the timeout.
    worker = threading.Thread(target=probe, name="hub-probe", daemon=True)
    worker.start()
    worker.join(timeout_s)
    return bool(result and result[0])


def cached_on_disk(model_id: str, revision: str) -> bool:
    """The model's config.json for ``revision`` is in the local hub cache."""
    from huggingface_hub import try_to_load_from_cache  # deferred: huggingface_hub

    return isinstance(try_to_load_from_cache(model_id, "config.json", revision=revision), str)


def ensure_available(model_id: str, revision: str, where: str) -> None:
    """Return if ``model_id`` is cached or the hub can be reached; else a one-line ConfigError, fast."""
    try:
        if cached_on_disk(model_id, revision):
            return
    except ValueError as exc:  # huggingface_hub's HFValidationError: not a valid repo id
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(where, f"not a local folder or a valid hub id ({first})") from None
    if hub_offline():
        raise ConfigError(
            where, "not in the local hub cache and HF_HUB_OFFLINE is set; download it first or give a local folder"
        )
    if not hub_reachable():
        host = urlsplit(hub_endpoint()).hostname or hub_endpoint()
        raise ConfigError(
            where,
            f"not in the local hub cache and {host} cannot be reached; connect, download it first, "
            "or give a local folder",
        )


class HubUnreachable(Exception):
    """The hub cannot be asked at all (offline mode, or no connection): retrying would not help."""


def unavailable_reason() -> str | None:
    """Why the hub cannot be asked now (HF_HUB_OFFLINE set, or no connection to it), or None when it can.

    Read at call time: huggingface_hub reads HF_HUB_OFFLINE and HF_ENDPOINT once, when it is imported.
    """
    if hub_offline():
        return "HF_HUB_OFFLINE is set"
    if not hub_reachable():
        return f"{urlsplit(hub_endpoint()).hostname or hub_endpoint()} cannot be reached"
    return None


def fetch_dataset_file(repo_id: str, filename: str) -> str:
    """The local path of ``filename`` in the hub dataset ``repo_id``: from the hub cache, or downloaded.

    A file that is not cached while the hub cannot be reached at all raises HubUnreachable at once,
    instead of after the hub client's retries (about 25 s); transient errors (a 503, a timeout on a
    live connection) still get those retries. Any other failure is the hub client's own exception.
    """
    from huggingface_hub import hf_hub_download, try_to_load_from_cache  # deferred: huggingface_hub

    offline = hub_offline()
    if not isinstance(try_to_load_from_cache(repo_id, filename, repo_type="dataset"), str):
        reason = unavailable_reason()
        if reason is not None:
            raise HubUnreachable(f"not in the local hub cache and {reason}")
    path: str = hf_hub_download(
        repo_id, filename, repo_type="dataset", endpoint=hub_endpoint(), local_files_only=offline
    )
    return path
