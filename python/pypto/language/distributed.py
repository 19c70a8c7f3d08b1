"""``pypto.language.distributed`` (imported as ``pld``): the distributed part of the DSL.

A ``@pl.jit.host`` function (the HOST orchestrator) launches one chip program per rank::

    import pypto.language as pl
    import pypto.language.distributed as pld

    @pl.jit.host
    def program(x: pl.Tensor[[2, 8, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8, 8], pl.FP32]]):
        buf = pld.alloc_window_buffer([8, 8], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            win = pld.window(buf, [8, 8], dtype=pl.FP32)
            chip(x[r], y[r], win, device=r)

``pld.world_size()`` is the number of ranks (``len(device_ids)``), ``pld.alloc_window_buffer``
declares a buffer in every rank's comm window and ``pld.window`` views this rank's slice,
which a chip parameter annotated ``pld.DistributedTensor[[8, 8], pl.FP32]`` receives. The
source is parsed, never executed; the front end (``pypto.language._distributed``), the IR
and the L3 codegen (``host_orch.py``) are those of the rest of the DSL (``docs/DSL.md``).
"""

from __future__ import annotations

import enum
from types import SimpleNamespace
from typing import Any

from pypto.language._surface import AtomicType, _annotation_of, _Annotation, _make_stub

__all__ = [
    "AtomicType",
    "DistributedTensor",
    "NotifyOp",
    "WaitCmp",
    "alloc_window_buffer",
    "get_comm_ctx",
    "nranks",
    "rank",
    "system",
    "tensor",
    "tile",
    "window",
    "world_size",
]


class DistributedTensor:
    """``pld.DistributedTensor[[d0, d1], dtype]``: a chip parameter that receives one rank's
    window view (``pld.window``); read and written in place."""

    def __class_getitem__(cls, item: Any) -> _Annotation:
        return _annotation_of("DistributedTensor", item)


class NotifyOp(enum.Enum):
    """How ``pld.system.notify`` changes the peer's signal."""

    Set = 0
    AtomicAdd = 1


class WaitCmp(enum.Enum):
    """How ``pld.system.wait`` compares the signal with the expected value."""

    Eq = 0
    Ge = 1


world_size = _make_stub("world_size", "pld.world_size(): the number of ranks (parsed, never called).")
alloc_window_buffer = _make_stub("alloc_window_buffer", "pld.alloc_window_buffer(shape, dtype=): a window buffer.")
window = _make_stub("window", "pld.window(buf, shape, dtype=): this rank's view of a window buffer.")
get_comm_ctx = _make_stub("get_comm_ctx", "pld.get_comm_ctx(t): the comm context of a window tensor.")
rank = _make_stub("rank", "pld.rank(ctx): this rank's index in the domain.")
nranks = _make_stub("nranks", "pld.nranks(ctx): the number of ranks of the domain.")
#: ``pld.system.<op>``: signals (``notify``, ``wait``) and the world size.
system = SimpleNamespace(
    **{n: _make_stub(f"system.{n}", f"pld.system.{n}") for n in ("notify", "wait", "world_size")}
)
#: ``pld.tensor.<op>``: collectives over window tensors (``barrier``).
tensor = SimpleNamespace(**{n: _make_stub(f"tensor.{n}", f"pld.tensor.{n}") for n in ("barrier", "put", "get")})
#: ``pld.tile.<op>``: tile access to a peer's window (``remote_load``, ``remote_store``).
tile = SimpleNamespace(
    **{n: _make_stub(f"tile.{n}", f"pld.tile.{n}") for n in ("remote_load", "remote_store")}
)


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"module 'pypto.language.distributed' has no attribute {name!r} (not in this DSL subset; see docs/DSL.md)"
    )
