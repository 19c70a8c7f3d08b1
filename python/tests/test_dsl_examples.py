"""The DSL examples: ``examples/dsl_*`` are exactly what ``python -m pypto.language.examples``
writes (so the build directories there come from this compiler), and the paged-attention
example run with ``enable_dump_args=1`` dumps ``q`` and ``out`` and nothing of the KV cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import numpy as np

from pypto.ir.compiled_program import CompiledProgram
from pypto.language.examples import EXAMPLES, compile_examples, program_of
from pypto.language.examples.__main__ import main as examples_main

REPO_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part in ("dfx_outputs", "cache", "actual") for part in p.relative_to(root).parts)
        and p.suffix != ".so"
    }


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dsl-examples")
    assert examples_main(["--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_committed_examples_are_what_the_command_writes(fresh: Path, name: str) -> None:
    want = _files(fresh / name)
    got = _files(REPO_EXAMPLES / name)
    stale = sorted(set(want) ^ set(got)) + sorted(k for k in want if k in got and want[k] != got[k])
    assert not stale, f"examples/{name} is stale ({stale[:5]}): run `python -m pypto.language.examples --out examples`"


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_committed_examples_replay_and_validate(tmp_path: Path, name: str) -> None:
    """Each checked-in directory replays with the replay CLI (its data/out) and debug/run.py
    (its golden.py), and every passes_dump/ snapshot computes the reference."""
    build = tmp_path / name
    shutil.copytree(REPO_EXAMPLES / name, build)
    for cmd in ([sys.executable, "-m", "pypto.runtime.debug.replay", str(build)], [sys.executable, str(build / "debug" / "run.py")]):
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stdout + res.stderr
    module = EXAMPLES[name]
    (orch,) = [f for f in program_of(module).functions.values() if f.ftype == "Orchestration"]
    names = [v.name for v, _ in orch.params]
    tensors = dict(zip(names, module.make_inputs()))
    computed = {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in tensors.items()}
    module.reference(computed, {})
    expected = {k: v for k, v in computed.items() if isinstance(v, np.ndarray)}
    CompiledProgram.from_dir(build).validate_ir(tensors, expected, rtol=module.RTOL, atol=module.ATOL)


def test_paged_attention_dumps_q_and_out_and_filters_the_cache(tmp_path: Path) -> None:
    build = tmp_path / "pa"
    shutil.copytree(REPO_EXAMPLES / "dsl_paged_attention", build, ignore=shutil.ignore_patterns("dfx_outputs", "cache", "*.so"))
    res = subprocess.run(
        [sys.executable, str(build / "debug" / "run.py"), "--dump-args", "1"], capture_output=True, text=True, timeout=900
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Golden validation: PASSED" in res.stdout + res.stderr
    doc = json.loads((build / "dfx_outputs" / "args_dump" / "args_dump.json").read_text())
    kernels = ["init_state", "qk", "softmax", "pv", "update", "normalize"]
    got = Counter((kernels[a["func_id"][0]], a["arg_index"], a["role"]) for a in doc["args"])
    # 3 + 4 blocks read q (one qk task each); 2 batches write out (one normalize each).
    assert got == Counter({("qk", 0, "input"): 7, ("normalize", 2, "output"): 2})
    cpp = (build / "orchestration" / "paged_attention.cpp").read_text()
    assert "params_t1.dump(ext_q);" in cpp and "params_t5.dump(ext_out);" in cpp, "the carried out keeps its name"


def test_compile_examples_replaces_a_directory(tmp_path: Path) -> None:
    stale = tmp_path / "dsl_vector_add" / "kernels" / "aiv" / "old_kernel.cpp"
    stale.parent.mkdir(parents=True)
    stale.write_text("// left over")
    (out,) = compile_examples(tmp_path, ["dsl_vector_add"])
    assert not stale.exists()
    assert (out / "kernel_config.py").is_file()
