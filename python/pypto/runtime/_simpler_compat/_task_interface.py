"""``simpler.task_interface`` as generated L3 code uses it (served when the real Simpler is
absent; see :mod:`pypto.runtime._simpler_shim`).

- :class:`TensorArgType` (``INPUT=0 OUTPUT=1 INOUT=2 OUTPUT_EXISTING=3 NO_DEP=4``) and
  :class:`DataType` (Simpler's order and codes, the chip runtime's dtype codes);
- :class:`Tensor`: a view into a :class:`Backing` — host shared memory, a read-only
  snapshot, or a comm window — described by byte offset, shape and dtype (the bytes never
  travel: chips map the backing);
- :class:`TaskArgs`: tensors (with tags) first, then 64-bit scalars;
- :class:`CallConfig`: the diagnostics switches, ``output_prefix`` and ring overrides,
  copied by value into each dispatch;
- :class:`CommBufferSpec`: one named buffer of a comm window;
- :class:`ArgDirection`: the names ``kernel_config.py`` files import.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

__all__ = [
    "ArgDirection",
    "Backing",
    "CallConfig",
    "CommBufferSpec",
    "DataType",
    "ExplicitTaskDependency",
    "TaskArgs",
    "TaskHandle",
    "Tensor",
    "TensorArgType",
]


class TensorArgType(enum.IntEnum):
    """How a task uses a tensor argument (drives the host TensorMap)."""

    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4


class ArgDirection(enum.IntEnum):
    """A kernel or orchestration parameter's direction (``kernel_config.py``'s ``_D``)."""

    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3


class DataType(enum.IntEnum):
    """Element types, in Simpler's order (the values are the chip runtime's codes)."""

    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    INT16 = 3
    INT8 = 4
    UINT8 = 5
    BFLOAT16 = 6
    INT64 = 7
    UINT64 = 8
    UINT16 = 9
    UINT32 = 10
    BOOL = 11
    FP8E4M3FN = 12
    FP8E8M0 = 13
    FP4E2M1 = 14

    @property
    def itemsize(self) -> int:
        """Bytes per element (1 for the sub-byte formats, as the runtime stores them)."""
        return element_types()[int(self)][2]

    @property
    def torch_name(self) -> str:
        """This runtime's: torch's name of the type (``"bfloat16"``, ``"float8_e4m3fn"``,
        ``"float4_e2m1fn_x2"``), as Simpler's ``torch_interop`` maps them."""
        return element_types()[int(self)][3]


_ELEMENT_TYPES: Optional[List[Tuple[int, str, int, str]]] = None


def element_types() -> List[Tuple[int, str, int, str]]:
    """Simpler's element types, ``(code, name, itemsize, torch_name)`` in code order: the
    native module's table (``pto_base::dtype``), the one source of these facts; the members
    of :class:`DataType` are checked against it by the tests."""
    global _ELEMENT_TYPES
    if _ELEMENT_TYPES is None:
        from pypto import _native

        _ELEMENT_TYPES = _native.element_types()
    return _ELEMENT_TYPES

#: What a backing grants: ``READ`` (a snapshot) or ``READWRITE``.
READ = "READ"
READWRITE = "READWRITE"

_NEEDS = {
    TensorArgType.INPUT: (True, False),
    TensorArgType.OUTPUT_EXISTING: (False, True),
    TensorArgType.INOUT: (True, True),
}


class Backing:
    """Memory chips can map: a region of the run's engine (``region`` id), ``nbytes``
    long, granting ``access``; ``owner`` is the worker that registered it and ``keep``
    whatever must stay alive while chips may touch it."""

    __slots__ = ("region", "nbytes", "access", "owner", "keep", "kind")

    def __init__(
        self, region: int, nbytes: int, access: str, owner: Any, keep: Any, kind: str
    ) -> None:
        self.region = region
        self.nbytes = nbytes
        self.access = access
        self.owner = owner
        self.keep = keep
        self.kind = kind

    def grants(self, tag: TensorArgType) -> bool:
        """Whether ``tag`` is allowed on this backing (``OUTPUT`` / ``NO_DEP`` always)."""
        need = _NEEDS.get(tag)
        if need is None:
            return True
        read, write = need
        return (not write) or self.access == READWRITE

    def __repr__(self) -> str:
        return f"Backing({self.kind}, region={self.region}, {self.nbytes} bytes, {self.access})"


class Tensor:
    """A contiguous view: ``shapes`` elements of ``dtype`` at ``byte_offset`` of
    ``backing``. A tensor with no backing (``Tensor.make(data=0, ...)``) has no memory yet:
    as an ``OUTPUT`` argument the runtime allocates it at submit (Simpler's HeapRing
    allocation) and the tensor then refers to that memory."""

    __slots__ = ("backing", "byte_offset", "shapes", "dtype")

    def __init__(
        self,
        backing: Optional[Backing],
        byte_offset: int,
        shapes: Sequence[int],
        dtype: DataType,
    ) -> None:
        self.backing = backing
        self.byte_offset = int(byte_offset)
        self.shapes = tuple(int(s) for s in shapes)
        self.dtype = DataType(dtype)

    @classmethod
    def make(
        cls,
        data: int = 0,
        shapes: Sequence[int] = (),
        dtype: DataType = DataType.FLOAT32,
        child_memory: bool = False,
    ) -> "Tensor":
        """Simpler's raw constructor; only ``data=0`` (memory the runtime allocates for an
        ``OUTPUT``) is possible here, because a raw address of this process means nothing
        in a chip process."""
        if data:
            raise TypeError(
                "Tensor.make: a raw data pointer cannot reach a chip process on this runtime "
                "(the chips run in their own processes); pass a host torch tensor through "
                "make_tensor_arg(orch._worker, t), a window buffer's .tensor(...), or data=0 "
                "for an OUTPUT the runtime allocates"
            )
        del child_memory
        return cls(None, 0, shapes, dtype)

    @property
    def allocated(self) -> bool:
        """Whether the tensor has memory (``False`` for ``Tensor.make(data=0)`` before the
        submit that allocates it)."""
        return self.backing is not None

    @property
    def nbytes(self) -> int:
        """Bytes the view spans."""
        return math.prod(self.shapes) * self.dtype.itemsize

    def __repr__(self) -> str:
        return (
            f"Tensor({self.dtype.name}{list(self.shapes)} at +{self.byte_offset} of "
            f"{self.backing!r})"
        )


def scalar_to_uint64(value: Any) -> int:
    """A scalar's 64 bits: ints two's complement, floats as IEEE single bits, bools 0/1."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 64):
            raise ValueError(f"TaskArgs.add_scalar: {value} does not fit in 64 bits")
        return value & ((1 << 64) - 1)
    if isinstance(value, float):
        return int(struct.unpack("<I", struct.pack("<f", value))[0])
    if hasattr(value, "__index__"):
        return scalar_to_uint64(int(value.__index__()))
    if hasattr(value, "item"):
        return scalar_to_uint64(value.item())
    raise TypeError(f"TaskArgs.add_scalar: expected an int, float or bool, got {type(value).__name__}")


@dataclass(frozen=True)
class TaskHandle:
    """A submitted NEXT_LEVEL dispatch (what ``orch.submit_next_level`` and
    ``_submit_chip`` return): opaque, valid as a dependency in the run that made it."""

    run_id: int = 0
    task_slot: int = -1


@dataclass(frozen=True)
class ExplicitTaskDependency:
    """One explicit dependency of a task: ``task`` finishes first; ``retain`` (``add_dep``)
    also keeps its outputs alive, which this runtime's host memory always does."""

    task: TaskHandle
    retain: bool


def _handles(handles: Sequence[Any], api: str) -> List[TaskHandle]:
    bad = [h for h in handles if not isinstance(h, TaskHandle)]
    if bad:
        raise TypeError(
            f"TaskArgs.{api}: expected task handles (what _submit_chip / orch.submit_next_level "
            f"return), got {type(bad[0]).__name__}"
        )
    return list(handles)


class TaskArgs:
    """A task's arguments: tagged tensors first, then 64-bit scalars, and the tasks it
    waits for besides those the tensor tags imply (``add_dep`` / ``add_dep_wait``,
    Simpler's 2026-09 generation)."""

    def __init__(self) -> None:
        self._tensors: List[Tensor] = []
        self._tags: List[TensorArgType] = []
        self._scalars: List[int] = []
        self._deps: List[ExplicitTaskDependency] = []

    def add_dep(self, *handles: TaskHandle) -> None:
        """The task waits for each of ``handles`` and keeps its outputs (WAIT | RETAIN)."""
        self._deps += [ExplicitTaskDependency(h, True) for h in _handles(handles, "add_dep")]

    def add_dep_wait(self, *handles: TaskHandle) -> None:
        """The task waits for each of ``handles`` (WAIT only)."""
        self._deps += [ExplicitTaskDependency(h, False) for h in _handles(handles, "add_dep_wait")]

    def explicit_deps(self) -> List[ExplicitTaskDependency]:
        """The explicit dependencies, in the order they were added."""
        return list(self._deps)

    def add_tensor(self, tensor: Tensor, tag: TensorArgType = TensorArgType.INPUT) -> None:
        """Adds a tensor with its tag; raises ``RuntimeError`` after a scalar and
        ``ValueError`` when the backing does not grant the access the tag needs."""
        if self._scalars:
            err = RuntimeError("TaskArgs: cannot add tensor after scalar")
            if hasattr(err, "add_note"):  # Python 3.11+
                err.add_note(
                    "add every tensor (add_tensor) before the first add_scalar: a chip kernel "
                    "takes its tensor arguments first, then its scalars"
                )
            raise err
        if not isinstance(tensor, Tensor):
            raise TypeError(
                f"TaskArgs.add_tensor: expected a Tensor (from make_tensor_arg or a window "
                f"buffer's .tensor()), got {type(tensor).__name__}"
            )
        tag = TensorArgType(tag)
        if tensor.backing is None:
            if tag != TensorArgType.OUTPUT:
                raise ValueError(
                    f"TaskArgs.add_tensor: a tensor with no memory (Tensor.make(data=0)) can only "
                    f"be an OUTPUT, which the runtime allocates; got TensorArgType.{tag.name}"
                )
        elif not tensor.backing.grants(tag):
            raise ValueError(
                f"TaskArgs.add_tensor: arg TensorArgType.{tag.name} requires access not granted "
                f"by the buffer ({tensor.backing.access}: a host tensor that is not in shared "
                "memory is read-only; call .share_memory_() on it before the run)"
            )
        self._tensors.append(tensor)
        self._tags.append(tag)

    def add_scalar(self, value: Any) -> None:
        """Adds a scalar (see :func:`scalar_to_uint64`)."""
        self._scalars.append(scalar_to_uint64(value))

    def tensor_count(self) -> int:
        """Tensors added."""
        return len(self._tensors)

    def scalar_count(self) -> int:
        """Scalars added."""
        return len(self._scalars)

    def tensor(self, i: int) -> Tensor:
        """Tensor ``i``."""
        return self._tensors[i]

    def tag(self, i: int) -> TensorArgType:
        """Tensor ``i``'s tag."""
        return self._tags[i]

    def scalar(self, i: int) -> int:
        """Scalar ``i``'s bits."""
        return self._scalars[i]

    def __repr__(self) -> str:
        return f"TaskArgs({len(self._tensors)} tensors, {len(self._scalars)} scalars)"


@dataclass
class CallConfig:
    """Per-dispatch configuration (Simpler's ``CallConfig``): copied by value at submit."""

    aicpu_thread_num: int = 0
    enable_chip_swimlane: int = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    output_prefix: str = ""
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    #: This runtime's: ``"host"`` or ``"predicted"`` (the timing model's times in the
    #: dispatch's files and its ``predicted_timing.json``, docs/TIMING.md); ``""`` follows
    #: ``PTO_TIMING`` for a dispatch with an ``output_prefix`` and is host time without one.
    timing: str = ""
    #: This runtime's: which generation of Simpler's DFX files the dispatch writes,
    #: ``"2026-08"`` or ``"2026-09"``; ``""`` follows ``PTO_DFX_SCHEMA``, else the program's.
    dfx_schema: str = ""

    def any_dfx(self) -> bool:
        """Whether a diagnostic is on."""
        from pypto.runtime import _dfx_switches

        return _dfx_switches.any_enabled(_dfx_switches.values(self))

    def writes_files(self) -> bool:
        """Whether the dispatch writes files under ``output_prefix``: a diagnostic, or
        ``timing="predicted"``."""
        return self.any_dfx() or self.timing.strip() == "predicted"

    def copy(self) -> "CallConfig":
        """A copy (what a dispatch keeps)."""
        return CallConfig(**{f: getattr(self, f) for f in self.__dataclass_fields__})


@dataclass
class CommBufferSpec:
    """One named buffer of a comm window (``nbytes`` of it; buffers are laid out in order)."""

    name: str
    dtype: str = "opaque"
    count: int = 0
    nbytes: int = 0
    load_from_host: bool = False
    store_to_host: bool = False


__all__ += ["scalar_to_uint64"]
