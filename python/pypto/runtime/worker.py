"""Explicit single-chip dispatch: :class:`ChipWorker` and :class:`RegistrationHandle`
(PyPTO's ``pypto.runtime.worker``).

``with ChipWorker(config=RunConfig()) as w:`` holds the programs registered on it loaded
(``register`` loads a build once; its handle dispatches it any number of times) and the
worker-resident tensors allocated on it (``alloc_tensor``; released by ``free_tensor`` or
``close``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from pypto.runtime.device_tensor import DeviceMemory, DeviceTensor, resolve_args

__all__ = ["ChipWorker", "RegistrationHandle"]


class RegistrationHandle:
    """A program registered on a worker: calling it dispatches the program with the
    worker's config (or ``config=``); ``unregister`` (or the worker's ``close``) ends it."""

    def __init__(self, worker: Any, compiled: Any, cid: int) -> None:
        self._worker = worker
        self._compiled = compiled
        self._cid = cid
        self._closed = False

    @property
    def cid(self) -> int:
        """The registration's id on its worker."""
        return self._cid

    @property
    def compiled(self) -> Any:
        """The registered program."""
        return self._compiled

    @property
    def closed(self) -> bool:
        """Whether the handle was unregistered (or its worker closed)."""
        return self._closed

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Dispatches the registered program with ``args``."""
        if self._closed:
            raise RuntimeError(
                f"RegistrationHandle(cid={self._cid}) is closed; register the program again"
            )
        return self._worker.run(self._compiled, *args, config=config)

    def unregister(self) -> None:
        """Ends this registration (idempotent)."""
        self._closed = True

    def __enter__(self) -> "RegistrationHandle":
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.unregister()


class ChipWorker:
    """One chip (``config.device_id`` on ``config.platform``) that programs are registered
    on and dispatched to, with worker-resident memory (``malloc`` / ``alloc_tensor``)."""

    __test__ = False

    def __init__(
        self,
        config: Any = None,
        *,
        level: int = 2,
        runtime: str = "tensormap_and_ringbuffer",
        enable_sdma: bool = False,
        auto_init: Optional[bool] = None,
    ) -> None:
        if level != 2:
            raise ValueError(
                f"ChipWorker only supports level=2; got level={level}. L3+ runtimes go through "
                "DistributedWorker."
            )
        from pypto.runtime.runner import RunConfig

        self._config = config if config is not None else RunConfig()
        self._runtime = runtime
        self._enable_sdma = bool(enable_sdma)
        self._memory = DeviceMemory("ChipWorker")
        self._owned: Dict[int, DeviceTensor] = {}
        self._loaded: Dict[str, int] = {}
        self._handles: List[Any] = []
        self._dlopen = 0
        self._initialized = False
        self._closed = False
        if auto_init is None or auto_init:
            self.init()

    # --- lifecycle ----------------------------------------------------------------------
    def init(self) -> None:
        """Makes the worker ready (idempotent; a closed worker cannot be re-initialised)."""
        if self._closed:
            raise RuntimeError("ChipWorker is closed; create a new one")
        self._initialized = True

    def close(self) -> None:
        """Unregisters every handle and frees every allocation (idempotent)."""
        for h in self._handles:
            h.unregister()
        self._handles.clear()
        for t in self._owned.values():
            t.buffer = None
        self._owned.clear()
        self._memory.clear()
        self._loaded.clear()
        self._closed = True
        self._initialized = False

    def __enter__(self) -> "ChipWorker":
        self._require_ready("__enter__")
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()

    def _require_ready(self, op: str) -> None:
        if self._closed:
            raise RuntimeError(f"ChipWorker.{op}: the worker is closed")
        if not self._initialized:
            raise RuntimeError(f"ChipWorker.{op}: call init() first (auto_init=False)")

    # --- properties ---------------------------------------------------------------------
    @property
    def level(self) -> int:
        return 2

    @property
    def platform(self) -> str:
        return str(self._config.platform)

    @property
    def device_id(self) -> int:
        return int(self._config.device_id)

    @property
    def runtime(self) -> str:
        return self._runtime

    @property
    def initialized(self) -> bool:
        return self._initialized

    @property
    def aicpu_dlopen_count(self) -> int:
        """Builds this worker loaded (one per distinct program registered or run)."""
        return self._dlopen

    @property
    def host_dlopen_count(self) -> int:
        """As :attr:`aicpu_dlopen_count` (this runtime loads a build once for both)."""
        return self._dlopen

    # --- memory -------------------------------------------------------------------------
    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """Allocates ``nbytes`` of zeroed worker memory; returns its address."""
        self._require_ready("malloc")
        return self._memory.malloc(nbytes, worker_id)

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        """Frees an allocation from :meth:`malloc`."""
        self._require_ready("free")
        self._memory.free(ptr, worker_id)

    def copy_to(self, dst_dev_ptr: int, src_host_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        """Host to worker memory (``dst`` must lie inside a live allocation)."""
        self._require_ready("copy_to")
        self._memory.copy_to(dst_dev_ptr, src_host_ptr, nbytes, worker_id)

    def copy_from(self, dst_host_ptr: int, src_dev_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        """Worker memory to host (``src`` must lie inside a live allocation)."""
        self._require_ready("copy_from")
        self._memory.copy_from(dst_host_ptr, src_dev_ptr, nbytes, worker_id)

    def alloc_tensor(
        self, shape: Sequence[int], dtype: Any, *, init: Any = None, worker_id: int = 0
    ) -> DeviceTensor:
        """A zeroed worker-resident tensor (``init`` uploaded into it when given)."""
        self._require_ready("alloc_tensor")
        t = self._memory.alloc_tensor(shape, dtype, init, worker_id)
        self._owned[t.data_ptr] = t
        return t

    def free_tensor(self, t: DeviceTensor, *, worker_id: int = 0) -> None:
        """Releases a tensor from :meth:`alloc_tensor`."""
        self._require_ready("free_tensor")
        self._memory.free_tensor(t, worker_id)
        self._owned.pop(t.data_ptr, None)

    # --- dispatch -----------------------------------------------------------------------
    def _load(self, compiled: Any) -> None:
        key = str(compiled.output_dir)
        if key not in self._loaded:
            compiled.load()
            self._loaded[key] = len(self._loaded)
            self._dlopen += 1

    def register(self, compiled: Any) -> RegistrationHandle:
        """Loads ``compiled`` (a ``CompiledProgram``) once; the handle dispatches it."""
        self._require_ready("register")
        from pypto.ir.compiled_program import CompiledProgram

        if not isinstance(compiled, CompiledProgram):
            raise TypeError(
                f"ChipWorker.register takes a CompiledProgram, got {type(compiled).__name__} "
                "(an L3 program goes through DistributedWorker)"
            )
        self._load(compiled)
        h = RegistrationHandle(self, compiled, self._loaded[str(compiled.output_dir)])
        self._handles.append(h)
        return h

    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        """Dispatches ``compiled`` once with ``args`` (host tensors, scalars and this
        worker's DeviceTensors); returns what the program's call returns."""
        self._require_ready("run")
        self._load(compiled)
        host = resolve_args(args, self._memory, "ChipWorker")
        return compiled(*host, config=config if config is not None else self._config)
