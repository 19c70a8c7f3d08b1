"""PyPTO's two generations of the runtime layer side by side: 2026-08 (``platform``
fields, positional ``RunConfig``, ``execute_compiled``) and 2026-09 (keyword-only
``arch`` + ``execution_mode``, option objects, ``compile_kwargs()``, ``cache_config``,
``CompiledProgram.from_dir(...)(..., config=...)``), plus this runtime's ``dfx_schema`` and
``timing``."""

from __future__ import annotations

import dataclasses
import inspect
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import pypto
import pypto.language as pl
from pypto import _cache_config, ir
from pypto.backend import BackendType
from pypto.ir import CompiledProgram
from pypto.runtime import CompileOptions, DfxOptions, ExecutionMode, RunConfig
from pypto.runtime.runner import RunOptions

A910, A950 = BackendType.Ascend910B, BackendType.Ascend950


@pytest.mark.parametrize(
    ("platform", "arch", "mode"),
    [
        ("a2a3sim", A910, ExecutionMode.SIM),
        ("a2a3", A910, ExecutionMode.ONBOARD),
        ("a5sim", A950, ExecutionMode.SIM),
        ("a5", A950, ExecutionMode.ONBOARD),
        ("cpu", A910, ExecutionMode.CPU),
    ],
)
def test_platform_and_axes_are_one_setting(platform, arch, mode):
    by_platform = RunConfig(platform=platform)
    assert (by_platform.arch, by_platform.execution_mode) == (arch, mode)
    by_axes = RunConfig(arch=arch, execution_mode=mode)
    assert (by_axes.platform, by_axes.backend_type) == (platform, arch)
    assert by_axes == by_platform


def test_platform_wins_over_the_axes_and_replace_switches_both():
    c = RunConfig(platform="a5sim", arch=A910, execution_mode=ExecutionMode.ONBOARD)
    assert c.platform == "a5sim"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = dataclasses.replace(c, platform="a2a3")
    assert (d.arch, d.execution_mode, d.platform) == (A910, ExecutionMode.ONBOARD, "a2a3")


def test_both_generations_spellings():
    # 2026-08: positional, in its field order (platform, device_id, rtol, ...).
    old = RunConfig("a5sim", 2, 1e-3)
    assert (old.platform, old.device_id, old.rtol) == ("a5sim", 2, 1e-3)
    with pytest.raises(TypeError, match="multiple values for argument 'platform'"):
        RunConfig("a5sim", platform="a2a3sim")
    # 2026-08: assigning the platform sets both axes (2026-09 has no setter).
    old.platform = "a2a3"
    assert (old.arch, old.execution_mode) == (A910, ExecutionMode.ONBOARD)
    with pytest.raises(ValueError, match="Invalid platform 'gpu'"):
        old.platform = "gpu"
    # 2026-09: the derived names are not fields.
    keys = dataclasses.asdict(RunConfig())
    assert "platform" not in keys and "backend_type" not in keys
    assert {"arch", "execution_mode", "cache_config", "dfx_schema", "timing"} <= set(keys)
    sig = inspect.signature(RunConfig)
    assert sig.parameters["platform"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["arch"].kind is inspect.Parameter.KEYWORD_ONLY


def test_axis_types_and_backend_type_keyword():
    with pytest.raises(TypeError, match="RunConfig.arch must be a BackendType"):
        RunConfig(arch="a2a3")
    with pytest.raises(TypeError, match="RunConfig.execution_mode must be an ExecutionMode"):
        RunConfig(execution_mode="sim")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RunConfig(platform="a5sim", backend_type=A950).arch is A950
    with pytest.deprecated_call(match="backend_type=...\\) is deprecated"):
        c = RunConfig(platform="a2a3sim", backend_type=A950)
    assert c.platform == "a2a3sim"
    with pytest.raises(AttributeError):
        c.backend_type = A950


def test_option_objects_and_compile_kwargs():
    c = RunConfig(
        platform="a5sim",
        device_id=1,
        enable_chip_swimlane=True,
        enable_pmu=2,
        ring_heap=(0, 1 << 20, 0, 0),
        compile_profiling=True,
        save_kernels_dir="out",
        aicpu_thread_num=3,
    )
    assert c.dfx_options() == DfxOptions(enable_chip_swimlane=4, enable_pmu=2)
    assert c.dfx_options().any() and not DfxOptions().any()
    assert DfxOptions(enable_chip_swimlane=True).enable_chip_swimlane == 4
    assert c.run_options() == RunOptions(
        platform="a5sim", device_id=1, aicpu_thread_num=3, ring_heap=[0, 1 << 20, 0, 0],
        dfx=c.dfx_options(),
    )  # fmt: skip
    kwargs = c.compile_kwargs()
    assert list(kwargs) == [
        "platform", "strategy", "dump_passes", "dump_ptoas_passes", "profiling",
        "diagnostic_phase", "disabled_diagnostics", "analyze_auto_scopes_for_deps", "output_dir",
    ]  # fmt: skip
    assert (kwargs["platform"], kwargs["profiling"], kwargs["output_dir"]) == ("a5sim", True, "out")
    assert "output_dir" not in CompileOptions().as_compile_kwargs()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.dfx_options().enable_pmu = 0  # type: ignore[misc]


N = 16


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add(
        self,
        a: pl.Tensor[[N, 64], pl.FP32],
        b: pl.Tensor[[N, 64], pl.FP32],
        c: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
    ) -> pl.Tensor[[N, 64], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [N, 64]), pl.load(b, [0, 0], [N, 64])), [0, 0], c)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        a: pl.Tensor[[N, 64], pl.FP32],
        b: pl.Tensor[[N, 64], pl.FP32],
        c: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
    ) -> pl.Tensor[[N, 64], pl.FP32]:
        c = self.kernel_add(a, b, c)
        return c


def _inputs():
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((N, 64)).astype(np.float32) for _ in range(2))
    return a, b, np.zeros((N, 64), np.float32)


def test_the_2026_09_main_path_compiles_and_runs(tmp_path: Path):
    """``ir.compile(prog, **cfg.compile_kwargs())``, then ``from_dir(dir, platform=...)``
    called with ``config=``: no deprecation on this path; the config's platform and
    ``dfx_schema`` decide (``deps.json`` of the 2026-09 generation starts with
    ``runtime``)."""
    cfg = RunConfig(platform="cpu", save_kernels_dir=str(tmp_path / "build"))
    compiled = ir.compile(AddProgram, **cfg.compile_kwargs())
    assert compiled.platform == "cpu"
    loaded = CompiledProgram.from_dir(tmp_path / "build", platform="a2a3sim")
    a, b, c = _inputs()
    run_cfg = RunConfig(platform="cpu", enable_dep_gen=True, dfx_schema="2026-09")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded(a, b, c, config=run_cfg)
    np.testing.assert_allclose(c, a + b)
    deps = (tmp_path / "build" / "dfx_outputs" / "deps.json").read_text()
    assert deps.startswith('{"runtime":"tensormap_and_ringbuffer","tasks":')
    loaded(a, b, c, config=dataclasses.replace(run_cfg, dfx_schema="2026-08"))
    assert json.loads((tmp_path / "build" / "dfx_outputs" / "deps.json").read_text()).keys() == {
        "tasks", "tensors", "edges",
    }  # fmt: skip


def test_execute_compiled_warns_and_still_runs(tmp_path: Path):
    from pypto.runtime import execute_compiled

    ir.compile(AddProgram, tmp_path, platform="cpu")
    a, b, c = _inputs()
    with pytest.deprecated_call(match=r"CompiledProgram.from_dir\(work_dir\)"):
        execute_compiled(tmp_path, [a, b, c], platform="cpu", device_id=0)
    np.testing.assert_allclose(c, a + b)


def test_dfx_schema_and_timing_are_checked_and_carried():
    c = RunConfig(dfx_schema="2026-09", timing="predicted")
    opts = c.native_options()
    assert (opts.dfx_schema, opts.timing) == ("2026-09", "predicted")
    assert RunConfig().native_options().timing in ("host", "predicted")  # PTO_TIMING
    with pytest.raises(ValueError, match="dfx_schema must be '2026-08' or '2026-09', got '2027-01'"):
        RunConfig(dfx_schema="2027-01")
    with pytest.raises(ValueError, match="timing: unknown timing \"cycle\""):
        RunConfig(timing="cycle")


# --- the persistent @pl.jit cache ---------------------------------------------------------


def test_cache_config_types_and_precedence(monkeypatch, tmp_path):
    with pytest.raises(TypeError, match="CacheConfig.enabled must be a bool"):
        pypto.CacheConfig(enabled=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="CacheConfig.root must be a pathlib.Path"):
        pypto.CacheConfig(root="/x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="extra_source_paths must be a tuple of pathlib.Path"):
        pypto.CacheConfig(extra_source_paths=[Path("a")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RunConfig.cache_config must be a CacheConfig"):
        RunConfig(cache_config={"enabled": True})
    for name in ("PYPTO_CACHE", "PYPTO_CACHE_DIR", "PYPTO_CACHE_READONLY"):
        monkeypatch.delenv(name, raising=False)
    assert _cache_config.capture_cache_config().enabled is False
    monkeypatch.setenv("PYPTO_CACHE", "yes")
    with pytest.raises(ValueError, match="PYPTO_CACHE must be '0' or '1', got 'yes'"):
        _cache_config.capture_cache_config()
    monkeypatch.setenv("PYPTO_CACHE", "1")
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "env"))
    got = _cache_config.capture_cache_config()
    assert (got.enabled, got.root, got.readonly) == (True, (tmp_path / "env").resolve(), False)
    _cache_config.configure_cache(pypto.CacheConfig(enabled=False))
    try:
        assert _cache_config.capture_cache_config().enabled is False  # process default wins
        per_call = pypto.CacheConfig(enabled=True, root=tmp_path / "call")
        assert _cache_config.capture_cache_config(per_call).root == (tmp_path / "call").resolve()
    finally:
        _cache_config.configure_cache(None)


def _scaled_copy_source():
    """A fresh ``@pl.jit`` function each call (so only the persistent cache can hit)."""

    @pl.jit
    def scaled_copy(a: pl.Tensor, out: pl.Out[pl.Tensor]) -> pl.Tensor:
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.mul(pl.load(a, [0, 0], [16, 32]), 3.0), [0, 0], out)
        return out

    return scaled_copy


def test_jit_cache_stores_then_serves_across_functions(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "private"))
    root = tmp_path / "cache"
    cfg = RunConfig(platform="cpu", cache_config=pypto.CacheConfig(enabled=True, root=root))
    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    before = pypto.cache_stats()
    out = np.zeros_like(a)
    _scaled_copy_source()(a, out, config=cfg)
    np.testing.assert_allclose(out, a * 3)
    mid = pypto.cache_stats()
    assert (mid.misses - before.misses, mid.generation_builds - before.generation_builds) == (1, 1)
    manifests = list(root.glob("artifacts/*/*/*/*/artifact_manifest.json"))
    assert len(manifests) == 1 and json.loads(manifests[0].read_text())["state"] == "ready"
    out = np.zeros_like(a)
    _scaled_copy_source()(a, out, config=cfg)  # a new function object: served from disk
    np.testing.assert_allclose(out, a * 3)
    after = pypto.cache_stats()
    assert (after.ready_hits - mid.ready_hits, after.misses - mid.misses) == (1, 0)
    # Another key (extra_fingerprint) in a read-only cache: built outside the root.
    ro = pypto.CacheConfig(enabled=True, root=root, readonly=True, extra_fingerprint="v2")
    _scaled_copy_source()(a, out, config=dataclasses.replace(cfg, cache_config=ro))
    last = pypto.cache_stats()
    assert last.bypasses == after.bypasses + 1 and "read-only cache" in last.last_bypass_reason
    assert len(list(root.glob("artifacts/*/*/*/*/artifact_manifest.json"))) == 1
    assert any((tmp_path / "private").iterdir())
