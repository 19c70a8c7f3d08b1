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
    result.stdout.fnmatch_lines([f"*DeprecationWarning: {flag} is deprecated; use --enable-chip-swimlane*"])


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
