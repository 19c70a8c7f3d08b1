"""``DistributedConfig``: how an L3 (distributed) program is spread over devices.

and ``DistributedCompiledProgram``: an L3 build directory as a callable.

The values are checked by ``pto_build_output::DistributedConfig`` (through
``pypto._native.check_distributed_config``), the same rules ``distributed_meta.json`` is
read with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from pypto import _native
from pypto._dtypes import HOST_NAMES

__all__ = ["DistributedConfig", "DEFAULT_RUNTIME"]

#: The chip runtime's default wire name.
DEFAULT_RUNTIME = "tensormap_and_ringbuffer"


@dataclass
class DistributedConfig:
    """Devices and host workers of an L3 program (PyPTO's ``DistributedConfig``).

    - ``device_ids``: the devices (ranks) in rank order; non-empty, non-negative, distinct.
    - ``num_sub_workers``: host sub-worker processes, ``>= 0``.
    - ``runtime``: the chip runtime's wire name.
    - ``aicpu_thread_num``: AICPU threads per chip, 0 (architecture default) or at least 2.

    Raises ``ValueError`` for a value out of range and ``TypeError`` for a wrong type.
    """

    device_ids: List[int] = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = DEFAULT_RUNTIME
    aicpu_thread_num: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.device_ids, tuple):
            self.device_ids = list(self.device_ids)
        _native.check_distributed_config(
            self.device_ids, self.num_sub_workers, self.runtime, self.aicpu_thread_num
        )


def _dc_from_tuple(raw: Tuple[List[int], int, str, int]) -> DistributedConfig:
    ids, num_sub, runtime, aicpu = raw
    return DistributedConfig(list(ids), int(num_sub), str(runtime), int(aicpu))


class DistributedCompiledProgram:
    """A compiled L3 build directory as a callable (PyPTO's ``DistributedCompiledProgram``).

    :meth:`from_dir` rebuilds it from ``distributed_meta.json`` alone (validated with
    PyPTO's texts) and writes nothing; calling it runs the host orchestration
    ``orchestration/host_orch.py`` unchanged over one chip process per device id
    (:func:`pypto.runtime.distributed_runner.execute_distributed`). It is reusable: every
    call is a fresh run.
    """

    def __init__(
        self,
        output_dir: Union[str, "os.PathLike[str]"],
        params: Sequence[Tuple[str, str, Optional[List[int]], str]],
        num_return_types: int,
        platform: str,
        backend_type: str,
        distributed_config: DistributedConfig,
    ) -> None:
        self.output_dir = Path(output_dir)
        self.params: List[Tuple[str, str, Optional[List[int]], str]] = [
            (str(p[0]), str(p[1]), None if p[2] is None else list(p[2]), str(p[3])) for p in params
        ]
        self.param_names = [p[0] for p in self.params]
        self.output_indices = [i for i, p in enumerate(self.params) if p[1] == "Out"]
        self.return_types: List[Any] = [None] * int(num_return_types)
        self.platform = platform
        self.backend_type = backend_type
        self.distributed_config = distributed_config

    @classmethod
    def from_dir(
        cls,
        output_dir: Union[str, "os.PathLike[str]"],
        *,
        platform: Optional[str] = None,
        backend_type: Optional[str] = None,
        distributed_config: Optional[DistributedConfig] = None,
    ) -> "DistributedCompiledProgram":
        """Reads ``<output_dir>/distributed_meta.json``: ``FileNotFoundError`` when it is
        missing, ``ValueError`` naming the file for a malformed one (an override never
        excuses bad params or a bad backend). An explicit ``distributed_config`` replaces
        the persisted block, which is then not validated (as in PyPTO); ``platform``
        overrides the persisted one (default ``a2a3sim``)."""
        params, num_ret, persisted_platform, persisted_backend, raw_dc = (
            _native.load_distributed_meta(str(output_dir), distributed_config is None)
        )
        if distributed_config is not None:
            dc = distributed_config
        elif raw_dc is not None:
            dc = _dc_from_tuple(raw_dc)
        else:  # not reached: the persisted block is returned whenever it is asked for
            raise RuntimeError("load_distributed_meta returned no distributed_config")
        return cls(
            output_dir,
            params,
            num_ret,
            platform or persisted_platform or "a2a3sim",
            backend_type or persisted_backend,
            dc,
        )

    def __fspath__(self) -> str:
        return str(self.output_dir)

    def __repr__(self) -> str:
        return (
            f"DistributedCompiledProgram({str(self.output_dir)!r}, devices="
            f"{self.distributed_config.device_ids}, platform={self.platform!r})"
        )

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Runs the program: every parameter (in place) or the inputs only (outputs are
        allocated and returned). Only host ``torch.Tensor`` arguments are accepted."""
        from pypto.runtime.device_tensor import DeviceTensor

        if any(isinstance(a, DeviceTensor) for a in args):
            raise TypeError(
                "One-shot DistributedCompiledProgram calls cannot accept DeviceTensor or "
                "StackedDeviceTensor: their Buffer/provenance must belong to the same prepared "
                "DistributedWorker. Use `with compiled.prepare() as worker:`, allocate with "
                "`worker.alloc_tensor()` / `worker.alloc_stacked_tensor()`, then call "
                "`worker.run(...)`."
            )
        return self._call(args, config)

    def prepare(
        self,
        config: Any = None,
        *,
        extra_compiled: Sequence["DistributedCompiledProgram"] = (),
        persistent: bool = False,
        reset_persistent_windows: Optional[bool] = None,
        callbacks: Optional[Dict[str, Callable[..., Any]]] = None,
        sub_worker_overrides: Optional[Dict[str, Callable[..., Any]]] = None,
        startup_timeout_s: Optional[float] = None,
    ) -> Any:
        """A :class:`~pypto.runtime.DistributedWorker` for this program (and
        ``extra_compiled``): runtime-bound SubWorkers are bound from ``callbacks`` now (a
        missing one is a ``ValueError`` here, not at dispatch)."""
        from pypto.runtime.distributed_runner import DistributedWorker

        return DistributedWorker(
            [self, *extra_compiled],
            config,
            persistent=persistent,
            reset_persistent_windows=reset_persistent_windows,
            callbacks=callbacks,
            sub_worker_overrides=sub_worker_overrides,
            startup_timeout_s=startup_timeout_s,
        )

    def _call(self, args: Sequence[Any], config: Any, callbacks: Any = None) -> Any:
        """One run with ``args`` (see :meth:`__call__`), SubWorkers bound from
        ``callbacks``."""
        import torch

        from pypto.runtime.distributed_runner import execute_distributed

        n = len(self.params)
        inputs = [i for i in range(n) if i not in self.output_indices]
        if len(args) == n:
            full = list(args)
            returned: List[Any] = []
        elif len(args) == len(inputs) and self.output_indices:
            full = [None] * n
            for i, a in zip(inputs, args):
                full[i] = a
            returned = []
            for i in self.output_indices:
                name, _, shape, dtype = self.params[i]
                if shape is None or any(int(d) < 0 for d in shape):
                    raise TypeError(
                        f"DistributedCompiledProgram: output {name!r} has a dynamic shape "
                        f"{shape}; pass every parameter (in-place call)"
                    )
                t = torch.zeros(tuple(shape), dtype=_torch_dtype(torch, dtype))
                full[i] = t
                returned.append(t)
        else:
            raise TypeError(
                f"DistributedCompiledProgram expects {n} (in-place) or {len(inputs)} (return) "
                f"arguments, got {len(args)}. Parameters: {self.param_names}"
            )
        execute_distributed(self, full, config, callbacks=callbacks)
        if not returned:
            return None
        return returned[0] if len(returned) == 1 else tuple(returned)


def _torch_dtype(torch: Any, pypto_dtype: str) -> Any:
    return getattr(torch, HOST_NAMES.get(pypto_dtype, pypto_dtype))


__all__ += ["DistributedCompiledProgram"]
