"""The host side of an L3 run as generated ``host_orch.py`` code sees it: the
:class:`Worker` (``orch._worker``), the :class:`Orchestrator` (``orch``) with
``submit_next_level`` / ``submit_sub`` / ``allocate_domain``, comm domains
(:class:`CommDomainHandle`, :class:`ChipDomainContext`, window :class:`Buffer`) and the
callable handles of ``callables`` / ``sub_ids``.

The work is done by the native engine (``pypto._native.L3Engine``, i.e.
``pto_runner::l3``): one chip process per device id, each with every chip program of the
build loaded; host tensors shared with the chips by descriptor (a ``.share_memory_()``
storage is mapped by every chip, never copied); the host TensorMap orders dispatches; each
chip runs its READY dispatches one at a time, and chips run concurrently.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import threading
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from pypto import _native
from pypto.runtime import _dfx_switches, _simpler_shim

_simpler_shim.install()

from pypto.runtime._simpler_compat._task_interface import (  # noqa: E402
    CallConfig,
    CommBufferSpec,
    DataType,
    TaskArgs,
    TaskHandle,
    Tensor,
    TensorArgType,
)
from pypto.runtime._simpler_compat._task_interface import (  # noqa: E402
    READ,
    READWRITE,
    Backing,
)

__all__ = [
    "Buffer",
    "CallableHandle",
    "ChipDomainContext",
    "CommDomainHandle",
    "MappedArg",
    "MappedArgs",
    "Orchestrator",
    "Worker",
]

#: Bytes before the first window of a domain (``pto_runner::l3::comm::HEADER_BYTES``).
DOMAIN_HEADER_BYTES = 4096


class CallableHandle:
    """A registered program: a chip program (``next_levels/<name>/``) or a SubWorker."""

    __slots__ = ("name", "kind", "fn")

    def __init__(self, name: str, kind: str, fn: Optional[Callable[..., Any]] = None) -> None:
        self.name = name
        self.kind = kind
        self.fn = fn

    def __repr__(self) -> str:
        return f"CallableHandle({self.kind} {self.name!r})"


def call_config_dict(config: CallConfig) -> Dict[str, Any]:
    """The fields the engine reads, by name."""
    return {
        **_dfx_switches.call_config_values(config),
        "ring_task_window": config.ring_task_window,
        "ring_heap": config.ring_heap,
        "ring_dep_pool": config.ring_dep_pool,
        "timing": config.timing,
        "dfx_schema": config.dfx_schema,
    }


class Worker:
    """One L3 run's chips (``Worker(level=3)`` in Simpler): started at construction,
    stopped by :meth:`close` (always call it; a failed run kills the chips).

    SubWorker calls run on ``num_sub_workers`` host threads (at least one when there are
    SubWorkers): each takes the next READY call from the engine, which orders them with the
    chip dispatches by the TensorMap (a call waits only for the producers of its inputs)."""

    level = 3

    def __init__(
        self,
        *,
        platform: str,
        device_ids: Sequence[int],
        programs: Mapping[str, Path],
        sub_workers: Optional[Mapping[str, Callable[..., Any]]] = None,
        num_sub_workers: int = 0,
    ) -> None:
        self.platform = platform
        self.device_ids = list(device_ids)
        self._engine = _native.L3Engine(
            platform, self.device_ids, [(n, str(p)) for n, p in programs.items()]
        )
        self._storages: Dict[int, Backing] = {}
        self.callables: Dict[str, CallableHandle] = {
            n: CallableHandle(n, "chip") for n in programs
        }
        self.sub_ids: Dict[str, CallableHandle] = {
            n: CallableHandle(n, "sub", fn) for n, fn in (sub_workers or {}).items()
        }
        self._closed = False
        #: SubWorker calls submitted and not yet taken: engine task id -> (handle, args).
        self._sub_calls: Dict[int, Tuple[CallableHandle, "MappedArgs"]] = {}
        self._sub_lock = threading.Lock()
        n_sub = max(int(num_sub_workers), 1 if self.sub_ids else 0)
        self._sub_threads = [
            threading.Thread(target=self._sub_loop, name=f"pypto-l3-sub-{i}", daemon=True)
            for i in range(n_sub)
        ]
        for th in self._sub_threads:
            th.start()

    def _sub_loop(self) -> None:
        """A SubWorker thread: runs READY calls until the run ends."""
        while True:
            try:
                tid = self._engine.next_host_task(0.1)
            except RuntimeError:
                return  # the run ended
            if tid is None:
                if self._closed:
                    return
                continue
            with self._sub_lock:
                handle, args = self._sub_calls.pop(tid)
            error: Optional[str] = None
            try:
                assert handle.fn is not None
                handle.fn(args)
            except BaseException as e:  # noqa: BLE001 - reported as the call's failure
                tb = traceback.extract_tb(e.__traceback__)
                where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
                error = f"{type(e).__name__}: {e}{where}"
            try:
                self._engine.finish_host_task(tid, error)
            except RuntimeError:
                return

    def submit_sub_call(
        self, handle: CallableHandle, tensors: List[Any], args: "MappedArgs"
    ) -> int:
        """Records one SubWorker call over ``tensors`` (wire form); returns its task id."""
        if not self._sub_threads:
            raise RuntimeError("this run has no SubWorker threads (no sub_workers registered)")
        with self._sub_lock:
            tid = int(self._engine.submit_host(handle.name, tensors))
            self._sub_calls[tid] = (handle, args)
        return tid

    def alloc_output(self, t: Tensor) -> None:
        """Gives ``t`` (a tensor with no memory, tagged ``OUTPUT``) its own zeroed shared
        memory for the rest of the run, as Simpler's HeapRing allocation does."""
        import torch

        nbytes = max(t.nbytes, 1)
        storage_owner = torch.zeros(nbytes, dtype=torch.uint8)
        storage_owner.share_memory_()  # type: ignore[no-untyped-call]
        storage = storage_owner.untyped_storage()
        fd, size = storage._share_fd_cpu_()
        region = self._engine.add_region(int(fd), int(size), True)
        t.backing = Backing(region, int(size), READWRITE, self, storage, "host shared memory")
        t.byte_offset = 0
        self._storages[int(storage.data_ptr())] = t.backing

    def make_tensor_arg(self, t: Any, shapes: Sequence[int], dtype: DataType) -> Tensor:
        """A view of torch tensor ``t``'s storage (memoised per storage): read-write when
        the storage is shared, else a read-only snapshot."""
        storage = t.untyped_storage()
        base = int(storage.data_ptr())
        nbytes = int(storage.nbytes())
        backing = self._storages.get(base)
        if backing is None or backing.nbytes != nbytes or backing.keep is not storage:
            if t.is_shared():
                fd, size = storage._share_fd_cpu_()
                region = self._engine.add_region(int(fd), int(size), True)
                backing = Backing(region, int(size), READWRITE, self, storage, "host shared memory")
            else:
                data = ctypes.string_at(base, nbytes) if nbytes else b""
                region = self._engine.add_snapshot(data)
                backing = Backing(region, nbytes, READ, self, storage, "host snapshot")
            self._storages[base] = backing
        offset = int(t.data_ptr()) - base
        return Tensor(backing, offset, shapes, dtype)

    def drain(self) -> None:
        """Waits for every dispatch; raises ``RuntimeError`` with the first failure. Waits
        in slices of 0.1 s so that a Ctrl-C raises ``KeyboardInterrupt`` at once (the
        caller's ``close(kill=True)`` then stops the chips)."""
        while not self._engine.drain_for(0.1):
            pass

    def chip_pids(self) -> List[int]:
        """The chip processes' ids (empty once closed)."""
        return list(self._engine.chip_pids())

    def close(self, kill: bool = False) -> None:
        """Stops the chips (killed at once after a failure or with ``kill``) and the
        SubWorker threads."""
        if not self._closed:
            self._closed = True
            self._engine.close(kill)
            for th in self._sub_threads:
                if th is not threading.current_thread():
                    th.join()


class Buffer:
    """A named part of one rank's window (``VMM_WINDOW``)."""

    __slots__ = ("name", "backing", "offset", "nbytes")

    def __init__(self, name: str, backing: Backing, offset: int, nbytes: int) -> None:
        self.name = name
        self.backing = backing
        self.offset = offset
        self.nbytes = nbytes

    def tensor(
        self,
        shapes: Sequence[int],
        dtype: DataType,
        strides: Optional[Sequence[int]] = None,
        byte_offset: int = 0,
    ) -> Tensor:
        """A contiguous view of the buffer (``strides`` in elements, row-major only)."""
        dtype = DataType(dtype)
        shapes = tuple(int(s) for s in shapes)
        if strides is not None:
            strides = tuple(int(s) for s in strides)
            if any(s <= 0 for s in strides):
                raise ValueError(f"Buffer.tensor: strides must be > 0, got {list(strides)}")
            row_major = []
            acc = 1
            for n in reversed(shapes):
                row_major.append(acc)
                acc *= n
            if tuple(reversed(row_major)) != strides:
                raise ValueError(
                    f"Buffer.tensor: only row-major (contiguous) strides are supported on this "
                    f"runtime, got {list(strides)} for shape {list(shapes)}"
                )
        if byte_offset < 0 or byte_offset % dtype.itemsize:
            raise ValueError(
                f"Buffer.tensor: byte_offset must be a non-negative multiple of the dtype size "
                f"({dtype.itemsize}), got {byte_offset}"
            )
        need = byte_offset + math.prod(shapes) * dtype.itemsize
        if need > self.nbytes:
            raise ValueError(
                f"Buffer.tensor: {list(shapes)} {dtype.name} at byte_offset {byte_offset} needs "
                f"{need} bytes but window buffer '{self.name}' has {self.nbytes}"
            )
        return Tensor(self.backing, self.offset + byte_offset, shapes, dtype)

    def __repr__(self) -> str:
        return f"Buffer({self.name!r}, {self.nbytes} bytes)"


class ChipDomainContext:
    """One member's view of a comm domain (``handle[worker_id]``)."""

    __slots__ = (
        "name",
        "domain_rank",
        "domain_size",
        "device_ctx",
        "local_window_base",
        "actual_window_size",
        "buffers",
    )

    def __init__(
        self,
        name: str,
        domain_rank: int,
        domain_size: int,
        device_ctx: int,
        local_window_base: int,
        actual_window_size: int,
        buffers: Dict[str, Buffer],
    ) -> None:
        self.name = name
        self.domain_rank = domain_rank
        self.domain_size = domain_size
        self.device_ctx = device_ctx
        self.local_window_base = local_window_base
        self.actual_window_size = actual_window_size
        self.buffers = buffers

    def __repr__(self) -> str:
        return (
            f"ChipDomainContext({self.name!r}, rank {self.domain_rank}/{self.domain_size}, "
            f"window {self.actual_window_size} bytes)"
        )


class CommDomainHandle:
    """A live comm domain (a context manager); indexed by **worker id**."""

    def __init__(self, name: str, contexts: Dict[int, ChipDomainContext]) -> None:
        self.name = name
        self._contexts = contexts
        self._released = False

    def __enter__(self) -> "CommDomainHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        # The memory is freed after the run's completion fence (Worker.close).
        self._released = True

    def __getitem__(self, worker_id: int) -> ChipDomainContext:
        if self._released:
            raise RuntimeError(
                f"CommDomainHandle({self.name!r}) already released; use it only inside its "
                "`with ... allocate_domain(...)` block"
            )
        try:
            return self._contexts[int(worker_id)]
        except KeyError:
            raise KeyError(
                f"worker {worker_id} is not a member of comm domain {self.name!r} "
                f"(members: {sorted(self._contexts)})"
            ) from None

    @property
    def workers(self) -> List[int]:
        """Member worker ids, in domain-rank order."""
        return sorted(self._contexts, key=lambda w: self._contexts[w].domain_rank)

    def __repr__(self) -> str:
        return f"CommDomainHandle({self.name!r}, workers={self.workers})"


class MappedArg:
    """A SubWorker's view of one tensor argument."""

    __slots__ = ("buffer", "shapes", "strides", "dtype")

    def __init__(self, buffer: memoryview, shapes: Tuple[int, ...], dtype: int) -> None:
        self.buffer = buffer
        self.shapes = shapes
        strides: List[int] = []
        acc = 1
        for n in reversed(shapes):
            strides.append(acc)
            acc *= n
        self.strides = tuple(reversed(strides))
        self.dtype = dtype


class MappedArgs(List[MappedArg]):
    """A SubWorker's arguments: the tensors (a list) and the scalars."""

    def __init__(self, tensors: Sequence[MappedArg], scalars: Sequence[int]) -> None:
        super().__init__(tensors)
        self._scalars = list(scalars)

    def scalar_count(self) -> int:
        """Scalars passed."""
        return len(self._scalars)

    def scalar(self, i: int) -> int:
        """Scalar ``i``'s bits."""
        return self._scalars[i]


def _host_view(t: Tensor) -> memoryview:
    storage = t.backing.keep if t.backing is not None else None
    host = t.backing is not None and t.backing.kind in ("host shared memory", "host snapshot")
    if not host or storage is None:
        raise TypeError(
            "submit_sub: DEVICE-space arguments (comm window buffers) cannot reach a SubWorker; "
            "pass host tensors"
        )
    base = int(storage.data_ptr())
    raw = (ctypes.c_char * t.nbytes).from_address(base + t.byte_offset)
    view = memoryview(raw).cast("B")
    return view.toreadonly() if t.backing is not None and t.backing.access == READ else view


def _buffer_view(buf: Any, api: str) -> memoryview:
    """The host bytes of ``buf``, a :class:`Buffer` over host shared memory."""
    if not isinstance(buf, Buffer):
        raise TypeError(f"{api}: expected a Buffer from orch.alloc(...), got {type(buf).__name__}")
    keep = buf.backing.keep
    if keep is None or not hasattr(keep, "data_ptr"):
        raise TypeError(
            f"{api}: {buf!r} is {buf.backing.kind}, which the host cannot address; only "
            "buffers from orch.alloc(...) can be copied"
        )
    base = int(keep.data_ptr()) + buf.offset
    raw = (ctypes.c_char * buf.nbytes).from_address(base)
    return memoryview(raw).cast("B")


def _host_bytes(src: Any, api: str) -> bytes:
    """``src`` (a contiguous CPU torch tensor or bytes-like) as bytes."""
    if hasattr(src, "untyped_storage"):
        if src.device.type != "cpu" or not src.is_contiguous():
            raise ValueError(f"{api}: the host tensor must be a contiguous CPU tensor")
        return ctypes.string_at(int(src.data_ptr()), int(src.numel() * src.element_size()))
    return bytes(memoryview(src).cast("B"))


def _host_writable(dst: Any, api: str) -> memoryview:
    """``dst`` (a contiguous CPU torch tensor or writable bytes-like) as writable bytes."""
    if hasattr(dst, "untyped_storage"):
        if dst.device.type != "cpu" or not dst.is_contiguous():
            raise ValueError(f"{api}: the host tensor must be a contiguous CPU tensor")
        n = int(dst.numel() * dst.element_size())
        return memoryview((ctypes.c_char * n).from_address(int(dst.data_ptr()))).cast("B")
    view = memoryview(dst).cast("B")
    if view.readonly:
        raise TypeError(f"{api}: the destination is read-only")
    return view


class Orchestrator:
    """``orch``: what the generated entry function calls while the run's graph is built."""

    #: Runs so far in this process (each orchestrator is one run; its handles carry it).
    _runs = 0

    def __init__(self, worker: Worker) -> None:
        Orchestrator._runs += 1
        self._run_id = Orchestrator._runs
        self._worker = worker
        self._building = True
        self._submitted = False
        self._live: Dict[str, CommDomainHandle] = {}
        self._domains: List[CommDomainHandle] = []
        self._scope_depth = 0
        self._allocs = 0

    # --- dispatch -------------------------------------------------------------------
    def submit_next_level(
        self,
        handle: Any,
        args: TaskArgs,
        config: Optional[CallConfig] = None,
        *,
        worker: int,
    ) -> TaskHandle:
        """Submits one chip dispatch of ``handle`` to NEXT_LEVEL worker ``worker``; the
        config is copied now. Dependencies come from the tensor tags and ``args``' explicit
        ones (``add_dep`` / ``add_dep_wait``: handles of this run). Returns its handle."""
        if isinstance(worker, bool) or not isinstance(worker, int):
            raise TypeError("worker must be an integer NEXT_LEVEL worker id")
        if worker < 0:
            raise ValueError("worker must be a non-negative NEXT_LEVEL worker id")
        if not isinstance(handle, CallableHandle) or handle.kind != "chip":
            raise TypeError(
                "orch.submit_next_level now takes a CallableHandle, not a "
                f"{type(handle).__name__}. Pass callables[\"<next_levels name>\"]."
            )
        if not isinstance(args, TaskArgs):
            raise TypeError(
                f"orch.submit_next_level: args must be a TaskArgs, got {type(args).__name__}"
            )
        if not self._building:
            raise RuntimeError("submit_next_level is only valid while a run's graph is being built")
        cfg = config if config is not None else CallConfig()
        deps = [self._dep_slot(d.task) for d in args.explicit_deps()]
        tensors = self._wire_tensors(args, "orch.submit_next_level")
        scalars = [args.scalar(i) for i in range(args.scalar_count())]
        out = cfg.output_prefix or None
        self._submitted = True
        slot = self._worker._engine.submit(
            handle.name, worker, tensors, scalars, call_config_dict(cfg), out, deps
        )
        return TaskHandle(self._run_id, int(slot))

    def _dep_slot(self, handle: TaskHandle) -> int:
        """The dispatch id of a handle of this run (``ValueError`` for another run's)."""
        if handle.run_id != self._run_id:
            raise ValueError(
                f"TaskArgs.add_dep_wait: {handle} comes from another run (this is run "
                f"{self._run_id}); a handle is valid only in the run that submitted it"
            )
        return handle.task_slot

    def _wire_tensors(self, args: TaskArgs, api: str) -> List[Any]:
        """``args``' tensors as the engine takes them; an ``OUTPUT`` with no memory gets
        its allocation now."""
        wire = []
        for i in range(args.tensor_count()):
            t = args.tensor(i)
            if t.backing is None:
                self._worker.alloc_output(t)
            assert t.backing is not None
            if t.backing.owner is not self._worker:
                raise ValueError(
                    f"{api}: tensor argument {i} belongs to another run's worker; build task "
                    "arguments with make_tensor_arg(orch._worker, ...)"
                )
            wire.append(
                (t.backing.region, t.byte_offset, list(t.shapes), int(t.dtype), int(args.tag(i)))
            )
        return wire

    def submit_sub(self, handle: Any, args: Optional[TaskArgs] = None) -> None:
        """Submits a call of SubWorker ``handle`` over ``args`` (host tensors only). It runs
        on a SubWorker thread once the dispatches producing its inputs completed, and the
        dispatches reading its outputs wait for it (the TensorMap orders it like any task)."""
        if not isinstance(handle, CallableHandle) or handle.kind != "sub" or handle.fn is None:
            raise TypeError(
                f"orch.submit_sub takes a SubWorker handle (sub_ids[...]), got {handle!r}"
            )
        if not self._building:
            raise RuntimeError("submit_sub is only valid while a run's graph is being built")
        args = args if args is not None else TaskArgs()
        for i in range(args.tensor_count()):
            t = args.tensor(i)
            if t.backing is None:
                self._worker.alloc_output(t)
        mapped = [
            MappedArg(_host_view(args.tensor(i)), args.tensor(i).shapes, int(args.tensor(i).dtype))
            for i in range(args.tensor_count())
        ]
        wire = self._wire_tensors(args, "orch.submit_sub")
        self._submitted = True
        self._worker.submit_sub_call(
            handle, wire, MappedArgs(mapped, [args.scalar(i) for i in range(args.scalar_count())])
        )

    def submit_next_level_group(
        self,
        handle: Any,
        args_list: Sequence[TaskArgs],
        config: Optional[CallConfig] = None,
        *,
        workers: Sequence[int],
    ) -> List[TaskHandle]:
        """Submits ``args_list[i]`` to NEXT_LEVEL worker ``workers[i]`` for every member,
        with Simpler's checks (one worker id per member, no duplicates). Every member is
        checked before any is submitted; each member is then ordered by its own tensor
        tags (a consumer of a member's output waits for that member)."""
        args_list = list(args_list)
        workers = list(workers)
        for w in workers:
            if isinstance(w, bool) or not isinstance(w, int):
                raise TypeError("workers entries must be integer NEXT_LEVEL worker ids")
            if w < 0:
                raise ValueError("workers entries must be non-negative NEXT_LEVEL worker ids")
        if len(workers) != len(args_list):
            raise ValueError("workers length must match args_list length")
        if len(set(workers)) != len(workers):
            raise ValueError("workers must not contain duplicate NEXT_LEVEL worker ids")
        n = len(self._worker.device_ids)
        for w in workers:
            if w >= n:
                raise ValueError(
                    f"submit_next_level_group: worker {w} is not a NEXT_LEVEL worker of this "
                    f"run (it has {n}: 0..{n - 1})"
                )
        cfg = config.copy() if config is not None else CallConfig()
        return [self.submit_next_level(handle, args, cfg, worker=w) for args, w in zip(args_list, workers)]

    # --- scopes and runtime-managed buffers ---------------------------------------------
    def scope_begin(self) -> None:
        """Opens a nested scope (pair it with :meth:`scope_end`; prefer :meth:`scope`)."""
        self._scope_depth += 1

    def scope_end(self) -> None:
        """Closes the scope the matching :meth:`scope_begin` opened."""
        if self._scope_depth == 0:
            raise RuntimeError("Orchestrator.scope_end: no scope is open (scope_begin first)")
        self._scope_depth -= 1

    @contextlib.contextmanager
    def scope(self) -> Iterator["Orchestrator"]:
        """A nested scope for the ``with`` block. Buffers from :meth:`alloc` live until the
        run ends (this runtime reclaims them with the run, never earlier)."""
        self.scope_begin()
        try:
            yield self
        finally:
            self.scope_end()

    def alloc(self, shape: Sequence[int], dtype: DataType) -> "Buffer":
        """A runtime-managed intermediate buffer of ``shape`` x ``dtype`` (zeroed shared
        memory every chip maps); name it in a task with ``buf.tensor(shape, dtype)``. It is
        reclaimed when the run ends."""
        if not self._building:
            raise RuntimeError("alloc is only valid while a run's graph is being built")
        dtype = DataType(dtype)
        shape_t = tuple(int(s) for s in shape)
        if any(s < 0 for s in shape_t):
            raise ValueError(f"Orchestrator.alloc: shape must be non-negative, got {list(shape_t)}")
        t = Tensor(None, 0, shape_t, dtype)
        self._worker.alloc_output(t)
        assert t.backing is not None
        self._allocs += 1
        return Buffer(f"alloc{self._allocs}", t.backing, 0, max(t.nbytes, 1))

    def copy_to(self, dst: "Buffer", src: Any) -> None:
        """Host to buffer: copies ``src`` (a contiguous CPU torch tensor or bytes-like) into
        ``dst`` (a buffer from :meth:`alloc`), from its first byte."""
        data = _host_bytes(src, "Orchestrator.copy_to")
        view = _buffer_view(dst, "Orchestrator.copy_to")
        if len(data) > len(view):
            raise ValueError(
                f"Orchestrator.copy_to: source has {len(data)} bytes but {dst!r} has {len(view)}"
            )
        view[: len(data)] = data

    def copy_from(self, dst: Any, src: "Buffer") -> None:
        """Buffer to host: fills ``dst`` (a contiguous CPU torch tensor or writable
        bytes-like) from the first bytes of ``src`` (a buffer from :meth:`alloc`)."""
        view = _buffer_view(src, "Orchestrator.copy_from")
        out = _host_writable(dst, "Orchestrator.copy_from")
        if len(out) > len(view):
            raise ValueError(
                f"Orchestrator.copy_from: destination has {len(out)} bytes but {src!r} has "
                f"{len(view)}"
            )
        out[:] = view[: len(out)]

    # --- comm domains ---------------------------------------------------------------
    def allocate_domain(
        self,
        *,
        name: str,
        workers: Sequence[int],
        window_size: int,
        buffers: Sequence[CommBufferSpec] = (),
    ) -> CommDomainHandle:
        """Creates comm domain ``name`` over ``workers`` (worker ids; domain rank = position)
        with one ``window_size``-byte window per member, carved into ``buffers`` in order.
        Must come before the run's first submit."""
        if not self._building:
            raise RuntimeError("allocate_domain is only valid while a run's graph is being built")
        if self._submitted:
            raise RuntimeError(
                "Orchestrator.allocate_domain: direct device control cannot follow a task "
                "submission in the same run — open every `with allocate_domain(...)` block "
                "before the first submit_* call (generated code opens them at the top of the "
                "entry body)"
            )
        workers = [int(w) for w in workers]
        n = len(self._worker.device_ids)
        if not workers:
            raise ValueError("allocate_domain: workers must be non-empty")
        if len(set(workers)) != len(workers):
            dups = sorted({w for w in workers if workers.count(w) > 1})
            raise ValueError(f"allocate_domain: workers contains duplicates: {dups}")
        for w in workers:
            if not 0 <= w < n:
                raise ValueError(f"allocate_domain: worker_id {w} outside [0, {n})")
        window_size = int(window_size)
        if window_size <= 0:
            raise ValueError("allocate_domain: window_size must be positive")
        names = [str(b.name) for b in buffers]
        if len(set(names)) != len(names):
            dup_names = sorted({x for x in names if names.count(x) > 1})
            raise ValueError(f"allocate_domain: duplicate buffer names: {dup_names}")
        total = sum(int(b.nbytes) for b in buffers)
        if total > window_size:
            raise ValueError(
                f"allocate_domain: buffers sum to {total} bytes, exceeds window_size={window_size}"
            )
        if name in self._live and not self._live[name]._released:
            raise ValueError(f"allocate_domain: domain {name!r} already live")
        region, members = self._worker._engine.allocate_domain(workers, window_size)
        domain_backing = Backing(
            region,
            DOMAIN_HEADER_BYTES + window_size * len(workers),
            READWRITE,
            self._worker,
            None,
            f"comm domain {name!r}",
        )
        contexts: Dict[int, ChipDomainContext] = {}
        for rank, (w, (ctx, base)) in enumerate(zip(workers, members)):
            offset = DOMAIN_HEADER_BYTES + rank * window_size
            bufs: Dict[str, Buffer] = {}
            for b in buffers:
                bufs[b.name] = Buffer(b.name, domain_backing, offset, int(b.nbytes))
                offset += int(b.nbytes)
            contexts[w] = ChipDomainContext(
                name, rank, len(workers), int(ctx), int(base), window_size, bufs
            )
        handle = CommDomainHandle(name, contexts)
        self._live[name] = handle
        self._domains.append(handle)
        return handle

    def _finish_building(self) -> None:
        self._building = False

    def domains(self) -> Iterator[CommDomainHandle]:
        """The domains allocated in this run."""
        return iter(self._domains)


__all__ += ["call_config_dict", "DOMAIN_HEADER_BYTES", "TensorArgType"]
