"""``make_tensor_arg(worker, arg)``: what a generated ``host_orch.py`` passes to
``TaskArgs.add_tensor`` for a host tensor.

- a Simpler ``Tensor`` (a window buffer's ``.tensor(...)``, an earlier result) is returned
  unchanged;
- a ``torch.Tensor`` must be a contiguous CPU tensor of a dtype the chips know; it becomes
  a view into its storage: read-write when the storage is in shared memory
  (``.share_memory_()``), else a read-only snapshot (Simpler's ``FORK_COW``), which can only
  be an ``INPUT``.

The bytes never travel: the chips map the storage itself (see
:mod:`pypto.runtime._l3_worker`). torch is imported only when a tensor is converted.
"""

from __future__ import annotations

from typing import Any

from pypto.runtime import _simpler_shim

_simpler_shim.install()

from pypto.runtime._simpler_compat._task_interface import DataType, Tensor  # noqa: E402

__all__ = ["make_tensor_arg", "torch_dtype_code"]

def torch_dtype_code(t: Any) -> DataType:
    """The ``DataType`` of a torch tensor (the FP8 / FP4 dtypes too, as Simpler maps them);
    ``ValueError`` for one the chips do not know."""
    name = str(t.dtype).replace("torch.", "")
    for d in DataType:
        if d.torch_name == name:
            return d
    raise ValueError(f"Unsupported tensor dtype: {t.dtype}")


def make_tensor_arg(worker: Any, arg: Any) -> Tensor:
    """``arg`` as a task argument of ``worker``'s run (see the module docs).

    Raises ``TypeError`` for anything that is neither a ``Tensor`` nor a ``torch.Tensor``,
    and ``ValueError`` for an unsupported dtype, a non-CPU or a non-contiguous tensor.
    """
    if isinstance(arg, Tensor):
        return arg
    if type(arg).__module__.startswith("torch") and hasattr(arg, "untyped_storage"):
        if arg.device.type != "cpu":
            raise ValueError(f"make_tensor_arg requires a CPU tensor, got device={arg.device}")
        if not arg.is_contiguous():
            raise ValueError(
                "make_tensor_arg requires a contiguous tensor; call tensor.contiguous() first."
            )
        dtype = torch_dtype_code(arg)
        made: Tensor = worker.make_tensor_arg(arg, tuple(arg.shape), dtype)
        return made
    raise TypeError(
        "make_tensor_arg expects a torch.Tensor or a simpler Tensor, got "
        f"{type(arg).__name__}"
    )
