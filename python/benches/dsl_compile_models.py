"""``python python/benches/dsl_compile_models.py EXAMPLES_DIR... [--rounds N]``: the time
``pypto.ir.compile`` takes on the programs of PyPTO's ``examples/models`` programs.

A benchmark, not a test. PyPTO's examples are not part of this repository: pass the
``examples/models`` directory of a PyPTO checkout. Each ``*.py`` there is run once as a
script (``runpy``, as ``python <file>`` would, simulator runs included); every program it
builds (a ``@pl.program`` class or a ``@pl.jit`` lowering) is recorded, and so is what each
``build_*`` function it defines returns when called with its defaults (a builder the script
itself does not call). Then each recorded
program is compiled ``--rounds`` times into a fresh temporary directory, without the
``passes_dump/`` snapshots, and the median of each step is printed: **parse** is not
repeated (the program is already built); **passes**, **codegen**, **ptoas**, **write** are
the compiler's own timings; **total** is the wall time of the ``ir.compile`` call (golden
and ``debug/run.py`` writing included). A program the compiler refuses is listed with its
error. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

STEPS = ("passes", "codegen", "ptoas", "write")


def record_programs(script: Path) -> Tuple[List[Any], Optional[str]]:
    """The programs ``script`` builds when run as ``__main__``, and how it ended (``None``:
    exit status 0)."""
    from pypto.ir import program as program_module

    seen: List[Any] = []
    original = program_module.Program.__init__

    def recording_init(self: Any, native: Any) -> None:
        original(self, native)
        if not any(p.native is native for p in seen):
            seen.append(self)

    program_module.Program.__init__ = recording_init  # type: ignore[method-assign]
    saved_argv = sys.argv
    outcome: Optional[str] = None
    try:
        sys.argv = [str(script)]
        runpy.run_path(str(script), run_name="__main__")
        # Program builders the script defines but does not call, with their default shapes
        # (from the file imported as a module, so that their classes' source can be read).
        spec = importlib.util.spec_from_file_location(f"_bench_{script.stem}", script)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        for name, fn in vars(module).items():
            if name.startswith("build_") and inspect.isfunction(fn) and fn.__module__ == spec.name:
                params = inspect.signature(fn).parameters.values()
                if all(p.default is not inspect.Parameter.empty for p in params):
                    fn()
    except SystemExit as e:
        outcome = None if e.code in (0, None) else f"exit {e.code}"
    except Exception as e:  # noqa: BLE001 - a benchmark reports what the example raised
        outcome = f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
    finally:
        sys.argv = saved_argv
        program_module.Program.__init__ = original  # type: ignore[method-assign]
    # Keep one program per name (a jit entry lowered twice for the same shapes).
    unique: Dict[str, Any] = {}
    for p in seen:
        unique.setdefault(f"{p.name}/{len(p.functions)}", p)
    return list(unique.values()), outcome


def time_compile(program: Any, rounds: int) -> Dict[str, float]:
    """Median seconds per step over ``rounds`` compiles of ``program``."""
    import pypto.ir as ir

    samples: Dict[str, List[float]] = {s: [] for s in (*STEPS, "total")}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="dsl-models-bench-") as tmp:
            t0 = time.perf_counter()
            compiled = ir.compile(program, output_dir=str(Path(tmp) / "build"), dump_passes=False)
            samples["total"].append(time.perf_counter() - t0)
            timings = getattr(compiled, "compile_report")["timings"]
            for s in STEPS:
                samples[s].append(float(timings[s]))
    return {k: statistics.median(v) for k, v in samples.items()}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", type=Path, nargs="+", help="the examples/models directory of a PyPTO checkout (or files)")
    parser.add_argument("--rounds", type=int, default=5, help="compiles per program (default 5)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    scripts = sorted(f for p in args.paths for f in (p.glob("*.py") if p.is_dir() else [p]) if f.name != "__init__.py")
    if not scripts:
        parser.error(f"no *.py in {[str(p) for p in args.paths]}")
    os.environ.setdefault("PYPTO_EMIT_DEBUG_RUNNER", "0")
    print("| example | program | functions | passes ms | codegen ms | ptoas ms | write ms | ir.compile ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for script in scripts:
        programs, outcome = record_programs(script)
        if not programs:
            print(f"| {script.name} | (none built: {outcome or 'no program'}) | | | | | | |")
            continue
        for p in programs:
            try:
                m = {k: v * 1e3 for k, v in time_compile(p, args.rounds).items()}
            except Exception as e:  # noqa: BLE001
                print(f"| {script.name} | {p.name} | {len(p.functions)} | refused: {type(e).__name__} | | | | |")
                continue
            print(
                f"| {script.name} | {p.name} | {len(p.functions)} | {m['passes']:.2f} | {m['codegen']:.2f} | "
                f"{m['ptoas']:.2f} | {m['write']:.2f} | {m['total']:.1f} |"
            )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
