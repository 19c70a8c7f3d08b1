"""The DSL examples and the command that compiles them into build directories:

``python -m pypto.language.examples [--out DIR]`` writes ``DIR/dsl_vector_add``,
``DIR/dsl_tiled_matmul`` and ``DIR/dsl_paged_attention`` (default ``DIR``: ``examples``),
each with ``golden.py`` and ``data/`` from the example's inputs and NumPy reference, so
``pto replay``, ``pto demo`` and ``debug/run.py`` validate them. The repository's
``examples/dsl_*`` directories are this command's output (a test keeps them current).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType
from typing import Dict, List, Optional

from pypto.ir.program import Program
from pypto.language.examples import paged_attention, tiled_matmul, vector_add

__all__ = ["EXAMPLES", "compile_examples", "program_of"]

#: Build-directory name → example module.
EXAMPLES: Dict[str, ModuleType] = {
    "dsl_vector_add": vector_add,
    "dsl_tiled_matmul": tiled_matmul,
    "dsl_paged_attention": paged_attention,
}


def program_of(module: ModuleType) -> Program:
    """The ``@pl.program`` of an example module."""
    programs = [v for v in vars(module).values() if isinstance(v, Program)]
    if len(programs) != 1:
        raise ValueError(f"{module.__name__} defines {len(programs)} programs, expected one")
    return programs[0]


def compile_examples(out_dir: Path, names: Optional[List[str]] = None) -> List[Path]:
    """Compiles the examples (all, or ``names``) into ``out_dir/<name>``; each directory is
    replaced. Returns the directories."""
    from pypto.ir.compile import compile as ir_compile

    done = []
    for name, module in EXAMPLES.items():
        if names and name not in names:
            continue
        target = Path(out_dir) / name
        if target.exists():
            shutil.rmtree(target)
        ir_compile(
            program_of(module),
            output_dir=str(target),
            inputs=module.make_inputs(),
            golden=module.reference,
            rtol=module.RTOL,
            atol=module.ATOL,
        )
        done.append(target)
    return done
