"""``pypto.runtime``'s explicit-dispatch names (PyPTO's): ``execute_distributed_compiled``,
``ChipWorker`` / ``RegistrationHandle`` with worker-resident ``DeviceTensor`` s,
``DistributedWorker`` / ``DistributedRunHandle`` (``DistributedCompiledProgram.prepare``,
SubWorker ``callbacks``), and the L3 orchestrator's ``submit_next_level_group``,
``scope``, ``alloc``, ``copy_to`` / ``copy_from``, each run for real on the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pypto.language as pl  # noqa: E402
from pypto.ir import DistributedCompiledProgram  # noqa: E402
from pypto.runtime import (  # noqa: E402
    ChipWorker,
    DeviceTensor,
    DistributedRunHandle,
    DistributedWorker,
    RegistrationHandle,
    RunConfig,
    execute_distributed_compiled,
)


@pl.jit
def add_16x32(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 32]), pl.load(b, [0, 0], [16, 32])), [0, 0], c)
    return c


def test_the_seed_imports_execute_distributed_compiled_from_pypto_runtime() -> None:
    from pypto.runtime import distributed_runner

    assert execute_distributed_compiled is distributed_runner.execute_distributed_compiled
    import pypto.runtime as rt

    for name in ("ChipWorker", "DistributedWorker", "DistributedRunHandle", "RegistrationHandle", "DeviceTensor"):
        assert name in rt.__all__


def test_chip_worker_registers_once_and_dispatches_with_a_resident_tensor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    sample = torch.zeros((16, 32), dtype=torch.float32)
    compiled = add_16x32.compile(sample, sample, sample.clone())
    weight = torch.full((16, 32), 0.5)
    with ChipWorker(config=RunConfig()) as w:
        assert w.aicpu_dlopen_count == 0
        h = w.register(compiled)
        assert isinstance(h, RegistrationHandle) and w.aicpu_dlopen_count == 1
        w_dev = w.alloc_tensor((16, 32), torch.float32, init=weight)
        assert isinstance(w_dev, DeviceTensor)
        for step in range(3):
            x = torch.full((16, 32), float(step))
            out = torch.zeros(16, 32)
            h(x, w_dev, out)
            assert torch.equal(out, x + weight)
        assert w.aicpu_dlopen_count == 1, "dispatches reuse the loaded build"
        # The resident tensor can be an output too: written in place, read back.
        h(weight, weight, w_dev)
        back = torch.zeros(16, 32)
        w.copy_from(back.data_ptr(), w_dev.data_ptr, w_dev.nbytes)
        assert torch.equal(back, weight * 2)
        w.free_tensor(w_dev)
        with pytest.raises(ValueError, match="not a live allocation"):
            w.free_tensor(w_dev)
        h.unregister()
        with pytest.raises(RuntimeError, match="closed"):
            h(x, x, out)
    with pytest.raises(ValueError, match="only supports level=2"):
        ChipWorker(level=3)
    with pytest.raises(RuntimeError, match="closed"):
        w.malloc(16)


def test_distributed_worker_runs_with_resident_tensors_and_checks_its_inputs(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    compiled = DistributedCompiledProgram.from_dir(d)
    x = torch.from_numpy(np.load(d / "data" / "in" / "x.npy")).clone()
    y = torch.zeros_like(x).share_memory_()
    expected = x + torch.arange(2, dtype=torch.float32).reshape(2, 1, 1)
    with compiled.prepare() as rt:
        x_dev = rt.alloc_tensor(x.shape, x.dtype, init=x)
        for _ in range(2):
            y.zero_()
            rt(x_dev, y)
            assert torch.equal(y, expected)
        handle = rt.submit(compiled, x_dev, y)
        assert isinstance(handle, DistributedRunHandle) and handle.done()
        handle.wait()
        rt.free_tensor(x_dev)
        with pytest.raises(ValueError, match="not a live allocation owned by this DistributedWorker"):
            rt(x_dev, y)
    with pytest.raises(TypeError, match="One-shot DistributedCompiledProgram calls cannot accept DeviceTensor"):
        compiled(x_dev, y)
    with pytest.raises(ValueError, match="does not declare"):
        compiled.prepare(callbacks={"nope": lambda args: None})
    with pytest.raises(ValueError, match="persistent"):
        compiled.prepare(persistent=True)
    other = DistributedCompiledProgram.from_dir(d)
    with DistributedWorker([compiled, other]) as rt:
        with pytest.raises(TypeError, match="ambiguous"):
            rt(x, y)
        y.zero_()
        rt.run(other, x, y)
        assert torch.equal(y, expected)


def test_orchestrator_groups_scopes_and_runtime_buffers(example: Callable[[str], Path]) -> None:
    """A hand-written host orchestration: one group dispatch over both chips reading an
    ``orch.alloc`` buffer filled by ``copy_to`` inside a ``scope``, results copied back with
    ``copy_from``."""
    d = example("l3_hello_rank")
    (d / "orchestration" / "host_orch.py").write_text(
        "import torch\n"
        "from simpler.task_interface import DataType, TaskArgs, TensorArgType\n"
        "from pypto.runtime.tensor_arg import make_tensor_arg\n"
        "\n"
        "def group(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n"
        "    src = orch.alloc((world_size, 8, 8), DataType.FLOAT32)\n"
        "    with orch.scope():\n"
        "        orch.copy_to(src, tensors['x'].contiguous())\n"
        "        members = []\n"
        "        for r in range(world_size):\n"
        "            ta = TaskArgs()\n"
        "            ta.add_tensor(src.tensor((8, 8), DataType.FLOAT32, byte_offset=r * 256), TensorArgType.INPUT)\n"
        "            ta.add_tensor(make_tensor_arg(orch._worker, tensors['y'][r]), TensorArgType.OUTPUT_EXISTING)\n"
        "            ta.add_scalar(10 * r)\n"
        "            members.append(ta)\n"
        "        _keep.extend(members)\n"
        "        orch.submit_next_level_group(callables['per_rank'], members, config, workers=list(range(world_size)))\n"
        "\n"
        "group._pypto_distributed_entry = True\n",
        encoding="utf-8",
    )
    x = torch.arange(2 * 8 * 8, dtype=torch.float32).reshape(2, 8, 8)
    y = torch.zeros_like(x)
    execute_distributed_compiled(d, [x, y])
    assert torch.equal(y, x + torch.tensor([0.0, 10.0]).reshape(2, 1, 1))
