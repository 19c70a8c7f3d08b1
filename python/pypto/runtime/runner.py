"""``RunConfig``, ``RunResult``, the option objects (``DfxOptions``, ``RunOptions``,
``CompileOptions``) and :func:`execute_compiled`, as PyPTO's ``pypto.runtime.runner`` has
them, in both of its generations: 2026-08 (``RunConfig(platform=...)``, positional
arguments, ``run`` / ``compile_program``) and 2026-09 (keyword-only, ``arch`` +
``execution_mode`` with ``platform`` / ``backend_type`` derived, ``cache_config``,
``execute_compiled`` deprecated in favour of ``CompiledProgram.from_dir(...)(...)``).

``RunConfig`` checks on construction exactly what PyPTO's does (the platform, the
swimlane level, the ring overrides, with PyPTO's texts, in Rust through
``pypto._native.RunOptions(portable=True)`` so the ``pto`` command line says the same);
this runtime's own limits (the args dump level, the size of a task window, tolerances,
worker count) are checked when a run starts. ``run`` and ``compile_program`` (DSL programs,
``pypto.runtime.compile_and_run``) are importable from here too, as in PyPTO.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

from pypto import _native
from pypto._cache_config import CacheConfig
from pypto._tensors import as_host_array, is_ctypes_scalar, is_ndarray, is_numpy_scalar, is_torch_tensor
from pypto.backend import BackendType, arch_name, backend_for_platform
from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel
from pypto.pypto_core.passes import DiagnosticCheckSet, DiagnosticPhase, MemoryPlanner
from pypto.runtime import _dfx_switches

if TYPE_CHECKING:
    from pypto.ir.distributed_compiled_program import DistributedConfig

__all__ = [
    "PLATFORMS",
    "CompileOptions",
    "DfxOptions",
    "ExecutionMode",
    "RingOverride",
    "RunConfig",
    "RunOptions",
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


class ExecutionMode(enum.Enum):
    """Where a run goes: the simulator (``SIM``: ``a2a3sim`` / ``a5sim``), the chip
    (``ONBOARD``: ``a2a3`` / ``a5``, which this runtime simulates too), or this runtime's
    host-only ``cpu`` platform (``CPU``, this runtime's extension)."""

    ONBOARD = enum.auto()
    SIM = enum.auto()
    CPU = enum.auto()


def _platform_string(arch: BackendType, mode: ExecutionMode) -> str:
    """The platform string of the two axes."""
    if mode is ExecutionMode.CPU:
        return "cpu"
    return arch_name(arch) + ("sim" if mode is ExecutionMode.SIM else "")


def _parse_platform(platform: object) -> Tuple[BackendType, ExecutionMode]:
    """The two axes of a platform string (``ValueError`` with PyPTO's text otherwise)."""
    if not isinstance(platform, str):
        raise _invalid_platform(platform)
    _native.RunOptions(platform, portable=True)
    if platform == "cpu":
        return BackendType.Ascend910B, ExecutionMode.CPU
    mode = ExecutionMode.SIM if platform.endswith("sim") else ExecutionMode.ONBOARD
    return backend_for_platform(platform), mode


_BACKEND_TYPE_DEPRECATION = (
    "RunConfig(backend_type=...) is deprecated and ignored: the backend follows the "
    "platform (or arch). Drop the argument, or pass the platform / arch you want."
)

#: The 2026-08 generation's field order, which positional arguments follow (the 2026-09
#: RunConfig is keyword-only; this runtime keeps the older calls working).
_POSITIONAL_2026_08 = (
    "platform", "device_id", "rtol", "atol", "strategy", "backend_type", "dump_passes",
    "save_kernels", "save_kernels_dir", "codegen_only", "enable_chip_swimlane",
    "enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats",
    "compile_profiling", "diagnostic_phase", "disabled_diagnostics", "golden_data_dir",
    "aicpu_thread_num", "ring_task_window", "ring_heap", "ring_dep_pool",
    "distributed_config", "analyze_auto_scopes_for_deps", "memory_planner",
    "dump_ptoas_passes",
)  # fmt: skip


@dataclass(kw_only=True)
class RunConfig:
    """How to compile and run a program: PyPTO's fields in PyPTO's 2026-09 order, then
    this runtime's own (``scheduler_timeout`` in seconds, ``n_workers`` worker threads,
    ``in_process``, ``dfx_schema``, ``timing``).

    The target is two axes, ``arch`` (a :class:`~pypto.backend.BackendType`) and
    ``execution_mode`` (:class:`ExecutionMode`); ``platform`` (``a2a3sim``, ``a2a3``,
    ``a5sim``, ``a5``, or this runtime's ``cpu``) and ``backend_type`` are derived from them.
    ``platform=`` is accepted as a keyword and sets both axes (it wins over ``arch=`` /
    ``execution_mode=`` in the same call); ``backend_type=`` is accepted and ignored
    (``DeprecationWarning`` when it contradicts the arch). Both generations' calls work:
    ``RunConfig(platform="a2a3sim")``, ``RunConfig(arch=BackendType.Ascend950,
    execution_mode=ExecutionMode.SIM)``, and the 2026-08 positional form
    ``RunConfig("a5sim", 0)``; assigning ``cfg.platform`` (2026-08) sets both axes.

    The five diagnostics (DFX) are independent; any of them forces ``save_kernels=True``:

    - ``enable_chip_swimlane``: level 0-4 (``True`` = 4) -> ``chip_swimlane_records.json``
    - ``enable_dump_args``: 0 off, 1 partial, 2 full (3 hybrid) -> ``args_dump/``
    - ``enable_pmu``: PMU event type, 0 off (2 = PIPE_UTILIZATION, 4 = MEMORY) -> ``pmu.csv``
    - ``enable_dep_gen``: ``deps.json``
    - ``enable_scope_stats``: ``scope_stats/scope_stats.jsonl``

    ``dfx_schema`` (``"2026-08"`` / ``"2026-09"``, default the build directory's, else
    ``PTO_DFX_SCHEMA``) picks the generation of Simpler's DFX files the run writes;
    ``timing`` (``"host"`` / ``"predicted"``, default ``PTO_TIMING``) what their times are.
    ``cache_config`` is the ``@pl.jit`` persistent cache policy (:mod:`pypto._cache_config`).

    ``enable_l2_swimlane`` (PyPTO's) and ``runtime_profiling`` (this runtime's older name)
    are deprecated aliases of ``enable_chip_swimlane``: passing one that is not ``None``
    warns (``DeprecationWarning``) and, together with ``enable_chip_swimlane=``, is a
    ``ValueError``; reading is silent, assigning warns.

    This runtime has no device backend: a device platform (``a2a3``, ``a5``) fails when a
    run starts. With ``PTO_SIM_FALLBACK=1`` in the environment a ``RunConfig`` built for a
    device platform runs on its simulator instead (``a2a3`` -> ``a2a3sim``, ``a5`` ->
    ``a5sim``), with a ``RuntimeWarning`` saying so, for programs that hard-code a device.

    Ring overrides are one int for all four scope-depth rings or a list of four (0 keeps a
    ring's default); a tuple is stored as a list. Runs isolate the chip in a child process
    (a crashing kernel becomes a ``RuntimeError`` naming the task) unless
    ``in_process=True`` or ``PTO_IN_PROCESS=1``.

    Raises ``ValueError`` for an unknown platform, a swimlane level out of range, an invalid
    ring override, an unknown ``dfx_schema`` / ``timing`` or both spellings of the swimlane
    switch; ``TypeError`` for an ``arch`` / ``execution_mode`` / ``cache_config`` of the
    wrong type or a swimlane level that is neither an int nor a bool.
    """

    __test__ = False

    arch: BackendType = field(default_factory=lambda: BackendType.Ascend910B)
    execution_mode: ExecutionMode = ExecutionMode.SIM
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: OptimizationStrategy = field(default_factory=lambda: OptimizationStrategy.Default)
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
    cache_config: Optional[CacheConfig] = None
    distributed_config: Optional[DistributedConfig] = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Optional[MemoryPlanner] = None
    dump_ptoas_passes: bool = False
    scheduler_timeout: Optional[float] = None
    n_workers: Optional[int] = None
    in_process: bool = False
    dfx_schema: Optional[str] = None
    timing: Optional[str] = None

    if TYPE_CHECKING:
        # What `_run_config_init` (installed below) accepts: the fields by keyword, the
        # 2026-08 positional order, `platform=` and the ignored `backend_type=`.
        def __init__(
            self,
            *args: Any,
            platform: Optional[str] = None,
            backend_type: Optional[BackendType] = None,
            **fields: Any,
        ) -> None: ...

    def __post_init__(self) -> None:
        # PyPTO's order: the axes, the swimlane level, the save_kernels forcing, the rings.
        if not isinstance(self.arch, BackendType):
            raise TypeError(
                f"RunConfig.arch must be a BackendType (Ascend910B or Ascend950), got "
                f"{type(self.arch).__name__} {self.arch!r}; platform='a2a3sim' sets both axes"
            )
        if not isinstance(self.execution_mode, ExecutionMode):
            raise TypeError(
                f"RunConfig.execution_mode must be an ExecutionMode (SIM or ONBOARD), got "
                f"{type(self.execution_mode).__name__} {self.execution_mode!r}; "
                "platform='a2a3sim' sets both axes"
            )
        self.enable_chip_swimlane = _normalize_swimlane_level(
            self.enable_chip_swimlane, "enable_chip_swimlane"
        )
        if self.execution_mode is ExecutionMode.ONBOARD and os.environ.get("PTO_SIM_FALLBACK", "").strip() == "1":
            device = self.platform
            self.execution_mode = ExecutionMode.SIM
            warnings.warn(
                f"PTO_SIM_FALLBACK=1: platform {device!r} runs on {self.platform!r} (this runtime has no device backend)",
                RuntimeWarning,
                stacklevel=3,
            )
        if self.any_dfx_enabled() and not self.save_kernels:
            self.save_kernels = True
        for name in ("ring_task_window", "ring_heap", "ring_dep_pool"):
            value = getattr(self, name)
            if isinstance(value, tuple):
                setattr(self, name, list(value))
        if self.cache_config is not None and type(self.cache_config) is not CacheConfig:
            raise TypeError(
                "RunConfig.cache_config must be a CacheConfig or None, got "
                f"{type(self.cache_config).__name__}"
            )
        self._native_options(portable=True)
        # This runtime's own checks of values no PyPTO caller gets wrong.
        if isinstance(self.device_id, bool) or not isinstance(self.device_id, int):
            raise TypeError(f"device_id must be an int, got {type(self.device_id).__name__}")
        if self.device_id < 0:
            raise ValueError(f"device_id must be >= 0, got {self.device_id}")

    @property
    def platform(self) -> str:
        """The platform string of ``arch`` and ``execution_mode``. Assigning one (the
        2026-08 generation's field) sets both axes; 2026-09 has no setter."""
        return _platform_string(self.arch, self.execution_mode)

    @platform.setter
    def platform(self, value: str) -> None:
        self.arch, self.execution_mode = _parse_platform(value)

    @property
    def backend_type(self) -> BackendType:
        """The code-generation backend: ``arch``."""
        return self.arch

    def _native_options(self, portable: bool) -> _native.RunOptions:
        """The native options; ``portable``: PyPTO's checks only, and this runtime's of
        ``dfx_schema`` / ``timing`` (the diagnostics' types are checked when a run starts)."""
        dfx: Dict[str, Any] = {} if portable else {
            **_dfx_switches.values(self),
            "in_process": self.in_process,
        }
        return _native.RunOptions(
            self.platform,
            ring_task_window=self.ring_task_window,
            ring_heap=self.ring_heap,
            ring_dep_pool=self.ring_dep_pool,
            rtol=self.rtol,
            atol=self.atol,
            scheduler_timeout=self.scheduler_timeout,
            n_workers=self.n_workers,
            dfx_schema=self.dfx_schema,
            timing=self.timing,
            portable=portable,
            **dfx,
        )

    def native_options(self) -> _native.RunOptions:
        """The run's options with every check, PyPTO's and this runtime's (called when a
        run starts; ``ValueError`` / ``TypeError`` name the field)."""
        return self._native_options(portable=False)

    def any_dfx_enabled(self) -> bool:
        """True when any of the five diagnostics is on."""
        return self.dfx_options().any()

    def writes_dfx_files(self) -> bool:
        """True when a run writes files under ``dfx_outputs/``: one of the five diagnostics,
        or the predicted timing (``timing``, else ``PTO_TIMING``; checked as a run's)."""
        return self.native_options().writes_dfx_files()

    def dfx_options(self) -> DfxOptions:
        """The five diagnostics as a :class:`DfxOptions`."""
        return DfxOptions(**_dfx_switches.values(self))

    def run_options(self) -> RunOptions:
        """What a dispatch reads, as a :class:`RunOptions`."""
        return RunOptions(
            platform=self.platform,
            device_id=self.device_id,
            aicpu_thread_num=self.aicpu_thread_num,
            ring_task_window=self.ring_task_window,
            ring_heap=self.ring_heap,
            ring_dep_pool=self.ring_dep_pool,
            dfx=self.dfx_options(),
        )

    def compile_options(self) -> CompileOptions:
        """What compilation reads, as a :class:`CompileOptions` (``save_kernels_dir`` is
        its ``output_dir``, ``compile_profiling`` its ``profiling``)."""
        return CompileOptions(
            platform=self.platform,
            strategy=self.strategy,
            dump_passes=self.dump_passes,
            dump_ptoas_passes=self.dump_ptoas_passes,
            profiling=self.compile_profiling,
            diagnostic_phase=self.diagnostic_phase,
            disabled_diagnostics=self.disabled_diagnostics,
            analyze_auto_scopes_for_deps=self.analyze_auto_scopes_for_deps,
            output_dir=self.save_kernels_dir,
            memory_planner=self.memory_planner,
            distributed_config=self.distributed_config,
        )

    def compile_kwargs(self) -> Dict[str, Any]:
        """``ir.compile``'s keyword arguments for this config:
        ``ir.compile(program, **cfg.compile_kwargs())``."""
        return self.compile_options().as_compile_kwargs()

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


def _positional_to_keywords(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
    """The 2026-08 positional arguments as keywords (a ``TypeError`` as Python words it for
    too many or a repeated one)."""
    if len(args) > len(_POSITIONAL_2026_08):
        raise TypeError(
            f"RunConfig takes at most {len(_POSITIONAL_2026_08)} positional arguments "
            f"(2026-08 order; 2026-09 takes none), {len(args)} were given"
        )
    for name, value in zip(_POSITIONAL_2026_08, args):
        if name in kwargs:
            raise TypeError(f"RunConfig got multiple values for argument '{name}'")
        kwargs[name] = value


def _swimlane_alias(kwargs: Dict[str, Any]) -> None:
    """The deprecated swimlane aliases as ``enable_chip_swimlane`` (``None`` = absent)."""
    given = {}
    for name in _ALIAS_DEPRECATION:
        value = kwargs.pop(name, None)
        if value is not None:
            warnings.warn(_ALIAS_DEPRECATION[name], DeprecationWarning, stacklevel=3)
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


@functools.wraps(_dataclass_init)
def _run_config_init(self: RunConfig, *args: Any, **kwargs: Any) -> None:
    """The dataclass ``__init__``, plus ``platform=`` (sets both axes; ``None`` = absent),
    ``backend_type=`` (ignored), the 2026-08 positional order and the deprecated swimlane
    aliases."""
    _positional_to_keywords(args, kwargs)
    platform = kwargs.pop("platform", None)
    if platform is not None:
        kwargs["arch"], kwargs["execution_mode"] = _parse_platform(platform)
    backend = kwargs.pop("backend_type", None)
    if backend is not None and backend != kwargs.get("arch", BackendType.Ascend910B):
        warnings.warn(_BACKEND_TYPE_DEPRECATION, DeprecationWarning, stacklevel=2)
    _swimlane_alias(kwargs)
    _dataclass_init(self, **kwargs)


RunConfig.__init__ = _run_config_init  # type: ignore[method-assign]
_INIT_SIGNATURE = inspect.signature(_dataclass_init)
RunConfig.__signature__ = _INIT_SIGNATURE.replace(  # type: ignore[attr-defined]
    parameters=[
        *(p for name, p in _INIT_SIGNATURE.parameters.items() if name != "self"),
        inspect.Parameter("platform", inspect.Parameter.KEYWORD_ONLY, default=None),
    ]
)


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
class DfxOptions:
    """The five diagnostics of one run (PyPTO's ``DfxOptions``, 2026-08's ``_DfxOpts``);
    the swimlane level is normalized as in ``RunConfig``."""

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
        return _dfx_switches.any_enabled(_dfx_switches.values(self))

    @classmethod
    def from_run_config(cls, cfg: RunConfig) -> DfxOptions:
        """The five fields of ``cfg`` (``cfg.dfx_options()``)."""
        return cfg.dfx_options()


#: The 2026-08 generation's private name of :class:`DfxOptions`.
_DfxOpts = DfxOptions


@dataclass(frozen=True)
class RunOptions:
    """What a dispatch reads (``RunConfig.run_options()``): the platform, the device, the
    AICPU thread count, the ring overrides and the diagnostics. As in PyPTO, no entry point
    takes one; it is not exported from ``pypto.runtime``."""

    platform: str = "a2a3sim"
    device_id: int = 0
    aicpu_thread_num: Optional[int] = None
    ring_task_window: RingOverride = None
    ring_heap: RingOverride = None
    ring_dep_pool: RingOverride = None
    dfx: DfxOptions = DfxOptions()


@dataclass(frozen=True)
class CompileOptions:
    """What compilation reads, in ``ir.compile``'s words (``RunConfig.compile_options()``):
    ``ir.compile(program, **CompileOptions(platform="a5sim").as_compile_kwargs())``."""

    platform: str = "a2a3sim"
    strategy: OptimizationStrategy = field(default_factory=lambda: OptimizationStrategy.Default)
    dump_passes: Union[bool, PassDumpLevel] = False
    dump_ptoas_passes: bool = False
    profiling: bool = False
    diagnostic_phase: Optional[DiagnosticPhase] = None
    disabled_diagnostics: Optional[DiagnosticCheckSet] = None
    analyze_auto_scopes_for_deps: bool = False
    output_dir: Optional[str] = None
    memory_planner: Optional[MemoryPlanner] = None
    distributed_config: Optional[DistributedConfig] = None

    def as_compile_kwargs(self) -> Dict[str, Any]:
        """The keyword arguments of ``ir.compile``: the first eight fields always, then
        ``output_dir``, ``memory_planner`` and ``distributed_config`` when set (so
        ``ir.compile``'s own defaults apply otherwise)."""
        names = (
            "platform", "strategy", "dump_passes", "dump_ptoas_passes", "profiling",
            "diagnostic_phase", "disabled_diagnostics", "analyze_auto_scopes_for_deps",
        )  # fmt: skip
        kwargs = {name: getattr(self, name) for name in names}
        for name in ("output_dir", "memory_planner", "distributed_config"):
            if getattr(self, name) is not None:
                kwargs[name] = getattr(self, name)
        return kwargs


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


def _execute_compiled(
    work_dir: Union[str, Path],
    args: List[Any],
    *,
    platform: str,
    device_id: int,
    dfx: Optional[DfxOptions] = None,
    level: int = 2,
    aicpu_thread_num: Optional[int] = None,
    analyze_auto_scopes_for_deps: bool = False,
    config: Optional[RunConfig] = None,
    _program: Optional[_native.Program] = None,
    _reports: Optional[List[_native.ExecuteReport]] = None,
) -> None:
    """Runs the single-chip build in ``work_dir`` once with ``args`` (every parameter, in
    orchestration order: tensors — ``torch.Tensor`` or NumPy arrays — and ctypes scalars;
    outputs are written into their tensors): what ``CompiledProgram.__call__`` and the
    deprecated :func:`execute_compiled` share.

    ``dfx`` selects the diagnostics, written to ``<work_dir>/dfx_outputs/``.
    ``aicpu_thread_num`` and ``analyze_auto_scopes_for_deps`` are accepted for PyPTO's
    signature. ``config`` adds a ``RunConfig``'s ring overrides, tolerances,
    ``scheduler_timeout``, ``n_workers``, ``in_process``, ``dfx_schema`` and ``timing``; its
    platform, device and diagnostics are those passed here. This never splices ``.pto``
    files nor forces recompilation.

    Raises ``ValueError`` for ``level`` other than 2 and PyPTO's argument errors (see
    :func:`_coerced_to_orch_args`); the build's own errors as the runner words them.
    """
    del aicpu_thread_num, analyze_auto_scopes_for_deps
    if level != 2:
        raise ValueError(
            f"execute_on_device currently only supports level=2; got level={level}. "
            "L3 execution is not yet exposed at the pypto user-API layer."
        )
    dfx = dfx if dfx is not None else DfxOptions()
    host = _coerced_to_orch_args(args)
    base = config if config is not None else RunConfig(platform=platform)
    arch, execution_mode = _parse_platform(platform)
    run_config = dataclasses.replace(
        base,
        arch=arch,
        execution_mode=execution_mode,
        device_id=device_id,
        **_dfx_switches.values(dfx),
    )
    from pypto.runtime.device_runner import _load_program, _run_program

    program = _program if _program is not None else _load_program(work_dir, platform)
    report = _run_program(program, host, run_config)
    if _reports is not None:
        _reports.append(report)


#: The warning :func:`execute_compiled` gives (the 2026-09 generation deprecates it).
EXECUTE_COMPILED_DEPRECATION = (
    "pypto.runtime.execute_compiled is deprecated and will be removed: load the build with "
    "ir.CompiledProgram.from_dir(work_dir) and call it, compiled(*args, config=cfg). Put "
    "this call's platform, device_id, dfx and aicpu_thread_num into cfg first (for example "
    "dataclasses.replace(cfg, platform=..., device_id=...)): a config given to the call "
    "decides all four there."
)


def execute_compiled(
    work_dir: Union[str, Path],
    args: List[Any],
    *,
    platform: str,
    device_id: int,
    dfx: Optional[DfxOptions] = None,
    level: int = 2,
    aicpu_thread_num: Optional[int] = None,
    analyze_auto_scopes_for_deps: bool = False,
    config: Optional[RunConfig] = None,
) -> None:
    """Deprecated (PyPTO 2026-09): runs the build in ``work_dir`` once with ``args``, as
    ``CompiledProgram.from_dir(work_dir)(*args, config=cfg)`` does, after a
    ``DeprecationWarning``. Here the explicit ``platform`` / ``device_id`` / ``dfx`` win and
    ``config`` adds the rest (see :func:`_execute_compiled`); on the ``from_dir`` path a
    call's ``config`` decides all of them."""
    warnings.warn(EXECUTE_COMPILED_DEPRECATION, DeprecationWarning, stacklevel=2)
    _execute_compiled(
        work_dir,
        args,
        platform=platform,
        device_id=device_id,
        dfx=dfx,
        level=level,
        aicpu_thread_num=aicpu_thread_num,
        analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps,
        config=config,
    )


# PyPTO keeps run / compile_program in this module; they import it lazily, so no cycle.
from pypto.runtime.compile_and_run import compile_program, run  # noqa: E402
