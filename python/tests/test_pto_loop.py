"""The `.pto` edit loop through the generated `python DIR/debug/run.py` on the bundled
PTO-ISA example `paged_attn_bf16`, with no ptoas installed: an edited
`ptoas/softmax_prepare.pto` (the attention scale doubled) is translated by the bundled
ptoas, spliced into its kernel, recompiled and validated; `--no-rebuild-from-pto` and
`PYPTO_REBUILD_FROM_PTO=0` turn the splice off."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

KERNEL = Path("kernels/aiv/softmax_prepare.cpp")
UNIT = Path("ptoas/softmax_prepare.pto")


def _env(**extra: str) -> dict[str, str]:
    """This environment without any ptoas: no PTOAS_ROOT, no PATH entry holding one."""
    env = {k: v for k, v in os.environ.items() if k not in ("PTOAS_ROOT", "PYPTO_REBUILD_FROM_PTO")}
    dirs = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(d for d in dirs if d and not (Path(d) / "ptoas").exists())
    env.update(extra)
    return env


def _run(d: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(d / "debug" / "run.py"), *args],
        capture_output=True, text=True, timeout=600, env=_env(**env),
    )  # fmt: skip


def _fresh(example) -> Path:
    """A copy of paged_attn_bf16 whose ptoas/<unit>.cpp stamps are newer than their .pto,
    both in the past (a copy or a checkout need not keep the order the generator wrote)."""
    d = example("paged_attn_bf16")
    now = time.time()
    for p in (d / "ptoas").iterdir():
        t = now - (5 if p.suffix == ".cpp" else 10)
        os.utime(p, (t, t))
    return d


def _double_the_scale(d: Path) -> None:
    """`tmuls` by `scale * 2.0` instead of `scale` in softmax_prepare.pto (written now)."""
    path = d / UNIT
    pto = path.read_text(encoding="utf-8")
    edited = pto.replace(
        "  %c0_i64 = arith.constant 0 : i64\n",
        "  %c0_i64 = arith.constant 0 : i64\n"
        "  %cst_2 = arith.constant 2.00000000000000000e+00 : f32\n"
        "  %scale_x2 = arith.mulf %arg1, %cst_2 : f32\n",
        1,
    ).replace("pto.tmuls ins(%s_padded, %arg1 :", "pto.tmuls ins(%s_padded, %scale_x2 :", 1)
    assert edited != pto and edited.count("%scale_x2") == 2
    path.write_text(edited, encoding="utf-8")


def test_run_py_splices_an_edited_pto_and_validates_the_new_result(example):
    d = _fresh(example)
    _double_the_scale(d)
    before = (d / KERNEL).read_text(encoding="utf-8")

    res = _run(d)
    for line in [
        "[pto->cpp] using the bundled ptoas translator (no ptoas on PTOAS_ROOT or PATH)",
        "[pto->cpp] regenerating from ptoas/softmax_prepare.pto",
        "[pto->cpp]   spliced -> kernels/aiv/softmax_prepare.cpp",
        "[pto->cpp] updated 1 kernel cpp(s)",
    ]:
        assert line in res.stdout.splitlines(), res.stdout
    assert "regenerating from ptoas/qk_matmul.pto" not in res.stdout
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Output 'out' does not match golden" in res.stderr
    after = (d / KERNEL).read_text(encoding="utf-8")
    assert "// pto: %scale_x2\n" in after and "// pto: %scale_x2\n" not in before
    head = "// --- ptoas-generated code ---\n"
    assert after.split(head)[0] == before.split(head)[0], "the wrapper header is kept"
    tail = "// --- Kernel entry point ---"
    assert after.split(tail)[1] == before.split(tail)[1], "kernel_entry is kept"

    # The golden for the edited kernel: compute_golden with the doubled scale.
    golden = d / "golden.py"
    line = '    scale = np.float32(getattr(scale, "value", scale))\n'
    text = golden.read_text(encoding="utf-8")
    assert text.count(line) == 1
    doubled = line.rstrip("\n") + " * np.float32(2)\n"
    golden.write_text(text.replace(line, doubled), encoding="utf-8")
    res = _run(d)
    assert "[pto->cpp] no .pto changes detected" in res.stdout.splitlines(), res.stdout
    assert res.stdout.splitlines()[-1] == "Golden validation: PASSED", res.stdout + res.stderr
    assert res.returncode == 0, res.stderr


def test_run_py_no_rebuild_from_pto_and_the_env_switch_turn_the_splice_off(example):
    d = _fresh(example)
    _double_the_scale(d)
    before = (d / KERNEL).read_bytes()
    for args, env, line in [
        (["--no-rebuild-from-pto"], {}, "[pto->cpp] skipped (rebuild_from_pto=False)"),
        ([], {"PYPTO_REBUILD_FROM_PTO": "0"}, "[pto->cpp] skipped (PYPTO_REBUILD_FROM_PTO=0)"),
    ]:
        res = _run(d, *args, **env)
        assert line in res.stdout.splitlines(), res.stdout
        assert "regenerating" not in res.stdout
        assert (d / KERNEL).read_bytes() == before, line
        # The kernel still has the bundled body, which matches the bundled golden.
        assert res.stdout.splitlines()[-1] == "Golden validation: PASSED", res.stdout + res.stderr
        assert res.returncode == 0, res.stderr
