"""Replay a ``build_output/<dir>/``: :func:`replay` and ``python -m pypto.runtime.debug.replay``.

The loop this serves: hand-edit a kernel's C++ (or its ``ptoas/*.pto``), then re-run the
compiled program with diagnostics on, and check it against ``golden.py``::

    python -m pypto.runtime.debug.replay build_output/vector_add --pmu 2 --swimlane
    python build_output/vector_add/debug/run.py --no-validate

Steps of :func:`replay`: the ``.pto`` -> cpp splice (``rebuild_from_pto``), the forced
invalidation of cached binaries (``recompile``), the run (``[execute] running on
device...``), and with ``validate=True`` the check of every output in ``golden.py``'s
``__outputs__`` against ``compute_golden`` with its ``RTOL`` / ``ATOL``.

The command line exits as ``pto replay`` does: 0 success, 1 golden mismatch (``FAIL: golden
mismatch`` and the details), 2 any other error (``error: ...``), 130 on Ctrl-C. A replay that
runs user Python (validation, an L3 host orchestration, a ``golden.py`` that must run to
give the inputs) runs in a child interpreter (:func:`_child_main`), and the parent requires
the explicit result record the child writes as its last act: a child that ends without one
(``golden.py`` or ``host_orch.py`` ending the interpreter by a route
:mod:`pypto._user_code` cannot intercept, a crash, a signal) is an error, never a silent
exit 0. One that runs none runs in this process. ``pto replay`` of an L3 build runs the
same child the same way.
"""

from __future__ import annotations

import os
import sys

from pypto import _native

# This module is the command line's `__main__`, so it imports at run time only what every
# replay needs; the rest is imported by the functions that use it (typing, pathlib, argparse,
# the runner's dataclasses, golden.py support), so that a replay that runs no Python hook
# (:mod:`pypto.runtime.debug._direct`) costs the interpreter and the native module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from types import ModuleType
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

    from pypto._user_code import UserCodeExit
    from pypto.runtime.runner import RunConfig

    PathLike = Union[str, "os.PathLike[str]"]
    InlineInputs = Callable[[], Sequence[Any]]
    UserCompare = Callable[..., Any]
else:

    def __getattr__(name):
        # pypto._user_code imports contextlib and threading: on first access.
        if name == "UserCodeExit":
            from pypto._user_code import UserCodeExit

            return UserCodeExit
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["UserCodeExit", "replay"]


def execute_compiled(work_dir: PathLike, args: List[Any], **kwargs: Any) -> None:
    """The run :func:`replay` makes: ``pypto.runtime.runner._execute_compiled``, without
    ``execute_compiled``'s deprecation warning (the name PyPTO's tests patch)."""
    from pypto.runtime.runner import _execute_compiled

    _execute_compiled(os.fspath(work_dir), args, **kwargs)


def _is_l3(work_dir: PathLike) -> bool:
    """Whether ``work_dir`` is an L3 build, by the runner's own detection."""
    return _native.build_kind(work_dir) == "distributed"


def replay(
    work_dir: PathLike,
    *tensors: Any,
    config: Optional[RunConfig] = None,
    recompile: bool = True,
    rebuild_from_pto: bool = True,
    validate: bool = False,
    _golden: Optional[Tuple[ModuleType, List[Tuple[Any, Any]]]] = None,
) -> None:
    """Re-runs the compiled program in ``work_dir`` with ``tensors`` (every parameter, in
    orchestration order: ``torch.Tensor`` or NumPy arrays and ctypes scalars; outputs are
    written into their tensors).

    - ``config``: the platform, device and diagnostics (default ``RunConfig()``);
      diagnostics go to ``<work_dir>/dfx_outputs/``.
    - ``rebuild_from_pto``: first regenerate kernel cpp bodies from edited ``ptoas/*.pto``.
    - ``recompile``: force-invalidate cached binaries so edited cpps are rebuilt (without
      it, the cache's compatibility checks still apply).
    - ``validate``: check the outputs against ``golden.py`` (``AssertionError`` on a
      mismatch); every tensor parameter must then get a tensor (scalars are passed as they
      are, where PyPTO refuses them).

    A single-chip build runs through ``execute_compiled(work_dir, tensors, platform=...,
    device_id=..., dfx=...)``, a distributed (L3) one through
    ``pypto.runtime.distributed_runner.execute_distributed_compiled``. Raises
    ``FileNotFoundError`` when ``work_dir`` is not a build directory or, with ``validate``,
    has no ``golden.py``; ``ValueError`` / ``TypeError`` when the tensors do not fit
    ``golden.py``'s parameters. Errors raised inside ``golden.py`` propagate as they are.
    (``_golden``: the command line's already loaded golden module and its
    ``generate_inputs`` pairs, so that they are not produced twice.)
    """
    from pathlib import Path

    from pypto._golden import generate_named_inputs, is_tensor_default, load_golden_module
    from pypto._golden import snapshot, validate_against_golden
    from pypto._tensors import is_array_like
    from pypto.runtime.runner import RunConfig, _DfxOpts

    config = config if config is not None else RunConfig()
    wd = Path(work_dir)
    is_l3 = _is_l3(wd)
    if not is_l3 and not (wd / "kernel_config.py").exists():
        raise FileNotFoundError(
            f"replay(): {work_dir} is not a build_output directory "
            "(missing kernel_config.py and orchestration/host_orch.py)"
        )
    golden = None
    names: List[str] = []
    if validate:
        if _golden is not None:
            golden, named = _golden
        else:
            golden = load_golden_module(wd)
            named = generate_named_inputs(golden)
        if len(named) != len(tensors):
            raise ValueError(
                f"replay(validate=True): expected {len(named)} tensors (orchestration parameter "
                f"count from {wd / 'golden.py'}), got {len(tensors)}"
            )
        for (name, default), value in zip(named, tensors):
            if is_tensor_default(default) and not is_array_like(value):
                raise TypeError(
                    f"replay(validate=True): parameter '{name}' must be a torch.Tensor, "
                    f"got {type(value).__name__}"
                )
        names = [str(name) for name, _ in named]

    # The lifecycle is the runner's (`pto replay`'s): it refuses what is no build directory,
    # splices, invalidates, then calls these steps around its banner.
    program: List[Any] = []
    initial: Dict[str, Any] = {}

    def load() -> None:
        if not is_l3:
            from pypto.runtime.device_runner import _load_program

            program.append(_load_program(wd, config.platform))

    def run() -> None:
        initial.update(snapshot(names, tensors) if golden is not None else {})
        if is_l3:
            from pypto.runtime import distributed_runner

            distributed_runner.execute_distributed_compiled(
                wd, list(tensors), config=config, platform=config.platform
            )
        else:
            execute_compiled(
                wd,
                list(tensors),
                platform=config.platform,
                device_id=config.device_id,
                dfx=_DfxOpts.from_run_config(config),
                config=config,
                _program=program[0],
            )

    def check() -> None:
        if golden is not None:
            validate_against_golden(golden, initial, dict(zip(names, tensors)))

    _native.replay_steps(
        wd,
        rebuild_from_pto=rebuild_from_pto,
        recompile=recompile,
        validate=golden is not None,
        dfx_on=config.writes_dfx_files(),
        load=load,
        run=run,
        check=check,
        platform=config.platform,
        in_process=config.in_process,
    )


def _load_inputs_from_golden(work_dir: PathLike) -> List[Any]:
    """The argument values of ``golden.generate_inputs({"name": "Default"})``, in order."""
    from pypto._golden import generate_named_inputs, load_golden_module

    module = load_golden_module(work_dir)
    return [value for _, value in generate_named_inputs(module)]


def _run_inputs(work_dir: PathLike) -> List[Any]:
    """The argument values of a run that is not validated: read natively when
    ``golden.py`` only loads ``data/in`` files (see
    :func:`pypto._golden.native_inputs_from_golden`; no NumPy is imported then), else from
    running ``golden.generate_inputs``. An L3 build's host orchestration takes host tensors,
    so its inputs always come from ``golden.py``."""
    from pypto._golden import native_inputs_from_golden

    if _is_l3(work_dir):
        return _load_inputs_from_golden(work_dir)
    named = native_inputs_from_golden(work_dir)
    if named is not None:
        return [value for _, value in named]
    return _load_inputs_from_golden(work_dir)


def _terminal_columns() -> int:
    """The terminal width as ``shutil.get_terminal_size()`` finds it (``COLUMNS``, then the
    terminal of stdout, else 80), without importing shutil and the compression modules it
    imports."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _switch_arguments(parser: argparse.ArgumentParser) -> None:
    """The diagnostics switches' options, one per row of the runner's table
    (``pypto.runtime._dfx_switches``), spelled as ``pto replay`` spells them: ``--<flag>``
    for an on/off switch, ``--<flag> [LEVEL]`` for a level (bare: the level ``True`` stands
    for), or, for a switch whose level has an option of its own (``replay_level_option``:
    PyPTO's ``--swimlane`` / ``--swimlane-level LEVEL``, since an optional value would take
    the positional build directory), a bare ``--<flag>`` and ``--<that option> LEVEL``.
    Each option's ``dest`` is the switch's Python keyword."""
    from pypto.runtime import _dfx_switches
    from pypto.runtime.runner import _SWIMLANE_CLI_HELP

    for s in _dfx_switches.SWITCHES:
        flag, kw, help_text = f"--{s.cli_flag}", s.python_keyword, f"{s.help}: {s.artifact}"
        if s.kind == "flag":
            parser.add_argument(flag, dest=kw, action="store_true", help=help_text)
        elif s.replay_level_option is not None:
            parser.add_argument(flag, dest=kw, action="store_const", const=s.bare, default=0, help=_SWIMLANE_CLI_HELP)
            parser.add_argument(
                f"--{s.replay_level_option}",
                dest=f"{kw}_level",
                type=int,
                choices=range((s.max or 0) + 1),
                default=None,
                metavar=s.value_name,
                help=f"{s.value_name} 0-{s.max} of {flag}: {s.artifact}; takes precedence over {flag}, 0 included",
            )
        else:
            parser.add_argument(
                flag, dest=kw, type=int, nargs="?", const=s.bare, default=0, metavar=s.value_name, help=help_text
            )


def _switch_values(args: argparse.Namespace) -> Dict[str, Any]:
    """The switches' values of parsed ``args``, by Python keyword (``--swimlane-level`` over
    ``--swimlane``)."""
    from pypto.runtime import _dfx_switches

    values = {kw: getattr(args, kw) for kw in _dfx_switches.KEYWORDS}
    for kw in values:
        level = getattr(args, f"{kw}_level", None)
        if level is not None:
            values[kw] = level
    return values


def _parser(default_platform: str) -> argparse.ArgumentParser:
    import argparse
    from pathlib import Path

    class _HelpFormatter(argparse.HelpFormatter):
        """argparse's formatter, with the width computed here: the default one imports
        shutil (and with it bz2, lzma and zlib) whenever an argument is added."""

        def __init__(
            self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: Optional[int] = None
        ) -> None:
            super().__init__(
                prog, indent_increment, max_help_position, width if width is not None else _terminal_columns() - 2
            )

    parser = argparse.ArgumentParser(
        formatter_class=_HelpFormatter,
        prog="python -m pypto.runtime.debug.replay",
        description=(
            "Replay a build_output/<dir>/: rebuild edited .pto/cpp sources, run with the "
            "chosen diagnostics (under <dir>/dfx_outputs/) and optionally validate against "
            "golden.py."
        ),
    )
    parser.add_argument("work_dir", type=Path, help="the build directory")
    parser.add_argument(
        "--platform", default=default_platform, help="a2a3sim, a2a3, a5sim, a5 or cpu (this runtime's host cores)"
    )
    parser.add_argument("--device-id", type=int, default=0, help="device id (ignored on sim)")
    _switch_arguments(parser)
    parser.add_argument(
        "--timing",
        choices=("host", "predicted"),
        default=None,
        help="what the diagnostics' times are: host (the simulator's clock) or predicted "
        "(the timing model's device cycles, docs/TIMING.md); default PTO_TIMING, else host",
    )
    parser.add_argument(
        "--dfx-schema",
        choices=("2026-08", "2026-09"),
        default=None,
        help="which generation of Simpler's DFX files to write (default: the build's)",
    )
    parser.add_argument(
        "--no-recompile",
        action="store_true",
        help="skip the forced invalidation of cached binaries",
    )
    parser.add_argument(
        "--no-rebuild-from-pto",
        action="store_true",
        help="skip regenerating kernel cpps from edited ptoas/*.pto",
    )
    parser.add_argument(
        "--log-level",
        default=None,
        metavar="LEVEL",
        help="runtime log level: debug, info, timing, warn, error, null (or a number)",
    )
    parser.add_argument(
        "--log-sync-pypto",
        action="store_true",
        help="also set PyPTO's compiler-side log level (pypto.LogLevel) to the same band",
    )
    parser.add_argument(
        "--validate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="validate outputs against golden.py (default: on for debug/run.py, off here)",
    )
    return parser


def _main(
    argv: Optional[Sequence[str]] = None,
    *,
    inline_inputs: Optional[InlineInputs] = None,
    user_compare: Optional[UserCompare] = None,
    default_platform: str = "a2a3sim",
    _inputs: Optional[List[Any]] = None,
) -> int:
    """The command line (also what ``debug/run.py`` calls). Returns 0; errors raise.

    Inputs come from ``golden.py``'s ``generate_inputs`` unless ``inline_inputs`` is given
    and golden validation is not going to run (no ``golden.py``, or ``--no-validate``); then
    ``inline_inputs()`` provides them and ``user_compare(*tensors)`` runs afterwards.
    """
    from pypto._golden import generate_named_inputs, load_golden_module
    from pypto.runtime.runner import RunConfig

    args = _parser(default_platform).parse_args(list(argv) if argv is not None else None)
    if args.log_level is not None:
        from pypto.runtime import log_config

        level: Union[int, str] = int(args.log_level) if args.log_level.isdigit() else args.log_level
        log_config.configure_log(level, sync_pypto=args.log_sync_pypto)
    validate = args.validate if args.validate is not None else inline_inputs is not None
    golden_exists = (args.work_dir / "golden.py").exists()
    loaded: Optional[Tuple[ModuleType, List[Tuple[Any, Any]]]] = None
    if inline_inputs is not None and not (validate and golden_exists):
        tensors = list(inline_inputs())
        do_validate = False
    elif validate:
        module = load_golden_module(args.work_dir)
        named = generate_named_inputs(module)
        tensors = [value for _, value in named]
        loaded = (module, named)
        do_validate = True
    else:
        tensors = _inputs if _inputs is not None else _run_inputs(args.work_dir)
        do_validate = False
    config = RunConfig(
        platform=args.platform,
        device_id=args.device_id,
        timing=args.timing,
        dfx_schema=args.dfx_schema,
        **_switch_values(args),
    )
    replay(
        args.work_dir,
        *tensors,
        config=config,
        recompile=not args.no_recompile,
        rebuild_from_pto=not args.no_rebuild_from_pto,
        validate=do_validate,
        _golden=loaded,
    )
    from pypto.runtime.debug._direct import finished_line

    print(finished_line(str(args.work_dir)))
    if do_validate:
        print("Golden validation: PASSED")
    elif user_compare is not None:
        user_compare(*tensors)
    return 0


#: The environment variable naming the file the child writes its result record into.
RESULT_ENV = "PTO_REPLAY_RESULT_FILE"

#: What the parent runs (``python -c``), followed by the command line's arguments.
CHILD_DRIVER = "from pypto.runtime.debug.replay import _child_main\n_child_main()\n"


def _child_main(argv: Optional[Sequence[str]] = None) -> None:
    """The replay's child: runs :func:`_main`, maps its outcome to 0 / 1 / 2 / 130, writes
    ``{"code": N}`` into the file named by ``$PTO_REPLAY_RESULT_FILE`` as its last act and
    exits with ``N``."""
    import json

    result_file = os.environ.pop(RESULT_ENV, None)
    code = _exit_code(list(argv) if argv is not None else sys.argv[1:])
    if result_file:
        with open(result_file, "w", encoding="utf-8") as f:
            f.write(json.dumps({"code": code}))
    sys.exit(code)


def _exit_code(argv: Sequence[str]) -> int:
    """Runs :func:`_main` with ``argv`` and maps its outcome to the command line's exit code
    (0 / 1 / 2 / 130), printing the failure."""
    return _guarded(lambda: _main(argv))


def _guarded(main: Callable[[], int]) -> int:
    """Runs ``main`` and maps its outcome to the command line's exit code (0 / 1 / 2 /
    130), printing the failure."""
    try:
        code = main()
    except AssertionError as e:
        print(f"FAIL: golden mismatch\n{e}", flush=True)
        code = 1
    except KeyboardInterrupt:
        code = 130
    except SystemExit as e:  # argparse: --help (0) or a usage error (2); user code's are errors
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except BaseException as e:  # noqa: BLE001 - every other failure is an error (exit 2)
        if os.environ.get("PTO_TRACEBACK"):
            import traceback

            traceback.print_exc()
        notes = "".join(f" ({n})" for n in getattr(e, "__notes__", ()))
        print(
            f"error: {type(e).__name__}: {e}{notes}{_user_site(e)}", file=sys.stderr, flush=True
        )
        code = 2
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _user_site(e: BaseException) -> str:
    """`` (at <file>:<line>)`` of the innermost frame of ``e`` outside the pypto package
    (the user's ``golden.py`` or ``host_orch.py``), or ``""``; ``PTO_TRACEBACK=1`` prints the
    whole traceback instead of just this."""
    import traceback
    from pathlib import Path

    ours = (str(Path(__file__).resolve().parents[2]), sys.prefix, sys.base_prefix)
    seen = set()
    err: Optional[BaseException] = e
    while err is not None and id(err) not in seen:  # the error, then what it replaced
        seen.add(id(err))
        site = ""
        for frame, line in traceback.walk_tb(err.__traceback__):
            name = frame.f_code.co_filename
            if not name.startswith(ours) and not name.startswith("<"):
                site = f" (at {name}:{line})"
        if site:
            return site
        err = err.__cause__ or err.__context__
    return ""


def outcome(status: int, record: Optional[str]) -> Tuple[int, Optional[str]]:
    """The exit code of a replay whose child ended with ``status`` (negative: killed by
    that signal) after writing ``record`` (``None``: no record), and the error to print,
    if any. The record decides; a missing or malformed one is an error (2; 130 for
    SIGINT), and so is a success record followed by a failing exit."""
    import json

    code: Optional[int] = None
    if record:
        try:
            value = json.loads(record).get("code")
            code = value if isinstance(value, int) and value in (0, 1, 2, 130) else None
        except (ValueError, AttributeError):
            code = None
    how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
    if code is None:
        if status in (-2, 130):
            return 130, None
        return 2, (
            f"the replay {how} without reporting a result: its Python code (golden.py, "
            "orchestration/host_orch.py or a SubWorker) ended the interpreter early "
            "(os._exit(), a C-level exit(), a crash or a signal), so nothing was validated; "
            "make that code return, or raise an exception to report an error"
        )
    if code == 0 and status != 0:
        return 2, f"the replay reported success but then {how} while shutting down"
    return code, None


def _no_user_code_inputs(argv: Sequence[str]) -> Optional[List[Any]]:
    """The inputs of a replay with ``argv`` that runs no user Python at all (not validated,
    not an L3 build, whose host orchestration is Python, and inputs read from ``data/in``
    without running ``golden.py``: :func:`pypto._golden.native_inputs_from_golden`), else
    ``None``. Nothing can then end the interpreter behind the replay's back, so it needs no
    child interpreter; the inputs read for the check are the run's (read once)."""
    from pypto._golden import native_inputs_from_golden

    try:
        args = _parser("a2a3sim").parse_args(list(argv))
    except SystemExit:
        return None  # --help or a usage error: the child prints them
    if args.validate or _is_l3(args.work_dir):
        return None
    named = native_inputs_from_golden(args.work_dir)
    return None if named is None else [value for _, value in named]


def _supervise(argv: Sequence[str]) -> int:
    """Runs :func:`_child_main` with ``argv`` in a child interpreter and returns the exit
    code :func:`outcome` gives (printing its error). A replay that runs no user Python
    (:func:`_no_user_code_inputs`) runs here instead: the child exists to catch user code
    ending the interpreter, and starting it costs a whole interpreter and its imports. One
    that runs no Python hook at all runs in one native call (:mod:`._direct`)."""
    from pypto.runtime.debug import _direct

    planned = _direct.plan(argv)
    if planned is not None:
        return _guarded(lambda: _direct.run(*planned))
    import subprocess
    import tempfile

    inputs = _no_user_code_inputs(argv)
    if inputs is not None:
        return _guarded(lambda: _main(argv, _inputs=inputs))
    fd, path = tempfile.mkstemp(prefix="pto-replay-result-", suffix=".json")
    os.close(fd)
    try:
        env = dict(os.environ)
        env[RESULT_ENV] = path
        try:
            status = subprocess.run(
                [sys.executable, "-c", CHILD_DRIVER, *argv], env=env
            ).returncode
        except KeyboardInterrupt:
            return 130
        with open(path, encoding="utf-8") as f:
            record = f.read()
        code, error = outcome(status, record or None)
        if error is not None:
            print(f"error: {error}", file=sys.stderr, flush=True)
        return code
    finally:
        os.unlink(path)


if __name__ == "__main__":
    raise SystemExit(_supervise(sys.argv[1:]))
