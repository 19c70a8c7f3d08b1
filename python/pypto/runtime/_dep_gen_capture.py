"""The graph pass of the two-pass swimlane, run as a child process.

On the ``cpu`` platform a chip swimlane runs the program twice: this child records the
dependency graph (``deps.json``) with only dep_gen on, and the parent measures clean timing.
The parent writes a spec (``dfx_outputs/_dep_gen_spec_<id>.json``) and runs
``python -m pypto.runtime._dep_gen_capture <spec>``; a failure here only costs the
swimlane its dependency arrows.
"""

from __future__ import annotations

import sys
from typing import List, Optional

from pypto import _native


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the graph pass for the spec named by the only argument; returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m pypto.runtime._dep_gen_capture SPEC", file=sys.stderr)
        return 2
    print(
        "[swimlane:dep_gen subprocess] capturing the task dependency graph for the swimlane; "
        "the following compile/run output is for deps.json only (timing is discarded)."
    )
    try:
        _native.dep_gen_capture_main(args[0])
    except (OSError, ValueError, TypeError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
