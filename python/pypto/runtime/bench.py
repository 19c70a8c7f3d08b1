"""``benchmark()``: time repeated launches of a compiled program.

The statistics (:class:`BenchmarkStats`) are computed by the runner
(``pto_runner::bench_stats``): per measured round, the device wall time (orchestration
start to the last task's end) and the host wall time of the launch, in microseconds;
``device_us_{min,median,mean,max,stdev}`` and the same for host, p90 and p99.

Typical use on a replayed build::

    rebuild_kernel_cpp_from_pto(work_dir)
    invalidate_binary_cache(work_dir)
    stats = benchmark(CompiledProgram.from_dir(work_dir), [a, b, c], rounds=100)
    print(stats)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from pypto import _native
from pypto._tensors import as_host_array
from pypto.runtime.run_config import RunConfig

if TYPE_CHECKING:
    from pypto.ir.compiled_program import CompiledProgram

__all__ = ["BenchmarkStats", "benchmark"]

BenchmarkStats = _native.BenchmarkStats


def benchmark(
    compiled: CompiledProgram,
    args: Sequence[Any],
    *,
    rounds: int = 100,
    warmup: int = 3,
    platform: Optional[str] = None,
    device_id: Optional[int] = None,
    config: Optional[RunConfig] = None,
    persistent: bool = False,
    reset_persistent_windows: Optional[bool] = None,
) -> _native.BenchmarkStats:
    """Runs ``compiled`` ``warmup`` times (discarded) then ``rounds`` times with ``args``
    (every parameter, in order) and returns the timings.

    ``config`` (or ``platform`` / ``device_id``, not both) selects the platform and run
    options. ``persistent`` / ``reset_persistent_windows`` apply only to distributed
    programs, which this runtime does not run.

    Raises ``ValueError`` for ``rounds <= 0``, ``warmup < 0`` or conflicting options.
    """
    from pypto.ir.compiled_program import CompiledProgram

    _native.validate_bench_args(rounds, warmup)
    if persistent or reset_persistent_windows is not None:
        raise ValueError(
            "benchmark(): persistent/reset_persistent_windows apply only to an L3 "
            "DistributedCompiledProgram"
        )
    if config is not None and (platform is not None or device_id is not None):
        raise ValueError("benchmark(): pass either config=... or platform=/device_id=, not both")
    if not isinstance(compiled, CompiledProgram):
        raise TypeError(
            f"benchmark() expects a CompiledProgram (CompiledProgram.from_dir(...)), "
            f"got {type(compiled).__name__}"
        )
    if config is None:
        config = RunConfig(platform=platform or compiled.platform, device_id=device_id or 0)
    params = compiled.param_infos
    if len(args) != len(params):
        raise TypeError(
            f"benchmark() expects {len(params)} arguments (every parameter, in order), got "
            f"{len(args)}. Parameters: {compiled.param_names}"
        )
    host = [as_host_array(a, i) for i, a in enumerate(args)]
    return compiled._native.benchmark(host, config.native_options(), rounds, warmup)
