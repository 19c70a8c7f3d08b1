"""The DSL's L3 path: ``@pl.jit.host`` functions compile (same front end, IR, passes and
codegen) into the L3 layout — ``orchestration/host_orch.py``, ``next_levels/<chip>/``,
``distributed_meta.json`` — and run over one chip process per device id. Needs torch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import pypto.language as pl  # noqa: E402
import pypto.language.distributed as pld  # noqa: E402
from pypto.ir import DistributedCompiledProgram, DistributedConfig  # noqa: E402
from pypto.language.errors import InvalidOperationError, ParserTypeError  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

RANKS = 3
R, C = 4, 16
WIN = 128


@pl.jit.incore
def affine_by_rank(
    x: pl.Tensor[[R, C], pl.FP32],
    y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
    rank: pl.Scalar[pl.INT32],
):
    t = pl.load(x, [0, 0], [R, C])
    k = pl.cast(rank, target_type=pl.FP32)
    y = pl.store(pl.add(pl.mul(t, 2.0), k), [0, 0], y)
    return y


@pl.jit
def rank_chip(
    x: pl.Tensor[[R, C], pl.FP32],
    y: pl.Out[pl.Tensor[[R, C], pl.FP32]],
    rank: pl.Scalar[pl.INT32],
):
    return affine_by_rank(x, y, rank)


@pl.jit.host
def affine_host(
    x: pl.Tensor[[RANKS, R, C], pl.FP32],
    y: pl.Out[pl.Tensor[[RANKS, R, C], pl.FP32]],
):
    for r in pl.range(pld.world_size()):
        rank_chip(x[r], y[r], r, device=r)


@pl.jit.incore
def stage_and_negate(
    x: pl.Tensor[[2, WIN], pl.FP32],
    y: pl.Out[pl.Tensor[[2, WIN], pl.FP32]],
    win: pld.DistributedTensor[[2, WIN], pl.FP32],
):
    win = pl.store(pl.load(x, [0, 0], [2, WIN]), [0, 0], win)
    back = pl.load(win, [0, 0], [2, WIN])
    y = pl.store(pl.neg(back), [0, 0], y)
    return y


@pl.jit
def window_chip(
    x: pl.Tensor[[2, WIN], pl.FP32],
    y: pl.Out[pl.Tensor[[2, WIN], pl.FP32]],
    win: pld.DistributedTensor[[2, WIN], pl.FP32],
):
    return stage_and_negate(x, y, win)


@pl.jit.host
def window_host(
    x: pl.Tensor[[2, 2, WIN], pl.FP32],
    y: pl.Out[pl.Tensor[[2, 2, WIN], pl.FP32]],
):
    buf = pld.alloc_window_buffer([2, WIN], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        view = pld.window(buf, [2, WIN], dtype=pl.FP32)
        window_chip(x[r], y[r], view, device=r)


def _config(ranks: int) -> RunConfig:
    return RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(ranks))))


def test_a_host_function_dispatches_one_chip_program_per_rank(tmp_path: Path) -> None:
    x = torch.randn((RANKS, R, C), dtype=torch.float32)
    y = torch.zeros_like(x)
    compiled = affine_host.compile(x, y, output_dir=str(tmp_path / "b"), config=_config(RANKS))
    assert isinstance(compiled, DistributedCompiledProgram)
    out = Path(compiled.output_dir)
    host = (out / "orchestration" / "host_orch.py").read_text()
    assert "for r in range(0, world_size, 1):" in host
    assert '_submit_chip(orch, callables["rank_chip"], _ta_0, config, r)' in host
    assert re.search(r'tensors\["\w+"\] = tensors\["x"\]\[r, 0:4, 0:16\]', host)
    assert (out / "next_levels" / "rank_chip" / "kernel_config.py").is_file()
    assert not (out / "next_levels" / "rank_chip" / "compiled_meta.json").exists()
    assert compiled.distributed_config.device_ids == [0, 1, 2]
    compiled(x, y, config=RunConfig(platform="a2a3sim"))
    expected = x * 2 + torch.arange(RANKS, dtype=torch.float32).view(RANKS, 1, 1)
    assert torch.allclose(y, expected, rtol=1e-6, atol=1e-6)
    # from_dir of the build runs the same.
    y2 = torch.zeros_like(x)
    DistributedCompiledProgram.from_dir(out)(x, y2)
    assert torch.equal(y, y2)


def test_window_buffers_become_a_comm_domain_and_each_rank_gets_its_view(tmp_path: Path) -> None:
    x = torch.randn((2, 2, WIN), dtype=torch.float32)
    y = torch.zeros_like(x)
    window_host(x, y, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "w"),
                                       distributed_config=DistributedConfig(device_ids=[0, 1])))
    assert torch.equal(y, -x)
    host = (tmp_path / "w" / "orchestration" / "host_orch.py").read_text()
    assert 'CommBufferSpec(name="buf", dtype="opaque", count=1024, nbytes=1024)' in host
    assert '__comm_d0[r].buffers["buf"].tensor(shapes=(2, 128), dtype=DataType.FLOAT32), TensorArgType.INOUT' in host
    assert 'tensors["__comm_d0_ord"][r]' in host


def _host_source(tmp_path: Path, body: str) -> object:
    """A HOST program written to a module file (the front end reads source files)."""
    import importlib.util

    src = tmp_path / "prog_mod.py"
    src.write_text(
        "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n"
        "@pl.jit.incore\ndef k(x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]],\n"
        "      w: pld.DistributedTensor[[1, 64], pl.FP32]):\n"
        "    y = pl.store(pl.load(x, [0, 0], [1, 64]), [0, 0], y)\n    return y\n\n"
        "@pl.jit\ndef chip(x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]],\n"
        "         w: pld.DistributedTensor[[1, 64], pl.FP32]):\n    return k(x, y, w)\n\n"
        "@pl.jit.host\ndef host(x: pl.Tensor[[2, 1, 64], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, 64], pl.FP32]]):\n"
        + body
    )
    spec = importlib.util.spec_from_file_location("prog_mod", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_unsupported_distributed_constructs_name_themselves_and_the_nearest_form(tmp_path: Path) -> None:
    mod = _host_source(
        tmp_path,
        "    buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)\n"
        "    for r in pl.range(pld.world_size()):\n"
        "        pld.system.defer_wait(pld.window(buf, [1, 64], dtype=pl.FP32), offsets=[0, 0])\n",
    )
    x = torch.zeros((2, 1, 64))
    with pytest.raises(InvalidOperationError) as e:
        mod.host.lower(x, x)  # type: ignore[attr-defined]
    assert "pld.system.defer_wait is not supported by this DSL subset yet" in str(e.value)
    assert e.value.span["line"] == 19
    assert "Nearest supported form: pld.system.wait" in (e.value.hint or "")


def test_a_window_dispatch_must_name_its_rank(tmp_path: Path) -> None:
    from pypto.language.errors import CompileError

    mod = _host_source(
        tmp_path,
        "    buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)\n"
        "    for r in pl.range(pld.world_size()):\n"
        "        w = pld.window(buf, [1, 64], dtype=pl.FP32)\n"
        "        chip(x[r], y[r], w)\n",
    )
    x = torch.zeros((2, 1, 64))
    with pytest.raises(CompileError, match="passes a window but names no rank") as e:
        mod.host.compile(x, x, output_dir=str(tmp_path / "o"))  # type: ignore[attr-defined]
    assert "device=r" in str(e.value)


def test_window_buffers_and_device_belong_to_host_functions(tmp_path: Path) -> None:
    src = tmp_path / "chip_mod.py"
    src.write_text(
        "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n"
        "@pl.jit\ndef orch(x: pl.Tensor[[1, 64], pl.FP32]):\n"
        "    buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)\n    return x\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("chip_mod", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(InvalidOperationError, match="pld.alloc_window_buffer outside a HOST function") as e:
        mod.orch.lower(torch.zeros((1, 64)))
    assert e.value.span["line"] == 6
    with pytest.raises(ParserTypeError, match="does not accept keyword argument 'device'"):
        affine_by_rank_caller_with_device()


def affine_by_rank_caller_with_device() -> None:
    """A ``device=`` outside a HOST function (a chip orchestration) is refused."""
    rank_chip_device.lower(torch.zeros((R, C)), torch.zeros((R, C)))


@pl.jit
def rank_chip_device(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    return affine_by_rank(x, y, 0, device=0)


@pl.jit.incore
def scale3(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    t = pl.load(a, [0, 0], [16, 32])
    return pl.store(pl.mul(t, 3.0), [0, 0], out)


@pl.jit
def scale3_chip(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    res = scale3(a, out)
    return res


@pl.jit.host
def scale3_host(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    res = scale3_chip(a, out)
    return res


@pl.jit.incore
def minus(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    d = pl.sub(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 32]))
    return pl.store(d, [0, 0], out)


@pl.jit
def minus_chip(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    return minus(a, b, out)


@pl.jit.host
def minus_host(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    res = minus_chip(a, b, out)
    return res


def test_bare_tensor_host_programs_share_a_worker_and_its_resident_tensor(tmp_path: Path) -> None:
    """``@pl.jit.host`` with bare ``pl.Tensor`` parameters takes its shapes from the call;
    a dispatch without ``device=`` is placed by the runtime; two such programs run on one
    ``DistributedWorker`` and share a tensor resident there."""
    from pypto.runtime import DistributedWorker

    cfg = RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=[0]))
    a = torch.rand((16, 32), dtype=torch.float32).share_memory_()
    b = torch.rand((16, 32), dtype=torch.float32).share_memory_()
    out = torch.zeros((16, 32), dtype=torch.float32).share_memory_()
    sample = torch.zeros((16, 32), dtype=torch.float32)
    first = scale3_host.compile(a, sample, output_dir=str(tmp_path / "s"), config=cfg)
    second = minus_host.compile(b, sample, out, output_dir=str(tmp_path / "m"), config=cfg)
    host = (tmp_path / "s" / "orchestration" / "host_orch.py").read_text()
    assert '_submit_chip(orch, callables["scale3_chip"], _ta_0, config, None)' in host
    assert 'tensors["res"] = tensors["out"]' in host
    with DistributedWorker([first, second]) as rt:
        resident = rt.alloc_tensor((16, 32), torch.float32)
        rt.run(first, a, resident)
        rt.run(second, b, resident, out)
        rt.free_tensor(resident)
    assert torch.allclose(out, b - 3 * a, rtol=1e-6, atol=1e-6)


@pl.program
class HostWithCallback:
    @pl.function(type=pl.FunctionType.InCore)
    def halve(self, a: pl.Tensor[[8, 64], pl.FP32], o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        return pl.store(pl.mul(pl.load(a, [0, 0], [8, 64]), 0.5), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def halve_chip(self, a: pl.Tensor[[8, 64], pl.FP32], o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        return self.halve(a, o)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def observe(t: pl.Tensor[[8, 64], pl.FP32]):
        ...

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def entry(self, a: pl.Tensor[[8, 64], pl.FP32], o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        half: pl.Tensor[[8, 64], pl.FP32] = self.halve_chip(a, o)
        self.observe(half)
        return half


def test_a_program_with_a_host_orchestrator_and_a_runtime_bound_sub_worker(tmp_path: Path) -> None:
    from pypto import ir
    from pypto.runtime.distributed_runner import _tensor_from_continuous

    fn = HostWithCallback.get_function("observe")
    assert fn is not None and fn.requires_runtime_binding and fn.role == "SubWorker"
    assert HostWithCallback.get_function("entry").role == "Orchestrator"  # type: ignore[union-attr]
    assert HostWithCallback.get_function("halve").requires_runtime_binding is False  # type: ignore[union-attr]
    compiled = ir.compile(
        HostWithCallback, str(tmp_path / "cb"), distributed_config=DistributedConfig(device_ids=[0], num_sub_workers=1)
    )
    assert isinstance(compiled, DistributedCompiledProgram)
    host = (tmp_path / "cb" / "orchestration" / "host_orch.py").read_text()
    assert 'orch.submit_sub(sub_ids["observe"], _ta_1)' in host
    assert (tmp_path / "cb" / "sub_workers" / "__required__.json").read_text() == '["observe"]'
    seen = torch.zeros(2, dtype=torch.float32).share_memory_()

    def observe(args: object) -> None:
        t = _tensor_from_continuous(args[0])  # type: ignore[index]
        seen[0] = float(t.sum().item())
        seen[1] = 1.0

    a = torch.rand((8, 64), dtype=torch.float32).share_memory_()
    o = torch.zeros((8, 64), dtype=torch.float32).share_memory_()
    with pytest.raises(ValueError, match=r"SubWorkers \['observe'\] are runtime-bound callbacks"):
        compiled.prepare()
    with compiled.prepare(callbacks={"observe": observe}) as rt:
        rt(a, o)
    assert torch.allclose(o, a * 0.5)
    assert seen[1].item() == 1.0 and abs(seen[0].item() - float(o.sum().item())) < 1e-3


def test_a_sub_worker_with_a_body_is_refused_with_the_nearest_form() -> None:
    text = (
        "import pypto.language as pl\n\n@pl.program\nclass P:\n"
        "    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n"
        "    def check(t: pl.Tensor[[8, 64], pl.FP32]):\n        x = 1\n"
    )
    with pytest.raises(InvalidOperationError, match="SubWorker 'check' has a body") as e:
        pl.parse(text, filename="sub.py")
    assert e.value.span["line"] == 7
    assert "prepare(callbacks=" in (e.value.hint or "")


SEG = 32


@pl.jit.incore
def pull_previous(
    x: pl.Tensor[[1, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SEG], pl.FP32]],
    stage: pld.DistributedTensor[[1, SEG], pl.FP32],
    sig: pld.DistributedTensor[[RANKS, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(stage)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    stage = pl.store(pl.load(x, [0, 0], [1, SEG]), [0, 0], stage)
    sig = pld.tensor.barrier(sig)
    prev = pld.tile.remote_load(stage, peer=(me + n - 1) % n, offsets=[0, 0], shape=[1, SEG])
    y = pl.store(pl.mul(prev, 2.0), [0, 0], y)
    return y


@pl.jit.incore
def push_next(
    x: pl.Tensor[[1, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SEG], pl.FP32]],
    inbox: pld.DistributedTensor[[1, SEG], pl.FP32],
    sig: pld.DistributedTensor[[RANKS, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(inbox)
    me = pld.rank(ctx)
    nxt = (me + 1) % pld.nranks(ctx)
    pld.tile.remote_store(pl.load(x, [0, 0], [1, SEG]), inbox, peer=nxt, offsets=[0, 0])
    pld.system.notify(sig, peer=nxt, offsets=[me, 0], value=1, op=pld.NotifyOp.Set)
    src = (me + pld.nranks(ctx) - 1) % pld.nranks(ctx)
    pld.system.wait(sig, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Eq)
    y = pl.store(pl.load(inbox, [0, 0], [1, SEG]), [0, 0], y)
    return y


@pl.jit
def pull_chip(
    x: pl.Tensor[[1, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SEG], pl.FP32]],
    stage: pld.DistributedTensor[[1, SEG], pl.FP32],
    sig: pld.DistributedTensor[[RANKS, 1], pl.INT32],
):
    return pull_previous(x, y, stage, sig)


@pl.jit
def push_chip(
    x: pl.Tensor[[1, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[1, SEG], pl.FP32]],
    inbox: pld.DistributedTensor[[1, SEG], pl.FP32],
    sig: pld.DistributedTensor[[RANKS, 1], pl.INT32],
):
    return push_next(x, y, inbox, sig)


@pl.jit.host
def ring_host(
    x: pl.Tensor[[RANKS, 1, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[RANKS, 1, SEG], pl.FP32]],
    z: pl.Out[pl.Tensor[[RANKS, 1, SEG], pl.FP32]],
):
    stage_buf = pld.alloc_window_buffer([1, SEG], dtype=pl.FP32)
    sig_a = pld.alloc_window_buffer([RANKS, 1], dtype=pl.INT32)
    inbox_buf = pld.alloc_window_buffer([1, SEG], dtype=pl.FP32)
    sig_b = pld.alloc_window_buffer([RANKS, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        s = pld.window(stage_buf, [1, SEG], dtype=pl.FP32)
        a = pld.window(sig_a, [RANKS, 1], dtype=pl.INT32)
        pull_chip(x[r], y[r], s, a, device=r)
    for r in pl.range(pld.world_size()):
        i = pld.window(inbox_buf, [1, SEG], dtype=pl.FP32)
        b = pld.window(sig_b, [RANKS, 1], dtype=pl.INT32)
        push_chip(x[r], z[r], i, b, device=r)


def test_kernels_reach_peer_windows_through_their_comm_context(tmp_path: Path) -> None:
    """Three ranks: a barrier then a remote load of the previous rank's window; a remote
    store into the next rank's window, a notify and a wait. The comm context reaches the
    kernel as a hidden parameter after each window."""
    x = torch.randn((RANKS, 1, SEG), dtype=torch.float32)
    y, z = torch.zeros_like(x), torch.zeros_like(x)
    compiled = ring_host.compile(x, y, z, output_dir=str(tmp_path / "ring"), config=_config(RANKS))
    host = (tmp_path / "ring" / "orchestration" / "host_orch.py").read_text()
    assert "_ta_0.add_scalar(__comm_d0[r].device_ctx)" in host
    pto = (tmp_path / "ring" / "next_levels" / "pull_chip" / "ptoas" / "pull_previous.pto").read_text()
    assert "!pto.ptr<i64>" in pto and "pto.comm.twait" in pto and "pto.addptr" in pto
    compiled(x, y, z, config=RunConfig(platform="a2a3sim"))
    prev = torch.roll(x, shifts=1, dims=0)
    assert torch.allclose(y, 2 * prev)
    assert torch.equal(z, prev)


def test_window_traffic_outside_a_kernel_and_of_non_windows_is_refused() -> None:
    text = (
        "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n@pl.program\nclass P:\n"
        "    @pl.function(type=pl.FunctionType.InCore)\n"
        "    def k(self, x: pl.Tensor[[1, 64], pl.FP32], w: pld.DistributedTensor[[1, 64], pl.FP32]) -> pl.Tensor[[1, 64], pl.FP32]:\n"
        "        t = pld.tile.remote_load(x, peer=0, offsets=[0, 0], shape=[1, 64])\n"
        "        return x\n"
    )
    with pytest.raises(ParserTypeError, match="'x' is not a pld.DistributedTensor parameter") as e:
        pl.parse(text, filename="k.py")
    assert e.value.span["line"] == 8
    orch = text.replace("type=pl.FunctionType.InCore", "type=pl.FunctionType.Orchestration").replace(
        "remote_load(x,", "remote_load(w,"
    )
    with pytest.raises(InvalidOperationError, match="pld.remote_load outside a kernel"):
        pl.parse(orch, filename="k.py")


@pl.jit.incore
def put_then_get(
    x: pl.Tensor[[2, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[2, SEG], pl.FP32]],
    z: pl.Out[pl.Tensor[[2, SEG], pl.FP32]],
    own: pld.DistributedTensor[[2, SEG], pl.FP32],
    got: pld.DistributedTensor[[2, SEG], pl.FP32],
    sig: pld.DistributedTensor[[RANKS, 1], pl.INT32],
):
    ctx = pld.get_comm_ctx(own)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    own = pl.store(pl.load(x, [0, 0], [2, SEG]), [0, 0], own)
    # Every rank adds its rows into rank 0's `got`, then all meet; then each copies the
    # next rank's `own` into its `got` (no rank writes `own` after the barrier).
    pld.tensor.put(got, peer=0, src=own, atomic=pld.AtomicType.Add)
    sig = pld.tensor.barrier(sig)
    y = pl.store(pl.load(got, [0, 0], [2, SEG]), [0, 0], y)
    pld.tensor.get(got, peer=(me + 1) % n, src=own)
    z = pl.store(pl.load(got, [0, 0], [2, SEG]), [0, 0], z)
    return y


@pl.jit
def put_get_chip(
    x: pl.Tensor[[2, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[2, SEG], pl.FP32]],
    z: pl.Out[pl.Tensor[[2, SEG], pl.FP32]],
    own: pld.DistributedTensor[[2, SEG], pl.FP32],
    got: pld.DistributedTensor[[2, SEG], pl.FP32],
    sig: pld.DistributedTensor[[RANKS, 1], pl.INT32],
):
    return put_then_get(x, y, z, own, got, sig)


@pl.jit.host
def put_get_host(
    x: pl.Tensor[[RANKS, 2, SEG], pl.FP32],
    y: pl.Out[pl.Tensor[[RANKS, 2, SEG], pl.FP32]],
    z: pl.Out[pl.Tensor[[RANKS, 2, SEG], pl.FP32]],
):
    own_buf = pld.alloc_window_buffer([2, SEG], dtype=pl.FP32)
    got_buf = pld.alloc_window_buffer([2, SEG], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([RANKS, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        own = pld.window(own_buf, [2, SEG], dtype=pl.FP32)
        got = pld.window(got_buf, [2, SEG], dtype=pl.FP32)
        sig = pld.window(sig_buf, [RANKS, 1], dtype=pl.INT32)
        put_get_chip(x[r], y[r], z[r], own, got, sig, device=r)


def test_put_with_atomic_add_and_get_copy_whole_windows_between_ranks(tmp_path: Path) -> None:
    x = torch.randn((RANKS, 2, SEG), dtype=torch.float32)
    y, z = torch.zeros_like(x), torch.zeros_like(x)
    put_get_host(x, y, z, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "pg"),
                                          distributed_config=DistributedConfig(device_ids=[0, 1, 2])))
    pto = (tmp_path / "pg" / "next_levels" / "put_get_chip" / "ptoas" / "put_then_get.pto").read_text()
    assert "atomicType = #pto<atomic_type atomic_add>" in pto and "pto.comm.tget" in pto
    assert torch.allclose(y[0], x.sum(dim=0), atol=1e-5)
    assert torch.equal(z, torch.roll(x, shifts=-1, dims=0))
