"""``python -m pypto.language.examples [--out DIR] [NAME ...]``: compiles the DSL examples."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

from pypto.language.examples import EXAMPLES, compile_examples


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pypto.language.examples", description=__doc__)
    parser.add_argument("--out", default="examples", help="where the build directories go (default: examples)")
    parser.add_argument("names", nargs="*", choices=[[], *EXAMPLES], help="examples to compile (default: all)")
    args = parser.parse_args(argv)
    for d in compile_examples(Path(args.out), list(args.names) or None):
        print(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
