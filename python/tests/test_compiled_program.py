"""CompiledProgram.from_dir and calls: real builds of the bundled examples, run on the
simulated chip; argument and sidecar errors with the reference's texts (§1.6, §8)."""

from __future__ import annotations

import ctypes
import json

import numpy as np
import pytest

from conftest import write_meta
from pypto.backend import BackendType
from pypto.ir import CompiledProgram
from pypto.runtime import RunConfig, execute_compiled


class FakeTensor:
    """A torch-like tensor: ``.numpy()`` returns the array it wraps (sharing memory)."""

    def __init__(self, array: np.ndarray, device: str = "cpu", contiguous: bool = True):
        self._array = array
        self.device = device
        self._contiguous = contiguous

    def is_contiguous(self) -> bool:
        return self._contiguous

    def detach(self) -> FakeTensor:
        return self

    def numpy(self) -> np.ndarray:
        return self._array


def inputs(dir, *names):
    return [np.load(dir / "data" / "in" / f"{n}.npy") for n in names]


def golden(dir, name):
    return np.load(dir / "data" / "out" / f"{name}.npy")


def test_from_dir_reads_the_sidecar(shared_example):
    compiled = CompiledProgram.from_dir(shared_example("vector_add"))
    assert compiled.platform == "a2a3sim"
    assert compiled.backend_type is BackendType.Ascend910B
    assert compiled.program is None
    assert compiled.param_names == ["a", "b", "c"]
    assert [p.direction.name for p in compiled.param_infos] == ["In", "In", "Out"]
    assert compiled.param_infos[0].shape == [16384]
    assert str(compiled.param_infos[0].dtype) == "fp32"
    assert compiled.output_indices == [2]
    assert compiled.num_return_types == 1
    assert "vector_add" in repr(compiled)


def test_from_dir_overrides(shared_example):
    compiled = CompiledProgram.from_dir(
        shared_example("vector_add"), platform="cpu", backend_type=BackendType.Ascend950
    )
    assert (compiled.platform, compiled.backend_type) == ("cpu", BackendType.Ascend950)
    # Lazy and unvalidated, as PyPTO's: a bad platform fails when the program first runs.
    late = CompiledProgram.from_dir(shared_example("vector_add"), platform="tpu")
    a = np.zeros(16384, dtype=np.float32)
    with pytest.raises(ValueError, match="^Invalid platform 'tpu'"):
        late(a, a, a)


def test_in_place_and_return_style_calls(shared_example):
    d = shared_example("vector_add")
    compiled = CompiledProgram.from_dir(d)
    a, b = inputs(d, "a", "b")
    c = np.zeros_like(a)
    assert compiled(a, b, c) is None
    np.testing.assert_array_equal(c, golden(d, "c"))
    out = compiled(a, b)
    np.testing.assert_array_equal(out, golden(d, "c"))
    assert compiled.last_report is not None and compiled.last_report.n_tasks == 8


def test_inout_and_scalars(shared_example):
    d = shared_example("bgemm")
    compiled = CompiledProgram.from_dir(d)
    a, b, c = inputs(d, "a", "b", "c")
    compiled(a, b, c)
    np.testing.assert_allclose(c, golden(d, "c"), rtol=1e-5, atol=1e-5)

    d = shared_example("paged_attention")
    compiled = CompiledProgram.from_dir(d)
    args = inputs(d, "query", "key_cache", "value_cache", "block_table", "context_lens")
    scale = float(np.load(d / "data" / "in" / "scale.npy"))
    for value in (ctypes.c_float(scale), np.float32(scale), scale):
        out = compiled(*args, value)
        np.testing.assert_allclose(out, golden(d, "out"), rtol=1e-3, atol=1e-4)


def test_torch_like_tensors_are_converted_with_numpy(shared_example):
    d = shared_example("vector_add")
    compiled = CompiledProgram.from_dir(d)
    a, b = inputs(d, "a", "b")
    c = np.zeros_like(a)
    compiled(FakeTensor(a), FakeTensor(b), FakeTensor(c))
    np.testing.assert_array_equal(c, golden(d, "c"))
    with pytest.raises(ValueError) as e:
        compiled(FakeTensor(a, device="npu:0"), b, c)
    assert str(e.value).startswith("Tensor at position 0 is on npu:0, expected CPU. Call .cpu()")
    with pytest.raises(ValueError) as e:
        compiled(a, FakeTensor(b, contiguous=False), c)
    assert str(e.value).startswith("Tensor at position 1 is not contiguous. Call .contiguous()")


def test_argument_count_and_type_errors(shared_example):
    compiled = CompiledProgram.from_dir(shared_example("vector_add"))
    a = np.zeros(16384, dtype=np.float32)
    with pytest.raises(TypeError) as e:
        compiled(a)
    assert str(e.value) == (
        "CompiledProgram expects 3 (in-place) or 2 (return) arguments, got 1. "
        "Parameters: ['a', 'b', 'c']"
    )
    with pytest.raises(TypeError) as e:
        compiled(a, 5, a)
    assert str(e.value) == (
        "Parameter 'b' is a tensor; got int. Pass a torch.Tensor (host) or DeviceTensor (worker-resident)."
    )
    # This runtime checks host tensors against the sidecar when the run starts (PyPTO
    # passes them unchecked): a wrong size would read past the buffer.
    with pytest.raises(TypeError, match="^Parameter 'b' expects dtype fp32; got a float64 array"):
        compiled(a, np.zeros(16384), a)
    with pytest.raises(ValueError, match=r"^Parameter 'b' expects shape \[16384\]; got \[8\]"):
        compiled(a, np.zeros(8, dtype=np.float32), a)
    with pytest.raises(ValueError, match="^Tensor at position 1 is not contiguous"):
        compiled(a, np.zeros(32768, dtype=np.float32)[::2], a)


def test_scalar_argument_errors(shared_example):
    d = shared_example("paged_attention")
    compiled = CompiledProgram.from_dir(d)
    args = inputs(d, "query", "key_cache", "value_cache", "block_table", "context_lens")
    with pytest.raises(TypeError) as e:
        compiled(*args, np.zeros(1, dtype=np.float32))
    assert str(e.value) == "Parameter 'scale' is a scalar (fp32); got numpy.ndarray"
    with pytest.raises(TypeError, match="^Parameter 'scale'"):
        compiled(*args, "0.5")


def test_from_dir_missing_sidecar(example):
    d = example("vector_add")
    (d / "compiled_meta.json").unlink()
    with pytest.raises(FileNotFoundError) as e:
        CompiledProgram.from_dir(d)
    assert str(e.value).startswith(
        f"{(d / 'compiled_meta.json').resolve()} not found — cannot reconstruct a compiled program "
        "from this directory."
    )
    assert "Recompile via ir.compile() to refresh." in str(e.value)


@pytest.mark.parametrize(
    ("edit", "detail"),
    [
        ({"schema": 7}, "Incompatible compiled_meta.json schema 7 (expected 1) in "),
        ({"params": "x"}, "'params' must be a list, got str"),
        ({"num_return_types": -1}, "'num_return_types' must be a non-negative integer, got -1"),
        ({"backend_type": "mro"}, "'backend_type' must be one of ['Ascend910B', 'Ascend950'], got 'mro'"),
        ({"platform": 3}, "'platform' must be a string or absent, got int"),
    ],
)
def test_from_dir_malformed_sidecar(example, edit, detail):
    d = example("vector_add")
    meta = json.loads((d / "compiled_meta.json").read_text())
    meta.update(edit)
    (d / "compiled_meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError) as e:
        CompiledProgram.from_dir(d)
    assert detail in str(e.value)
    assert "ir.compile()" in str(e.value)


def test_unknown_dtype_in_sidecar(tmp_path):
    write_meta(tmp_path, [{"name": "a", "direction": "In", "shape": [4], "dtype": "fp99"}])
    (tmp_path / "kernel_config.py").write_text("KERNELS = []\nORCHESTRATION = {}\n")
    with pytest.raises(ValueError, match="Unknown DataType string 'fp99'; known: "):
        CompiledProgram.from_dir(tmp_path)


def test_execute_compiled_runs_in_place(shared_example):
    d = shared_example("vector_add")
    a, b = inputs(d, "a", "b")
    c = np.zeros_like(a)
    with pytest.deprecated_call(match="execute_compiled is deprecated"):
        assert execute_compiled(d, [a, b, c], platform="cpu", device_id=0) is None
    np.testing.assert_array_equal(c, golden(d, "c"))


def test_dfx_outputs_from_a_call(example):
    d = example("vector_add")
    compiled = CompiledProgram.from_dir(d)
    a, b = inputs(d, "a", "b")
    config = RunConfig(enable_chip_swimlane=True, enable_dep_gen=True, enable_scope_stats=True)
    compiled(a, b, config=config)
    files = {p.name for p in (d / "dfx_outputs").iterdir()}
    assert {"chip_swimlane_records.json", "deps.json", "scope_stats"} <= files
    assert "name_map_vector_add.json" in files
    assert compiled.last_report is not None
    assert any(f.endswith("deps.json") for f in compiled.last_report.dfx_files)


def test_kernel_config_not_loadable(example):
    d = example("vector_add")
    (d / "kernel_config.py").write_text("KERNELS = [\n")
    compiled = CompiledProgram.from_dir(d)  # lazy: kernel_config.py is read on first use
    with pytest.raises(ImportError) as e:
        compiled.load()
    assert str(e.value).startswith(f"Cannot load kernel_config.py from {d / 'kernel_config.py'}: ")


def test_multi_orch_parent_needs_a_sub_build(example, tmp_path):
    parent = tmp_path / "parent"
    (parent / "next_levels").mkdir(parents=True)
    example("vector_add").rename(parent / "next_levels" / "first")
    example("bgemm").rename(parent / "next_levels" / "second")
    with pytest.raises(FileNotFoundError, match="reload one of those"):
        CompiledProgram.from_dir(parent)
    assert CompiledProgram.from_dir(parent / "next_levels" / "first").param_names == ["a", "b", "c"]
