"""What you see is what ran: in one Python process, run a build, edit a source, run again —
the second run executes the edit, through every entry point (the warm chip process that
served the first run is reloaded, never reused with the old program)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, List

import numpy as np
import pytest

from pypto.ir.compiled_program import CompiledProgram
from pypto.runtime.bench import benchmark
from pypto.runtime.debug import replay

KERNEL = "kernels/aiv/kernel_add.cpp"


def _inputs(d: Path) -> tuple[np.ndarray, np.ndarray]:
    return np.load(d / "data/in/a.npy"), np.load(d / "data/in/b.npy")


def _what(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> str:
    if np.array_equal(c, a + b):
        return "add"
    if np.array_equal(c, a - b):
        return "sub"
    if np.array_equal(c, b - a):
        return "swapped sub"
    return "other"


def _edit(d: Path, frm: str, to: str) -> None:
    p = d / KERNEL
    text = p.read_text()
    assert frm in text
    p.write_text(text.replace(frm, to, 1))


def _to_sub(d: Path) -> None:
    _edit(d, "pto_tile::add(", "pto_tile::sub(")


def _run_from_dir(d: Path) -> str:
    a, b = _inputs(d)
    c = np.zeros_like(a)
    CompiledProgram.from_dir(d)(a, b, c)
    return _what(a, b, c)


def _run_replay(d: Path, **kw: Any) -> str:
    a, b = _inputs(d)
    c = np.zeros_like(a)
    replay(d, a, b, c, **kw)
    return _what(a, b, c)


def _run_benchmark(d: Path) -> str:
    a, b = _inputs(d)
    c = np.zeros_like(a)
    benchmark(CompiledProgram.from_dir(d), [a, b, c], rounds=2, warmup=0)
    return _what(a, b, c)


RUNNERS: List[Callable[[Path], str]] = [
    _run_from_dir,
    _run_replay,
    lambda d: _run_replay(d, recompile=False),
    _run_benchmark,
]


@pytest.mark.parametrize("runner", RUNNERS, ids=["from_dir", "replay", "replay_no_recompile", "benchmark"])
def test_a_kernel_edit_runs_in_the_same_process(
    example: Callable[[str], Path], runner: Callable[[Path], str]
) -> None:
    d = example("vector_add")
    assert _run_from_dir(d) == "add"
    _to_sub(d)
    assert runner(d) == "sub"
    # And back: every second run executes the edit of the moment.
    _edit(d, "pto_tile::sub(", "pto_tile::add(")
    assert runner(d) == "add"


def test_the_seed_session_prints_the_edit_three_times(example: Callable[[str], Path]) -> None:
    d = example("vector_add")
    assert _run_from_dir(d) == "add"
    _to_sub(d)
    assert [_run_replay(d), _run_from_dir(d), _run_replay(d, recompile=False)] == ["sub"] * 3


def test_an_included_header_edit_runs(example: Callable[[str], Path]) -> None:
    d = example("vector_add")
    (d / "kernels/aiv/op.h").write_text("#pragma once\n#define PTO_TEST_OP add\n")
    _edit(d, '#include "pto_tile.h"', '#include "pto_tile.h"\n#include "op.h"')
    _edit(d, "pto_tile::add(", "pto_tile::PTO_TEST_OP(")
    assert _run_replay(d, recompile=False) == "add"
    (d / "kernels/aiv/op.h").write_text("#pragma once\n#define PTO_TEST_OP sub\n")
    assert _run_replay(d, recompile=False) == "sub"


def test_a_program_loaded_before_the_edit_keeps_its_program(example: Callable[[str], Path]) -> None:
    d = example("vector_add")
    a, b = _inputs(d)
    old = CompiledProgram.from_dir(d)
    old.load()
    _to_sub(d)
    assert _run_from_dir(d) == "sub"
    c = np.zeros_like(a)
    old(a, b, c)
    assert _what(a, b, c) == "add", "a CompiledProgram runs the build it loaded"
    assert _run_from_dir(d) == "sub"


def test_two_threads_replaying_two_copies_never_mix(tmp_path: Path, example: Callable[[str], Path]) -> None:
    first = example("vector_add")
    second = tmp_path / "copy" / "vector_add"
    second.parent.mkdir()
    import shutil

    shutil.copytree(first, second)
    _to_sub(second)
    results: dict[str, List[str]] = {"add": [], "sub": []}
    errors: List[BaseException] = []

    def loop(d: Path, key: str) -> None:
        try:
            for _ in range(3):
                results[key].append(_run_replay(d, recompile=False))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [
        threading.Thread(target=loop, args=(first, "add")),
        threading.Thread(target=loop, args=(second, "sub")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {"add": ["add"] * 3, "sub": ["sub"] * 3}


def test_an_l3_build_runs_the_edited_per_rank_kernel(example: Callable[[str], Path]) -> None:
    torch = pytest.importorskip("torch")
    from pypto.ir import DistributedCompiledProgram

    d = example("l3_hello_rank")
    kernel = d / "next_levels/per_rank/kernels/aiv/add_rank.cpp"

    def run() -> Any:
        compiled = DistributedCompiledProgram.from_dir(d)
        x = torch.from_numpy(np.load(d / "data/in/x.npy")).clone()
        y = torch.zeros_like(torch.from_numpy(np.load(d / "data/out/y.npy")))
        compiled(x, y)
        return y - x

    ranks = torch.arange(2, dtype=torch.float32).reshape(2, 1, 1)
    assert torch.equal(run(), ranks.expand_as(run()))
    text = kernel.read_text()
    assert "xs[i] + (float)rank" in text
    kernel.write_text(text.replace("xs[i] + (float)rank", "xs[i] + 10.0f * (float)rank"))
    second = run()
    assert torch.equal(second, (10 * ranks).expand_as(second)), "the edited kernel ran"


def test_an_orchestration_edit_runs(example: Callable[[str], Path]) -> None:
    d = example("vector_add")
    _to_sub(d)
    assert _run_replay(d, recompile=False) == "sub"
    orch = d / "orchestration/vector_add.cpp"
    text = orch.read_text()
    swapped = text.replace("params_t0.add_input(a_tile);\n", "@A@").replace(
        "params_t0.add_input(b_tile);\n", "params_t0.add_input(a_tile);\n"
    )
    orch.write_text(swapped.replace("@A@", "params_t0.add_input(b_tile);\n"))
    assert _run_replay(d, recompile=False) == "swapped sub"


def test_a_golden_py_edit_is_what_validate_checks(example: Callable[[str], Path]) -> None:
    d = example("vector_add")
    a, b = _inputs(d)
    replay(d, a, b, np.zeros_like(a), validate=True, recompile=False)
    golden = d / "golden.py"
    text = golden.read_text()
    assert "(a + b).astype" in text
    golden.write_text(text.replace("(a + b).astype", "(a + b + 1).astype", 1))
    with pytest.raises(AssertionError):
        replay(d, a, b, np.zeros_like(a), validate=True, recompile=False)


def test_a_pto_edit_is_spliced_and_runs_in_the_same_process(
    example: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pypto._golden import load_inputs_from_golden

    monkeypatch.delenv("PYPTO_REBUILD_FROM_PTO", raising=False)
    d = example("paged_attn_bf16")

    def validated() -> bool:
        values = [v for _, v in load_inputs_from_golden(d)]
        try:
            replay(d, *values, validate=True, recompile=False)
        except AssertionError:
            return False
        return True

    assert validated()
    unit = d / "ptoas/softmax_prepare.pto"
    text = unit.read_text()
    edited = text.replace(
        "  %c0_i64 = arith.constant 0 : i64\n",
        "  %c0_i64 = arith.constant 0 : i64\n"
        "  %cst_2 = arith.constant 2.00000000000000000e+00 : f32\n"
        "  %scale_x2 = arith.mulf %arg1, %cst_2 : f32\n",
        1,
    ).replace("pto.tmuls ins(%s_padded, %arg1 :", "pto.tmuls ins(%s_padded, %scale_x2 :", 1)
    assert edited != text
    unit.write_text(edited)
    assert not validated(), "the doubled attention scale ran"


def test_editing_while_another_thread_benchmarks_never_runs_a_mixture(
    example: Callable[[str], Path],
) -> None:
    """One thread benchmarks while another flips the kernel between add and sub (saving
    through a rename, as editors do): every benchmark ran one whole program, the old or the
    new, and the last run after the edits stop runs the file on disk."""
    import os

    d = example("vector_add")
    kernel = d / KERNEL
    seen: List[str] = []
    errors: List[BaseException] = []
    done = threading.Event()

    def bench() -> None:
        try:
            while not done.is_set():
                seen.append(_run_benchmark(d))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=bench)
    t.start()
    try:
        for i in range(4):
            text = kernel.read_text()
            frm, to = ("pto_tile::add(", "pto_tile::sub(") if i % 2 == 0 else ("pto_tile::sub(", "pto_tile::add(")
            tmp = kernel.with_suffix(".cpp.tmp")
            tmp.write_text(text.replace(frm, to, 1))
            os.replace(tmp, kernel)
            threading.Event().wait(0.5)
    finally:
        done.set()
        t.join()
    assert not errors, errors
    assert seen and set(seen) <= {"add", "sub"}, seen
    assert _run_benchmark(d) == "add"


PLUGIN_SESSION = '''
from pathlib import Path

import numpy as np

from pypto.ir.compiled_program import CompiledProgram
from pypto.runtime.debug import replay

D = Path({dir!r})
KERNEL = D / "kernels/aiv/kernel_add.cpp"


def _run(run_config, via_replay):
    a, b = np.load(D / "data/in/a.npy"), np.load(D / "data/in/b.npy")
    c = np.zeros_like(a)
    if via_replay:
        replay(D, a, b, c, config=run_config, recompile=False)
    else:
        CompiledProgram.from_dir(D, platform=run_config.platform)(a, b, c, config=run_config)
    return "add" if np.array_equal(c, a + b) else "sub" if np.array_equal(c, a - b) else "other"


def test_1_runs_then_edits(run_config):
    assert _run(run_config, False) == "add"
    KERNEL.write_text(KERNEL.read_text().replace("pto_tile::add(", "pto_tile::sub(", 1))


def test_2_runs_the_edit(run_config):
    assert _run(run_config, False) == "sub"
    assert _run(run_config, True) == "sub"
'''


def test_the_pytest_plugins_fixtures_run_the_edit_in_one_session(
    pytester: pytest.Pytester, example: Callable[[str], Path]
) -> None:
    """Two tests of one pytest session, configured by the plugin's ``run_config`` fixture:
    the second runs the kernel the first edited (the session's warm chip process reloads)."""
    d = example("vector_add")
    pytester.makepyfile(PLUGIN_SESSION.format(dir=str(d)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--platform", "a2a3sim")
    result.assert_outcomes(passed=2)
