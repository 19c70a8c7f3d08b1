"""RunConfig: defaults, validation texts (reference §2 and §8), the deprecated aliases."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

from pypto import _native
from pypto.backend import BackendType
from pypto.runtime import RunConfig, RunResult

L2_DEPRECATION = (
    "RunConfig.enable_l2_swimlane is deprecated; use enable_chip_swimlane instead. Same values "
    "and semantics — Simpler renamed the L2 layer to 'chip', and the runtime artifact is "
    "chip_swimlane_records.json. The alias will be removed in a future release."
)
LEVEL_RANGE = (
    "must be a collection level in [0, 4] (0=off, 1=AICore timing, 2=+dispatch/finish, "
    "3=+sched phases, 4=+orch phases), got "
)


def test_defaults_are_the_references():
    c = RunConfig()
    assert (c.platform, c.device_id, c.rtol, c.atol) == ("a2a3sim", 0, 1e-5, 1e-5)
    assert (c.enable_chip_swimlane, c.enable_dump_args, c.enable_pmu) == (0, 0, 0)
    assert (c.enable_dep_gen, c.enable_scope_stats, c.save_kernels) == (False, False, False)
    assert (c.ring_task_window, c.ring_heap, c.ring_dep_pool) == (None, None, None)
    assert c.backend_type is BackendType.Ascend910B
    assert c.any_dfx_enabled() is False
    assert RunConfig.__test__ is False


def test_field_order_matches_the_reference():
    """PyPTO 2026-09's fields (``platform`` and ``backend_type`` are derived properties)."""
    names = [f.name for f in dataclasses.fields(RunConfig)]
    assert names[:28] == [
        "arch", "execution_mode", "device_id", "rtol", "atol", "strategy", "dump_passes",
        "save_kernels", "save_kernels_dir", "codegen_only", "enable_chip_swimlane",
        "enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats",
        "compile_profiling", "diagnostic_phase", "disabled_diagnostics", "golden_data_dir",
        "aicpu_thread_num", "ring_task_window", "ring_heap", "ring_dep_pool", "cache_config",
        "distributed_config", "analyze_auto_scopes_for_deps", "memory_planner",
        "dump_ptoas_passes",
    ]  # fmt: skip


@pytest.mark.parametrize("platform", ["a2a3sim", "a2a3", "a5sim", "a5", "cpu"])
def test_platforms(platform):
    c = RunConfig(platform=platform)
    want = BackendType.Ascend950 if platform.startswith("a5") else BackendType.Ascend910B
    assert c.backend_type is want


@pytest.mark.parametrize(("device", "sim"), [("a2a3", "a2a3sim"), ("a5", "a5sim")])
def test_sim_fallback_runs_a_device_platform_on_its_simulator(device, sim, monkeypatch):
    monkeypatch.delenv("PTO_SIM_FALLBACK", raising=False)
    assert RunConfig(platform=device).platform == device  # no fallback unless asked for
    monkeypatch.setenv("PTO_SIM_FALLBACK", "1")
    with pytest.warns(RuntimeWarning, match=f"platform '{device}' runs on '{sim}'"):
        c = RunConfig(platform=device, device_id=11)
    assert (c.platform, c.device_id) == (sim, 11)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RunConfig(platform=sim).platform == sim  # a simulator platform is left alone


def test_invalid_platform():
    with pytest.raises(ValueError) as e:
        RunConfig(platform="gpu")
    assert str(e.value) == (
        "Invalid platform 'gpu'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."
    )


@pytest.mark.parametrize(
    ("value", "level"), [(True, 4), (False, 0), (0, 0), (1, 1), (3, 3), (4, 4)]
)
def test_swimlane_levels(value, level):
    c = RunConfig(enable_chip_swimlane=value)
    assert c.enable_chip_swimlane == level
    assert type(c.enable_chip_swimlane) is int
    assert c.save_kernels is (level > 0)


@pytest.mark.parametrize("value", [5, -1, 300])
def test_swimlane_rejects_out_of_range_level(value):
    with pytest.raises(ValueError) as e:
        RunConfig(enable_chip_swimlane=value)
    assert str(e.value) == f"enable_chip_swimlane {LEVEL_RANGE}{value}"


@pytest.mark.parametrize(("value", "type_name"), [("4", "str"), (2.0, "float"), (None, "NoneType")])
def test_swimlane_rejects_non_int(value, type_name):
    with pytest.raises(TypeError) as e:
        RunConfig(enable_chip_swimlane=value)
    assert str(e.value) == (
        f"enable_chip_swimlane must be an int collection level (0-4) or a bool, got {type_name}"
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"enable_chip_swimlane": 2},
        {"enable_dump_args": 1},
        {"enable_pmu": 4},
        {"enable_dep_gen": True},
        {"enable_scope_stats": True},
    ],
)
def test_any_dfx_flag_forces_save_kernels_and_flags_are_independent(kwargs):
    c = RunConfig(**kwargs)
    assert c.save_kernels is True
    assert c.any_dfx_enabled() is True
    others = {"enable_chip_swimlane": 0, "enable_dump_args": 0, "enable_pmu": 0,
              "enable_dep_gen": False, "enable_scope_stats": False}  # fmt: skip
    for name, off in others.items():
        if name not in kwargs:
            assert getattr(c, name) == off, name


def test_dump_args_is_not_normalized_and_is_validated_when_a_run_starts():
    assert RunConfig(enable_dump_args=True).enable_dump_args is True
    with pytest.raises(ValueError) as e:
        RunConfig(enable_dump_args=4).native_options()
    assert str(e.value) == (
        "enable_dump_args must be 0 (off), 1 (partial), 2 (full) or 3 (hybrid), got 4"
    )
    with pytest.raises(ValueError, match=r"got -1$"):
        RunConfig(enable_dump_args=-1).native_options()
    with pytest.raises(TypeError):  # as in PyPTO: the DFX predicate compares it with 0
        RunConfig(enable_dump_args="1")


def test_pmu_type_and_range_when_a_run_starts():
    with pytest.raises(TypeError):
        RunConfig(enable_pmu="2")
    with pytest.raises(ValueError, match=r"^enable_pmu must be .*got -2$"):
        RunConfig(enable_pmu=-2).native_options()


def test_deprecated_kwarg_maps_and_warns():
    with pytest.warns(DeprecationWarning) as record:
        c = RunConfig(enable_l2_swimlane=True)
    assert [str(w.message) for w in record] == [L2_DEPRECATION]
    assert c.enable_chip_swimlane == 4
    assert c.save_kernels is True


def test_alias_read_returns_canonical_without_warning():
    c = RunConfig(enable_chip_swimlane=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.enable_l2_swimlane == 2
        assert c.runtime_profiling == 2


def test_alias_assignment_warns_and_writes_through():
    c = RunConfig()
    with pytest.warns(DeprecationWarning, match="enable_l2_swimlane is deprecated"):
        c.enable_l2_swimlane = True
    assert c.enable_chip_swimlane == 4
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError) as e:
        c.enable_l2_swimlane = 9
    assert str(e.value) == f"enable_l2_swimlane {LEVEL_RANGE}9"
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError) as e:
        c.enable_l2_swimlane = "x"
    assert str(e.value) == (
        "enable_l2_swimlane must be an int collection level (0-4) or a bool, got str"
    )


def test_both_spellings_is_an_error():
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError) as e:
        RunConfig(enable_chip_swimlane=4, enable_l2_swimlane=True)
    assert str(e.value) == (
        "RunConfig received both enable_chip_swimlane and the deprecated enable_l2_swimlane; "
        "pass only enable_chip_swimlane."
    )
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError) as e:
        RunConfig(enable_chip_swimlane=1, runtime_profiling=True)
    assert str(e.value) == (
        "RunConfig received both enable_chip_swimlane and the deprecated runtime_profiling; "
        "pass only enable_chip_swimlane."
    )
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="^RunConfig received both"):
        RunConfig(enable_l2_swimlane=True, runtime_profiling=True)


def test_runtime_profiling_is_a_deprecated_alias_too():
    with pytest.warns(DeprecationWarning, match="^RunConfig.runtime_profiling is deprecated; use enable_chip_swimlane"):
        c = RunConfig(runtime_profiling=True)
    assert c.enable_chip_swimlane == 4
    with pytest.warns(DeprecationWarning, match="runtime_profiling is deprecated"):
        c.runtime_profiling = 1
    assert c.enable_chip_swimlane == 1


def test_replace_on_canonical_name_is_silent_and_wins():
    with pytest.warns(DeprecationWarning):
        c = RunConfig(enable_l2_swimlane=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = dataclasses.replace(c, enable_chip_swimlane=2)
    assert d.enable_chip_swimlane == 2


def test_alias_is_not_a_dataclass_field():
    names = {f.name for f in dataclasses.fields(RunConfig)}
    assert "enable_l2_swimlane" not in names
    assert "runtime_profiling" not in names
    assert "enable_l2_swimlane" not in repr(RunConfig())
    assert "enable_l2_swimlane" not in dataclasses.asdict(RunConfig())


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("ring_task_window", 6, "ring_task_window must be a power of 2 >= 4, got 6"),
        ("ring_task_window", 2, "ring_task_window must be a power of 2 >= 4, got 2"),
        ("ring_heap", 512, "ring_heap must be a power of 2 >= 1024 (bytes per ring), got 512"),
        ("ring_heap", 0, "ring_heap must be a power of 2 >= 1024 (bytes per ring), got 0"),
        ("ring_dep_pool", 3, "ring_dep_pool must be in [4, INT32_MAX], got 3"),
        ("ring_dep_pool", 2**31, "ring_dep_pool must be in [4, INT32_MAX], got 2147483648"),
        ("ring_heap", True, "ring_heap must be a power of 2 >= 1024 (bytes per ring), got True"),
        ("ring_heap", -1024, "ring_heap must be a power of 2 >= 1024 (bytes per ring), got -1024"),
        ("ring_heap", "1024", "ring_heap must be a power of 2 >= 1024 (bytes per ring), got '1024'"),
        (
            "ring_heap",
            [0, 1024, 0],
            "ring_heap must have exactly 4 entries (one per scope-depth ring), got 3",
        ),
        (
            "ring_dep_pool",
            [0, 2, 0, 0],
            "ring_dep_pool entries must be in [4, INT32_MAX] (or 0 to keep default), got 2",
        ),
        (
            "ring_task_window",
            (0, 0, False, 0),
            "ring_task_window entries must be a power of 2 >= 4 (or 0 to keep default), "
            "got False",
        ),
    ],
)
def test_ring_validation(field, value, message):
    with pytest.raises(ValueError) as e:
        RunConfig(**{field: value})
    assert str(e.value) == message


def test_valid_ring_overrides_and_tuple_normalized_to_list():
    c = RunConfig(ring_task_window=64, ring_heap=(0, 1 << 20, 0, 0), ring_dep_pool=[0, 0, 0, 1024])
    assert c.ring_task_window == 64
    assert c.ring_heap == [0, 1 << 20, 0, 0]
    assert isinstance(c.ring_heap, list)
    assert c.any_dfx_enabled() is False


def test_native_options_mirror_the_fields():
    c = RunConfig(platform="cpu", enable_pmu=2, enable_dump_args=True, rtol=1e-3)
    opts = c.native_options()
    assert (opts.platform, opts.enable_pmu, opts.enable_dump_args, opts.rtol) == ("cpu", 2, 1, 1e-3)
    assert opts.any_dfx_enabled()
    assert "RunOptions(platform='cpu'" in repr(opts)
    with pytest.raises(ValueError, match="^scheduler_timeout must be a positive number"):
        RunConfig(scheduler_timeout=-1.0)
    with pytest.raises(ValueError, match="^n_workers must be a positive int or None"):
        RunConfig(n_workers=0)
    with pytest.raises(TypeError, match="^rtol must be a float, got str"):
        RunConfig(rtol="x")


def test_normalize_swimlane_level_names_its_source():
    assert _native.normalize_swimlane_level(True, "x") == 4
    with pytest.raises(ValueError, match=r"^--swimlane-level must be a collection level"):
        _native.normalize_swimlane_level(7, "--swimlane-level")


def test_run_result_str():
    assert str(RunResult(passed=True)) == "PASS"
    assert str(RunResult(passed=False, test_name="t", error="boom", execution_time=1.234)) == (
        "FAIL: t - boom (1.23s)"
    )
    assert RunResult.__test__ is False


@pytest.mark.parametrize(
    "kwargs, error, needle",
    [
        ({"rtol": -1e-3}, ValueError, "rtol must be a finite number >= 0"),
        ({"atol": float("nan")}, ValueError, "atol must be a finite number >= 0"),
        ({"n_workers": -2}, ValueError, "n_workers must be a positive int"),
        ({"n_workers": 10**9}, ValueError, "n_workers must be between 1 and 1024"),
        ({"device_id": 1.5}, TypeError, "device_id must be an int"),
        ({"device_id": -1}, ValueError, "device_id must be >= 0"),
    ],
)
def test_bad_numbers_name_the_field(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        RunConfig(**kwargs)
