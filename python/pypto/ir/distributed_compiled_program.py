"""``DistributedConfig``: how an L3 (distributed) program is spread over devices.

The values are checked by ``pto_build_output::DistributedConfig`` (through
``pypto._native.check_distributed_config``), the same rules ``distributed_meta.json`` is
read with. Running distributed builds is not supported by this runtime; the class exists
so that configurations and sidecars round-trip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

from pypto import _native

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
