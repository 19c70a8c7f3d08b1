"""The pytest plugin of pypto (entry point ``pytest11``, named ``pypto``): PyPTO's
``tests/st/conftest.py`` flags and fixtures, for projects that have no such conftest, and
out of the way of projects that do.

Flags (PyPTO's spellings, defaults and meanings):

- ``--platform LIST``: comma list of platforms to run; a test marked
  ``@pytest.mark.platforms(...)`` runs only when one of its platforms is listed. The
  default is ``a2a3sim`` (PyPTO's is ``a2a3``, which needs an Ascend device: this runtime
  fails ``a2a3`` runs on a machine without one). ``cpu`` is accepted too.
- ``--device LIST``: device ids (``0``, ``0-7``, ``0,1,12``); the first is
  ``test_config.device_id`` (ignored by the simulators).
- ``--enable-chip-swimlane`` / ``--chip-swimlane-level N``, ``--enable-l2-swimlane``
  (deprecated), ``--runtime-profiling`` (this runtime's older, deprecated spelling),
  ``--dump-args [LEVEL]``, ``--enable-pmu [EVENT_TYPE]``, ``--enable-dep-gen``,
  ``--enable-scope-stats``: the diagnostics.
- ``--save-kernels``, ``--kernels-dir``, ``--dump-passes``, ``--codegen-only``,
  ``--strategy``, ``--memory-planner``, ``--analyze-auto-scopes-for-deps``: carried into
  ``test_config`` for the compiler.
- ``--runtime-log-level L``: ``configure_log(L)`` at start; ``--pypto-log-level L``: the
  compiler-side level of each test's thread.
- ``--precompile-workers``, ``--execute-via-task-submit``, ``--task-max-time``,
  ``--task-queue-timeout``, ``--task-submit-device``, ``--execute-batch-size`` belong to
  PyPTO's device-batch harness; given with another value than the default they are a
  usage error saying so.

Fixtures: ``run_config`` and ``test_config`` (the session's ``RunConfig``; ``test_config``
as PyPTO builds it), ``device_ids``, ``optimization_strategy``, ``tensor_shape``
(``[64, 64]``, ``[128, 128]``, ``[256, 256]``); autouse ``_redirect_prog_build_dir`` points
``PYPTO_PROG_BUILD_DIR`` into the session's temporary directory unless ``--save-kernels``.

A ``conftest.py`` that defines one of these flags itself (as PyPTO's does) takes it over:
the plugin's definition of that flag is withdrawn before the conftest's is added, and the
plugin reads the value by its flag name, whoever defined it. Its fixtures of the same name
override the plugin's. ``-p no:pypto`` turns the plugin off entirely.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Generator, List, Optional, Sequence, Set

import pytest

if TYPE_CHECKING:
    from pypto.runtime.runner import RunConfig

_KNOWN_PLATFORMS = ("a2a3sim", "a5sim", "a2a3", "a5", "cpu")
_DEFAULT_PLATFORM = "a2a3sim"
_LOG_LEVELS = ["DEBUG", "INFO", "WARN", "ERROR", "FATAL", "EVENT", "NONE"]
_PLANNERS = {"default": None, "pypto": "PYPTO", "dsa-rp": "DSA_RP", "ptoas": "PTOAS"}
_L2_DEPRECATION = "--enable-l2-swimlane is deprecated; use --enable-chip-swimlane (or --chip-swimlane-level N)."
_PROFILING_DEPRECATION = "--runtime-profiling is deprecated; use --enable-chip-swimlane (or --chip-swimlane-level N)."

# (flags, argparse keywords) of every option, in help order. The dests are the plugin's
# own; values are read back by flag (config.getoption("--flag")), so a conftest's
# definition of the same flag, with its own dest, is read the same way.
_OPTIONS: List[tuple[tuple[str, ...], Dict[str, Any]]] = [
    (("--platform",), dict(default=_DEFAULT_PLATFORM, help="comma list of platforms to run (a2a3sim, a5sim, a2a3, a5, cpu); default a2a3sim")),
    (("--device",), dict(default="0", help="device ids: 0, 0-7, 0,1,12 or a mix (ignored by the simulators)")),
    (("--strategy",), dict(default="Default", choices=["Default"], help="optimization strategy for compiling")),
    (("--memory-planner",), dict(default="default", choices=list(_PLANNERS), help="who plans on-chip memory when compiling")),
    (("--kernels-dir",), dict(default=None, help="where --save-kernels keeps build directories")),
    (("--precompile-workers",), dict(default=None, type=int, help="PyPTO's device-batch harness only")),
    (("--save-kernels",), dict(action="store_true", default=False, help="keep the build directories")),
    (("--dump-passes",), dict(action="store_true", default=False, help="dump IR after each pass when compiling")),
    (("--codegen-only",), dict(action="store_true", default=False, help="compile without running")),
    (("--execute-via-task-submit",), dict(action="store_true", default=False, help="PyPTO's device-batch harness only")),
    (("--analyze-auto-scopes-for-deps",), dict(action="store_true", default=False, help="compiler-derived dependencies for AUTO scopes")),
    (("--task-max-time",), dict(default=600, type=int, help="PyPTO's device-batch harness only")),
    (("--task-queue-timeout",), dict(default=1800, type=int, help="PyPTO's device-batch harness only")),
    (("--task-submit-device",), dict(default="auto", help="PyPTO's device-batch harness only")),
    (("--execute-batch-size",), dict(default=64, type=int, help="PyPTO's device-batch harness only")),
    (("--pypto-log-level",), dict(default="ERROR", choices=_LOG_LEVELS, help="compiler-side log level of each test")),
    (("--runtime-log-level",), dict(default=None, help="runtime log level: debug, info, timing, warn, error, null")),
    (("--enable-chip-swimlane",), dict(action="store_const", const=4, default=0, help="chip swimlane at the full level 4")),
    (("--chip-swimlane-level",), dict(type=int, choices=range(5), default=None, metavar="PERF_LEVEL", help="chip swimlane at level 0-4; takes precedence over --enable-chip-swimlane")),
    (("--enable-l2-swimlane",), dict(action="store_true", default=False, help="deprecated: use --enable-chip-swimlane")),
    (("--runtime-profiling",), dict(action="store_true", default=False, help="deprecated: use --enable-chip-swimlane")),
    (("--dump-args",), dict(type=int, nargs="?", const=1, default=0, help="args dump: 1 partial (bare flag), 2 full")),
    (("--enable-pmu",), dict(type=int, nargs="?", const=2, default=0, metavar="EVENT_TYPE", help="PMU event type (bare flag = 2, PIPE_UTILIZATION; 4 = MEMORY)")),
    (("--enable-dep-gen",), dict(action="store_true", default=False, help="record deps.json (render it with pto deps-viewer)")),
    (("--enable-scope-stats",), dict(action="store_true", default=False, help="record scope_stats/scope_stats.jsonl")),
]

# Flags of PyPTO's device-batch harness, which this runtime does not have, and their
# defaults.
_HARNESS_ONLY = {
    "--precompile-workers": None,
    "--execute-via-task-submit": False,
    "--task-max-time": 600,
    "--task-queue-timeout": 1800,
    "--task-submit-device": "auto",
    "--execute-batch-size": 64,
}

#: Flags a conftest took over (the plugin's definition withdrawn).
_TAKEN_OVER: Set[str] = set()


def _dest(flag: str) -> str:
    return "_pypto_" + flag.lstrip("-").replace("-", "_")


def _yield_to_later_definitions(parser: pytest.Parser, ours: Any) -> None:
    """Makes a later ``addoption`` of one of our flags (by a conftest, through the parser
    or any group) withdraw our definition first, so that the two never collide."""

    def withdraw(names: Sequence[str]) -> None:
        for option in list(ours.options):
            flags = list(option.names())
            if not set(flags) & set(names):
                continue
            ours.options.remove(option)
            _TAKEN_OVER.update(flags)
            # pytest >= 9 adds each option to argparse at once: take the action out of
            # the parser too (older pytest builds the argparse parser from the groups).
            action = getattr(option, "_action", None)
            container = getattr(action, "container", None)
            if action is None or container is None:
                continue
            for flag in flags:
                container._option_string_actions.pop(flag, None)
            container._remove_action(action)

    def wrap(target: Any) -> None:
        original = target.addoption

        def addoption(*names: str, **attrs: Any) -> None:
            withdraw(names)
            original(*names, **attrs)

        target.addoption = addoption

    wrap(parser)
    original_getgroup = parser.getgroup

    def getgroup(name: str, description: str = "", after: Optional[str] = None) -> Any:
        group = original_getgroup(name, description, after)
        if group is not ours and not getattr(group, "_pypto_yields", False):
            wrap(group)
            setattr(group, "_pypto_yields", True)
        return group

    parser.getgroup = getgroup  # type: ignore[method-assign]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Adds PyPTO's conftest flags (see the module docs)."""
    _TAKEN_OVER.clear()
    group = parser.getgroup("pypto", "pypto runtime (PyPTO's tests/st/conftest.py flags)")
    for names, attrs in _OPTIONS:
        group.addoption(*names, dest=_dest(names[0]), **attrs)
    _yield_to_later_definitions(parser, group)


def _get(config: pytest.Config, flag: str, default: Any = None) -> Any:
    try:
        return config.getoption(flag)
    except ValueError:
        return default


def _platforms(config: pytest.Config) -> List[str]:
    raw = str(_get(config, "--platform", _DEFAULT_PLATFORM))
    ids = [p.strip() for p in raw.split(",") if p.strip()]
    known = [p for p in ids if p in _KNOWN_PLATFORMS]
    if not known:
        raise pytest.UsageError(f"--platform must include at least one of: a2a3sim, a5sim, a2a3, a5; got {raw!r}")
    return known


def _devices(config: pytest.Config) -> List[int]:
    raw = str(_get(config, "--device", "0"))
    if not raw.strip():
        raise pytest.UsageError("--device must not be empty")
    ids: List[int] = []
    for token in (t.strip() for t in raw.split(",")):
        if not token:
            continue
        try:
            if "-" in token:
                lo, hi = (int(x) for x in token.split("-", 1))
                if hi < lo:
                    raise pytest.UsageError(f"--device range must be non-decreasing, got {token!r}")
                values = list(range(lo, hi + 1))
            else:
                values = [int(token)]
        except ValueError:
            raise pytest.UsageError(f"Invalid device ID or range in --device: {token!r}") from None
        if any(v < 0 for v in values):
            raise pytest.UsageError(f"Invalid device ID or range in --device: {token!r}")
        ids.extend(v for v in values if v not in ids)
    if not ids:
        raise pytest.UsageError(f"--device yielded no device ids: {raw!r}")
    return ids


def pytest_configure(config: pytest.Config) -> None:
    """Registers the markers, checks the flags, applies ``--runtime-log-level``."""
    config.addinivalue_line("markers", "platforms(*names): platforms the test runs on")
    config.addinivalue_line("markers", "slow: a slow test")
    config.addinivalue_line("markers", "device_batch: runs through the device-batch harness")
    # A conftest that took a flag over checks it itself.
    if "--platform" not in _TAKEN_OVER:
        _platforms(config)
    if "--device" not in _TAKEN_OVER:
        _devices(config)
    for flag, default in _HARNESS_ONLY.items():
        if flag not in _TAKEN_OVER and _get(config, flag, default) != default:
            raise pytest.UsageError(
                f"{flag} configures PyPTO's device-batch harness (tests/st/harness), which this "
                "runtime does not have: tests run one by one on the simulated chip; drop the flag"
            )
    level = _get(config, "--runtime-log-level")
    if level is not None and "--runtime-log-level" not in _TAKEN_OVER:
        from pypto.runtime.log_config import configure_log

        configure_log(level)


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Deselects tests whose ``platforms`` marker names none of ``--platform``'s."""
    if "--platform" in _TAKEN_OVER:
        return
    allowed = set(_platforms(config))
    keep: List[pytest.Item] = []
    drop: List[pytest.Item] = []
    for item in items:
        marker = item.get_closest_marker("platforms")
        wanted = set(marker.args) if marker is not None else None
        (drop if wanted is not None and not wanted & allowed else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def resolve_swimlane_level(config: pytest.Config) -> int:
    """The swimlane level the flags ask for: ``--chip-swimlane-level``, else the bare flag,
    else a deprecated flag (with a ``DeprecationWarning``, level 4), else 0."""
    level = _get(config, "--chip-swimlane-level")
    if level is not None:
        return int(level)
    if _get(config, "--enable-chip-swimlane", 0):
        return int(_get(config, "--enable-chip-swimlane"))
    for flag, text in (("--enable-l2-swimlane", _L2_DEPRECATION), ("--runtime-profiling", _PROFILING_DEPRECATION)):
        if _get(config, flag, False):
            warnings.warn(text, DeprecationWarning, stacklevel=2)
            return 4
    return 0


def _run_config(config: pytest.Config, **extra: Any) -> RunConfig:
    from pypto.runtime.runner import RunConfig

    return RunConfig(
        platform=_platforms(config)[0],
        device_id=_devices(config)[0],
        enable_chip_swimlane=resolve_swimlane_level(config),
        enable_dump_args=_get(config, "--dump-args", 0),
        enable_pmu=_get(config, "--enable-pmu", 0),
        enable_dep_gen=bool(_get(config, "--enable-dep-gen", False)),
        enable_scope_stats=bool(_get(config, "--enable-scope-stats", False)),
        **extra,
    )


@pytest.fixture(scope="session")
def run_config(request: pytest.FixtureRequest) -> RunConfig:
    """The session's :class:`~pypto.runtime.RunConfig`: the platform, device and the
    diagnostics of the flags."""
    return _run_config(request.config)


@pytest.fixture(scope="session")
def test_config(request: pytest.FixtureRequest) -> RunConfig:
    """The session's :class:`~pypto.runtime.RunConfig` as PyPTO's conftest builds it: the
    first ``--platform`` and ``--device``, the diagnostics, and the compile-side flags."""
    from pypto.pypto_core.passes import MemoryPlanner

    config = request.config
    save = bool(_get(config, "--save-kernels", False))
    planner = _PLANNERS.get(str(_get(config, "--memory-planner", "default")))
    return _run_config(
        config,
        save_kernels=save,
        save_kernels_dir=_get(config, "--kernels-dir") if save else None,
        dump_passes=bool(_get(config, "--dump-passes", False)),
        codegen_only=bool(_get(config, "--codegen-only", False)),
        analyze_auto_scopes_for_deps=bool(_get(config, "--analyze-auto-scopes-for-deps", False)),
        memory_planner=None if planner is None else MemoryPlanner[planner],
    )


@pytest.fixture(scope="session")
def device_ids(request: pytest.FixtureRequest) -> List[int]:
    """Every device id of ``--device``, in order, without repeats."""
    return _devices(request.config)


@pytest.fixture(scope="session")
def optimization_strategy(request: pytest.FixtureRequest) -> Any:
    """The ``OptimizationStrategy`` of ``--strategy``."""
    from pypto.ir.pass_manager import OptimizationStrategy

    return OptimizationStrategy[str(_get(request.config, "--strategy", "Default"))]


@pytest.fixture(params=[[64, 64], [128, 128], [256, 256]])
def tensor_shape(request: pytest.FixtureRequest) -> List[int]:
    """A tensor shape to parametrize over."""
    return list(request.param)


@pytest.fixture(autouse=True)
def _pypto_log_level(request: pytest.FixtureRequest) -> Generator[None, None, None]:
    """``--pypto-log-level`` as the test thread's compiler-side level."""
    from pypto.pypto_core import LogLevel, _clear_thread_log_level, _set_thread_log_level

    if "--pypto-log-level" in _TAKEN_OVER:
        yield
        return
    _set_thread_log_level(LogLevel[str(_get(request.config, "--pypto-log-level", "ERROR"))])
    try:
        yield
    finally:
        _clear_thread_log_level()


@pytest.fixture(scope="session")
def _pypto_build_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pypto") / "build_output"


@pytest.fixture(autouse=True)
def _redirect_prog_build_dir(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``PYPTO_PROG_BUILD_DIR`` into the session's temporary directory, unless
    ``--save-kernels`` keeps builds where the compiler puts them."""
    if _get(request.config, "--save-kernels", False):
        return
    root: Path = request.getfixturevalue("_pypto_build_root")
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(root))
