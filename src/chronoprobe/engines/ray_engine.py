"""The Ray Data engine (``--engine ray[:ADDRESS]``): the batches the cache misses, run by an actor pool.

The driver keeps the cache and the plan (:class:`chronoprobe.cache.CachedModel`). Each planned
batch that misses becomes one row of a Ray Dataset, one block per row, so a finished batch
streams back on its own; ``map_batches`` hands every row, whole, to an actor of a pool that
built its backend once from the parsed model request and options (never from a pickled model). Because a
row is exactly one planned batch, every actor runs the batches the local engine would, and the
hf backend seeds one ``torch.Generator`` per batch from ``DecodingParams.seed``: which actor ran a
batch does not change its outputs, greedy or sampled.

Ray Data restarts an actor whose process died and retries its batch (its actor pools default
to ``max_restarts=-1`` and ``max_task_retries=-1``); an exception raised by the backend is not
retried and ends the run with its own message. A batch that finished before the driver died
is already in the cache.
"""

from __future__ import annotations

import logging
import pickle
import socket
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from chronoprobe.engines.base import Engine, ModelSource
from chronoprobe.engines.ray_errors import first_line, user_error
from chronoprobe.engines.ray_llm import vllm_batches
from chronoprobe.errors import ChronoprobeError, ConfigError
from chronoprobe.models.base import Backend, DecodingParams, Generation, Prompt
from chronoprobe.models.registry import load_backend

CONNECT_TIMEOUT_S = 3.0
"""How long the reachability check before ``ray.init`` waits for the head's port."""


class BatchWorker:
    """A Ray Data actor: builds the backend once, then runs one planned batch per row."""

    def __init__(self, source: ModelSource) -> None:
        self.backend = load_backend(source.request, source.options)

    def __call__(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        positions, results = [], []
        for position, payload in zip(rows["position"], rows["payload"], strict=True):
            prompts, params = pickle.loads(payload)
            positions.append(int(position))
            results.append(pickle.dumps(self.backend.generate(prompts, params)))
        return {"position": np.array(positions, dtype=np.int64), "result": np.array(results, dtype=object)}


class RayEngine(Engine):
    """Run missed batches on a Ray cluster; see the module doc.

    ``address``: None starts a cluster on this machine for the run (stopped after it), ``auto``
    joins the local cluster, ``HOST:PORT`` or ``ray://HOST:PORT`` a remote one. ``workers``: the
    actor pool's size (default: one actor per CPU of the cluster, or per GPU for a CUDA model).
    An already connected Ray (``ray.init`` in the caller) is used as it is and left running.
    """

    local = False

    def __init__(self, address: str | None = None, *, workers: int | None = None, cpus_per_worker: float = 1.0) -> None:
        self.address = address
        self.label = f"ray:{address}" if address else "ray"
        self.workers = workers
        self.cpus_per_worker = cpus_per_worker
        self._owned = False

    def check(self) -> None:
        """A cluster named by HOST:PORT must answer on that port (one TCP connection, no Ray import)."""
        if self.address not in (None, "auto"):
            _check_reachable(self.address.removeprefix("ray://"), self.label)

    def start(self) -> None:
        ray = _import_ray(self.label)
        if not ray.is_initialized():
            if self.address not in (None, "auto") and not self.address.startswith("ray://"):
                _check_reachable(self.address, self.label)
            try:
                ray.init(
                    address=self.address or "local",
                    include_dashboard=False,
                    logging_level=logging.WARNING,
                    log_to_driver=False,
                )
            except Exception as exc:  # ConnectionError, ValueError, RuntimeError ... all mean: no cluster there
                raise ConfigError(f"--engine {self.label}", f"cannot reach a Ray cluster ({first_line(exc)})") from None
            self._owned = True
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # the CLI draws its own bar
        context.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)

    def stop(self) -> None:
        if self._owned:
            import ray  # deferred: ray (an extra)

            ray.shutdown()
            self._owned = False

    def run(
        self,
        backend: Backend,
        source: ModelSource | None,
        batches: Sequence[Sequence[Prompt]],
        params: DecodingParams,
    ) -> Iterator[tuple[int, list[Generation]]]:
        if source is None:
            raise ConfigError(
                f"--engine {self.label}",
                f"model {backend.info.spec} was not loaded from a spec, so no worker can build it",
            )
        if not batches:
            return
        if source.request.spec.kind == "vllm":
            yield from vllm_batches(self.label, self.workers, backend, source, batches, params)
            return
        import ray  # deferred: ray (an extra)

        if not ray.is_initialized():
            self.start()
        gpu = (backend.info.device or "").startswith("cuda")
        workers = min(len(batches), self.workers or self._cluster_slots(gpu))
        items = [{"position": i, "payload": pickle.dumps((list(b), params))} for i, b in enumerate(batches)]
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        mapped = dataset.map_batches(
            BatchWorker,
            fn_constructor_kwargs={"source": source},  # pickled, so an openai: URL's key reaches the workers
            batch_size=1,
            # Ray Data restarts a dead actor and retries its batch (max_restarts=-1, max_task_retries=-1)
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=0 if gpu else self.cpus_per_worker,
            num_gpus=1 if gpu else 0,
        )
        try:
            for row in mapped.iter_rows():
                yield int(row["position"]), pickle.loads(row["result"])
        except ChronoprobeError:
            raise
        except Exception as exc:
            raise user_error(exc, self.label) from None

    def _cluster_slots(self, gpu: bool) -> int:
        import ray  # deferred: ray (an extra)

        resources = ray.cluster_resources()
        if gpu:
            return max(1, int(resources.get("GPU", 1)))
        return max(1, int(resources.get("CPU", 1) / max(self.cpus_per_worker, 1e-3)))


def _import_ray(label: str) -> Any:
    try:
        import ray  # deferred: ray (an extra)
        import ray.data  # deferred: ray (an extra)
    except ImportError:
        raise ConfigError(f"--engine {label}", "Ray is not installed: pip install 'chronoprobe[ray]'") from None
    return ray


def _check_reachable(address: str, label: str) -> None:
    """A one-line error within seconds for a head that does not answer (ray.init would retry for a minute)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ConfigError(
            f"--engine {label}",
            f"no Ray head answers at {address} ({exc.strerror or exc}); is `ray start --head` running there?",
        ) from None
