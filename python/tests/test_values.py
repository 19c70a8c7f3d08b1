"""Values that cross the boundary: DistributedConfig, bfloat16 arrays, comparisons, log
levels, and the native module's surface."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import pypto
from pypto import _native
from pypto._tensors import numpy_dtype
from pypto.ir import CompiledProgram, DistributedConfig
from pypto.runtime import configure_log, log_level


def test_package_surface():
    assert pypto.__version__ == "0.1.0"  # PyPTO's; this runtime's is _native.__version__
    assert _native.__version__
    assert {"RunConfig", "RunResult", "BenchmarkStats", "execute_compiled", "benchmark",
            "configure_log", "log_level", "TraceSpan", "TraceInvocation"} <= set(pypto.runtime.__all__)  # fmt: skip
    assert "CompiledProgram" in pypto.ir.__all__


def test_distributed_config_defaults():
    c = DistributedConfig()
    assert (c.device_ids, c.num_sub_workers, c.runtime, c.aicpu_thread_num) == (
        [0], 0, "tensormap_and_ringbuffer", 0
    )
    assert DistributedConfig(device_ids=(3, 1), aicpu_thread_num=2).device_ids == [3, 1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"device_ids": []}, "DistributedConfig.device_ids must not be empty"),
        ({"device_ids": [0, -1]}, "DistributedConfig.device_ids must be non-negative device indices, got [0, -1]"),
        ({"device_ids": [1, 1]}, "DistributedConfig.device_ids must be distinct, got [1, 1]"),
        ({"num_sub_workers": -1}, "DistributedConfig.num_sub_workers must be non-negative, got -1"),
        (
            {"num_sub_workers": 1000000},
            "DistributedConfig.num_sub_workers must be at most 1024 (MAX_SUB_WORKERS: the host runs "
            "one thread per sub-worker), got 1000000",
        ),
        (
            {"aicpu_thread_num": 1},
            "DistributedConfig.aicpu_thread_num must be 0 (architecture default) or at least 2, got 1",
        ),
    ],
)
def test_distributed_config_values(kwargs, message):
    with pytest.raises(ValueError) as e:
        DistributedConfig(**kwargs)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("kwargs", "head"),
    [
        ({"device_ids": [True]}, "DistributedConfig.device_ids must be a list of ints"),
        ({"device_ids": "0"}, "DistributedConfig.device_ids must be a list of ints"),
        ({"num_sub_workers": 1.5}, "DistributedConfig.num_sub_workers must be an int, got float"),
        ({"runtime": 3}, "DistributedConfig.runtime must be a str, got int"),
    ],
)
def test_distributed_config_types(kwargs, head):
    with pytest.raises(TypeError, match=f"^{head}".replace("[", r"\[").replace(".", r"\.")):
        DistributedConfig(**kwargs)


def test_bfloat16_as_uint16_bits(example):
    d = example("vector_add")
    meta = json.loads((d / "compiled_meta.json").read_text())
    for p in meta["params"]:
        p["dtype"] = "bfloat16"
    (d / "compiled_meta.json").write_text(json.dumps(meta))
    compiled = CompiledProgram.from_dir(d)
    bits = np.full(16384, 0x3F80, dtype=np.uint16)  # 1.0 in bfloat16
    out = compiled(bits, bits)
    assert out.dtype == numpy_dtype("bfloat16") and out.shape == (16384,)
    with pytest.raises(TypeError) as e:
        compiled(np.ones(16384, np.float32), bits)
    assert str(e.value) == (
        "Parameter 'a' expects dtype bfloat16; got a float32 array. Convert it with .astype() "
        "first (bfloat16: an ml_dtypes.bfloat16 array, or its bits as uint16)."
    )


def test_numpy_dtypes():
    assert numpy_dtype("fp32") == np.float32 and numpy_dtype("index") == np.int64
    assert numpy_dtype("bool") == np.bool_
    with pytest.raises(ValueError, match="^DataType 'fp4' has no host element type here"):
        numpy_dtype("fp4")


def test_compare():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    assert _native.compare(a, a.copy(), 1e-5, 1e-5) is None
    b = a.copy()
    b[1, 0] = 3.5
    details = _native.compare(a, b, 1e-5, 1e-5)
    assert details.startswith("Mismatched elements: 1/4\nFirst 1 mismatches:\n  [1, 0]: actual=3.0, expected=3.5")
    assert _native.compare(a, b, 0.0, 0.5) is None
    assert _native.compare(a, a[:1], 1e-5, 1e-5).startswith("shape mismatch: actual [2, 2], golden [1, 2]")
    assert _native.compare(a, a.astype(np.float16), 1e-5, 1e-5).startswith("dtype mismatch")
    with pytest.raises(TypeError, match="^actual must be a numpy.ndarray, got list"):
        _native.compare([1.0], a, 1e-5, 1e-5)
    with pytest.raises(TypeError, match=r"^expected has dtype complex64 \(<c8\)"):
        _native.compare(a, a.astype(np.complex64), 1e-5, 1e-5)


def test_compare_follows_numpy_isclose_for_inf_and_nan():
    # An infinite golden matches only the same infinity (never a finite value, however
    # large the tolerance); NaN matches nothing, not even NaN.
    inf = np.float32(np.inf)
    golden = np.array([inf, -inf, inf, np.nan], dtype=np.float32)
    assert _native.compare(golden.copy()[:3], golden[:3], 1.0, 1.0) is None
    for actual in (
        np.array([1e30, -inf, inf, np.nan], dtype=np.float32),
        np.array([inf, inf, inf, np.nan], dtype=np.float32),
        np.array([inf, -inf, inf, np.nan], dtype=np.float32),
    ):
        details = _native.compare(actual, golden, 1.0, 1.0)
        assert details is not None, actual
    assert np.isclose(np.float32(1e30), inf, rtol=1.0, atol=1.0) == False  # noqa: E712
    with pytest.raises(ValueError, match="rtol must be a finite number >= 0"):
        _native.compare(golden, golden, -1.0, 0.0)


def test_log_levels():
    previous = log_level()
    try:
        for level, value in (("debug", 10), ("info", 20), ("timing", 25), ("warn", 30), ("error", 40), ("null", 60)):
            configure_log(level, sync_pypto=True)
            assert log_level() == value
            assert _native.log_level() == level  # the runtime's own band
        configure_log("loud")  # PyPTO: an unknown name means timing
        assert log_level() == 25
    finally:
        configure_log(previous)


def test_compiled_meta_reader(shared_example):
    meta = _native.CompiledMeta.load(shared_example("paged_attention"))
    assert (meta.platform, meta.backend_type, meta.num_return_types) == ("a2a3sim", "Ascend910B", 1)
    assert [p.name for p in meta.params][-1] == "scale" and meta.params[-1].shape is None
    assert "CompiledMeta(params=7, platform='a2a3sim'" in repr(meta)
    assert repr(meta.params[0]) == "ParamInfo(name='query', direction='In', shape=[4, 16, 128], dtype='fp32')"


def test_importing_the_package_imports_no_torch():
    code = (
        "import sys, pypto, pypto.runtime.debug, pypto.ir, pypto.testing.pytest_plugin\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
