"""Worker-resident tensors: :class:`DeviceTensor` (PyPTO's ``pypto.runtime.DeviceTensor``)
and the allocation helpers :class:`~pypto.runtime.ChipWorker` and
:class:`~pypto.runtime.DistributedWorker` share.

On this runtime a chip's memory is host memory the chip processes map, so a device
allocation is a zeroed shared-memory block the worker owns: it survives across dispatches
(a resident weight or KV cache), is passed to a run without a copy by the caller, and is
released by ``free_tensor`` or the worker's ``close``.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["DeviceTensor", "DeviceMemory"]


class DeviceTensor:
    """A tensor in a worker's memory: ``data_ptr`` (the allocation's address), ``shape``
    and ``dtype`` (a ``torch.dtype``); ``buffer`` is the allocation it lives in."""

    __slots__ = ("data_ptr", "shape", "dtype", "buffer")

    def __init__(self, data_ptr: int, shape: Sequence[int], dtype: Any, *, buffer: Any = None) -> None:
        self.data_ptr = int(data_ptr)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.buffer = buffer

    @property
    def nbytes(self) -> int:
        """Bytes the tensor spans."""
        import torch

        return math.prod(self.shape) * torch.empty((), dtype=self.dtype).element_size()

    def host_view(self) -> Any:
        """A torch tensor over the allocation's bytes (shared memory: writes by a chip are
        visible here); raises ``RuntimeError`` once the allocation was freed."""
        if self.buffer is None:
            raise RuntimeError(
                "DeviceTensor has no live allocation (freed, or built from a raw pointer); "
                "allocate it with worker.alloc_tensor(...)"
            )
        return self.buffer.view(self.data_ptr, self.shape, self.dtype)

    def __repr__(self) -> str:
        return f"DeviceTensor(data_ptr=0x{self.data_ptr:x}, shape={list(self.shape)}, dtype={self.dtype})"


class _Allocation:
    """One ``malloc``: a zeroed shared-memory block."""

    __slots__ = ("storage", "base", "nbytes")

    def __init__(self, nbytes: int) -> None:
        import torch

        self.storage = torch.zeros(max(int(nbytes), 1), dtype=torch.uint8)
        self.storage.share_memory_()  # type: ignore[no-untyped-call]
        self.base = int(self.storage.data_ptr())
        self.nbytes = int(nbytes)

    def view(self, ptr: int, shape: Tuple[int, ...], dtype: Any) -> Any:
        import torch

        itemsize = torch.empty((), dtype=dtype).element_size()
        n = math.prod(shape) * itemsize
        off = ptr - self.base
        if off < 0 or off + n > self.nbytes:
            raise ValueError(
                f"DeviceTensor {list(shape)} {dtype} at 0x{ptr:x} does not fit its allocation "
                f"(0x{self.base:x}, {self.nbytes} bytes)"
            )
        return self.storage[off : off + n].view(dtype).view(shape)


class DeviceMemory:
    """A worker's allocations by address (``malloc`` / ``free`` / ``copy_to`` /
    ``copy_from``), per worker id."""

    def __init__(self, owner: str, n_workers: int = 1) -> None:
        self._owner = owner
        self._n_workers = n_workers
        self._allocs: Dict[Tuple[int, int], _Allocation] = {}

    def _check_worker(self, worker_id: int, op: str) -> None:
        if isinstance(worker_id, bool) or not isinstance(worker_id, int):
            raise TypeError(f"{self._owner}.{op}: worker_id must be an int, got {worker_id!r}")
        if not 0 <= worker_id < self._n_workers:
            raise ValueError(
                f"{self._owner}.{op}: worker_id {worker_id} outside [0, {self._n_workers})"
            )

    def malloc(self, nbytes: int, worker_id: int) -> int:
        self._check_worker(worker_id, "malloc")
        if int(nbytes) <= 0:
            raise ValueError(f"{self._owner}.malloc: nbytes must be positive, got {nbytes}")
        a = _Allocation(int(nbytes))
        self._allocs[(worker_id, a.base)] = a
        return a.base

    def find(self, ptr: int, nbytes: int, worker_id: int, op: str) -> _Allocation:
        """The allocation holding ``[ptr, ptr + nbytes)`` on ``worker_id``."""
        self._check_worker(worker_id, op)
        for (w, base), a in self._allocs.items():
            if w == worker_id and base <= ptr and ptr + nbytes <= base + a.nbytes:
                return a
        raise ValueError(
            f"{self._owner}.{op}: 0x{ptr:x} (+{nbytes} bytes) is not inside a live allocation of "
            f"worker {worker_id}; use a pointer from malloc/alloc_tensor that was not freed"
        )

    def free(self, ptr: int, worker_id: int) -> None:
        self._check_worker(worker_id, "free")
        if self._allocs.pop((worker_id, int(ptr)), None) is None:
            raise ValueError(
                f"{self._owner}.free: 0x{int(ptr):x} is not a live allocation of worker "
                f"{worker_id} (already freed, or not from malloc)"
            )

    def copy_to(self, dst: int, src: int, nbytes: int, worker_id: int) -> None:
        self.find(int(dst), int(nbytes), worker_id, "copy_to")
        ctypes.memmove(int(dst), int(src), int(nbytes))

    def copy_from(self, dst: int, src: int, nbytes: int, worker_id: int) -> None:
        self.find(int(src), int(nbytes), worker_id, "copy_from")
        ctypes.memmove(int(dst), int(src), int(nbytes))

    def alloc_tensor(self, shape: Sequence[int], dtype: Any, init: Optional[Any], worker_id: int) -> DeviceTensor:
        import torch

        shape_t = tuple(int(s) for s in shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        nbytes = max(math.prod(shape_t) * itemsize, 1)
        if init is not None:
            if not isinstance(init, torch.Tensor):
                raise TypeError(f"alloc_tensor: init must be a torch.Tensor, got {type(init).__name__}")
            if tuple(init.shape) != shape_t or init.dtype != dtype:
                raise ValueError(
                    f"alloc_tensor: init is {list(init.shape)} {init.dtype}, expected "
                    f"{list(shape_t)} {dtype}"
                )
        ptr = self.malloc(nbytes, worker_id)
        a = self._allocs[(worker_id, ptr)]
        t = DeviceTensor(ptr, shape_t, dtype, buffer=a)
        if init is not None:
            t.host_view().copy_(init.detach().cpu())
        return t

    def free_tensor(self, t: DeviceTensor, worker_id: int) -> None:
        if not isinstance(t, DeviceTensor):
            raise TypeError(f"free_tensor: expected a DeviceTensor, got {type(t).__name__}")
        if t.buffer is None or self._allocs.get((worker_id, t.data_ptr)) is not t.buffer:
            raise ValueError(
                f"free_tensor: {t!r} is not a live allocation of this {self._owner} on worker "
                f"{worker_id}; free it on the worker (and worker_id) that allocated it, once"
            )
        self.free(t.data_ptr, worker_id)
        t.buffer = None

    def owns(self, t: DeviceTensor) -> bool:
        return t.buffer is not None and any(a is t.buffer for a in self._allocs.values())

    def clear(self) -> None:
        self._allocs.clear()


def resolve_args(args: Sequence[Any], memory: DeviceMemory, owner: str) -> List[Any]:
    """``args`` with every :class:`DeviceTensor` replaced by a torch view of its allocation
    (which must belong to ``memory``)."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, DeviceTensor):
            if not memory.owns(a):
                raise ValueError(
                    f"argument {i}: DeviceTensor is not a live allocation owned by this {owner}; "
                    "allocate it with this same worker and do not dispatch it after free_tensor()."
                )
            out.append(a.host_view())
        else:
            out.append(a)
    return out
