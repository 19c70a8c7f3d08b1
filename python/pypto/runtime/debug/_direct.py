"""The replay command line's direct path: ``python -m pypto.runtime.debug.replay DIR`` of a
replay that runs no Python hook, in one native call (``pypto._native.replay_run``).

Such a replay (not validated, a single-chip build, inputs read from ``golden.py`` without
running it, no diagnostics) calls no Python code between its steps, so the command line
needs neither argparse nor the runner's ``RunConfig`` nor anything else the general path
imports: it costs the interpreter and the native module, and the chip process starts as
soon as the build directory is known. It prints the same lines, writes the same files and
fails with the same errors and exit codes as the general path
(``python/tests/test_replay_direct.py`` compares the two).

:func:`read_args` accepts only what it reads exactly as argparse would: the directory and
``--no-recompile``, ``--no-rebuild-from-pto``, ``--no-validate``, ``--platform NAME``,
``--device-id N``, each at most once and spelled out. Anything else (``--help``,
``--validate``, a diagnostics switch, ``--log-level``, an abbreviation, ``--flag=value``)
goes to argparse, and so does a replay the direct path cannot run as the general one would
(:func:`plan`).
"""

from __future__ import annotations

import os

from pypto import _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

#: The flags :func:`read_args` reads: ``(argparse destination, value)``.
_FLAGS = {
    "--no-recompile": ("no_recompile", True),
    "--no-rebuild-from-pto": ("no_rebuild_from_pto", True),
    "--no-validate": ("validate", False),
}

#: The options with one value :func:`read_args` reads, by argparse destination.
_VALUED = {"--platform": "platform", "--device-id": "device_id"}


def canonical_path(text: str) -> bool:
    """Whether ``text`` is a path as ``pathlib.Path`` prints it (no empty or ``.``
    component, no trailing ``/``), so that ``str(Path(text)) == text``."""
    if text in (".", "/"):
        return True
    parts = text.split("/")
    head = parts[1:] if parts[0] == "" else parts
    return bool(head) and all(p not in ("", ".") for p in head)


def read_args(argv: Sequence[str], default_platform: str) -> Optional[Dict[str, Any]]:
    """The arguments of ``argv`` as the command line's argparse parser reads them (only the
    destinations the direct path uses), or ``None`` when ``argv`` holds anything else."""
    args: Dict[str, Any] = {"platform": default_platform, "device_id": 0, "validate": None}
    args.update(no_recompile=False, no_rebuild_from_pto=False)
    seen = set()
    work_dir = None
    i = 0
    while i < len(argv):
        token = argv[i]
        if token in seen:
            return None
        if token in _FLAGS:
            dest, flag = _FLAGS[token]
            args[dest] = flag
        elif token in _VALUED:
            if i + 1 == len(argv) or argv[i + 1].startswith("-"):
                return None
            value = argv[i + 1]
            if token == "--device-id":
                if not (value.isascii() and value.isdigit()):
                    return None
                args[_VALUED[token]] = int(value)
            else:
                args[_VALUED[token]] = value
            i += 1
        elif token.startswith("-") or work_dir is not None or not canonical_path(token):
            return None
        else:
            work_dir = token
        seen.add(token)
        i += 1
    if work_dir is None:
        return None
    args["work_dir"] = work_dir
    return args


def plan(argv: Sequence[str]) -> Optional[Tuple[str, List[Any], Any, Dict[str, Any]]]:
    """``(directory, inputs, run options, arguments)`` of a replay the direct path runs as
    the general path would, or ``None``: ``argv`` is not read by :func:`read_args`, the
    directory is no single-chip build with ``kernel_config.py``, ``golden.py`` must run to
    give the inputs, or the options are not valid (the general path then reports it where
    it does). ``PTO_SIM_FALLBACK`` set: the general path (``RunConfig`` may move the run to
    the simulator, with a warning)."""
    args = read_args(argv, "a2a3sim")
    if args is None or "PTO_SIM_FALLBACK" in os.environ:
        return None
    work_dir = args["work_dir"]
    if _native.build_kind(work_dir) != "single_chip":
        return None
    if not os.path.exists(os.path.join(work_dir, "kernel_config.py")):
        return None
    try:
        options = _native.RunOptions(args["platform"])
    except (ValueError, TypeError):
        return None
    # The chip process starts now, so that its start-up overlaps reading golden.py (the
    # general path, if golden.py must run, takes it as well).
    _native.replay_prestart(work_dir, options)
    try:
        with open(os.path.join(work_dir, "golden.py"), encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    from pypto._golden_static import static_inputs

    named = static_inputs(source, work_dir)
    if named is None:
        return None
    return work_dir, [value for _, value in named], options, args


def run(work_dir: str, inputs: List[Any], options: Any, args: Dict[str, Any]) -> int:
    """Runs a replay :func:`plan` planned; prints what the general path prints."""
    from pypto.runtime.device_runner import _log_report

    report = _native.replay_run(
        work_dir,
        inputs,
        options,
        rebuild_from_pto=not args["no_rebuild_from_pto"],
        recompile=not args["no_recompile"],
    )
    _log_report(report)
    print(finished_line(work_dir))
    return 0


def finished_line(work_dir: str) -> str:
    """The replay's last line, for ``work_dir`` as ``pathlib.Path`` prints it (both paths
    print it)."""
    out = "dfx_outputs" if work_dir == "." else f"{work_dir.rstrip('/')}/dfx_outputs"
    return f"Replay finished. DFX artefacts (if any) under {out}"
