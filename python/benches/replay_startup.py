"""Benchmark: the Python replay command against ``pto replay``, and ``import pypto.runtime``
against a bare interpreter, as whole processes (issue 15, deliverable 7).

Usage (from the repository root, with the package installed in the interpreter that runs
this script)::

    python python/benches/replay_startup.py [--rounds 21] [--pto target/release/pto]
        [--example examples/bgemm]

It copies the example build directory to a temporary directory, runs ``pto replay DIR``
once there (so the binaries are compiled and cached), then runs these commands in turn,
``--rounds`` times each, alternating so that a change of machine load hits all of them
alike:

- ``pto replay DIR --no-recompile``
- ``python -m pypto.runtime.debug.replay DIR --no-recompile``
- ``python -c "import pypto.runtime"``
- ``python -c "pass"``
- ``python -c "import pypto.runtime.debug.replay"``, ``python -m`` of an empty module (what
  ``-m`` itself costs: runpy imports ``importlib.util``), the chip process's start alone and
  ``pto --version``: where the difference goes

and prints the wall time per process (min / median / max, ms) and the CPU time of its
process tree (the chip process included), and the ratios of the medians and of the minima: Python replay / ``pto replay`` (bound: 2) and
``import pypto.runtime`` itself (bound: 100 ms). A command that fails stops the benchmark
with its output. ``--json FILE`` also writes the samples. The package is byte-compiled
first (``compileall``), so that imports are measured warm even under
``PYTHONDONTWRITEBYTECODE=1``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]


def _cpu() -> float:
    """User + system CPU seconds of every waited-for child so far (their children too)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd: Sequence[str], env: Optional[Dict[str, str]], cwd: Optional[str] = None) -> Tuple[float, float]:
    """Runs ``cmd`` (in ``cwd``) to completion: its wall time and the CPU time of its process
    tree, in seconds. Raises on failure."""
    cpu0 = _cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
        )
    return elapsed, _cpu() - cpu0


def _chip_start(python: str) -> List[str]:
    """The chip-process command ``pypto.runtime`` registers, ending once the native module
    is loaded instead of serving runs."""
    probe = (
        "import json, pypto._native as n, pypto.runtime as r\n"
        "print(json.dumps([r._CHIP_WORKER_BOOTSTRAP, n.__file__]))"
    )
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=True).stdout
    bootstrap, native = json.loads(out.splitlines()[-1])
    serve = "sys.exit(m.chip_worker_main())\n"
    if serve not in bootstrap:
        raise SystemExit("pypto.runtime._CHIP_WORKER_BOOTSTRAP no longer ends with the serve call")
    return [python, "-I", "-S", "-c", bootstrap.replace(serve, ""), native]


def _stats(samples: List[float]) -> Dict[str, float]:
    ms = [s * 1e3 for s in samples]
    return {"min": min(ms), "median": statistics.median(ms), "max": max(ms)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21, help="runs of each command (default 21)")
    parser.add_argument("--pto", default=str(ROOT / "target" / "release" / "pto"), help="the pto binary")
    parser.add_argument("--python", default=sys.executable, help="the interpreter with pypto installed")
    parser.add_argument("--example", default=str(ROOT / "examples" / "bgemm"), help="the build directory to copy")
    parser.add_argument("--json", default=None, help="also write the samples to this file")
    parser.add_argument(
        "--baseline-path",
        default=None,
        metavar="DIR",
        help="also run the two Python commands with PYTHONPATH=DIR (another copy of the package, e.g. an older commit's)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")

    env = dict(os.environ)
    package = subprocess.run(
        [args.python, "-c", "import os, pypto; print(os.path.dirname(pypto.__file__))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run([args.python, "-m", "compileall", "-q", package], check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="pto-bench-replay-") as tmp:
        (Path(tmp) / "pto_bench_empty.py").write_text("")
        work = Path(tmp) / Path(args.example).name
        shutil.copytree(args.example, work, ignore=shutil.ignore_patterns("dfx_outputs", "__pycache__"))
        # Compile once: later runs reuse the binaries (and the content cache).
        _run([args.pto, "replay", str(work)], env)
        commands = {
            "pto replay DIR --no-recompile": [args.pto, "replay", str(work), "--no-recompile"],
            "python -m pypto.runtime.debug.replay DIR --no-recompile": [
                args.python, "-m", "pypto.runtime.debug.replay", str(work), "--no-recompile",
            ],
            'python -c "import pypto.runtime"': [args.python, "-c", "import pypto.runtime"],
            'python -c "pass"': [args.python, "-c", "pass"],
            # Where the Python replay's time goes: its imports, and the chip process's start
            # (the interpreter loading the native module, without serving).
            'python -c "import pypto.runtime.debug.replay"': [
                args.python, "-c", "import pypto.runtime.debug.replay",
            ],
            "python -m MODULE (an empty module)": [args.python, "-m", "pto_bench_empty"],
            "chip process start (python -I -S, native module loaded)": _chip_start(args.python),
            "pto --version": [args.pto, "--version"],
        }  # fmt: skip
        envs: Dict[str, Dict[str, str]] = {name: env for name in commands}
        if args.baseline_path:
            baseline = dict(env, PYTHONPATH=args.baseline_path)
            for name in list(commands)[1:3] + list(commands)[4:5]:
                commands[f"{name} [baseline]"] = commands[name]
                envs[f"{name} [baseline]"] = baseline
        # One unmeasured pass warms the page cache for every command.
        for name, cmd in commands.items():
            _run(cmd, envs[name], tmp)
        samples: Dict[str, List[float]] = {name: [] for name in commands}
        cpu: Dict[str, List[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, cmd in commands.items():
                wall, used = _run(cmd, envs[name], tmp)
                samples[name].append(wall)
                cpu[name].append(used)

    stats = {name: _stats(s) for name, s in samples.items()}
    cpu_stats = {name: _stats(s) for name, s in cpu.items()}
    print(f"{args.rounds} alternating runs of each, per process (ms): wall time, and CPU time of the process tree")
    print(f"{'command':<70} {'min':>8} {'median':>8} {'max':>8} {'cpu min':>8} {'cpu med':>8}")
    for name, st in stats.items():
        c = cpu_stats[name]
        print(f"{name:<70} {st['min']:>8.1f} {st['median']:>8.1f} {st['max']:>8.1f} {c['min']:>8.1f} {c['median']:>8.1f}")
    names = list(commands)
    pto, py, imp, bare = (stats[n] for n in names[:4])
    print(f"python replay / pto replay: {py['median'] / pto['median']:.2f}x (median), "
          f"{py['min'] / pto['min']:.2f}x (min)  [bound 2x]")  # fmt: skip
    if args.baseline_path:
        old = stats[f"{names[1]} [baseline]"]
        print(f"python replay, baseline / now: {old['median'] / py['median']:.2f}x (median)")
    print(f"import pypto.runtime: {imp['median']:.1f} ms median, {imp['min']:.1f} ms min "
          f"({imp['median'] - bare['median']:.1f} ms over the bare interpreter)  [bound 100 ms]")  # fmt: skip
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rounds": args.rounds, "wall_s": samples, "cpu_s": cpu, "stats": stats, "cpu_stats": cpu_stats}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
