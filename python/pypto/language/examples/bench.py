"""``python -m pypto.language.examples.bench [--rounds N]``: the compile time of each DSL
example, step by step, from one run.

For each example and round: **parse** (the class's source through the AST front end into
the IR), **passes** (the five passes), **codegen** (`.pto` and orchestration emission),
**ptoas** (the bundled translator, every kernel), **write** (the build directory's files),
then **C++** (every kernel and the orchestration built into shared objects with a cold
compiler cache: a fresh ``PTO_CACHE_DIR`` per round). Prints the median of the rounds per
step, the DSL share (parse to write) and its ratio to the C++ build, as a Markdown table.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Dict, List, Optional

from pypto.language import _parser as P
from pypto.language.examples import EXAMPLES

STEPS = ("parse", "passes", "codegen", "ptoas", "write", "cxx")


def _parse(module: ModuleType, class_name: str) -> P.Source:
    src_text = inspect.getsource(module)
    tree = ast.parse(src_text)
    src = P.Source(inspect.getsourcefile(module) or module.__name__, 0, 0, src_text.splitlines(keepends=True))
    P.parse_module_program(tree, src, dict(vars(module)), class_name)
    return src


def measure(module: ModuleType, rounds: int) -> Dict[str, float]:
    """Median seconds per step over ``rounds`` rounds."""
    from pypto.ir.compiled_program import CompiledProgram
    from pypto.language.examples import program_of

    program = program_of(module)
    samples: Dict[str, List[float]] = {s: [] for s in STEPS}
    saved = os.environ.get("PTO_CACHE_DIR")
    try:
        for _ in range(rounds):
            t0 = time.perf_counter()
            _parse(module, program.name)
            samples["parse"].append(time.perf_counter() - t0)
            with tempfile.TemporaryDirectory(prefix="dsl-bench-") as tmp:
                report = program.native.compile(str(Path(tmp) / "build"), "a2a3sim", "Ascend910B", False)
                for step in ("passes", "codegen", "ptoas", "write"):
                    samples[step].append(float(report["timings"][step]))
                os.environ["PTO_CACHE_DIR"] = str(Path(tmp) / "cache")
                compiled = CompiledProgram.from_dir(Path(tmp) / "build")
                t1 = time.perf_counter()
                compiled.load()
                samples["cxx"].append(time.perf_counter() - t1)
    finally:
        if saved is None:
            os.environ.pop("PTO_CACHE_DIR", None)
        else:
            os.environ["PTO_CACHE_DIR"] = saved
    return {s: statistics.median(v) for s, v in samples.items()}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pypto.language.examples.bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="rounds per example (default 5)")
    parser.add_argument("names", nargs="*", help="examples (default: all)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    print("| example | parse ms | passes ms | codegen ms | ptoas ms | write ms | DSL total ms | C++ (cold) ms | DSL : C++ |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, module in EXAMPLES.items():
        if args.names and name not in args.names:
            continue
        m = measure(module, args.rounds)
        dsl = sum(m[s] for s in STEPS if s != "cxx")
        ms = {k: v * 1e3 for k, v in m.items()}
        print(
            f"| {name} | {ms['parse']:.2f} | {ms['passes']:.2f} | {ms['codegen']:.2f} | {ms['ptoas']:.2f} | "
            f"{ms['write']:.2f} | {dsl * 1e3:.2f} | {ms['cxx']:.0f} | 1 : {m['cxx'] / dsl:.0f} |"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
