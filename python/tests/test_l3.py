"""L3 (several chips): the bundled L3 examples run their generated ``host_orch.py``
unchanged over real chip processes, with per-dispatch diagnostics; bad input gets the
reference's errors. Needs torch (as PyPTO's L3 does)."""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pypto.ir import DistributedCompiledProgram, DistributedConfig  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402
from pypto.runtime import distributed_runner as dr  # noqa: E402
from pypto.runtime.debug.replay import _main as replay_main  # noqa: E402


def _load(d: Path, name: str) -> "torch.Tensor":
    return torch.from_numpy(np.load(d / "data" / name))


def _run(d: Path, *, config: RunConfig | None = None, **kw: object) -> tuple:
    compiled = DistributedCompiledProgram.from_dir(d, **kw)  # type: ignore[arg-type]
    names = compiled.param_names
    args = []
    for n in names:
        p = d / "data" / "in" / f"{n}.npy"
        if p.exists():
            args.append(_load(d, f"in/{n}.npy").clone())
        else:
            args.append(torch.zeros_like(_load(d, f"out/{n}.npy")))
    compiled(*args, config=config)
    return compiled, dict(zip(names, args))


def test_hello_rank_runs_its_host_orchestration_on_two_chips(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    _, t = _run(d)
    expected = t["x"] + torch.arange(2, dtype=torch.float32).reshape(2, 1, 1)
    assert torch.equal(t["y"], expected)
    assert not (d / "dfx_outputs").exists(), "no diagnostics asked for"


@pytest.mark.parametrize("name, ranks", [("l3_allreduce", 2), ("l3_allreduce_4", 4)])
def test_window_allreduce_sums_every_rank(example: Callable[[str], Path], name: str, ranks: int) -> None:
    d = example(name)
    _, t = _run(d)
    total = t["inputs"].double().sum(dim=0, keepdim=True).float()
    for r in range(ranks):
        assert torch.allclose(t["outputs"][r], total[0], rtol=1e-5, atol=1e-5)


def test_builtin_collective_runs_as_a_sub_build(example: Callable[[str], Path]) -> None:
    d = example("l3_builtin_allreduce")
    _, t = _run(d)
    golden = torch.from_numpy(np.load(d / "data" / "out" / "outputs.npy"))
    assert torch.allclose(t["outputs"], golden, rtol=1e-5, atol=1e-5)


# Each L3 example: its ranks and the (program, kernel) of each rank's user dispatches in
# order (builtin collectives get no directory and no number).
_L3_EXAMPLES = {
    "l3_hello_rank": (2, [("per_rank", "add_rank")]),
    "l3_allreduce": (2, [("chip_orch", "window_allreduce")]),
    "l3_allreduce_4": (4, [("chip_orch", "window_allreduce")]),
    "l3_builtin_allreduce": (2, [("stage_in", "stage_in"), ("stage_out", "stage_out")]),
}


@pytest.mark.parametrize("name", sorted(_L3_EXAMPLES))
def test_replay_cli_with_diagnostics_writes_one_directory_per_dispatch(
    name: str, example: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ranks, programs = _L3_EXAMPLES[name]
    d = example(name)
    stale = d / "dfx_outputs" / "rank0" / "d7"
    stale.mkdir(parents=True)
    (stale / dr.DISPATCH_MARKER).write_text("")
    keep = d / "dfx_outputs" / "rank0" / "keepme"
    keep.mkdir()
    rc = replay_main([str(d), "--swimlane", "--dep-gen", "--pmu", "2", "--validate"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Golden validation: PASSED" in out
    dfx = d / "dfx_outputs"
    assert not stale.exists() and keep.is_dir()
    assert sorted(p.name for p in dfx.iterdir()) == [f"rank{r}" for r in range(ranks)]
    for r in range(ranks):
        leaves = sorted(p.name for p in (dfx / f"rank{r}").iterdir() if p.name.startswith("d"))
        assert leaves == [f"d{k}" for k in range(len(programs))], leaves
        for k, (program, kernel) in enumerate(programs):
            leaf = dfx / f"rank{r}" / f"d{k}"
            assert (leaf / "dispatch_program.json").read_text() == f'{{"program": "{program}"}}'
            for f in ("chip_swimlane_records.json", "deps.json", "pmu.csv", "name_map.json"):
                assert (leaf / f).stat().st_size > 0, f
            names = json.loads((leaf / "name_map.json").read_text())
            assert names == {
                "level": 2,
                "orchestrator_name": None,
                "callable_id_to_name": {"0": kernel},
            }


def test_compact_diagnostics_of_an_l3_run_keep_their_per_dispatch_name_maps(
    example: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # PTO_DFX_FORMAT=compact: every dispatch writes the .bin records, and the per-dispatch
    # post-processing still finds them (name map written beside them).
    monkeypatch.setenv("PTO_DFX_FORMAT", "compact")
    d = example("l3_hello_rank")
    assert replay_main([str(d), "--swimlane", "--dep-gen", "--validate"]) == 0
    for r in range(2):
        leaf = d / "dfx_outputs" / f"rank{r}" / "d0"
        for f in ("chip_swimlane_records.bin", "deps.bin", "name_map.json"):
            assert (leaf / f).stat().st_size > 0, f
        assert not (leaf / "chip_swimlane_records.json").exists()
        names = json.loads((leaf / "name_map.json").read_text())
        assert names["callable_id_to_name"] == {"0": "add_rank"}


def test_predicted_timing_reaches_every_dispatch_of_an_l3_run(example: Callable[[str], Path]) -> None:
    # --timing predicted alone (no diagnostic): each dispatch writes its prediction in its
    # own directory, with the 2026-09 generation asked for on the command line.
    d = example("l3_hello_rank")
    assert replay_main([str(d), "--timing", "predicted", "--validate"]) == 0
    for r in range(2):
        leaf = d / "dfx_outputs" / f"rank{r}" / "d0"
        predicted = json.loads((leaf / "predicted_timing.json").read_text())
        assert predicted["timing"] == "predicted" and predicted["modelled_subtasks"] >= 0
    # With the swimlane, in 2026-09's files: the swimlane says its times are predicted.
    assert replay_main([str(d), "--swimlane", "--timing", "predicted", "--dfx-schema", "2026-09", "--validate"]) == 0
    swimlane = json.loads((d / "dfx_outputs" / "rank0" / "d0" / "chip_swimlane_records.json").read_text())
    assert swimlane["metadata"]["timing"] == "predicted"
    assert "runtime" in swimlane["metadata"], "the 2026-09 generation was asked for"


def test_call_config_timing_and_schema_are_checked(example: Callable[[str], Path]) -> None:
    from simpler.task_interface import CallConfig

    assert not CallConfig().writes_files()
    assert CallConfig(timing="predicted").writes_files()
    d = example("l3_hello_rank")
    submit = "        _submit_chip(orch, callables[\"per_rank\"], _ta_0, config, r)"
    for field, value, error, text in (
        ("timing", '"device"', ValueError, r"CallConfig\.timing: unknown timing \"device\""),
        ("timing", "5", TypeError, r"CallConfig\.timing must be a str, got int"),
        ("dfx_schema", '"2027-01"', ValueError, r"CallConfig\.dfx_schema must be '2026-08' or '2026-09', got '2027-01'"),
        # Predicted timing asked for explicitly, with no output directory for its file.
        ("timing", '"predicted"', ValueError, r"CallConfig\.output_prefix is required when timing is 'predicted'"),
    ):
        source = (d / "orchestration" / "host_orch.py").read_text()
        edited = f"        config.{field} = {value}\n" + submit
        _edit_entry(d, submit, edited)
        with pytest.raises(error, match=text):
            _run(d)
        (d / "orchestration" / "host_orch.py").write_text(source)


def test_debug_run_py_of_an_l3_example_validates(example: Callable[[str], Path]) -> None:
    d = example("l3_allreduce_4")
    p = subprocess.run(
        [sys.executable, str(d / "debug" / "run.py"), "--dep-gen", "--pmu", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS" in p.stdout, p.stdout + p.stderr
    for r in range(4):
        assert (d / "dfx_outputs" / f"rank{r}" / "d0" / "deps.json").is_file()


def test_builtin_dispatches_get_no_dfx_directory(example: Callable[[str], Path]) -> None:
    d = example("l3_builtin_allreduce")
    _run(d, config=RunConfig(enable_dep_gen=True))
    for r in range(2):
        leaves = sorted(p.name for p in (d / "dfx_outputs" / f"rank{r}").iterdir() if p.is_dir())
        assert leaves == ["d0", "d1"], leaves
        programs = [
            json.loads((d / "dfx_outputs" / f"rank{r}" / k / "dispatch_program.json").read_text())["program"]
            for k in leaves
        ]
        assert programs == ["stage_in", "stage_out"]
        # Each dispatch's name map comes from its own program (func_ids are per program).
        m = json.loads((d / "dfx_outputs" / f"rank{r}" / "d1" / "name_map.json").read_text())
        assert m["callable_id_to_name"] == {"0": "stage_out"}


def test_comm_less_dispatches_go_round_robin() -> None:
    class Orch:
        pass

    orch = Orch()
    orch._pypto_chip_count = 2  # type: ignore[attr-defined]
    assert [dr._resolve_chip_worker(orch, None) for _ in range(3)] == [0, 1, 0]
    assert dr._resolve_chip_worker(orch, 1) == 1
    assert dr._resolve_chip_worker(Orch(), None) == 0


def test_submit_chip_suffixes_the_prefix_and_restores_it(tmp_path: Path) -> None:
    seen = []

    class Orch:
        def submit_next_level(self, cid, ta, config, *, worker):  # type: ignore[no-untyped-def]
            seen.append((worker, config.output_prefix))

    orch = Orch()
    cid = object()
    dr._reset_dfx_dispatch_state(orch, {"child": cid})
    orch._pypto_chip_count = 2  # type: ignore[attr-defined]
    from simpler.task_interface import CallConfig

    cfg = CallConfig(output_prefix=str(tmp_path))
    for w in (1, None, 1):
        dr._submit_chip(orch, cid, None, cfg, w)
    assert seen == [
        (1, f"{tmp_path}/rank1/d0"),
        (0, f"{tmp_path}/rank0/d0"),
        (1, f"{tmp_path}/rank1/d1"),
    ]
    assert cfg.output_prefix == str(tmp_path)
    assert (tmp_path / "rank1" / "d1" / "dispatch_program.json").read_text() == '{"program": "child"}'
    dr._clear_dfx_dispatch_dirs(tmp_path, range(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rank0", "rank1"]
    assert not any((tmp_path / "rank1").iterdir())


# --- SubWorkers and runtime-allocated outputs ---------------------------------------------

_HEADER = (
    "import torch\n"
    "from simpler.task_interface import CallConfig, CommBufferSpec, DataType, TaskArgs, TensorArgType\n"
    "from pypto.runtime.tensor_arg import make_tensor_arg\n"
    "from pypto.runtime.distributed_runner import _submit_chip\n\n"
)

# Rank 0 waits (in its kernel) for a flag only the SubWorker sets; rank 1 computes y[1].
_WAIT_KERNEL = """#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "pto_comm_sim.h"
#include "tensor.h"

static void add_rank(const ChipTensor* x, const ChipTensor* y, int64_t rank) {
    const float* xs = x->data<float>();
    float* ys = y->data<float>();
    if (rank == 0) {
        // x is the flag: wait until the host's SubWorker wrote it (never, if it ran after us).
        const uint64_t deadline = pto_comm_now_ms() + 20000;
        while (__atomic_load_n((const int32_t*)xs, __ATOMIC_SEQ_CST) == 0) {
            if (pto_comm_now_ms() > deadline) { fprintf(stderr, "add_rank: the flag never came\\n"); abort(); }
        }
        for (uint64_t i = 0; i < y->numel(); ++i) ys[i] = xs[1];
        return;
    }
    for (uint64_t i = 0; i < y->numel(); ++i) ys[i] = xs[i] + (float)rank;
}
extern "C" void kernel_entry(int64_t* args) {
    add_rank(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_scalar<int64_t>(args, 2));
}
"""


def _sub_worker_build(d: Path, body: str, sub_body: str) -> None:
    (d / "orchestration" / "host_orch.py").write_text(
        _HEADER
        + "def _alloc_intermediates(tensors, world_size=1):\n"
        + "    tensors[\"flag\"] = torch.zeros((8, 8), dtype=torch.float32).share_memory_()\n\n\n"
        + "def hello_rank(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "\n\nhello_rank._pypto_distributed_entry = True\n"
    )
    sub = d / "sub_workers"
    sub.mkdir()
    (sub / "release.py").write_text(
        "import torch\n\nfrom pypto.runtime.distributed_runner import _tensor_from_continuous\n\n\n"
        "def _user_release(y1, flag):\n" + textwrap.indent(textwrap.dedent(sub_body), "    ")
        + "\n\ndef release(args):\n"
        "    _user_release(*[_tensor_from_continuous(args[i]) for i in range(len(args))])\n"
    )


_ORDER_BODY = """
_ta_0 = TaskArgs()
_ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["flag"]), TensorArgType.NO_DEP)
_ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["y"][0]), TensorArgType.OUTPUT_EXISTING)
_ta_0.add_scalar(0)
_keep.append(_ta_0)
_submit_chip(orch, callables["per_rank"], _ta_0, config, 0)
_ta_1 = TaskArgs()
_ta_1.add_tensor(make_tensor_arg(orch._worker, tensors["x"][1]), TensorArgType.INPUT)
_ta_1.add_tensor(make_tensor_arg(orch._worker, tensors["y"][1]), TensorArgType.OUTPUT_EXISTING)
_ta_1.add_scalar(1)
_keep.append(_ta_1)
_submit_chip(orch, callables["per_rank"], _ta_1, config, 1)
_ta_2 = TaskArgs()
_ta_2.add_tensor(make_tensor_arg(orch._worker, tensors["y"][1]), TensorArgType.INPUT)
_ta_2.add_tensor(make_tensor_arg(orch._worker, tensors["flag"]), TensorArgType.OUTPUT_EXISTING)
orch.submit_sub(sub_ids["release"], _ta_2)
"""


def test_a_sub_worker_call_waits_only_for_its_producers(example: Callable[[str], Path]) -> None:
    # The SubWorker reads rank 1's output (so it runs after that dispatch) and releases rank
    # 0's dispatch, submitted before it and still running: a SubWorker call that waited for
    # every earlier dispatch would never run, and rank 0 would give up after 20 s.
    d = example("l3_hello_rank")
    (d / "next_levels" / "per_rank" / "kernels" / "aiv" / "add_rank.cpp").write_text(_WAIT_KERNEL)
    _sub_worker_build(d, _ORDER_BODY, "flag[0, 1] = y1[0, 0] + 100.0\nflag[0, 0] = 1.0\n")
    _, t = _run(d)
    assert torch.equal(t["y"][1], t["x"][1] + 1)
    assert torch.all(t["y"][0] == t["x"][1][0, 0] + 1 + 100.0), t["y"][0]


def test_a_failing_sub_worker_call_fails_the_run_naming_it(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    (d / "next_levels" / "per_rank" / "kernels" / "aiv" / "add_rank.cpp").write_text(_WAIT_KERNEL)
    _sub_worker_build(d, _ORDER_BODY, "raise ValueError('no flag for you')\n")
    with pytest.raises(RuntimeError) as e:
        _run(d)
    msg = str(e.value)
    assert "SubWorker call 0 ('release') failed: ValueError: no flag for you" in msg, msg


def test_an_output_without_memory_is_allocated_by_the_runtime(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    (d / "orchestration" / "host_orch.py").write_text(
        _HEADER
        + "from simpler.task_interface import Tensor\n\n"
        + textwrap.dedent(
            """
            def hello_rank(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):
                for r in range(0, world_size, 1):
                    tmp = Tensor.make(data=0, shapes=(8, 8), dtype=DataType.FLOAT32)
                    _ta_0 = TaskArgs()
                    _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["x"][r]), TensorArgType.INPUT)
                    _ta_0.add_tensor(tmp, TensorArgType.OUTPUT)
                    _ta_0.add_scalar(r)
                    _keep.append(_ta_0)
                    _submit_chip(orch, callables["per_rank"], _ta_0, config, r)
                    assert tmp.allocated
                    _ta_1 = TaskArgs()
                    _ta_1.add_tensor(tmp, TensorArgType.INPUT)
                    _ta_1.add_tensor(make_tensor_arg(orch._worker, tensors["y"][r]), TensorArgType.OUTPUT_EXISTING)
                    _ta_1.add_scalar(10)
                    _keep.append(_ta_1)
                    _submit_chip(orch, callables["per_rank"], _ta_1, config, 1 - r)


            hello_rank._pypto_distributed_entry = True
            """
        )
    )
    _, t = _run(d)
    # y[r] = (x[r] + r) + 10, the second dispatch on the other chip reading the first's output.
    expected = t["x"] + torch.arange(2, dtype=torch.float32).reshape(2, 1, 1) + 10
    assert torch.equal(t["y"], expected)


def test_a_tensor_without_memory_can_only_be_an_output() -> None:
    from simpler.task_interface import DataType, TaskArgs, Tensor, TensorArgType

    ta = TaskArgs()
    with pytest.raises(ValueError, match=r"can only be an OUTPUT, which the runtime allocates; got TensorArgType.INPUT"):
        ta.add_tensor(Tensor.make(data=0, shapes=(4,), dtype=DataType.FLOAT32), TensorArgType.INPUT)
    with pytest.raises(TypeError, match="a raw data pointer cannot reach a chip process"):
        Tensor.make(data=0x1000, shapes=(4,), dtype=DataType.FLOAT32)


# --- bad input ----------------------------------------------------------------------------


def test_entry_markers_zero_or_two_are_errors(tmp_path: Path) -> None:
    p = tmp_path / "host_orch.py"
    p.write_text("def a(orch):\n    pass\n")
    with pytest.raises(RuntimeError, match=r"found 0: \[\]\. The generated orchestration module is malformed"):
        dr._load_orch_entry(p)
    p.write_text("def a(o): pass\ndef b(o): pass\na._pypto_distributed_entry = True\nb._pypto_distributed_entry = True\n")
    with pytest.raises(RuntimeError, match=r"Expected exactly one entry function marked with `_pypto_distributed_entry` in .*found 2: \['a', 'b'\]"):
        dr._load_orch_entry(p)
    with pytest.raises(FileNotFoundError, match="Did the codegen produce distributed output"):
        dr._load_orch_entry(tmp_path / "missing.py")


def test_alloc_intermediates_gets_world_size_only_when_it_takes_it() -> None:
    got = {}
    dr._call_alloc_intermediates(lambda t: got.setdefault("plain", True), {}, 4)
    dr._call_alloc_intermediates(lambda t, world_size=1: got.setdefault("ws", world_size), {}, 4)
    dr._call_alloc_intermediates(lambda t, **kw: got.setdefault("kw", kw["world_size"]), {}, 3)
    assert got == {"plain": True, "ws": 4, "kw": 3}


def _edit_entry(d: Path, old: str, new: str) -> None:
    p = d / "orchestration" / "host_orch.py"
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new))


def _full(e: BaseException) -> str:
    """The error's text with its notes (what the traceback prints)."""
    return "\n".join([str(e), *getattr(e, "__notes__", [])])


def test_scalar_before_tensor(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    _edit_entry(
        d,
        "        _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"x_r\"]), TensorArgType.INPUT)\n",
        "        _ta_0.add_scalar(r)\n        _ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"x_r\"]), TensorArgType.INPUT)\n",
    )
    with pytest.raises(RuntimeError, match="TaskArgs: cannot add tensor after scalar") as e:
        _run(d)
    full = _full(e.value)
    # Where (the host orchestration file and its entry) and the fix.
    assert f"while running the host orchestration {d / 'orchestration' / 'host_orch.py'}" in full, full
    assert "add every tensor (add_tensor) before the first add_scalar" in full, full


def test_access_the_buffer_does_not_grant(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    # A tensor that is not in shared memory is a read-only snapshot: OUTPUT_EXISTING is refused.
    _edit_entry(d, "    NR = tensors[\"x\"].shape[0]\n", "    NR = tensors[\"x\"].shape[0]\n    tensors[\"y\"] = tensors[\"y\"].clone()\n")
    with pytest.raises(ValueError, match="requires access not granted by the buffer") as e:
        _run(d)
    full = _full(e.value)
    assert "TaskArgs.add_tensor: arg TensorArgType.OUTPUT_EXISTING" in full, full
    assert "call .share_memory_() on it before the run" in full, full
    assert "host_orch.py" in full, full


def test_overlapping_writes_in_one_task(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    _edit_entry(
        d,
        "        tensors[\"x_r\"] = tensors[\"x\"][r, 0:8, 0:8]\n",
        "        tensors[\"x_r\"] = tensors[\"y\"][r, 0:8, 0:8]\n",
    )
    _edit_entry(d, "tensors[\"x_r\"]), TensorArgType.INPUT)", "tensors[\"x_r\"]), TensorArgType.INOUT)")
    with pytest.raises(ValueError, match="two arguments of one task write overlapping bytes of the same buffer") as e:
        _run(d)
    full = _full(e.value)
    assert full.startswith("submit: ") and "give them disjoint ranges, or order them as separate tasks" in full, full
    assert "host_orch.py" in full, full


def test_allocate_domain_after_a_submit(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    _edit_entry(
        d,
        "        _submit_chip(orch, callables[\"per_rank\"], _ta_0, config, r)\n",
        "        _submit_chip(orch, callables[\"per_rank\"], _ta_0, config, r)\n        orch.allocate_domain(name=\"late\", workers=[0], window_size=64)\n",
    )
    with pytest.raises(RuntimeError, match="direct device control cannot follow a task submission") as e:
        _run(d)
    full = _full(e.value)
    assert full.startswith("Orchestrator.allocate_domain: "), full
    assert "before the first submit_* call" in full and "host_orch.py" in full, full


def test_missing_sub_build_names_the_directory(example: Callable[[str], Path]) -> None:
    d = example("l3_builtin_allreduce")
    import shutil

    shutil.rmtree(d / "next_levels" / "stage_out")
    with pytest.raises(KeyError, match=r"next_levels/stage_out is missing") as e:
        _run(d)
    assert "regenerate the build via ir.compile()" in _full(e.value), _full(e.value)
    for sub in (d / "next_levels").iterdir():
        shutil.rmtree(sub)
    with pytest.raises(RuntimeError, match="No chip-level tasks found in"):
        _run(d)


def test_malformed_sidecar_and_device_ids(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    meta = d / "distributed_meta.json"
    doc = json.loads(meta.read_text())
    doc["distributed_config"]["device_ids"] = [0, 0]
    meta.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"'distributed_config' is invalid \(DistributedConfig.device_ids must be distinct") as e:
        DistributedCompiledProgram.from_dir(d)
    # The file, what is wrong, and the fix.
    assert str(e.value).startswith(f"Invalid distributed_meta.json in {meta}: "), e.value
    assert str(e.value).endswith("hand-edited — recompile via ir.compile() to refresh."), e.value
    # ... while an explicit distributed_config skips the persisted block, as PyPTO's does.
    assert DistributedCompiledProgram.from_dir(d, distributed_config=DistributedConfig(device_ids=[0, 1]))
    doc["distributed_config"]["device_ids"] = [0, 1]
    doc["schema"] = 7
    meta.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"Incompatible distributed_meta.json schema 7 \(expected 2\) in {re.escape(str(meta))}"):
        DistributedCompiledProgram.from_dir(d)
    doc["schema"] = 2
    doc["params"][0]["direction"] = "Sideways"
    meta.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"params\[0\] is malformed \('direction' must be one of \['In', 'InOut', 'Out'\], got 'Sideways'\)"):
        DistributedCompiledProgram.from_dir(d)
    meta.write_text("{not json")
    with pytest.raises(ValueError, match="Invalid distributed_meta.json .*recompile via ir.compile"):
        DistributedCompiledProgram.from_dir(d)
    meta.unlink()
    with pytest.raises(FileNotFoundError, match="cannot reconstruct a distributed program"):
        DistributedCompiledProgram.from_dir(d)


def test_more_ranks_in_the_program_than_devices(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    _edit_entry(d, "for r in range(0, world_size, 1):", "for r in range(0, 2, 1):")
    with pytest.raises(ValueError, match="worker 1 is not a NEXT_LEVEL worker of this run") as e:
        _run(d, distributed_config=DistributedConfig(device_ids=[3]))
    full = _full(e.value)
    assert "submit_next_level: " in full and "over device_ids [3] (world_size 1)" in full, full
    assert "pass distributed_config=DistributedConfig(device_ids=[...])" in full, full


# --- faults ---------------------------------------------------------------------------------


def _pids_alive(pids: list[int]) -> list[int]:
    alive = []
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                if f.read().split(")")[-1].split()[0] != "Z":
                    alive.append(p)
        except OSError:
            pass
    return alive


def test_killing_one_chip_names_it_and_leaves_nothing_behind(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    k = d / "next_levels" / "per_rank" / "kernels" / "aiv" / "add_rank.cpp"
    k.write_text(
        k.read_text().replace(
            "    for (uint64_t i = 0; i < y->numel(); ++i)",
            "    for (volatile int spin = 0; spin >= 0; spin = spin * 0) { }\n    for (uint64_t i = 0; i < y->numel(); ++i)",
        )
    )
    shm_before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    pids: list[int] = []

    def killer(worker: object) -> None:
        def go() -> None:
            time.sleep(1.5)
            got = worker.chip_pids()  # type: ignore[attr-defined]
            pids.extend(got)
            os.kill(got[1], 9)

        threading.Thread(target=go, daemon=True).start()

    compiled = DistributedCompiledProgram.from_dir(d)
    x = _load(d, "in/x.npy").clone()
    y = torch.zeros_like(x)
    with pytest.raises(RuntimeError) as e:
        dr.execute_distributed(compiled, [x, y], on_worker=killer)
    msg = str(e.value)
    assert "rank 1" in msg and "dispatch 0" in msg and "per_rank" in msg, msg
    assert "SIGKILL" in msg and "add_rank" in msg, msg
    assert len(pids) == 2
    deadline = time.time() + 5
    while _pids_alive(pids) and time.time() < deadline:
        time.sleep(0.05)
    assert _pids_alive(pids) == []
    shm_after = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    assert shm_after - shm_before == set()


def test_ctrl_c_during_the_drain_stops_the_run_and_its_chips(
    example: Callable[[str], Path], python_ctrl_c: None
) -> None:
    # Both ranks spin forever; a SIGINT to the host raises KeyboardInterrupt at once (the
    # drain waits in slices), and no chip process outlives the run.
    d = example("l3_hello_rank")
    k = d / "next_levels" / "per_rank" / "kernels" / "aiv" / "add_rank.cpp"
    k.write_text(
        k.read_text().replace(
            "    for (uint64_t i = 0; i < y->numel(); ++i)",
            "    for (volatile int spin = 0; spin >= 0; spin = spin * 0) { }\n    for (uint64_t i = 0; i < y->numel(); ++i)",
        )
    )
    pids: list[int] = []

    def interrupter(worker: object) -> None:
        def go() -> None:
            time.sleep(1.5)
            pids.extend(worker.chip_pids())  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=go, daemon=True).start()

    compiled = DistributedCompiledProgram.from_dir(d)
    x = _load(d, "in/x.npy").clone()
    y = torch.zeros_like(x)
    start = time.time()
    with pytest.raises(KeyboardInterrupt):
        dr.execute_distributed(compiled, [x, y], on_worker=interrupter)
    assert time.time() - start < 15
    assert len(pids) == 2
    deadline = time.time() + 5
    while _pids_alive(pids) and time.time() < deadline:
        time.sleep(0.05)
    assert _pids_alive(pids) == []


def _our_shared_memory_fds() -> list[str]:
    """This process's descriptors of the engine's shared memory (host regions, comm domains)."""
    out = []
    for f in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{f}")
        except OSError:
            continue
        if target.startswith("/memfd:pto-"):
            out.append(target)
    return sorted(out)


def test_killing_a_chip_inside_a_comm_domain_leaks_no_shared_memory(example: Callable[[str], Path]) -> None:
    # Rank 0 waits for a signal its peer never sends; rank 1 is killed while both are in the
    # kernel. The run fails naming rank 1, and neither the chip processes nor the host's
    # descriptors of the comm domain and the chip regions outlive it.
    d = example("l3_allreduce")
    k = d / "next_levels" / "chip_orch" / "kernels" / "aiv" / "window_allreduce.cpp"
    src = k.read_text()
    old = "pto_comm_wait(&sig[p], 1, PTO_WAIT_EQ)"
    assert old in src
    k.write_text(src.replace(old, "pto_comm_wait(&sig[p], 99, PTO_WAIT_EQ)"))
    # Earlier tests of the session may keep single-chip chip processes (and their memfds)
    # alive: what counts is that this run leaves nothing new behind.
    before = collections.Counter(_our_shared_memory_fds())
    during: list[str] = []
    pids: list[int] = []

    def killer(worker: object) -> None:
        def go() -> None:
            time.sleep(1.5)
            during.extend(_our_shared_memory_fds())
            got = worker.chip_pids()  # type: ignore[attr-defined]
            pids.extend(got)
            os.kill(got[1], 9)

        threading.Thread(target=go, daemon=True).start()

    compiled = DistributedCompiledProgram.from_dir(d)
    args = [_load(d, "in/inputs.npy").clone(), torch.zeros_like(_load(d, "out/outputs.npy"))]
    with pytest.raises(RuntimeError) as e:
        dr.execute_distributed(compiled, args, on_worker=killer)
    msg = str(e.value)
    assert "rank 1" in msg and "SIGKILL" in msg and "chip_orch" in msg, msg
    # The probe sees the domain while the run lives ...
    assert "/memfd:pto-comm-domain (deleted)" in during, during
    # ... and nothing of it afterwards.
    left = collections.Counter(_our_shared_memory_fds()) - before
    assert not left, sorted(left.elements())
    deadline = time.time() + 5
    while _pids_alive(pids) and time.time() < deadline:
        time.sleep(0.05)
    assert len(pids) == 2 and _pids_alive(pids) == []


# --- Simpler names ---------------------------------------------------------------------------


def test_simpler_names_are_provided_only_without_a_real_simpler(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """
        import pypto.runtime.distributed_runner
        import simpler.task_interface as ti
        print(ti.__name__, ti.TaskArgs.__module__)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "pypto.runtime._simpler_compat._task_interface" in out.stdout
    fake = tmp_path / "simpler"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "task_interface.py").write_text("TaskArgs = 'real'\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    out = subprocess.run([sys.executable, "-c", probe.replace("ti.TaskArgs.__module__", "ti.TaskArgs")], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["simpler.task_interface", "real"]


def test_data_type_members_are_the_native_element_type_table() -> None:
    # One table of Simpler's element types (pto_base::dtype): the Python enum keeps Simpler's
    # spelled-out members, and they must be exactly the native table's codes and names.
    from pypto.runtime._simpler_compat._task_interface import DataType, element_types
    from pypto.runtime.distributed_runner import _tensor_from_continuous
    from pypto.runtime.tensor_arg import torch_dtype_code

    table = element_types()
    assert [(d.value, d.name) for d in DataType] == [(c, n) for c, n, _, _ in table]
    assert [d.itemsize for d in DataType] == [s for _, _, s, _ in table]
    assert (DataType.BFLOAT16.itemsize, DataType.FP4E2M1.itemsize) == (2, 1)
    # Simpler's torch map (torch_interop.py): the FP8 / FP4 dtypes are codes 12-14.
    assert [d.torch_name for d in DataType][12:] == ["float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn_x2"]
    for dt in (torch.float32, torch.bfloat16, torch.uint16, torch.bool, torch.int64, torch.float8_e4m3fn, torch.float4_e2m1fn_x2):
        code = torch_dtype_code(torch.zeros(1, dtype=dt))
        assert code.torch_name == str(dt).replace("torch.", "")
    assert torch_dtype_code(torch.zeros(1, dtype=torch.float8_e8m0fnu)) == DataType.FP8E8M0
    with pytest.raises(ValueError, match=r"^Unsupported tensor dtype: torch.float8_e5m2$"):
        torch_dtype_code(torch.zeros(1, dtype=torch.float8_e5m2))

    class Mapped:
        def __init__(self, dtype: int, data: bytes, shapes: tuple) -> None:
            self.dtype, self.buffer, self.shapes = dtype, memoryview(bytearray(data)), shapes

    view = _tensor_from_continuous(Mapped(int(DataType.UINT16), bytes([1, 0, 2, 0]), (2,)))
    assert view.dtype == torch.uint16 and view.tolist() == [1, 2]
    fp8 = _tensor_from_continuous(Mapped(int(DataType.FP8E4M3FN), bytes([0x38, 0x40]), (2,)))
    assert fp8.dtype == torch.float8_e4m3fn and fp8.float().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match=r"DataType 15 has no torch view here \(only FLOAT32, .*FP4E2M1 do\)"):
        _tensor_from_continuous(Mapped(15, b"\0", (1,)))


def test_a_host_orchestration_that_never_returns_is_stopped_by_the_watchdog(
    example: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A host_orch.py that never returned hung `pto replay` forever (the C++ orchestration
    # has a timeout; the Python host had none).
    d = example("l3_hello_rank")
    orch = d / "orchestration" / "host_orch.py"
    head = "def hello_rank(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):"
    text = orch.read_text()
    assert head in text
    orch.write_text("import time\n" + text.replace(head, head + "\n    time.sleep(3600)"))
    monkeypatch.setenv(dr.HOST_TIMEOUT_ENV, "1500")
    started = time.monotonic()
    with pytest.raises(dr.HostOrchestrationTimeout, match=r"host_orch.py \(entry 'hello_rank'\) has neither returned nor submitted a task for 1.5 s"):
        _run(d)
    assert time.monotonic() - started < 60
    monkeypatch.setenv(dr.HOST_TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match="PTO_HOST_ORCHESTRATION_TIMEOUT_MS='soon' is not a number of milliseconds"):
        dr._host_timeout_s()


# --- explicit dependencies (TaskArgs.add_dep_wait, PyPTO / Simpler 2026-09) ---------------

# Rank 0 takes 300 ms before it writes y[0]; rank 1 reads y[0] as NO_DEP (no TensorMap
# edge) and writes y[1] = y[0] + 1: only the explicit dependency orders the two.
_SLOW_KERNEL = """#include <stdint.h>
#include "pto_comm_sim.h"
#include "tensor.h"

static void add_rank(const ChipTensor* x, const ChipTensor* y, int64_t rank) {
    const float* xs = x->data<float>();
    float* ys = y->data<float>();
    if (rank == 0) {
        const uint64_t until = pto_comm_now_ms() + 300;
        while (pto_comm_now_ms() < until) {
        }
    }
    for (uint64_t i = 0; i < y->numel(); ++i) ys[i] = xs[i] + (float)rank;
}
extern "C" void kernel_entry(int64_t* args) {
    add_rank(kernel_tensor(args, 0), kernel_tensor(args, 1), kernel_scalar<int64_t>(args, 2));
}
"""

_DEP_WAIT_BODY = """
_ta_0 = TaskArgs()
_ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["x"][0]), TensorArgType.INPUT)
_ta_0.add_tensor(make_tensor_arg(orch._worker, tensors["y"][0]), TensorArgType.OUTPUT_EXISTING)
_ta_0.add_scalar(0)
_keep.append(_ta_0)
task_0 = _submit_chip(orch, callables["per_rank"], _ta_0, config, 0)
_ta_1 = TaskArgs()
_ta_1.add_tensor(make_tensor_arg(orch._worker, tensors["y"][0]), TensorArgType.NO_DEP)
_ta_1.add_tensor(make_tensor_arg(orch._worker, tensors["y"][1]), TensorArgType.OUTPUT_EXISTING)
_ta_1.add_scalar(1)
_ta_1.add_dep_wait(task_0)
_keep.append(_ta_1)
_submit_chip(orch, callables["per_rank"], _ta_1, config, 1)
"""


def _dep_build(d: Path, body: str) -> None:
    (d / "next_levels" / "per_rank" / "kernels" / "aiv" / "add_rank.cpp").write_text(_SLOW_KERNEL)
    (d / "orchestration" / "host_orch.py").write_text(
        _HEADER
        + "def hello_rank(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "\n\nhello_rank._pypto_distributed_entry = True\n"
    )


def test_add_dep_wait_orders_dispatches_the_tensors_do_not(example: Callable[[str], Path]) -> None:
    d = example("l3_hello_rank")
    _dep_build(d, _DEP_WAIT_BODY)
    _, t = _run(d)
    assert torch.equal(t["y"][0], t["x"][0])
    assert torch.equal(t["y"][1], t["x"][0] + 1), "rank 1 ran before the dispatch it waits for"


def test_a_handle_of_another_run_or_not_a_handle_is_refused(example: Callable[[str], Path]) -> None:
    from pypto.runtime._simpler_compat._task_interface import TaskArgs, TaskHandle

    with pytest.raises(TypeError, match="add_dep_wait: expected task handles"):
        TaskArgs().add_dep_wait(3)
    d = example("l3_hello_rank")
    body = _DEP_WAIT_BODY.replace("_ta_1.add_dep_wait(task_0)", "_ta_1.add_dep_wait(type(task_0)(task_0.run_id + 7, 0))")
    _dep_build(d, body)
    with pytest.raises(ValueError, match="comes from another run"):
        _run(d)
