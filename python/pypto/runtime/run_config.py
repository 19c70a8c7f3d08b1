"""``RunConfig``: per-call configuration of a run, and ``RunResult``.

Validation happens in Rust (``pypto._native.RunOptions``, which is ``pto_runner::RunConfig``),
so ``pypto`` and the ``pto`` command line reject the same input with the same words.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from pypto import _native

if TYPE_CHECKING:
    from pypto.ir.distributed_compiled_program import DistributedConfig

__all__ = ["PLATFORMS", "RunConfig", "RunResult", "RingOverride"]

#: Platforms a :class:`RunConfig` accepts: PyPTO's four and this runtime's ``cpu``.
PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5", "cpu")

#: The swimlane level ``True`` stands for.
SWIMLANE_FULL_LEVEL = 4

_ALIAS_DEPRECATION = {
    "enable_l2_swimlane": (
        "RunConfig.enable_l2_swimlane is deprecated; use enable_chip_swimlane instead. "
        "Same values and semantics — Simpler renamed the L2 layer to 'chip', and the runtime "
        "artifact is chip_swimlane_records.json. The alias will be removed in a future release."
    ),
    "runtime_profiling": (
        "RunConfig.runtime_profiling is deprecated; use enable_chip_swimlane instead. "
        "Same values and semantics — it was the only switch for the chip swimlane before the "
        "DFX switches became independent. The alias will be removed in a future release."
    ),
}

#: A ring override: one value for all four scope-depth rings, or one per ring (0 keeps
#: that ring's default), or ``None``.
RingOverride = Union[int, List[int], Tuple[int, ...], None]


@dataclass
class RunConfig:
    """How to run a compiled program (PyPTO's ``RunConfig``).

    The five diagnostics (DFX) are independent; any of them forces ``save_kernels=True`` so
    that ``<work_dir>/dfx_outputs/`` is kept:

    - ``enable_chip_swimlane``: level 0-4 (``True`` = 4) -> ``chip_swimlane_records.json``
    - ``enable_dump_args``: 0 off, 1 partial, 2 full (3 hybrid) -> ``args_dump/``
    - ``enable_pmu``: PMU event type, 0 off (2 = PIPE_UTILIZATION, 4 = MEMORY) -> ``pmu.csv``
    - ``enable_dep_gen``: ``deps.json``
    - ``enable_scope_stats``: ``scope_stats/scope_stats.jsonl``

    ``enable_l2_swimlane`` and ``runtime_profiling`` are deprecated aliases of
    ``enable_chip_swimlane`` (not dataclass fields): passing or assigning them warns with a
    ``DeprecationWarning``; reading them is silent.

    Ring overrides (``ring_task_window``, ``ring_heap``, ``ring_dep_pool``) are one int for
    all four scope-depth rings or a list of four (0 keeps that ring's default).

    Fields PyPTO uses for compiling (``strategy``, ``dump_passes``, ``codegen_only``, ...) are
    kept for compatibility; this runtime runs already-compiled directories and ignores them.
    ``device_id`` is ignored on the simulated platforms. ``scheduler_timeout`` (seconds),
    ``n_workers`` (worker threads) and ``in_process`` are this runtime's own: runs isolate the
    chip in a child process (a crashing kernel becomes a ``RuntimeError`` naming the task and
    this process survives) unless ``in_process=True`` or ``PTO_IN_PROCESS=1``.

    Raises ``ValueError`` for an unknown platform, a level out of range, an invalid ring
    override, or both spellings of the swimlane switch; ``TypeError`` for a level that is not
    an int or a bool.
    """

    __test__ = False

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: str = "Default"
    backend_type: str = "Ascend910B"
    dump_passes: Union[bool, str] = False
    save_kernels: bool = False
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False
    enable_chip_swimlane: Union[int, bool] = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Optional[str] = None
    disabled_diagnostics: Optional[Any] = None
    golden_data_dir: Optional[str] = None
    aicpu_thread_num: Optional[int] = None
    ring_task_window: RingOverride = None
    ring_heap: RingOverride = None
    ring_dep_pool: RingOverride = None
    distributed_config: Optional[DistributedConfig] = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Optional[str] = None
    dump_ptoas_passes: bool = False
    scheduler_timeout: Optional[float] = None
    n_workers: Optional[int] = None
    in_process: bool = False

    def __post_init__(self) -> None:
        # 1. The platform (the native constructor checks it first), the device id.
        _native.RunOptions(str(self.platform))
        if isinstance(self.device_id, bool) or not isinstance(self.device_id, int):
            raise TypeError(f"device_id must be an int, got {type(self.device_id).__name__}")
        if self.device_id < 0:
            raise ValueError(f"device_id must be >= 0, got {self.device_id}")
        # 2. The backend follows the platform.
        self.backend_type = "Ascend950" if self.platform.startswith("a5") else "Ascend910B"
        # 3. The swimlane level.
        self.enable_chip_swimlane = _native.normalize_swimlane_level(
            self.enable_chip_swimlane, "enable_chip_swimlane"
        )
        for name in ("ring_task_window", "ring_heap", "ring_dep_pool"):
            value = getattr(self, name)
            if isinstance(value, tuple):
                setattr(self, name, list(value))
        # 4. Everything else, in Rust; then the save_kernels forcing.
        if self.native_options().any_dfx_enabled():
            self.save_kernels = True

    def native_options(self) -> _native.RunOptions:
        """The validated native configuration of the current field values."""
        return _native.RunOptions(
            str(self.platform),
            enable_chip_swimlane=self.enable_chip_swimlane,
            enable_dump_args=self.enable_dump_args,
            enable_pmu=self.enable_pmu,
            enable_dep_gen=self.enable_dep_gen,
            enable_scope_stats=self.enable_scope_stats,
            ring_task_window=self.ring_task_window,
            ring_heap=self.ring_heap,
            ring_dep_pool=self.ring_dep_pool,
            rtol=self.rtol,
            atol=self.atol,
            scheduler_timeout=self.scheduler_timeout,
            n_workers=self.n_workers,
            in_process=self.in_process,
        )

    def any_dfx_enabled(self) -> bool:
        """True when any of the five diagnostics is on."""
        return self.native_options().any_dfx_enabled()

    @property
    def enable_l2_swimlane(self) -> int:
        """Deprecated alias of ``enable_chip_swimlane`` (reading is silent, assigning warns)."""
        return int(self.enable_chip_swimlane)

    @enable_l2_swimlane.setter
    def enable_l2_swimlane(self, value: Union[int, bool]) -> None:
        warnings.warn(_ALIAS_DEPRECATION["enable_l2_swimlane"], DeprecationWarning, stacklevel=2)
        self.enable_chip_swimlane = _native.normalize_swimlane_level(value, "enable_l2_swimlane")

    @property
    def runtime_profiling(self) -> int:
        """Deprecated alias of ``enable_chip_swimlane`` (reading is silent, assigning warns)."""
        return int(self.enable_chip_swimlane)

    @runtime_profiling.setter
    def runtime_profiling(self, value: Union[int, bool]) -> None:
        warnings.warn(_ALIAS_DEPRECATION["runtime_profiling"], DeprecationWarning, stacklevel=2)
        self.enable_chip_swimlane = _native.normalize_swimlane_level(value, "runtime_profiling")


_FIELD_NAMES = [f.name for f in dataclasses.fields(RunConfig)]
_dataclass_init = RunConfig.__init__


@functools.wraps(_dataclass_init)
def _run_config_init(self: RunConfig, *args: Any, **kwargs: Any) -> None:
    """The dataclass ``__init__``, plus the deprecated swimlane aliases as keywords."""
    aliases = [name for name in _ALIAS_DEPRECATION if name in kwargs]
    for name in aliases:
        warnings.warn(_ALIAS_DEPRECATION[name], DeprecationWarning, stacklevel=2)
    if len(aliases) > 1:
        raise ValueError(
            "RunConfig received both the deprecated enable_l2_swimlane and runtime_profiling; "
            "pass only enable_chip_swimlane."
        )
    if aliases:
        alias = aliases[0]
        canonical_given = "enable_chip_swimlane" in kwargs or len(args) > _FIELD_NAMES.index(
            "enable_chip_swimlane"
        )
        if canonical_given:
            raise ValueError(
                f"RunConfig received both enable_chip_swimlane and the deprecated {alias}; "
                "pass only enable_chip_swimlane."
            )
        kwargs["enable_chip_swimlane"] = kwargs.pop(alias)
    _dataclass_init(self, *args, **kwargs)


RunConfig.__init__ = _run_config_init  # type: ignore[method-assign]


@dataclass
class RunResult:
    """The outcome of one run: ``str()`` gives ``PASS`` / ``FAIL: name - error (1.23s)``.

    ``profile`` holds this runtime's report (``n_tasks``, ``platform``, ``wall_s``,
    ``device_time_s``, ``n_workers``, ``dfx_files``).
    """

    __test__ = False

    passed: bool
    test_name: Optional[str] = None
    error: Optional[str] = None
    execution_time: Optional[float] = None
    profile: Optional[Dict[str, Any]] = None

    def __str__(self) -> str:
        text = "PASS" if self.passed else "FAIL"
        if self.test_name:
            text += f": {self.test_name}"
        if self.error:
            text += f" - {self.error}"
        if self.execution_time is not None:
            text += f" ({self.execution_time:.2f}s)"
        return text
