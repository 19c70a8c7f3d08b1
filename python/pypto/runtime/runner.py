"""``RunConfig``, ``RunResult`` and :func:`execute_compiled`, as PyPTO's
``pypto.runtime.runner`` has them.

``RunConfig`` checks on construction exactly what PyPTO's does (the platform, the
swimlane level, the ring overrides, with PyPTO's texts, in Rust through
``pypto._native.RunOptions(portable=True)`` so the ``pto`` command line says the same);
this runtime's own limits (the args dump level, the size of a task window, tolerances,
worker count) are checked when a run starts. ``run`` and ``compile_program`` (DSL programs,
``pypto.runtime.compile_and_run``) are importable from here too, as in PyPTO.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from pypto import _native
from pypto._tensors import as_host_array, is_ctypes_scalar, is_ndarray, is_numpy_scalar, is_torch_tensor
from pypto.backend import BackendType, backend_for_platform
from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel
from pypto.pypto_core.passes import DiagnosticCheckSet, DiagnosticPhase, MemoryPlanner

if TYPE_CHECKING:
    from pypto.ir.distributed_compiled_program import DistributedConfig

__all__ = [
    "PLATFORMS",
    "RingOverride",
    "RunConfig",
    "RunResult",
    "compile_program",
    "execute_compiled",
    "run",
]

#: Platforms a :class:`RunConfig` accepts: PyPTO's four and this runtime's ``cpu``.
PLATFORMS = ("a2a3sim", "a2a3", "a5sim", "a5", "cpu")

#: Scope-depth rings a per-ring override has entries for.
_RING_DEPTH = 4
#: The highest chip swimlane level.
_SWIMLANE_MAX_LEVEL = 4
#: The level ``True`` (or a bare command-line flag) stands for.
_SWIMLANE_FULL_LEVEL = 4
#: The help text of every command-line swimlane flag.
_SWIMLANE_CLI_HELP = (
    f"Chip swimlane collection level. Bare flag = {_SWIMLANE_FULL_LEVEL} (full); "
    "1=AICore timing, 2=+AICPU dispatch/finish, 3=+scheduler phases, "
    "4=+orchestrator phases; absent = 0 (off)."
)

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


def _normalize_swimlane_level(value: Union[int, bool], source: str) -> int:
    """A swimlane request as a level: ``True`` gives 4, ``False`` 0, an int in [0, 4]
    itself. ``TypeError`` for a non-int and ``ValueError`` out of range, naming ``source``."""
    return _native.normalize_swimlane_level(value, source)


def _invalid_platform(platform: object) -> ValueError:
    return ValueError(
        f"Invalid platform {platform!r}. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."
    )


def _any_dfx(swimlane: Any, dump_args: Any, pmu: Any, dep_gen: Any, scope_stats: Any) -> bool:
    return bool(swimlane > 0 or dump_args > 0 or pmu > 0 or dep_gen or scope_stats)


@dataclass
class RunConfig:
    """How to run a compiled program: PyPTO's 27 fields in PyPTO's order, then this
    runtime's own (``scheduler_timeout`` in seconds, ``n_workers`` worker threads,
    ``in_process``).

    The five diagnostics (DFX) are independent; any of them forces ``save_kernels=True``:

    - ``enable_chip_swimlane``: level 0-4 (``True`` = 4) -> ``chip_swimlane_records.json``
    - ``enable_dump_args``: 0 off, 1 partial, 2 full (3 hybrid) -> ``args_dump/``
    - ``enable_pmu``: PMU event type, 0 off (2 = PIPE_UTILIZATION, 4 = MEMORY) -> ``pmu.csv``
    - ``enable_dep_gen``: ``deps.json``
    - ``enable_scope_stats``: ``scope_stats/scope_stats.jsonl``

    ``enable_l2_swimlane`` (PyPTO's) and ``runtime_profiling`` (this runtime's older name)
    are deprecated aliases of ``enable_chip_swimlane``: passing one that is not ``None``
    warns (``DeprecationWarning``) and, together with ``enable_chip_swimlane=``, is a
    ``ValueError``; reading is silent, assigning warns.

    Ring overrides are one int for all four scope-depth rings or a list of four (0 keeps a
    ring's default); a tuple is stored as a list. ``backend_type`` follows the platform.
    The compile-side fields (``strategy``, ``dump_passes``, ``memory_planner``, ...) are
    carried for the compiler. Runs isolate the chip in a child process (a crashing kernel
    becomes a ``RuntimeError`` naming the task) unless ``in_process=True`` or
    ``PTO_IN_PROCESS=1``.

    Raises ``ValueError`` for an unknown platform, a swimlane level out of range, an invalid
    ring override or both spellings of the swimlane switch; ``TypeError`` for a swimlane
    level that is neither an int nor a bool.
    """

    __test__ = False

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: OptimizationStrategy = field(default_factory=lambda: OptimizationStrategy.Default)
    backend_type: BackendType = field(default_factory=lambda: BackendType.Ascend910B)
    dump_passes: Union[bool, PassDumpLevel] = False
    save_kernels: bool = False
    save_kernels_dir: Optional[str] = None
    codegen_only: bool = False
    enable_chip_swimlane: Union[int, bool] = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Optional[DiagnosticPhase] = None
    disabled_diagnostics: Optional[DiagnosticCheckSet] = None
    golden_data_dir: Optional[str] = None
    aicpu_thread_num: Optional[int] = None
    ring_task_window: RingOverride = None
    ring_heap: RingOverride = None
    ring_dep_pool: RingOverride = None
    distributed_config: Optional[DistributedConfig] = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Optional[MemoryPlanner] = None
    dump_ptoas_passes: bool = False
    scheduler_timeout: Optional[float] = None
    n_workers: Optional[int] = None
    in_process: bool = False

    def __post_init__(self) -> None:
        # PyPTO's order: the platform, the backend, the swimlane level, the save_kernels
        # forcing, the rings.
        if not isinstance(self.platform, str):
            raise _invalid_platform(self.platform)
        _native.RunOptions(self.platform, portable=True)
        self.backend_type = backend_for_platform(self.platform)
        self.enable_chip_swimlane = _normalize_swimlane_level(
            self.enable_chip_swimlane, "enable_chip_swimlane"
        )
        if self.any_dfx_enabled() and not self.save_kernels:
            self.save_kernels = True
        for name in ("ring_task_window", "ring_heap", "ring_dep_pool"):
            value = getattr(self, name)
            if isinstance(value, tuple):
                setattr(self, name, list(value))
        _native.RunOptions(
            self.platform,
            ring_task_window=self.ring_task_window,
            ring_heap=self.ring_heap,
            ring_dep_pool=self.ring_dep_pool,
            rtol=self.rtol,
            atol=self.atol,
            scheduler_timeout=self.scheduler_timeout,
            n_workers=self.n_workers,
            portable=True,
        )
        # This runtime's own checks of values no PyPTO caller gets wrong.
        if isinstance(self.device_id, bool) or not isinstance(self.device_id, int):
            raise TypeError(f"device_id must be an int, got {type(self.device_id).__name__}")
        if self.device_id < 0:
            raise ValueError(f"device_id must be >= 0, got {self.device_id}")

    def native_options(self) -> _native.RunOptions:
        """The run's options with every check, PyPTO's and this runtime's (called when a
        run starts; ``ValueError`` / ``TypeError`` name the field)."""
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
        return _any_dfx(
            self.enable_chip_swimlane,
            self.enable_dump_args,
            self.enable_pmu,
            self.enable_dep_gen,
            self.enable_scope_stats,
        )

    enable_l2_swimlane = property(
        lambda self: int(self.enable_chip_swimlane),
        lambda self, value: self._set_alias("enable_l2_swimlane", value),
        doc="Deprecated alias of ``enable_chip_swimlane`` (reading is silent, assigning warns).",
    )
    runtime_profiling = property(
        lambda self: int(self.enable_chip_swimlane),
        lambda self, value: self._set_alias("runtime_profiling", value),
        doc="Deprecated alias of ``enable_chip_swimlane`` (reading is silent, assigning warns).",
    )

    def _set_alias(self, alias: str, value: Union[int, bool]) -> None:
        warnings.warn(_ALIAS_DEPRECATION[alias], DeprecationWarning, stacklevel=3)
        self.enable_chip_swimlane = _normalize_swimlane_level(value, alias)


_dataclass_init = RunConfig.__init__


@functools.wraps(_dataclass_init)
def _run_config_init(self: RunConfig, *args: Any, **kwargs: Any) -> None:
    """The dataclass ``__init__``, plus the deprecated swimlane aliases as keywords (an
    alias of ``None`` counts as absent)."""
    given = {}
    for name in _ALIAS_DEPRECATION:
        value = kwargs.pop(name, None)
        if value is not None:
            warnings.warn(_ALIAS_DEPRECATION[name], DeprecationWarning, stacklevel=2)
            given[name] = value
    if len(given) > 1:
        raise ValueError(
            "RunConfig received both the deprecated enable_l2_swimlane and runtime_profiling; "
            "pass only enable_chip_swimlane."
        )
    for alias, value in given.items():
        if "enable_chip_swimlane" in kwargs:
            raise ValueError(
                f"RunConfig received both enable_chip_swimlane and the deprecated {alias}; "
                "pass only enable_chip_swimlane."
            )
        kwargs["enable_chip_swimlane"] = value
    _dataclass_init(self, *args, **kwargs)


RunConfig.__init__ = _run_config_init  # type: ignore[method-assign]


@dataclass
class RunResult:
    """The outcome of one run. ``str()`` is ``PASS`` / ``PASS: name`` (a passed run hides
    its error), ``FAIL: name - error`` / ``FAIL: error``, with `` (1.23s)`` when
    ``execution_time`` is set and non-zero."""

    __test__ = False

    passed: bool
    test_name: Optional[str] = None
    error: Optional[str] = None
    execution_time: Optional[float] = None
    profile: Optional[Dict[str, Any]] = None

    def __str__(self) -> str:
        if self.passed:
            text = f"PASS: {self.test_name}" if self.test_name else "PASS"
        elif self.test_name:
            text = f"FAIL: {self.test_name}" + (f" - {self.error}" if self.error else "")
        else:
            text = "FAIL" + (f": {self.error}" if self.error else "")
        if self.execution_time:
            text += f" ({self.execution_time:.2f}s)"
        return text


@dataclass(frozen=True)
class _DfxOpts:
    """The five diagnostics of one run (PyPTO's ``_DfxOpts``); the swimlane level is
    normalized as in ``RunConfig``."""

    enable_chip_swimlane: Union[int, bool] = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False

    def __post_init__(self) -> None:
        level = _normalize_swimlane_level(self.enable_chip_swimlane, "enable_chip_swimlane")
        object.__setattr__(self, "enable_chip_swimlane", level)

    def any(self) -> bool:
        """True when any of the five is on."""
        return _any_dfx(
            self.enable_chip_swimlane,
            self.enable_dump_args,
            self.enable_pmu,
            self.enable_dep_gen,
            self.enable_scope_stats,
        )

    @classmethod
    def from_run_config(cls, cfg: RunConfig) -> _DfxOpts:
        """The five fields of ``cfg``."""
        return cls(
            enable_chip_swimlane=cfg.enable_chip_swimlane,
            enable_dump_args=cfg.enable_dump_args,
            enable_pmu=cfg.enable_pmu,
            enable_dep_gen=cfg.enable_dep_gen,
            enable_scope_stats=cfg.enable_scope_stats,
        )


def _build_call_config(
    run_config: Optional[RunConfig],
    runtime_config: Optional[Dict[str, Any]] = None,
    aicpu_thread_num_override: Optional[int] = None,
    dfx_dir: Optional[Union[str, Path]] = None,
) -> _native.RunOptions:
    """The runtime's options for one call of ``run_config`` (PyPTO's ``CallConfig``): the
    five diagnostics and the ring overrides, validated. ``dfx_dir`` is where diagnostics go
    (``<work_dir>/dfx_outputs`` when ``None``); ``runtime_config`` and the AICPU thread
    count are accepted for PyPTO's signature (the simulated chip sizes its own scheduler).
    """
    del runtime_config, aicpu_thread_num_override, dfx_dir
    return (run_config if run_config is not None else RunConfig()).native_options()


def _coerced_to_orch_args(coerced: Sequence[Any]) -> List[Any]:
    """The arguments as the runtime binds them: host arrays (NumPy; torch tensors through
    ``.numpy()``, sharing memory) and ctypes / NumPy scalars, in order.

    Raises PyPTO's ``ValueError`` for a torch tensor that is not contiguous or not on the
    CPU and its ``TypeError`` for anything that is no tensor nor scalar (a plain Python
    number included).
    """
    out: List[Any] = []
    for i, arg in enumerate(coerced):
        if is_ndarray(arg) or is_torch_tensor(arg):
            out.append(as_host_array(arg, i))
        elif isinstance(arg, _native.HostArray) or is_ctypes_scalar(arg) or is_numpy_scalar(arg):
            out.append(arg)
        else:
            raise TypeError(
                f"Argument at position {i} must be torch.Tensor, DeviceTensor or ctypes "
                f"scalar, got {type(arg).__name__}"
            )
    return out


def execute_compiled(
    work_dir: Union[str, Path],
    args: List[Any],
    *,
    platform: str,
    device_id: int,
    dfx: Optional[_DfxOpts] = None,
    level: int = 2,
    aicpu_thread_num: Optional[int] = None,
    analyze_auto_scopes_for_deps: bool = False,
    config: Optional[RunConfig] = None,
    _program: Optional[_native.Program] = None,
    _reports: Optional[List[_native.ExecuteReport]] = None,
) -> None:
    """Runs the single-chip build in ``work_dir`` once with ``args`` (every parameter, in
    orchestration order: tensors — ``torch.Tensor`` or NumPy arrays — and ctypes scalars;
    outputs are written into their tensors).

    ``dfx`` selects the diagnostics, written to ``<work_dir>/dfx_outputs/``.
    ``aicpu_thread_num`` and ``analyze_auto_scopes_for_deps`` are accepted for PyPTO's
    signature. ``config`` (this runtime's extension) adds a ``RunConfig``'s ring overrides,
    tolerances, ``scheduler_timeout``, ``n_workers`` and ``in_process``; its platform,
    device and diagnostics are those passed here. Like ``CompiledProgram.from_dir``, this
    never splices ``.pto`` files nor forces recompilation.

    Raises ``ValueError`` for ``level`` other than 2 and PyPTO's argument errors (see
    :func:`_coerced_to_orch_args`); the build's own errors as the runner words them.
    """
    del aicpu_thread_num, analyze_auto_scopes_for_deps
    if level != 2:
        raise ValueError(
            f"execute_on_device currently only supports level=2; got level={level}. "
            "L3 execution is not yet exposed at the pypto user-API layer."
        )
    dfx = dfx if dfx is not None else _DfxOpts()
    host = _coerced_to_orch_args(args)
    base = config if config is not None else RunConfig(platform=platform)
    run_config = dataclasses.replace(
        base,
        platform=platform,
        device_id=device_id,
        enable_chip_swimlane=dfx.enable_chip_swimlane,
        enable_dump_args=dfx.enable_dump_args,
        enable_pmu=dfx.enable_pmu,
        enable_dep_gen=dfx.enable_dep_gen,
        enable_scope_stats=dfx.enable_scope_stats,
    )
    from pypto.runtime.device_runner import _load_program, _run_program

    program = _program if _program is not None else _load_program(work_dir, platform)
    report = _run_program(program, host, run_config)
    if _reports is not None:
        _reports.append(report)


# PyPTO keeps run / compile_program in this module; they import it lazily, so no cycle.
from pypto.runtime.compile_and_run import compile_program, run  # noqa: E402
