"""PyPTO's public runtime-layer API as PyPTO's own tests pin it (the reference's §1-§8 and
the §13 rows): module layout, logging, RunConfig texts, CompiledProgram as a path,
BenchmarkStats, execute_compiled's signature and packing errors."""

from __future__ import annotations

import ctypes
import inspect
import logging
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pypto
from pypto.ir import CompiledProgram
from pypto.runtime import BenchmarkStats, RunConfig, RunResult, TraceInvocation, TraceSpan


# --- §1 modules ------------------------------------------------------------------------


def test_the_modules_and_names_callers_import():
    from pypto.ir.compiled_program import (  # noqa: F401
        _COMPILED_META_FILENAME,
        _COMPILED_META_SCHEMA,
        ParamInfo,
        _build_full_args,
        _extract_param_infos,
        extract_param_infos,
    )
    from pypto.runtime.bench import BenchmarkStats as B  # noqa: F401
    from pypto.runtime.device_runner import execute_on_device  # noqa: F401
    from pypto.runtime.log_config import _sync_to_pypto, configure_log, current_level  # noqa: F401
    from pypto.runtime.runner import (  # noqa: F401
        _RING_DEPTH,
        _SWIMLANE_CLI_HELP,
        _SWIMLANE_FULL_LEVEL,
        _SWIMLANE_MAX_LEVEL,
        RunConfig,
        RunResult,
        _build_call_config,
        _DfxOpts,
        _normalize_swimlane_level,
        execute_compiled,
    )

    assert (_RING_DEPTH, _SWIMLANE_FULL_LEVEL, _SWIMLANE_MAX_LEVEL) == (4, 4, 4)
    assert _COMPILED_META_FILENAME == "compiled_meta.json" and _COMPILED_META_SCHEMA == 1
    import pypto.runtime.debug as debug

    assert {"invalidate_binary_cache", "rebuild_kernel_cpp_from_pto", "replay", "write_run_script"} <= set(
        debug.__all__
    )


def test_datatype_constants():
    names = [n for n in dir(pypto) if n.startswith("DT_")]
    assert len(names) == 21
    assert str(pypto.DT_FP32) == "fp32" and str(pypto.DT_BF16) == "bfloat16"
    assert pypto.DataType.INDEX == pypto.DT_INDEX and hash(pypto.DT_INT8) == hash(pypto.DataType.INT8)
    assert pypto.DT_FP16.get_bit() == 16 and pypto.DT_INT4.is_signed_int()
    assert pypto.__version__ == "0.1.0"


# --- §2 logging --------------------------------------------------------------------------


def test_log_level_enum_and_setters():
    from pypto import LogLevel, get_log_level, set_log_level
    from pypto.pypto_core import _clear_thread_log_level, _set_thread_log_level

    assert [m.value for m in LogLevel] == list(range(7))
    assert [m.name for m in LogLevel] == ["DEBUG", "INFO", "WARN", "ERROR", "FATAL", "EVENT", "NONE"]
    before = get_log_level()
    try:
        set_log_level(LogLevel.ERROR)
        assert get_log_level() is LogLevel.ERROR
        set_log_level(1)
        assert get_log_level() is LogLevel.INFO
        for bad in (7, "INFO", True):
            with pytest.raises(TypeError, match="incompatible function arguments"):
                set_log_level(bad)
        _set_thread_log_level(LogLevel.DEBUG)
        assert get_log_level() is LogLevel.INFO  # the thread override is not reported
    finally:
        _clear_thread_log_level()
        set_log_level(before)


def test_checks_raise_value_error_and_internal_error(capsys):
    from pypto import InternalError, LogLevel, check, internal_check, log_error, set_log_level

    with pytest.raises(ValueError, match="^x must be positive$"):
        check(False, "x must be positive")
    with pytest.raises(InternalError) as e:
        internal_check(False, "broken")
    assert isinstance(e.value, RuntimeError)
    set_log_level(LogLevel.WARN)
    log_error("boom")
    assert "E | boom" in capsys.readouterr().err


def test_configure_log_takes_ints_and_names_and_unknown_means_timing():
    from pypto.runtime import configure_log, log_level

    prior = log_level()
    try:
        configure_log("DEBUG")
        assert log_level() == 10 and isinstance(log_level(), int)
        configure_log(40)
        assert log_level() == 40
        configure_log("warning")
        assert log_level() == 30
        configure_log("loud")  # PyPTO: no error, timing
        assert log_level() == 25
        assert logging.getLogger("simpler").getEffectiveLevel() == 25
    finally:
        configure_log(prior)


def test_sync_pypto_sets_the_compiler_level():
    from pypto import LogLevel, get_log_level, set_log_level
    from pypto.runtime import configure_log, log_level

    prior, prior_core = log_level(), get_log_level()
    try:
        for level, want in (("debug", LogLevel.DEBUG), ("timing", LogLevel.WARN), ("null", LogLevel.NONE)):
            configure_log(level, sync_pypto=True)
            assert get_log_level() is want
    finally:
        configure_log(prior)
        set_log_level(prior_core)


@pytest.mark.parametrize(
    "env, level, core",
    [({}, 25, None), ({"PYPTO_RUNTIME_LOG": "nonsense"}, 25, None),
     ({"PYPTO_RUNTIME_LOG": "error", "PYPTO_RUNTIME_LOG_SYNC": "1"}, 40, "ERROR")],
)  # fmt: skip
def test_import_bootstrap(env, level, core):
    code = (
        "import pypto, pypto.runtime as r\n"
        "print(r.log_level(), pypto.get_log_level().name)\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_RUNTIME_LOG")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True)
    got_level, got_core = out.stdout.split()
    assert int(got_level) == level
    if core is not None:
        assert got_core == core


# --- §3 RunConfig / RunResult -------------------------------------------------------------


def test_run_config_fields_and_enums():
    from dataclasses import fields

    from pypto.backend import BackendType
    from pypto.ir.pass_manager import OptimizationStrategy

    names = [f.name for f in fields(RunConfig)]
    assert names[:28] == [
        "arch", "execution_mode", "device_id", "rtol", "atol", "strategy", "dump_passes",
        "save_kernels", "save_kernels_dir", "codegen_only", "enable_chip_swimlane",
        "enable_dump_args", "enable_pmu", "enable_dep_gen", "enable_scope_stats",
        "compile_profiling", "diagnostic_phase", "disabled_diagnostics", "golden_data_dir",
        "aicpu_thread_num", "ring_task_window", "ring_heap", "ring_dep_pool", "cache_config",
        "distributed_config", "analyze_auto_scopes_for_deps", "memory_planner",
        "dump_ptoas_passes",
    ]  # fmt: skip
    c = RunConfig()
    assert c.strategy is OptimizationStrategy.Default and c.backend_type is BackendType.Ascend910B
    assert RunConfig(platform="a5sim").backend_type is BackendType.Ascend950


def test_platform_text_is_pyptos():
    with pytest.raises(ValueError) as e:
        RunConfig(platform="gpu")
    assert str(e.value) == "Invalid platform 'gpu'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."
    assert RunConfig(platform="cpu").platform == "cpu"  # this runtime's extra platform


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("ring_task_window", 6, "ring_task_window must be a power of 2 >= 4, got 6"),
        ("ring_heap", 512, "ring_heap must be a power of 2 >= 1024 (bytes per ring), got 512"),
        ("ring_dep_pool", 3, "ring_dep_pool must be in [4, INT32_MAX], got 3"),
        ("ring_heap", True, "ring_heap must be a power of 2 >= 1024 (bytes per ring), got True"),
        ("ring_task_window", 0, "ring_task_window must be a power of 2 >= 4, got 0"),
        ("ring_dep_pool", [0, 4, 4], "ring_dep_pool must have exactly 4 entries (one per scope-depth ring), got 3"),
        ("ring_heap", [0, 1000, 0, 0], "ring_heap entries must be a power of 2 >= 1024 (bytes per ring) (or 0 to keep default), got 1000"),
    ],
)  # fmt: skip
def test_ring_texts(field, value, message):
    with pytest.raises(ValueError) as e:
        RunConfig(**{field: value})
    assert str(e.value) == message
    # PyPTO's test regexes
    assert re.search(r"must be a power of 2 >= 4|must be a power of 2 >= 1024|must be in \[4, INT32_MAX\]|exactly 4 entries", str(e.value))


def test_only_pyptos_checks_run_on_construction():
    c = RunConfig(ring_task_window=2**40, enable_pmu=-1)
    assert c.ring_task_window == 2**40
    assert RunConfig(enable_dump_args=7).enable_dump_args == 7
    assert RunConfig(ring_heap=(0, 1024, 0, 0)).ring_heap == [0, 1024, 0, 0]
    assert RunConfig(enable_dump_args=True).enable_dump_args is True
    # This runtime's limits apply when a run starts.
    with pytest.raises(ValueError, match="limit of 2147483647 task slots per ring"):
        RunConfig(ring_task_window=2**40).native_options()
    with pytest.raises(ValueError, match="^enable_dump_args must be 0"):
        RunConfig(enable_dump_args=7).native_options()


def test_deprecated_alias_rules():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RunConfig(enable_l2_swimlane=None).enable_chip_swimlane == 0  # None: absent, silent
    with pytest.warns(DeprecationWarning, match="enable_l2_swimlane is deprecated"):
        assert RunConfig(enable_l2_swimlane=True).enable_chip_swimlane == 4
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="received both"):
        RunConfig(enable_chip_swimlane=2, enable_l2_swimlane=1)


@pytest.mark.parametrize(
    "result, text",
    [
        (RunResult(True, "t", error="ignored", execution_time=1.234), "PASS: t (1.23s)"),
        (RunResult(True), "PASS"),
        (RunResult(False, "t", error="bad"), "FAIL: t - bad"),
        (RunResult(False, error="bad", execution_time=0.0), "FAIL: bad"),
        (RunResult(False, "t"), "FAIL: t"),
    ],
)
def test_run_result_str(result, text):
    assert str(result) == text


# --- §4 execute_compiled ------------------------------------------------------------------


def test_execute_compiled_signature():
    from pypto.runtime import execute_compiled

    sig = inspect.signature(execute_compiled)
    params = sig.parameters
    assert list(params)[:2] == ["work_dir", "args"]
    for name in ("platform", "device_id", "dfx", "level", "aicpu_thread_num", "analyze_auto_scopes_for_deps"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["platform"].default is inspect.Parameter.empty
    assert params["device_id"].default is inspect.Parameter.empty
    assert params["level"].default == 2


@pytest.mark.filterwarnings("ignore:pypto.runtime.execute_compiled is deprecated:DeprecationWarning")
def test_execute_compiled_packing_errors(shared_example):
    from pypto.runtime import execute_compiled

    d = shared_example("vector_add")
    a = np.zeros(16384, dtype=np.float32)
    with pytest.raises(TypeError) as e:
        execute_compiled(d, [a, a, 1.5], platform="a2a3sim", device_id=0)
    assert str(e.value) == "Argument at position 2 must be torch.Tensor, DeviceTensor or ctypes scalar, got float"
    torch = pytest.importorskip("torch", reason="torch tensors")
    t = torch.zeros(128, 128).t()
    with pytest.raises(ValueError) as e:
        execute_compiled(d, [a, t, a], platform="a2a3sim", device_id=0)
    assert str(e.value) == "Tensor at position 1 is not contiguous. Call .contiguous() before packing into orch_args."
    with pytest.raises(ValueError, match="only supports level=2; got level=3"):
        execute_compiled(d, [a, a, a], platform="a2a3sim", device_id=0, level=3)
    assert execute_compiled(d, [a, a, a], platform="a2a3sim", device_id=0) is None


# --- §5 CompiledProgram -------------------------------------------------------------------


def test_from_dir_keyword_only_lazy_unvalidated(tmp_path, shared_example):
    sig = inspect.signature(CompiledProgram.from_dir)
    assert sig.parameters["platform"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["backend_type"].kind is inspect.Parameter.KEYWORD_ONLY
    from conftest import write_meta

    write_meta(tmp_path / "b", [{"name": "x", "direction": "In", "shape": [4], "dtype": "fp32"}])
    # No kernel_config.py, a platform nobody knows: still fine until it runs.
    c = CompiledProgram.from_dir(tmp_path / "b", platform="tpu", backend_type="whatever")
    assert c.platform == "tpu" and c.param_names == ["x"] and not c.has_return
    with pytest.raises(ValueError, match="Invalid platform 'tpu'"):
        c.load()
    with pytest.raises(FileNotFoundError) as e:
        CompiledProgram.from_dir(tmp_path)
    path = (tmp_path / "compiled_meta.json").resolve()
    assert str(e.value).startswith(f"{path} not found — cannot reconstruct")
    assert "(each next_levels/<name>/ sub-build has its own sidecar — reload one of those)" in str(e.value)


def test_compiled_program_is_its_path(shared_example):
    d = shared_example("vector_add")
    c = CompiledProgram.from_dir(d)
    assert str(c) == os.fspath(c) == str(d.resolve())
    assert repr(c) == f"CompiledProgram({d.resolve()})"
    assert c == str(d.resolve()) and c == d.resolve() and c == CompiledProgram.from_dir(d)
    assert hash(c) == hash(d.resolve())
    assert os.path.join(c, "kernels") == str(d.resolve() / "kernels")
    assert c.output_dir == d.resolve() and c.orchestration_names == []
    assert c.runtime_name == "tensormap_and_ringbuffer" and c.runtime_config["aicpu_thread_num"] == 0


def test_return_style_only_with_has_return(tmp_path):
    from conftest import write_meta

    params = [{"name": "a", "direction": "In", "shape": [4], "dtype": "fp32"},
              {"name": "c", "direction": "Out", "shape": [4], "dtype": "fp32"}]  # fmt: skip
    write_meta(tmp_path, params, num_return_types=0)
    c = CompiledProgram.from_dir(tmp_path)
    with pytest.raises(TypeError) as e:
        c(np.zeros(4, np.float32))
    assert str(e.value) == "CompiledProgram expects 2 (in-place) arguments, got 1. Parameters: ['a', 'c']"


def test_scalar_and_tensor_type_errors(shared_example):
    c = CompiledProgram.from_dir(shared_example("paged_attention"))
    d = shared_example("paged_attention")
    args = [np.load(d / "data" / "in" / f"{n}.npy") for n in ("query", "key_cache", "value_cache", "block_table", "context_lens")]
    with pytest.raises(TypeError) as e:
        c(*args, ctypes.c_int32(1))
    assert str(e.value) == "Parameter 'scale' expects c_float for dtype fp32; got c_int"
    with pytest.raises(TypeError) as e:
        c(1, *args[1:], 1.0)
    assert str(e.value) == (
        "Parameter 'query' is a tensor; got int. Pass a torch.Tensor (host) or DeviceTensor (worker-resident)."
    )
    torch = pytest.importorskip("torch", reason="torch tensors")
    with pytest.raises(TypeError) as e:
        c(*args, torch.zeros(1))
    assert str(e.value) == "Parameter 'scale' is a scalar (fp32); got torch.Tensor"


def test_multi_orch_parent(tmp_path):
    for name in ("beta", "alpha"):
        (tmp_path / "next_levels" / name / "orchestration").mkdir(parents=True)
    c = CompiledProgram(None, str(tmp_path), _param_infos=[], _output_indices=[], _return_types=[])
    assert c.orchestration_names == ["alpha", "beta"]
    with pytest.raises(TypeError) as e:
        c()
    assert str(e.value).startswith("Program has 2 L2 orchestrations ['alpha', 'beta']; select one explicitly")
    with pytest.raises(TypeError, match=r"^Multi-orch program has 2 orchestrations \['alpha', 'beta'\]; access"):
        c.runtime_name
    with pytest.raises(KeyError, match="No orchestration 'gamma'"):
        c["gamma"]
    with pytest.raises(RuntimeError, match="Multi-orch dispatch needs live IR"):
        c["alpha"]
    with pytest.raises(RuntimeError, match="Multi-orch dispatch needs live IR"):
        c.alpha


# --- §7 BenchmarkStats --------------------------------------------------------------------


def test_benchmark_stats_defaults_and_texts():
    s = BenchmarkStats()
    assert (s.rounds, s.warmup, s.invocations, s.fallback_flattened) == (0, 0, [], False)
    assert str(s) == "BenchmarkStats(rounds=0: no samples)"
    assert s.samples is s.device_wall_us
    s.device_wall_us.append(3.0)
    assert s.samples == [3.0] and s.device_wall_us_mean == 3.0 and s.device_wall_us_stdev == 0.0
    z = BenchmarkStats(device_wall_us=[0.0, 0.0], rounds=2)
    assert str(z).startswith("BenchmarkStats(rounds=2): device_wall_us all 0 — runtime built without")
    t = BenchmarkStats(device_wall_us=[1.0, 2.0, 4.0], host_wall_us=[5.0] * 3, rounds=3, warmup=1)
    assert str(t) == (
        "BenchmarkStats(rounds=3, warmup=1): device_wall_us min=1.0 median=2.0 mean=2.3 max=4.0 stdev=1.5"
    )
    assert repr(t).startswith("BenchmarkStats(device_wall_us=[1.0, 2.0, 4.0], host_wall_us=")
    assert t == BenchmarkStats([1.0, 2.0, 4.0], [5.0] * 3, 3, 1)
    assert t.format_tree() == "BenchmarkStats: no span tree captured (non-SIMPLER_HOST_STRACE build or *sim platform)"
    assert t.per_dispatch() == {} and t.per_rank() == {} and t.mean_invocation() is None
    with pytest.raises(ValueError, match=r"^per_dispatch\(\): metric must be one of \['device', 'effective', 'host'\], got 'x'$"):
        t.per_dispatch("x")
    with pytest.raises(ValueError, match=r"^per_round\(\): unknown metric 'x'$"):
        t.per_round("x")


def test_span_trees_of_given_invocations():
    def inv(i, dev_us):
        spans = [
            TraceSpan(1, 1, i, "h", 0, "chip.run", 0, 10_000, ""),
            TraceSpan(1, 1, i, "h", 1, "chip.run.runner_run", 100, 9_000, ""),
            TraceSpan(1, 1, i, "h", 2, "chip.run.runner_run.device_wall", 0, dev_us * 1000, "clk=dev"),
        ]
        return TraceInvocation(1, i, "h", spans)

    s = BenchmarkStats([5.0, 7.0], [10.0, 10.0], 2, 0, invocations=[inv(0, 5), inv(1, 7)])
    assert s.invocations[0].device_wall_us == 5.0
    assert s.format_tree(0).splitlines() == [
        "launch[0] (pid=1 inv=0 hid=h):",
        "chip.run                 10.0us",
        "`- runner_run             9.0us",
        "   `- device_wall [dev]   5.0us",
    ]
    mean = s.mean_invocation()
    assert mean is not None and mean.device_wall_us == 6.0 and mean.inv == -1
    assert "mean of 2 launches (warmup 0 excluded); each node: mean ±stdev:" in s.format_mean_tree()


def test_benchmark_return_style_and_duck_typing(shared_example):
    from pypto.runtime import benchmark

    d = shared_example("vector_add")
    c = CompiledProgram.from_dir(d)
    a, b = (np.load(d / "data" / "in" / f"{n}.npy") for n in "ab")
    stats = benchmark(c, [a, b], rounds=3, warmup=1)
    assert len(stats.device_wall_us) == 3 and stats.rounds == 3 and stats.device_us_min > 0
    with pytest.raises(ValueError, match="^rounds must be positive, got 0$"):
        benchmark(c, [a, b], rounds=0)


# --- §8 the debug/run.py writer's torch form (PyPTO's test_run_script_writer) --------------


class _FakeDataType:
    """Only ``str(dt)`` of a DataType is consulted, as PyPTO's test stands it in."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __str__(self) -> str:
        return self._name


def _info(name, direction, shape, dtype="fp32"):
    from pypto.ir.compiled_program import ParamInfo

    return ParamInfo(name=name, direction=direction, shape=shape, dtype=_FakeDataType(dtype))


def test_torch_run_script_strings(tmp_path):
    import ast

    from pypto.pypto_core.ir import ParamDirection as D
    from pypto.runtime.debug.run_script_writer import write_run_script

    infos = [_info("x", D.In, [64]), _info("y", D.Out, [64]), _info("z", D.InOut, [64]),
             _info("m", D.In, [2], "bool"), _info("i", D.In, [2], "int32"), _info("h", D.In, [2], "bfloat16"),
             _info("dyn", D.In, [-1, 32]), _info("k", D.In, None)]  # fmt: skip
    out = write_run_script(tmp_path, infos, platform="a5sim", tensor_lib="torch")
    assert out == tmp_path / "debug" / "run.py"
    text = out.read_text()
    ast.parse(text)
    assert "x = torch.randn((64,), dtype=torch.float32)" in text
    assert "y = torch.zeros((64,), dtype=torch.float32)" in text
    assert "z = torch.randn((64,), dtype=torch.float32)" in text
    assert "m = torch.randint(0, 2, (2,), dtype=torch.bool)" in text
    assert "i = torch.randint(0, 8, (2,), dtype=torch.int32)" in text
    assert "dtype=torch.bfloat16" in text
    assert "dyn = torch.randn((1, 32), dtype=torch.float32)  # NOTE: dynamic dim(s) filled with 1" in text
    assert "k = None  # TODO: scalar param — set a ctypes value" in text
    assert "def _user_compare(x, y, z, m, i, h, dyn, k):" in text
    assert "(default: a5sim)" in text and 'default_platform="a5sim"' in text
    assert "from pypto.runtime.debug.replay import _main" in text
    assert len(text.splitlines()) < 110
    empty = write_run_script(tmp_path, [], tensor_lib="torch").read_text()
    ast.parse(empty)
    assert "    pass\n" in empty and "def _user_compare():" in empty and "(default: a2a3sim)" in empty
    with pytest.raises(TypeError):
        write_run_script(tmp_path, [], "a5sim")  # platform is keyword-only, as in PyPTO


def test_invalidate_binary_cache_of_a_missing_directory(tmp_path, capsys):
    from pypto.runtime.debug import invalidate_binary_cache

    invalidate_binary_cache(tmp_path / "nowhere")
    assert capsys.readouterr().out.strip() == "[cpp->.so] no cached binaries to invalidate"


def test_swimlane_level_zero_wins(shared_example, monkeypatch):
    import importlib

    replay_module = importlib.import_module("pypto.runtime.debug.replay")
    seen = {}
    monkeypatch.setattr(replay_module, "replay", lambda wd, *t, config, **kw: seen.update(config=config))
    replay_module._main([str(shared_example("vector_add")), "--swimlane", "--swimlane-level", "0"])
    assert seen["config"].enable_chip_swimlane == 0


def test_tensor_spec_initial_values_as_pypto_makes_them():
    """A torch factory is called with the shape and dtype, any other callable with no
    arguments (PyPTO's `TensorSpec.create_tensor`)."""
    torch = pytest.importorskip("torch")
    from pypto.runtime import TensorSpec

    t = TensorSpec("a", [2, 3], torch.float32, init_value=torch.ones).create_tensor()
    assert t.shape == (2, 3) and t.dtype == torch.float32 and bool((t == 1).all())
    t = TensorSpec("b", [4], torch.int32, init_value=lambda: torch.arange(4)).create_tensor()
    assert t.dtype == torch.int32 and t.tolist() == [0, 1, 2, 3]
    a = TensorSpec("c", [3], np.int64, init_value=lambda: [7, 8, 9]).create_tensor()
    assert a.dtype == np.int64 and a.tolist() == [7, 8, 9]


def test_scalar_spec_ctypes_are_the_element_type_tables():
    """`ScalarSpec.ctype` takes PyPTO's six C type names, and every C type a scalar of an
    element type is passed as (the one table's ctypes column); anything else is refused."""
    import ctypes

    from pypto._dtypes import SCALAR_CTYPES
    from pypto.runtime import ScalarSpec

    for ctype, cls in [("int64", ctypes.c_int64), ("int32", ctypes.c_int32), ("uint64", ctypes.c_uint64),
                       ("uint32", ctypes.c_uint32), ("float", ctypes.c_float), ("double", ctypes.c_double)]:
        made = ScalarSpec("n", 3, ctype).create_scalar()
        assert type(made) is cls and made.value == 3, ctype
    for cls in SCALAR_CTYPES.values():
        assert type(ScalarSpec("n", 1, cls[len("c_"):]).create_scalar()) is getattr(ctypes, cls)
    with pytest.raises(ValueError, match=r"^ScalarSpec 'n': unknown ctype 'long'; use one of \['bool', 'double', "):
        ScalarSpec("n", 1, "long").create_scalar()


def test_ir_exports_the_pass_manager_enums():
    """PyPTO's programs pass `strategy=ir.OptimizationStrategy.Default` to `ir.compile`."""
    from pypto import ir
    from pypto.ir.pass_manager import OptimizationStrategy, PassDumpLevel

    assert ir.OptimizationStrategy is OptimizationStrategy and ir.PassDumpLevel is PassDumpLevel
    assert "OptimizationStrategy" in ir.__all__
