"""The pytest plugin of pypto (entry point ``pytest11``): DFX flags and a ``run_config``
fixture, as PyPTO's ``tests/st/conftest.py`` has them.

Flags:

- ``--platform P``: ``a2a3sim`` (default), ``a2a3``, ``a5sim``, ``a5`` or ``cpu``.
- ``--enable-chip-swimlane``: chip swimlane at the full level 4 (valueless).
- ``--chip-swimlane-level N``: level 0-4; takes precedence over the bare flag.
- ``--enable-l2-swimlane``, ``--runtime-profiling``: deprecated spellings of
  ``--enable-chip-swimlane`` (a ``DeprecationWarning``, level 4).
- ``--dump-args [LEVEL]``: args dump, bare flag = 1 (partial), 2 full.
- ``--enable-pmu [N]``: PMU event type, bare flag = 2 (PIPE_UTILIZATION).
- ``--enable-dep-gen``: ``deps.json``. ``--enable-scope-stats``: scope statistics.

The session fixture ``run_config`` is the :class:`~pypto.runtime.RunConfig` they make.

The plugin is named ``pypto``. A project whose ``conftest.py`` defines these flags itself
(as PyPTO's ``tests/st/conftest.py`` does) turns it off with ``-p no:pypto``; a flag that a
plugin loaded earlier already defines is left to that definition.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pypto.runtime.run_config import RunConfig

_DEPRECATED_FLAG = (
    "{flag} is deprecated; use --enable-chip-swimlane (or --chip-swimlane-level N) instead. "
    "Same semantics — Simpler renamed the L2 layer to 'chip'. The flag will be removed in a "
    "future release."
)


_DEFAULTS = {
    "platform": "a2a3sim",
    "enable_chip_swimlane": 0,
    "chip_swimlane_level": None,
    "enable_l2_swimlane_deprecated": False,
    "runtime_profiling_deprecated": False,
    "dump_args": 0,
    "enable_pmu": 0,
    "enable_dep_gen": False,
    "enable_scope_stats": False,
}


def _option(options: Any, dest: str) -> Any:
    return getattr(options, dest, _DEFAULTS[dest])


class _Group:
    """An option group that skips flags someone else already defined."""

    def __init__(self, group: Any) -> None:
        self._group = group

    def addoption(self, *names: str, **kwargs: Any) -> None:
        try:
            self._group.addoption(*names, **kwargs)
        except ValueError:
            # "option names {...} already added": the other definition wins.
            pass


def pytest_addoption(parser: pytest.Parser) -> None:
    """Adds the DFX flags and ``--platform``."""
    group = _Group(parser.getgroup("pypto", "pypto runtime (DFX switches)"))
    group.addoption(
        "--platform",
        default="a2a3sim",
        help="platform to run on: a2a3sim (default), a2a3, a5sim, a5 or cpu",
    )
    group.addoption(
        "--enable-chip-swimlane",
        action="store_const",
        const=4,
        default=0,
        dest="enable_chip_swimlane",
        help="chip swimlane at the full level 4 (chip_swimlane_records.json)",
    )
    group.addoption(
        "--chip-swimlane-level",
        type=int,
        choices=range(5),
        default=None,
        metavar="PERF_LEVEL",
        dest="chip_swimlane_level",
        help="chip swimlane at level 0-4; takes precedence over --enable-chip-swimlane",
    )
    group.addoption(
        "--enable-l2-swimlane",
        action="store_true",
        default=False,
        dest="enable_l2_swimlane_deprecated",
        help="deprecated: use --enable-chip-swimlane",
    )
    group.addoption(
        "--runtime-profiling",
        action="store_true",
        default=False,
        dest="runtime_profiling_deprecated",
        help="deprecated: use --enable-chip-swimlane",
    )
    group.addoption(
        "--dump-args",
        type=int,
        nargs="?",
        const=1,
        default=0,
        metavar="LEVEL",
        dest="dump_args",
        help="args dump: 1 partial (bare flag), 2 full",
    )
    group.addoption(
        "--enable-pmu",
        type=int,
        nargs="?",
        const=2,
        default=0,
        metavar="EVENT_TYPE",
        dest="enable_pmu",
        help="PMU event type (bare flag = 2, PIPE_UTILIZATION; 4 = MEMORY)",
    )
    group.addoption(
        "--enable-dep-gen",
        action="store_true",
        default=False,
        dest="enable_dep_gen",
        help="record the task dependency graph (deps.json; render it with the deps viewer)",
    )
    group.addoption(
        "--enable-scope-stats",
        action="store_true",
        default=False,
        dest="enable_scope_stats",
        help="record scope statistics (scope_stats/scope_stats.jsonl)",
    )


def resolve_swimlane_level(options: Any) -> int:
    """The swimlane level the flags ask for: ``--chip-swimlane-level``, else the bare flag,
    else a deprecated flag (with a ``DeprecationWarning``), else 0."""
    if _option(options, "chip_swimlane_level") is not None:
        return int(_option(options, "chip_swimlane_level"))
    if _option(options, "enable_chip_swimlane"):
        return int(_option(options, "enable_chip_swimlane"))
    for flag, dest in (
        ("--enable-l2-swimlane", "enable_l2_swimlane_deprecated"),
        ("--runtime-profiling", "runtime_profiling_deprecated"),
    ):
        if _option(options, dest):
            warnings.warn(_DEPRECATED_FLAG.format(flag=flag), DeprecationWarning, stacklevel=2)
            return 4
    return 0


def run_config_from_options(options: Any) -> RunConfig:
    """The :class:`~pypto.runtime.RunConfig` of the parsed flags."""
    from pypto.runtime.run_config import RunConfig

    return RunConfig(
        platform=_option(options, "platform"),
        enable_chip_swimlane=resolve_swimlane_level(options),
        enable_dump_args=_option(options, "dump_args"),
        enable_pmu=_option(options, "enable_pmu"),
        enable_dep_gen=_option(options, "enable_dep_gen"),
        enable_scope_stats=_option(options, "enable_scope_stats"),
    )


@pytest.fixture(scope="session")
def run_config(request: pytest.FixtureRequest) -> RunConfig:
    """The session's :class:`~pypto.runtime.RunConfig`, built from the command line flags."""
    return run_config_from_options(request.config.option)
