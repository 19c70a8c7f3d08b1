"""Tile operations and forms PyPTO's programs use beyond the first subset: ``pl.concat``,
``pl.create_tile`` (a scratch tile for the row reductions), ``pl.reshape`` of a tile, and
a local ``pl.Tile[[r, c], dtype]`` annotation naming no memory space (the accumulator of
``pl.matmul_acc``). Each program is compiled, run on the simulator and checked against
NumPy; the op tables of the IR, ptoas and the front end are checked to agree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import _native
from pypto.language import _ops
from pypto.language.errors import InvalidOperationError


@pl.jit
def concat_cols(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        joined: pl.Tile[[16, 48], pl.FP32] = pl.concat(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 16]))
        pl.store(joined, [0, 0], c)
    return c


@pl.jit
def row_scale(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = x / (sum of the row, scaled through a [1, r] reshape of the [r, 1] column)."""
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 32])
        scratch = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        s: pl.Tile[[16, 1], pl.FP32] = pl.row_sum(t, scratch)
        s_row = pl.reshape(s, [1, 16])
        s_row = pl.mul(s_row, 0.5)
        s = pl.reshape(s_row, [16, 1])
        pl.store(pl.row_expand_div(t, s), [0, 0], out)
    return out


@pl.jit
def matmul_two_chunks(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        l0 = pl.move(pl.load(a, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        r0 = pl.move(pl.load(b, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc: pl.Tile[[16, 16], pl.FP32] = pl.matmul(l0, r0)
        l1 = pl.move(pl.load(a, [0, 16], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        r1 = pl.move(pl.load(b, [16, 0], [16, 16], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul_acc(acc, l1, r1)
        pl.store(acc, [0, 0], c)
    return c


@pytest.fixture(autouse=True)
def _build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))


def test_concat_joins_columns() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((16, 16)).astype(np.float32)
    c = np.zeros((16, 48), np.float32)
    concat_cols(a, b, c)
    np.testing.assert_array_equal(c, np.concatenate([a, b], axis=1))


def test_create_tile_scratch_and_tile_reshape() -> None:
    x = np.random.default_rng(2).uniform(1.0, 2.0, (16, 32)).astype(np.float32)
    out = np.zeros_like(x)
    row_scale(x, out)
    np.testing.assert_allclose(out, x / (x.sum(axis=1, keepdims=True) * 0.5), rtol=1e-5, atol=1e-6)


def test_unannotated_memory_tile_accepts_the_accumulator() -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 32)).astype(np.float32)
    b = rng.standard_normal((32, 16)).astype(np.float32)
    c = np.zeros((16, 16), np.float32)
    matmul_two_chunks(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_the_new_ops_interpret_as_they_run(tmp_path: Path) -> None:
    """The IR interpreter agrees with the chip at every pass snapshot."""
    from pypto import ir

    a = np.ones((16, 32), np.float32)
    b = np.full((16, 16), 2.0, np.float32)
    c = np.zeros((16, 48), np.float32)
    compiled = ir.compile(concat_cols.front_end(a, b, c), output_dir=str(tmp_path / "cc"))
    compiled.validate_ir({"a": a, "b": b, "c": c}, {"c": np.concatenate([a, b], axis=1)})


def test_bad_uses_name_the_construct_and_the_fix() -> None:
    src = (
        "import pypto.language as pl\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
        "        t = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Left)\n"
        "        return pl.store(pl.concat(t, t), [0, 0], c)\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def o(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
        "        return self.k(a, c)\n"
    )
    with pytest.raises(InvalidOperationError) as e:
        pl.parse(src, filename="bad.py")
    assert e.value.span["line"] == 6
    assert "create_tile(target_memory=pl.MemorySpace.Left)" in str(e.value)
    assert "target_memory=pl.MemorySpace.Vec" in e.value.hint
    bad_concat = src.replace(
        "t = pl.create_tile([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Left)",
        "t = pl.load(a, [0, 0], [16, 16])\n        u = pl.load(a, [0, 0], [8, 16])",
    ).replace("pl.concat(t, t)", "pl.concat(t, u)")
    with pytest.raises(InvalidOperationError, match="same rows"):
        pl.parse(bad_concat, filename="bad.py")


def test_every_front_end_tile_op_is_in_the_ir_table() -> None:
    """Every tile op the front end spells lowers to an IR op of ``pto_ir::ops::OPS`` (whose
    PTO instruction ptoas lowers: ``every_tile_op_lowers_in_ptoas`` in the crate)."""
    ir_ops = {n for n, level in _native.op_names() if level == "tile"}
    spelled = {s for r in _native.ops() if r["level"] == "tile" for s in r["dsl"]}
    for op in (*pl._TILE_OPS, *pl._TILE_ONLY):
        name = f"tile.{_ops.ir_name(op)}"
        assert op in spelled or name in ir_ops, f"pl.{op}: {name} missing from the IR's OPS"


@pl.program
class ScalarFirst:
    """A kernel that declares its scalar before its tensors (the payload still carries the
    tensors first)."""

    @pl.function(type=pl.FunctionType.InCore)
    def kernel_add_scalar(
        self,
        k: pl.Scalar[pl.FP32],
        a: pl.Tensor[[16, 32], pl.FP32],
        out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [16, 32]), k), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]
    ) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.kernel_add_scalar(2.5, a, out)
        return out


def test_a_scalar_declared_before_the_tensors(tmp_path: Path) -> None:
    from pypto import ir

    a = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    out = np.zeros_like(a)
    ir.compile(ScalarFirst, output_dir=str(tmp_path / "sf"), dump_passes=False)(a, out)
    np.testing.assert_array_equal(out, a + 2.5)


@pl.jit
def insert_rows(x: pl.Tensor, src: pl.Tensor, y: pl.Out[pl.Tensor]):
    """y = x with two-row windows of src written into the right half, every fourth row."""
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.load(x, [0, 0], [16, 32])
        part = pl.load(src, [0, 0], [8, 16])
        for i in pl.range(4):
            rows = pl.slice(part, [2, 16], [2 * i, 0])
            acc = pl.tile.assemble(acc, rows, [4 * i, 16])
        pl.store(acc, [0, 0], y)
    return y


def _insert_rows_reference(x: np.ndarray, src: np.ndarray) -> np.ndarray:
    y = x.copy()
    for i in range(4):
        y[4 * i : 4 * i + 2, 16:32] = src[2 * i : 2 * i + 2, :]
    return y


def test_tile_assemble_and_tile_slice_in_a_loop(tmp_path: Path) -> None:
    from pypto import ir

    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    src = rng.standard_normal((8, 16)).astype(np.float32)
    y = np.zeros_like(x)
    insert_rows(x, src, y)
    np.testing.assert_array_equal(y, _insert_rows_reference(x, src))
    compiled = ir.compile(insert_rows.front_end(x, src, y), output_dir=str(tmp_path / "ins"))
    pto = next((tmp_path / "ins" / "ptoas").glob("*.pto")).read_text()
    assert "pto.tinsert" in pto and "pto.textract" in pto
    compiled.validate_ir({"x": x, "src": src, "y": np.zeros_like(x)}, {"y": _insert_rows_reference(x, src)})


@pl.jit
def split_k_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """c = a @ b with K cut in two: each scope multiplies a window of a by one of b and adds
    it atomically into c, zeroed first."""
    with pl.at(level=pl.Level.CORE_GROUP):
        c = pl.assemble(c, pl.full([16, 16], dtype=pl.FP32, value=0.0), [0, 0])
    for k in pl.parallel(0, 2):
        with pl.at(level=pl.Level.CORE_GROUP):
            part = pl.matmul(a[:, k * 32 : k * 32 + 32], b[k * 32 : k * 32 + 32, :], out_dtype=pl.FP32)
            c = pl.assemble(c, part, [0, 0], atomic=pl.AtomicType.Add)
    return c


def test_split_k_windows_matmul_on_tensors_and_atomic_assemble(tmp_path: Path) -> None:
    from pypto import ir

    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 64)).astype(np.float32)
    b = rng.standard_normal((64, 16)).astype(np.float32)
    c = np.full((16, 16), 7.0, np.float32)
    split_k_matmul(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    compiled = ir.compile(split_k_matmul.front_end(a, b, c), output_dir=str(tmp_path / "sk"))
    pto = "".join(p.read_text() for p in (tmp_path / "sk" / "ptoas").glob("*.pto"))
    assert "atomic_add" in pto
    orch = next((tmp_path / "sk" / "orchestration").glob("*.cpp")).read_text()
    assert "add_inout" in orch  # the atomic add reads c
    compiled.validate_ir({"a": a, "b": b, "c": np.full((16, 16), 7.0, np.float32)}, {"c": a @ b}, rtol=1e-4, atol=1e-4)


def test_assemble_and_matmul_misuse_name_the_fix() -> None:
    head = (
        "import pypto.language as pl\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        t = pl.load(a, [0, 0], [16, 16])\n"
    )
    tail = (
        "        return pl.store(t, [0, 0], c)\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def o(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        return self.k(a, c)\n"
    )
    with pytest.raises(InvalidOperationError) as e:
        pl.parse(head + "        t = pl.assemble(t, t, [0, 0], atomic=pl.AtomicType.Add)\n" + tail, filename="bad.py")
    assert e.value.span["line"] == 7 and "into a tile" in str(e.value) and "Omit atomic=" in e.value.hint
    with pytest.raises(InvalidOperationError) as e:
        pl.parse(head + "        t = pl.tile.assemble(t, pl.load(a, [0, 0], [8, 8]), [12, 0])\n" + tail, filename="bad.py")
    assert "outside" in str(e.value) and e.value.span["line"] == 7
    with pytest.raises(InvalidOperationError) as e:
        pl.parse(head + "        m = pl.matmul(a, a, out_dtype=pl.BF16)\n" + tail, filename="bad.py")
    assert "out_dtype" in str(e.value) and "pl.FP32" in e.value.hint


@pl.jit
def keep_leading_columns(x: pl.Tensor, cfg: pl.Tensor, out: pl.Out[pl.Tensor]):
    """out = x with the columns from min(cfg[0], 32) on zeroed: a load of a runtime valid
    shape, read in the kernel, then pl.tile.fillpad."""
    with pl.at(level=pl.Level.CORE_GROUP):
        n = pl.cast(pl.read(cfg, [0]), pl.INDEX)
        vlen = pl.min(n, 32)
        t = pl.load(x, [0, 0], [16, 32], valid_shape=[16, vlen])
        t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero)
        pl.store(t, [0, 0], out)
    return out


def test_valid_shape_load_and_fillpad(tmp_path: Path) -> None:
    from pypto import ir

    x = np.random.default_rng(6).standard_normal((16, 32)).astype(np.float32)
    for n in (5, 32, 40):
        cfg = np.array([n, 0], np.int64)
        out = np.full_like(x, 9.0)
        keep_leading_columns(x, cfg, out)
        want = x.copy()
        want[:, min(n, 32) :] = 0.0
        np.testing.assert_array_equal(out, want)
    cfg = np.array([7, 0], np.int64)
    compiled = ir.compile(keep_leading_columns.front_end(x, cfg, out), output_dir=str(tmp_path / "vs"))
    want = x.copy()
    want[:, 7:] = 0.0
    compiled.validate_ir({"x": x, "cfg": cfg, "out": np.zeros_like(x)}, {"out": want})


@pl.program
class StridedRowBlocks:
    """An SPMD kernel: each of four blocks takes every fourth row block (its index from
    pl.tile.get_block_idx, the stride from get_block_num) and scales it by a factor read
    from a tensor in the kernel."""

    @pl.function(type=pl.FunctionType.InCore)
    def scale_blocks(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        factors: pl.Tensor[[8], pl.INT32],
        out: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
        n: pl.Scalar[pl.INDEX],
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        first = pl.tile.get_block_idx()
        stride = pl.tile.get_block_num()
        for b in pl.range(first, n, stride):
            raw: pl.Scalar[pl.INT32] = pl.read(factors, b)
            k = pl.max(pl.min(pl.cast(raw, pl.INDEX), 3), 0)
            t = pl.load(x, [b * 8, 0], [8, 32])
            out = pl.store(pl.mul(t, pl.cast(k, pl.FP32)), [b * 8, 0], out, [8, 32])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        x: pl.Tensor[[64, 32], pl.FP32],
        factors: pl.Tensor[[8], pl.INT32],
        out: pl.Out[pl.Tensor[[64, 32], pl.FP32]],
    ) -> pl.Tensor[[64, 32], pl.FP32]:
        with pl.cluster():
            with pl.spmd(core_num=4, sync_start=True):
                out = self.scale_blocks(x, factors, out, 8)
        return out


def test_spmd_blocks_scalar_reads_in_kernels(tmp_path: Path) -> None:
    from pypto import ir

    x = np.random.default_rng(7).standard_normal((64, 32)).astype(np.float32)
    factors = np.array([0, 1, 2, 3, 4, -1, 2, 1], np.int32)
    out = np.zeros_like(x)
    compiled = ir.compile(StridedRowBlocks, output_dir=str(tmp_path / "spmd"))
    orch = (tmp_path / "spmd" / "orchestration" / "orch.cpp").read_text()
    assert "launch_spec.set_block_num(4)" in orch and "set_require_sync_start(true)" in orch
    compiled(x, factors, out)
    want = x * np.repeat(np.clip(factors, 0, 3), 8)[:, None].astype(np.float32)
    np.testing.assert_array_equal(out, want)
    compiled.validate_ir({"x": x, "factors": factors, "out": np.zeros_like(x)}, {"out": want})


def test_partly_valid_tiles_and_scalar_forms_name_the_fix(tmp_path: Path) -> None:
    from pypto import ir
    from pypto.backend.pto_backend import PartialCodegenError

    src = (
        "import pypto.language as pl\n"
        "@pl.program\n"
        "class P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        t = pl.load(a, [0, 0], [16, 16], valid_shape=[16, 8])\n"
        "        return pl.store(pl.add(t, t), [0, 0], c)\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def o(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
        "        return self.k(a, c)\n"
    )
    with pytest.raises(PartialCodegenError) as e:
        ir.compile(pl.parse(src, filename="bad.py"), output_dir=str(tmp_path / "bad"))
    assert "valid_shape" in str(e.value) and "fillpad" in str(e.value.hint)
    with pytest.raises(InvalidOperationError) as e2:
        pl.parse(src.replace("pl.add(t, t)", "pl.max(t, t)"), filename="bad.py")
    assert "takes scalars" in str(e2.value) and "pl.maximum" in e2.value.hint and e2.value.span["line"] == 7
    with pytest.raises(InvalidOperationError) as e2:
        pl.parse(src.replace("[16, 8])", "[16, 20])"), filename="bad.py")
    assert "valid extent 20" in str(e2.value) and e2.value.span["line"] == 6


@pl.jit
def scores(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
    """s = q @ k^T, k^T read through pl.tile.transpose_view of k's Mat tile."""
    with pl.at(level=pl.Level.CORE_GROUP):
        ql = pl.move(pl.load(q, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        kt = pl.tile.transpose_view(pl.load(k, [0, 0], [48, 32], target_memory=pl.MemorySpace.Mat))
        kr = pl.move(kt, target_memory=pl.MemorySpace.Right)
        pl.store(pl.matmul(ql, kr), [0, 0], s)
    return s


def test_transpose_view_of_a_mat_tile(tmp_path: Path) -> None:
    from pypto import ir

    rng = np.random.default_rng(8)
    q = rng.standard_normal((16, 32)).astype(np.float32)
    k = rng.standard_normal((48, 32)).astype(np.float32)
    s = np.zeros((16, 48), np.float32)
    scores(q, k, s)
    np.testing.assert_allclose(s, q @ k.T, rtol=1e-4, atol=1e-4)
    compiled = ir.compile(scores.front_end(q, k, s), output_dir=str(tmp_path / "tv"))
    compiled.validate_ir({"q": q, "k": k, "s": np.zeros_like(s)}, {"s": q @ k.T}, rtol=1e-4, atol=1e-4)


@pl.program
class LoopLocalsInBranches:
    """Both branches bind `t` only inside their own loop: the name ends with each loop and
    is not merged after the if."""

    @pl.function(type=pl.FunctionType.InCore)
    def copy_or_double(
        self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]], double: pl.Scalar[pl.INDEX]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        if double != 0:
            for i in pl.range(4):
                t = pl.load(x, [i * 8, 0], [8, 16])
                out = pl.store(pl.add(t, t), [i * 8, 0], out)
        else:
            for i in pl.range(4):
                t = pl.load(x, [i * 8, 0], [8, 16])
                out = pl.store(t, [i * 8, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        out = self.copy_or_double(x, out, 1)
        return out


def test_names_bound_only_inside_loops_of_both_branches(tmp_path: Path) -> None:
    from pypto import ir

    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros_like(x)
    ir.compile(LoopLocalsInBranches, output_dir=str(tmp_path / "ll"), dump_passes=False)(x, out)
    np.testing.assert_array_equal(out, 2 * x)


@pl.program
class YieldedCountThenLoop:
    """A count merged by an if (`n: pl.Scalar[pl.INT64] = pl.yield_(...)` in both branches),
    updated in a loop and used after it: the merged value is the one the loop carries."""

    @pl.function(type=pl.FunctionType.InCore)
    def accumulate(
        self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.add(pl.load(out, [0, 0], [16, 16]), pl.load(x, [0, 0], [16, 16])), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self,
        x: pl.Tensor[[16, 16], pl.FP32],
        cfg: pl.Tensor[[2], pl.INT64],
        out: pl.InOut[pl.Tensor[[16, 16], pl.FP32]],
    ) -> pl.Tensor[[16, 16], pl.FP32]:
        first = pl.read(cfg, [0])
        zero: pl.Scalar[pl.INT64] = 0
        if first == 0:
            n: pl.Scalar[pl.INT64] = pl.yield_(zero)
        else:
            n: pl.Scalar[pl.INT64] = pl.yield_(first)
        for i in pl.range(1, 3):
            n = pl.max(n, pl.read(cfg, [1]))
        n = pl.min(n, 4)
        for j in pl.range(n):
            out = self.accumulate(x, out)
        return out


def test_an_if_merged_scalar_carried_by_a_loop(tmp_path: Path) -> None:
    from pypto import ir

    x = np.full((16, 16), 1.5, np.float32)
    compiled = ir.compile(YieldedCountThenLoop, output_dir=str(tmp_path / "yl"))
    for cfg, times in (([2, 3], 3), ([0, 1], 1), ([9, 1], 4)):
        out = np.zeros_like(x)
        compiled(x, np.array(cfg, np.int64), out)
        np.testing.assert_array_equal(out, times * x)
    compiled.validate_ir({"x": x, "cfg": np.array([2, 3], np.int64), "out": np.zeros_like(x)}, {"out": 3 * x})


@pl.program
class StoreBoundInLoop:
    """`written = pl.store(...)` first bound inside the loop and returned after it names the
    tensor the loop stores into."""

    @pl.function(type=pl.FunctionType.InCore)
    def negate_rows(
        self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        for i in pl.range(4):
            written = pl.store(pl.neg(pl.load(x, [i * 8, 0], [8, 16])), [i * 8, 0], out)
        return written

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(
        self, x: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
    ) -> pl.Tensor[[32, 16], pl.FP32]:
        out = self.negate_rows(x, out)
        return out


def test_a_store_bound_only_in_the_loop_is_returned_after_it(tmp_path: Path) -> None:
    from pypto import ir

    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros_like(x)
    compiled = ir.compile(StoreBoundInLoop, output_dir=str(tmp_path / "sb"))
    compiled(x, out)
    np.testing.assert_array_equal(out, -x)
    compiled.validate_ir({"x": x, "out": np.zeros_like(x)}, {"out": -x})
