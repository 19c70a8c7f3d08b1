"""The pytest plugin (entry point ``pytest11``): DFX flags and the ``run_config`` fixture
(reference §7.4; seed 000's flag table)."""

from __future__ import annotations

import pytest

PROBE = """
def test_probe(run_config):
    c = run_config
    print("CFG", c.platform, c.enable_chip_swimlane, c.enable_dump_args, c.enable_pmu,
          c.enable_dep_gen, c.enable_scope_stats, c.save_kernels)
"""


def probe(pytester: pytest.Pytester, *flags: str) -> pytest.RunResult:
    pytester.makepyfile(PROBE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", *flags)
    result.assert_outcomes(passed=1)
    return result


def test_defaults(pytester):
    probe(pytester).stdout.fnmatch_lines(["*CFG a2a3sim 0 0 0 False False False"])


def test_every_flag(pytester):
    result = probe(
        pytester, "--platform", "cpu", "--enable-chip-swimlane", "--dump-args",
        "--enable-pmu", "--enable-dep-gen", "--enable-scope-stats",
    )  # fmt: skip
    result.stdout.fnmatch_lines(["*CFG cpu 4 1 2 True True True"])


def test_flag_values(pytester):
    result = probe(pytester, "--chip-swimlane-level", "2", "--enable-chip-swimlane",
                   "--dump-args", "2", "--enable-pmu", "4")  # fmt: skip
    result.stdout.fnmatch_lines(["*CFG a2a3sim 2 2 4 False False True"])


@pytest.mark.parametrize("flag", ["--enable-l2-swimlane", "--runtime-profiling"])
def test_deprecated_flags_warn_and_give_level_4(pytester, flag):
    result = probe(pytester, flag)
    result.stdout.fnmatch_lines(["*CFG a2a3sim 4 0 0 False False True"])
    result.stdout.fnmatch_lines([f"*DeprecationWarning: {flag} is deprecated; use --enable-chip-swimlane (or --chip-swimlane-level N)."])


def test_bad_level_is_a_usage_error(pytester):
    pytester.makepyfile(PROBE)
    result = pytester.runpytest_subprocess("--chip-swimlane-level", "5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid choice*"])


def test_unknown_platforms_are_a_usage_error(pytester):
    pytester.makepyfile(PROBE)
    result = pytester.runpytest_subprocess("--platform", "gpu,tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--platform must include at least one of: a2a3sim, a5sim, a2a3, a5; got 'gpu,tpu'"])



# A conftest with PyPTO's tests/st/conftest.py flags (names, actions, dests and defaults as
# PyPTO registers them) and its own test_config fixture.
PYPTO_CONFTEST = """
import pytest
from pypto.runtime import RunConfig


def pytest_addoption(parser):
    parser.addoption("--platform", action="store", default="a2a3sim", help="platform list")
    parser.addoption("--device", action="store", default="0", help="device ids")
    parser.addoption("--strategy", action="store", default="Default", choices=["Default"])
    parser.addoption("--save-kernels", action="store_true", default=False)
    parser.addoption("--kernels-dir", action="store", default=None)
    parser.addoption("--dump-passes", action="store_true", default=False)
    parser.addoption("--codegen-only", action="store_true", default=False)
    parser.addoption("--runtime-log-level", action="store", default=None)
    parser.addoption("--pypto-log-level", action="store", default="ERROR")
    parser.addoption("--enable-chip-swimlane", action="store_const", const=4, default=0,
                     dest="enable_chip_swimlane")
    parser.addoption("--chip-swimlane-level", type=int, choices=range(5), default=None,
                     metavar="PERF_LEVEL", dest="chip_swimlane_level")
    parser.addoption("--enable-l2-swimlane", action="store_true", default=False,
                     dest="enable_l2_swimlane_deprecated")
    parser.addoption("--dump-args", type=int, nargs="?", const=1, default=0)
    parser.addoption("--enable-pmu", type=int, nargs="?", const=2, default=0, metavar="EVENT_TYPE")
    parser.addoption("--enable-dep-gen", action="store_true", default=False)
    parser.addoption("--enable-scope-stats", action="store_true", default=False)
    group = parser.getgroup("harness")
    group.addoption("--execute-via-task-submit", action="store_true", default=False)


@pytest.fixture(scope="session")
def test_config(request):
    o = request.config.option
    return RunConfig(
        platform=o.platform.split(",")[0],
        device_id=int(o.device.split(",")[0]),
        enable_chip_swimlane=o.chip_swimlane_level if o.chip_swimlane_level is not None else o.enable_chip_swimlane,
        enable_dump_args=o.dump_args,
        enable_pmu=o.enable_pmu,
        save_kernels=o.save_kernels,
    )
"""

USES_TEST_CONFIG = """
def test_probe(test_config, run_config, request):
    c = test_config
    print("CFG", c.platform, c.device_id, c.enable_chip_swimlane, c.enable_dump_args, c.enable_pmu)
    print("OURS", run_config.platform, run_config.enable_chip_swimlane, run_config.enable_dump_args)
    print("HARNESS", request.config.option.execute_via_task_submit)
"""


def test_pyptos_conftest_coexists_with_the_plugin(pytester):
    pytester.makeconftest(PYPTO_CONFTEST)
    pytester.makepyfile(USES_TEST_CONFIG)
    result = pytester.runpytest_subprocess(
        "-s", "-p", "no:cacheprovider", "--platform", "cpu,a5sim", "--device", "3",
        "--chip-swimlane-level", "2", "--dump-args", "--enable-pmu", "4", "--execute-via-task-submit",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    # The conftest's own fixture and flags win; the plugin reads the same flags by name.
    result.stdout.fnmatch_lines(["*CFG cpu 3 2 1 4", "*OURS cpu 2 1", "*HARNESS True"])


def test_the_plugins_test_config_and_pypto_flags(pytester):
    pytester.makepyfile(
        """
def test_probe(test_config, device_ids, optimization_strategy):
    c = test_config
    print("CFG", c.platform, c.device_id, c.save_kernels, c.save_kernels_dir, c.dump_passes,
          c.codegen_only, c.memory_planner, device_ids, optimization_strategy.name)
"""
    )
    result = pytester.runpytest_subprocess(
        "-s", "-p", "no:cacheprovider", "--platform", "a5sim", "--device", "2-4,7,3",
        "--save-kernels", "--kernels-dir", "kd", "--dump-passes", "--memory-planner", "ptoas",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert "CFG a5sim 2 True kd True False MemoryPlanner.PTOAS [2, 3, 4, 7] Default" in result.stdout.str()


def test_platform_list_filters_marked_tests(pytester):
    pytester.makepyfile(
        """
import pytest

@pytest.mark.platforms("a2a3sim")
def test_sim_only():
    pass

@pytest.mark.platforms("a5", "a5sim")
def test_a5():
    pass

def test_everywhere():
    pass
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--platform", "a5sim,bogus")
    result.assert_outcomes(passed=2, deselected=1)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--device", ""], "--device must not be empty"),
        (["--device", "5-2"], "--device range must be non-decreasing, got '5-2'"),
        (["--device", "x"], "Invalid device ID or range in --device: 'x'"),
        (["--execute-via-task-submit"], "--execute-via-task-submit configures PyPTO's device-batch harness"),
    ],
)
def test_usage_errors(pytester, flags, message):
    pytester.makepyfile(PROBE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *flags)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_runtime_and_pypto_log_levels(pytester):
    pytester.makepyfile(
        """
import threading
from pypto.runtime import log_level
from pypto.pypto_core.logging import _effective_level

def test_levels():
    print("LEVELS", log_level(), _effective_level().name)
"""
    )
    result = pytester.runpytest_subprocess(
        "-s", "-p", "no:cacheprovider", "--runtime-log-level", "debug", "--pypto-log-level", "INFO"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*LEVELS 10 INFO"])


def test_a_project_with_its_own_flags_disables_the_plugin(pytester):
    pytester.makeconftest(
        """
def pytest_addoption(parser):
    parser.addoption("--platform", default="a5sim")
"""
    )
    pytester.makepyfile("def test_x(request):\n    print('PLATFORM', request.config.option.platform)\n")
    result = pytester.runpytest_subprocess("-s", "-p", "no:pypto", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*PLATFORM a5sim"])


def test_the_switch_options_are_rows_of_the_switch_table():
    """The plugin's diagnostics options stay written out, as PyPTO spells them (a frozen
    surface, docs/DECISIONS.md); each names a switch of the runner's table by its Python
    keyword (``--enable-pmu``) or its flag (``--dump-args``), and they are PyPTO's five."""
    from pypto.runtime import _dfx_switches
    from pypto.testing import pytest_plugin

    options = {n for names, _ in pytest_plugin._OPTIONS for n in names}
    named = {
        s.python_keyword
        for s in _dfx_switches.SWITCHES
        for spelled in (f"--{s.python_keyword.replace('_', '-')}", f"--{s.cli_flag}")
        if spelled in options
    }
    pyptos = {"enable_chip_swimlane", "enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats"}
    assert named == pyptos and pyptos <= set(_dfx_switches.KEYWORDS)
