"""Running an L3 (distributed) build: PyPTO's generated ``orchestration/host_orch.py``,
unchanged, over one chip process per device id.

What a generated module imports from here is :func:`_submit_chip`; the rest is the runner:

- :func:`_load_orch_entry`: import ``host_orch.py`` (as ``_pypto_generated.host_orch``,
  with Simpler's names provided when the real Simpler is absent) and find the one function
  marked ``_pypto_distributed_entry`` and the optional ``_alloc_intermediates``;
- :func:`_submit_chip`: place a chip dispatch (a pinned rank keeps it; a comm-less one goes
  round-robin over the chips in submission order) and, with diagnostics on, give it its own
  ``dfx_outputs/rank{w}/d{k}/`` (``k`` counted per chip per run) with
  ``dispatch_program.json``;
- :func:`execute_distributed`: the one-shot run (share the arguments, allocate the
  intermediates, start the chips, run the entry, drain, stop), once or, for a swimlane on
  ``cpu``, twice (graph pass, then timing pass);
- :func:`_collect_l3_swimlane`: per-dispatch name maps and swimlane conversion.

torch is required here (as in PyPTO); the single-chip paths never import it.
"""

from __future__ import annotations

import dataclasses
import contextlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import signal
import stat
import sys
import threading
import time
import types
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from pypto import _native
from pypto._files import write_text_atomic
from pypto._user_code import user_code
from pypto.runtime import _dfx_switches, _simpler_shim

_simpler_shim.install()

from pypto.runtime._simpler_compat._task_interface import CallConfig, element_types  # noqa: E402
from pypto.runtime._l3_worker import CallableHandle, Orchestrator, Worker  # noqa: E402

__all__ = [
    "execute_distributed",
    "execute_distributed_compiled",
]

_DISPATCH_PROGRAM = "dispatch_program.json"
#: The marker file ``_submit_chip`` writes into every ``rank<r>/d<k>/`` it creates: only a
#: directory holding it (a regular file, not a link) is ever removed or post-processed.
DISPATCH_MARKER = ".pto_dispatch"
_DISPATCH_NAME = re.compile(r"d(0|[1-9][0-9]{0,8})")

SWIMLANE_BANNER = (
    "[swimlane] L3 swimlane enabled -> running the dispatch twice (dep_gen perturbs timing, "
    "so the graph and the timing are captured separately):",
    "[swimlane] run 1/2: capturing the per-dispatch task graph (deps.json); its timing is "
    "discarded.",
    "[swimlane] run 2/2: measuring clean per-task timing (these are the reported numbers).",
)

SIM_SKIP = (
    "Skipping L3 swimlane conversion on simulator: merged_swimlane_*.json is only generated "
    "for onboard runs (raw chip_swimlane_records.json kept)."
)


def _is_sim(platform: str) -> bool:
    return platform.endswith("sim")


# --- loading the generated module ----------------------------------------------------------


def _load_orch_entry(path: Path) -> Tuple[Callable[..., Any], Optional[Callable[..., Any]]]:
    """``(entry, _alloc_intermediates or None)`` of the generated module at ``path``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"Generated orchestration not found at {path}. Did the codegen produce "
            "distributed output?"
        )
    _simpler_shim.install()
    if "_pypto_generated" not in sys.modules:
        pkg = types.ModuleType("_pypto_generated")
        pkg.__path__ = []
        sys.modules["_pypto_generated"] = pkg
    name = "_pypto_generated.host_orch"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot load the generated orchestration {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    marked = [
        obj
        for obj in vars(module).values()
        if inspect.isfunction(obj)
        and obj.__module__ == module.__name__
        and getattr(obj, "_pypto_distributed_entry", False)
    ]
    if len(marked) != 1:
        names = sorted(f.__name__ for f in marked)
        raise RuntimeError(
            "Expected exactly one entry function marked with `_pypto_distributed_entry` in "
            f"{path}, found {len(marked)}: {names}. The generated orchestration module is "
            "malformed — regenerate via distributed codegen."
        )
    alloc = getattr(module, "_alloc_intermediates", None)
    return marked[0], alloc if callable(alloc) else None


def _call_alloc_intermediates(
    alloc: Optional[Callable[..., Any]], tensors: Dict[str, Any], world_size: int
) -> None:
    """Calls ``alloc(tensors[, world_size=])``: the keyword only when the signature takes it."""
    if alloc is None:
        return
    try:
        params = inspect.signature(alloc).parameters.values()
    except (TypeError, ValueError):
        params = []  # type: ignore[assignment]
    takes = any(
        p.name == "world_size" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params
    )
    if takes:
        alloc(tensors, world_size=world_size)
    else:
        alloc(tensors)


class _Callables(dict):  # type: ignore[type-arg]
    """``callables``: a missing name says which ``next_levels/`` directory is absent."""

    def __init__(self, items: Mapping[str, CallableHandle], build: Path) -> None:
        super().__init__(items)
        self._build = build

    def __missing__(self, key: str) -> CallableHandle:
        raise KeyError(
            f"no chip program {key!r}: {self._build / 'next_levels' / str(key)} is missing or "
            "has no kernel_config.py (known: "
            f"{sorted(self)}); regenerate the build via ir.compile()"
        )


_RUNTIME_RE = re.compile(r"""["']runtime["']\s*:\s*["']([^"']+)["']""")


def _assemble_chip_callables(output_dir: Path) -> Dict[str, Path]:
    """Every ``next_levels/<name>/`` with a ``kernel_config.py``, by name (sorted), after
    checking that they agree on the runtime."""
    root = Path(output_dir) / "next_levels"
    found: Dict[str, Path] = {}
    first: Optional[Tuple[str, str]] = None
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        kc = d / "kernel_config.py"
        if not (d.is_dir() and kc.is_file()):
            continue
        m = _RUNTIME_RE.search(kc.read_text(encoding="utf-8", errors="replace"))
        runtime = m.group(1) if m else "tensormap_and_ringbuffer"
        if first is None:
            first = (runtime, d.name)
        elif runtime != first[0]:
            raise RuntimeError(
                f"Inconsistent runtime across next_levels/ sub-builds in {output_dir}: "
                f"{first[0]!r} (earlier chip) vs {runtime!r} (chip {d.name!r}). All chip-level "
                "tasks in one distributed build must share a single runtime."
            )
        found[d.name] = d
    if not found:
        raise RuntimeError(
            f"No chip-level tasks found in {output_dir} (expected one or more "
            "next_levels/<name>/ sub-builds each containing a kernel_config.py)."
        )
    return found


def _declared_sub_workers(output_dir: Path) -> Set[str]:
    """The SubWorkers a build declares: its ``sub_workers/<name>.py`` modules and the
    runtime-bound ones of ``__required__.json``."""
    root = Path(output_dir) / "sub_workers"
    names = {f.stem for f in root.glob("*.py")} if root.is_dir() else set()
    if (root / "__required__.json").is_file():
        names |= set(json.loads((root / "__required__.json").read_text(encoding="utf-8")))
    return names


def _load_sub_workers(
    output_dir: Path, callbacks: Optional[Mapping[str, Callable[..., Any]]] = None
) -> Dict[str, Callable[..., Any]]:
    """``sub_workers/<name>.py`` modules' ``<name>`` functions, with ``callbacks`` (PyPTO's
    ``prepare(callbacks={...})``) bound by name over them. The abstract SubWorkers listed
    in ``__required__.json`` must be among the callbacks; a callback must name a SubWorker
    the program declares."""
    callbacks = dict(callbacks or {})
    root = Path(output_dir) / "sub_workers"
    required: List[str] = []
    if (root / "__required__.json").is_file():
        required = sorted(json.loads((root / "__required__.json").read_text(encoding="utf-8")))
    missing = [n for n in required if n not in callbacks]
    if missing:
        raise ValueError(
            f"SubWorkers {missing} are runtime-bound callbacks (declared with a `...` body) "
            "and must be supplied via callbacks={...}."
        )
    files = sorted(root.glob("*.py")) if root.is_dir() else []
    declared = sorted(_declared_sub_workers(output_dir))
    unknown = sorted(n for n in callbacks if n not in declared)
    if unknown:
        raise ValueError(
            f"callbacks name SubWorkers the program does not declare: {unknown}; declared "
            f"SubWorkers: {declared}"
        )
    for name, fn in callbacks.items():
        if not callable(fn):
            raise TypeError(f"callbacks[{name!r}] must be callable, got {type(fn).__name__}")
    subs: Dict[str, Callable[..., Any]] = {}
    for f in files:
        if f.stem in callbacks:
            continue
        spec = importlib.util.spec_from_file_location(f"_pypto_generated.sub_{f.stem}", f)
        if spec is None or spec.loader is None:
            continue
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        found = getattr(mod, f.stem, None)
        if callable(found):
            subs[f.stem] = found
    subs.update(callbacks)
    return subs


# --- SubWorker arguments ------------------------------------------------------------------

def _tensor_from_continuous(arg: Any) -> Any:
    """A SubWorker argument (a ``MappedArg``) as a torch tensor over the same bytes (what
    generated ``sub_workers/<name>.py`` modules call); writes reach the host tensor."""
    import torch

    code = int(arg.dtype)
    types = element_types()
    name = types[code][3] if 0 <= code < len(types) else None
    torch_dtype = getattr(torch, name, None) if name is not None else None
    if torch_dtype is None:
        viewable = ", ".join(n for _, n, _, t in types if hasattr(torch, t))
        raise TypeError(
            f"_tensor_from_continuous: DataType {code} has no torch view here (only "
            f"{viewable} do)"
        )
    buf = arg.buffer
    if buf.readonly:
        flat = torch.frombuffer(bytearray(buf), dtype=torch_dtype)
    else:
        flat = torch.frombuffer(buf, dtype=torch_dtype)
    return flat.reshape(tuple(arg.shapes))


# --- per-dispatch placement and DFX -------------------------------------------------------


def _reset_dfx_dispatch_state(orch: Any, chip_cids: Mapping[str, Any]) -> None:
    """A run's fresh per-rank counters and the program-name table (by handle ``id``)."""
    orch._dfx_dispatch_idx = {}
    orch._dfx_chip_names = {id(cid): name for name, cid in chip_cids.items()}


def _resolve_chip_worker(orch: Any, worker: Optional[int]) -> int:
    """A pinned worker keeps its rank; ``None`` takes the next chip round-robin."""
    if worker is not None:
        return worker
    seq = getattr(orch, "_pypto_commless_seq", 0)
    orch._pypto_commless_seq = seq + 1
    return seq % max(1, getattr(orch, "_pypto_chip_count", 1))


def _record_dispatch_program(orch: Any, callable_id: Any, disp_dir: Path) -> None:
    """Writes ``dispatch_program.json`` (compact, no newline); never raises."""
    names = getattr(orch, "_dfx_chip_names", None)
    name = names.get(id(callable_id)) if names else None
    if name is None:
        return
    try:
        write_text_atomic(disp_dir / _DISPATCH_PROGRAM, json.dumps({"program": name}, separators=(", ", ": ")))
    except OSError as e:
        print(
            f"Could not record the dispatch program for {disp_dir} ({type(e).__name__}: {e}); "
            "its swimlane falls back to anonymous task labels unless the build has a single L2 "
            "program"
        )


def _is_real_dir(p: Path) -> bool:
    """``p`` is a directory itself (``lstat``: a symbolic link to one is not)."""
    try:
        return stat.S_ISDIR(os.lstat(p).st_mode)
    except OSError:
        return False


def _is_marked_dispatch_dir(d: Path) -> bool:
    """``d`` is a real directory holding the regular file :data:`DISPATCH_MARKER`."""
    if not _is_real_dir(d):
        return False
    try:
        return stat.S_ISREG(os.lstat(d / DISPATCH_MARKER).st_mode)
    except OSError:
        return False


def _make_dispatch_dir(disp_dir: Path) -> None:
    """Creates ``rank<r>/d<k>/`` (and ``rank<r>/``) as real directories and marks it.

    Refuses (``FileExistsError`` naming the path) a link or a file in the way, and an
    existing ``d<k>`` no run marked: the run writes its diagnostics there and a later run
    would remove it.
    """
    rank_dir = disp_dir.parent
    for p in (rank_dir, disp_dir):
        if os.path.lexists(p) and not _is_real_dir(p):
            raise FileExistsError(
                f"{p} is a symbolic link or not a directory; an L3 run writes its per-dispatch "
                "diagnostics there and follows no links: remove or rename it, then re-run"
            )
    rank_dir.mkdir(parents=True, exist_ok=True)
    try:
        disp_dir.mkdir()
    except FileExistsError:
        if not _is_marked_dispatch_dir(disp_dir):
            raise FileExistsError(
                f"{disp_dir} exists but was not written by an L3 run (it has no "
                f"{DISPATCH_MARKER} marker); move it out of dfx_outputs/, then re-run"
            ) from None
    marker = disp_dir / DISPATCH_MARKER
    if not os.path.lexists(marker):
        marker.write_text(
            "written by pypto's L3 runner: this directory is removed before the next run "
            "with diagnostics\n",
            encoding="utf-8",
        )


def _submit_chip(
    orch: Any, callable_id: Any, task_args: Any, config: Any, worker: Optional[int]
) -> Any:
    """What generated code calls for every user chip dispatch (see the module docs);
    returns the dispatch's task handle (2026-09 code passes it to ``add_dep_wait``)."""
    worker = _resolve_chip_worker(orch, worker)
    base = getattr(config, "output_prefix", "")
    if not base:
        return orch.submit_next_level(callable_id, task_args, config, worker=worker)
    idx = getattr(orch, "_dfx_dispatch_idx", None)
    if idx is None:
        idx = orch._dfx_dispatch_idx = {}
    rank = f"rank{worker}"
    k = idx.get(rank, 0)
    idx[rank] = k + 1
    prefix = f"{base}/rank{worker}/d{k}"
    _make_dispatch_dir(Path(prefix))
    config.output_prefix = prefix
    try:
        _record_dispatch_program(orch, callable_id, Path(prefix))
        return orch.submit_next_level(callable_id, task_args, config, worker=worker)
    finally:
        config.output_prefix = base


def _dispatch_dirs(dfx_base: Path, ranks: Sequence[int]) -> List[Path]:
    """This run's ``rank<r>/d<k>/`` directories under ``dfx_base`` that an L3 run wrote
    (``r`` in ``ranks``, ``k`` an integer, each a real directory with the marker), by rank
    then ``k``. Nothing else matches: no link is followed, ``rank_notes/``, ``d9_keep/`` and
    unmarked directories are not dispatch directories."""
    found: List[Path] = []
    for r in ranks:
        rank_dir = Path(dfx_base) / f"rank{int(r)}"
        if not _is_real_dir(rank_dir):
            continue
        try:
            names = os.listdir(rank_dir)
        except OSError:
            continue
        leaves = sorted(
            (int(n[1:]), n) for n in names if _DISPATCH_NAME.fullmatch(n) is not None
        )
        found.extend(
            rank_dir / n for _, n in leaves if _is_marked_dispatch_dir(rank_dir / n)
        )
    return found


def _clear_dfx_dispatch_dirs(dfx_base: Path, ranks: Sequence[int]) -> None:
    """Removes the dispatch directories a previous run wrote for ``ranks`` (see
    :func:`_dispatch_dirs`; nothing else, no link followed), and refuses up front
    (``FileExistsError``) what would make this run write through a link."""
    base = Path(dfx_base)
    if not base.is_dir():
        return
    for r in ranks:
        rank_dir = base / f"rank{int(r)}"
        if os.path.lexists(rank_dir) and not _is_real_dir(rank_dir):
            raise FileExistsError(
                f"{rank_dir} is a symbolic link or not a directory; an L3 run writes its "
                "per-dispatch diagnostics there and follows no links: remove or rename it, "
                "then re-run"
            )
    for d in _dispatch_dirs(base, ranks):
        # rmtree never follows a link inside (it unlinks the link) and refuses a top-level
        # link; `d` was checked to be a real directory.
        shutil.rmtree(d, ignore_errors=True)


def _read_dispatch_program(disp_dir: Path) -> Optional[str]:
    """The program a dispatch directory recorded, or ``None``."""
    try:
        return str(json.loads((Path(disp_dir) / _DISPATCH_PROGRAM).read_text())["program"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _timing(config: Any) -> str:
    """The run's timing, ``"host"`` or ``"predicted"``: ``RunConfig.timing``, else
    ``PTO_TIMING`` (resolved and checked by the native options)."""
    native = getattr(config, "native_options", None)
    return str(native().timing) if native is not None else "host"


def _make_call_config(
    config: Any, dfx_base: Optional[Path], *, co_enable_swimlane_dep_gen: bool = True
) -> CallConfig:
    """The run's shared ``CallConfig`` from a ``RunConfig``."""
    cc = CallConfig()
    cc.aicpu_thread_num = int(getattr(config, "aicpu_thread_num", 0) or 0)
    for keyword, value in _dfx_switches.call_config_values(config).items():
        setattr(cc, keyword, value)
    # The swimlane's graph comes from dep_gen (a single-pass run records both).
    cc.enable_dep_gen = cc.enable_dep_gen or (
        co_enable_swimlane_dep_gen and cc.enable_chip_swimlane > 0
    )
    for ring in ("ring_task_window", "ring_heap", "ring_dep_pool"):
        setattr(cc, ring, getattr(config, ring, None))
    cc.timing = _timing(config)
    cc.dfx_schema = str(getattr(config, "dfx_schema", None) or "")
    if cc.writes_files():
        if dfx_base is None:
            raise ValueError(
                "_make_call_config: dfx_base is required when a DFX flag is enabled on L3"
            )
        cc.output_prefix = str(dfx_base)
    return cc


def _write_dispatch_name_map(disp_dir: Path, program_dir: Path) -> Optional[Path]:
    """``name_map.json`` of one dispatch from its own program's ``kernel_config.py``."""
    names = _native.kernel_names(str(program_dir / "kernel_config.py"))
    if not names:
        return None
    path = disp_dir / "name_map.json"
    text = json.dumps(
        {"level": 2, "orchestrator_name": None, "callable_id_to_name": {str(k): v for k, v in names}},
        indent=2,
    )
    write_text_atomic(path, text)
    return path


def _collect_l3_swimlane(output_dir: Path, platform: str, ranks: Sequence[int]) -> None:
    """Per-dispatch name maps (from each dispatch's own program) and swimlane conversion.

    Unlike PyPTO, the name map is written on the simulators too; the conversion to
    ``merged_swimlane_*.json`` runs on ``cpu`` only (the simulators keep the raw records).
    A dispatch whose program cannot be resolved gets anonymous labels, never guessed ones.
    """
    output_dir = Path(output_dir)
    dfx = output_dir / "dfx_outputs"
    chip_dirs = {
        d.name: d
        for d in sorted((output_dir / "next_levels").glob("*"))
        if d.is_dir() and (d / "kernel_config.py").is_file()
    }
    if _is_sim(platform):
        print(SIM_SKIP)
    for d in _dispatch_dirs(dfx, ranks):
        rank = d.parent
        # Either form of the records (PTO_DFX_FORMAT=compact writes the .bin ones,
        # which the converter reads as well).
        records = next(
            (
                d / name
                for name in ("chip_swimlane_records.json", "chip_swimlane_records.bin")
                if (d / name).is_file()
            ),
            d / "chip_swimlane_records.json",
        )
        has_deps = (d / "deps.json").is_file() or (d / "deps.bin").is_file()
        if not (d.is_dir() and (records.is_file() or has_deps)):
            continue
        try:
            for stale in d.glob("name_map*.json"):
                stale.unlink()
            program = _read_dispatch_program(d)
            if program is None and len(chip_dirs) == 1:
                program = next(iter(chip_dirs))
            if program is None or program not in chip_dirs:
                print(
                    f"No L2 program recorded for {rank.name}/{d.name}; converting with "
                    "anonymous task labels. For real kernel names, re-run: pto "
                    f"swimlane-converter {records} -k {output_dir}/next_levels/<program>/"
                    "kernel_config.py"
                )
                name_map = None
            else:
                name_map = _write_dispatch_name_map(d, chip_dirs[program])
            if not _is_sim(platform) and records.is_file():
                _native.convert_swimlane(
                    str(records), str(d), None if name_map is None else str(name_map)
                )
        except Exception as e:  # noqa: BLE001 - best-effort, as PyPTO
            print(
                f"Skipping L3 swimlane conversion for {d.name} of {rank.name} "
                f"({type(e).__name__}: {e}); raw records kept"
            )


# --- one-shot execution ----------------------------------------------------------------------

#: The environment variable with the host orchestration's watchdog limit, in milliseconds
#: (``0`` turns it off).
HOST_TIMEOUT_ENV = "PTO_HOST_ORCHESTRATION_TIMEOUT_MS"
#: The default limit: the host orchestration's entry may go this long without returning
#: or submitting a task (the C++ orchestration's limit is 10 s; the Python host also
#: allocates and waits for comm domains).
DEFAULT_HOST_TIMEOUT_S = 60.0


class HostOrchestrationTimeout(RuntimeError):
    """The host orchestration neither returned nor submitted a task within the limit."""


def _host_timeout_s() -> float:
    """The watchdog limit in seconds from :data:`HOST_TIMEOUT_ENV` (``0``: off)."""
    text = os.environ.get(HOST_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_HOST_TIMEOUT_S
    try:
        ms = int(text)
    except ValueError:
        ms = -1
    if ms < 0:
        raise ValueError(
            f"{HOST_TIMEOUT_ENV}={text!r} is not a number of milliseconds (0 turns the host "
            "orchestration's watchdog off)"
        )
    return ms / 1000.0


@contextlib.contextmanager
def _watchdog(progress: Callable[[], int], what: str, timeout_s: float) -> Iterator[None]:
    """Raises :class:`HostOrchestrationTimeout` in the main thread when ``progress()`` (the
    tasks submitted so far) stays the same for ``timeout_s`` while the block runs. A signal
    (``SIGALRM`` to the main thread) wakes a sleep or a loop alike; off the main thread, or
    with ``timeout_s == 0``, the block runs unwatched."""
    if timeout_s <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = threading.Event()
    done = threading.Event()
    message = (
        f"{what} has neither returned nor submitted a task for {timeout_s:g} s; it may never "
        f"return (raise the limit with {HOST_TIMEOUT_ENV} if it is just slow; 0 turns the "
        "watchdog off)"
    )

    def on_alarm(signum: int, frame: Any) -> None:
        if fired.is_set():
            raise HostOrchestrationTimeout(message)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    main = threading.main_thread().ident

    def watch() -> None:
        last = progress()
        since = time.monotonic()
        while not done.wait(min(1.0, timeout_s / 4)):
            n = progress()
            if n != last:
                last, since = n, time.monotonic()
            elif time.monotonic() - since >= timeout_s:
                fired.set()
                if main is not None:
                    signal.pthread_kill(main, signal.SIGALRM)
                return

    watcher = threading.Thread(target=watch, name="pypto-host-watchdog", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        signal.signal(signal.SIGALRM, previous)


def _run_once(output_dir: Path, *args: Any, **kwargs: Any) -> None:
    """:func:`_run_guarded` with the generated module, ``_alloc_intermediates``, the entry
    and the SubWorkers (on their threads, until the drain) run as user code: a
    ``sys.exit()`` or ``os._exit()`` there is a ``UserCodeExit`` naming ``host_orch.py``,
    never a silent end of the run."""
    host_orch = Path(output_dir) / "orchestration" / "host_orch.py"
    with user_code(f"the host orchestration {host_orch} (or a SubWorker it calls)"):
        _run_guarded(Path(output_dir), *args, **kwargs)


def _run_guarded(
    output_dir: Path,
    params: Sequence[str],
    tensors_in: Sequence[Any],
    *,
    platform: str,
    device_ids: Sequence[int],
    call_config: CallConfig,
    num_sub_workers: int = 0,
    on_worker: Optional[Callable[[Worker], None]] = None,
    callbacks: Optional[Mapping[str, Callable[..., Any]]] = None,
) -> None:
    programs = _assemble_chip_callables(output_dir)
    host_orch = output_dir / "orchestration" / "host_orch.py"
    entry, alloc = _load_orch_entry(host_orch)
    tensors: Dict[str, Any] = {}
    for name, t in zip(params, tensors_in):
        t.share_memory_()
        tensors[name] = t
    world_size = len(device_ids)
    _call_alloc_intermediates(alloc, tensors, world_size)
    subs = _load_sub_workers(output_dir, callbacks)
    worker = Worker(
        platform=platform,
        device_ids=device_ids,
        programs=programs,
        sub_workers=subs,
        num_sub_workers=max(num_sub_workers, len(subs)),
    )
    ok = False
    try:
        if on_worker is not None:
            on_worker(worker)
        orch = Orchestrator(worker)
        callables = _Callables(worker.callables, output_dir)
        _reset_dfx_dispatch_state(orch, callables)
        orch._pypto_chip_count = world_size  # type: ignore[attr-defined]
        orch._pypto_commless_seq = 0  # type: ignore[attr-defined]
        keep: List[Any] = []
        started = time.perf_counter()
        try:
            with _watchdog(
                worker._engine.n_dispatches,
                f"the host orchestration {host_orch} (entry {getattr(entry, '__name__', '?')!r})",
                _host_timeout_s(),
            ):
                entry(
                    orch,
                    None,
                    call_config,
                    tensors=tensors,
                    callables=callables,
                    sub_ids=worker.sub_ids,
                    _keep=keep,
                    world_size=world_size,
                )
        except Exception as e:
            if hasattr(e, "add_note"):  # Python 3.11+
                note = (
                    f"while running the host orchestration {host_orch} (entry "
                    f"{getattr(entry, '__name__', '?')!r}) over device_ids {list(device_ids)} "
                    f"(world_size {world_size})"
                )
                if "is not a NEXT_LEVEL worker" in str(e):
                    note += (
                        "; the build dispatches to more chips than these device_ids give: "
                        "pass distributed_config=DistributedConfig(device_ids=[...]) with as "
                        "many devices as it was compiled for, or recompile it for these"
                    )
                e.add_note(note)
            raise
        orch._finish_building()
        worker.drain()
        ok = True
        print(
            f"[execute] L3 run: {worker._engine.n_dispatches()} tasks on {world_size} chips "
            f"({platform}) in {(time.perf_counter() - started) * 1e3:.2f} ms"
        )
    finally:
        worker.close(kill=not ok)


def execute_distributed(
    compiled: Any,
    args: Sequence[Any],
    config: Any = None,
    *,
    on_worker: Optional[Callable[[Worker], None]] = None,
    callbacks: Optional[Mapping[str, Callable[..., Any]]] = None,
) -> None:
    """Runs ``compiled`` (a ``DistributedCompiledProgram``) once with ``args`` (host
    ``torch.Tensor`` s, one per parameter; shared in place, outputs written into them).

    ``config`` is a ``RunConfig``; with diagnostics on, each dispatch writes into
    ``dfx_outputs/rank{r}/d{k}/`` (stale ones are removed first). A swimlane on ``cpu``
    runs the whole program twice: a graph pass (dep_gen only) and a timing pass.
    """
    from pypto.runtime.run_config import RunConfig

    import torch

    for p, a in zip(compiled.param_names, args):
        if not isinstance(a, torch.Tensor):
            raise TypeError(
                "One-shot distributed programs only support host torch.Tensor parameters. "
                f"Parameter {p!r} got {type(a).__name__}"
            )
    config = config if config is not None else RunConfig(platform=compiled.platform)
    platform = compiled.platform
    output_dir = Path(compiled.output_dir)
    dfx_base = output_dir / "dfx_outputs"
    device_ids = compiled.distributed_config.device_ids
    writes_files = config.writes_dfx_files()
    if writes_files:
        _clear_dfx_dispatch_dirs(dfx_base, range(len(device_ids)))
    run = dict(
        platform=platform,
        device_ids=device_ids,
        num_sub_workers=compiled.distributed_config.num_sub_workers,
        on_worker=on_worker,
        callbacks=callbacks,
    )
    if config.enable_chip_swimlane and not _is_sim(platform):
        for line in SWIMLANE_BANNER:
            print(line)
        graph = dataclasses.replace(config, **{**_dfx_switches.off(), "enable_dep_gen": True})
        print("[pypto] l3_swimlane_pass=graph event=begin", file=sys.stderr)
        _run_once(
            output_dir, compiled.param_names, args,
            call_config=_make_call_config(graph, dfx_base), **run,
        )
        print("[pypto] l3_swimlane_pass=graph event=end", file=sys.stderr)
        timing = dataclasses.replace(config, enable_dep_gen=False)
        print("[pypto] l3_swimlane_pass=timing event=begin", file=sys.stderr)
        _run_once(
            output_dir, compiled.param_names, args,
            call_config=_make_call_config(timing, dfx_base, co_enable_swimlane_dep_gen=False),
            **run,
        )
        print("[pypto] l3_swimlane_pass=timing event=end", file=sys.stderr)
    else:
        _run_once(
            output_dir, compiled.param_names, args,
            call_config=_make_call_config(config, dfx_base if writes_files else None),
            **run,
        )
    if config.enable_chip_swimlane or config.enable_dep_gen:
        _collect_l3_swimlane(output_dir, platform, range(len(device_ids)))


def execute_distributed_compiled(
    output_dir: Any,
    args: Sequence[Any],
    config: Any = None,
    *,
    platform: Optional[str] = None,
    distributed_config: Any = None,
) -> None:
    """``DistributedCompiledProgram.from_dir(output_dir, ...)`` called with ``args``."""
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram

    compiled = DistributedCompiledProgram.from_dir(
        output_dir, platform=platform, distributed_config=distributed_config
    )
    # NumPy arrays (golden.py's inputs, `pto replay`) run as torch copies and get the
    # results back; torch tensors are shared in place, as PyPTO does.
    import numpy as np
    import torch

    converted: List[Any] = []
    back: List[Tuple[Any, Any]] = []
    for a in args:
        if isinstance(a, np.ndarray):
            t = torch.from_numpy(np.ascontiguousarray(a)).clone()
            converted.append(t)
            back.append((a, t))
        else:
            converted.append(a)
    compiled(*converted, config=config)
    for a, t in back:
        if a.flags.writeable:
            np.copyto(a, t.numpy(), casting="unsafe")


# --- the prepared API ---------------------------------------------------------------------


class DistributedRunHandle:
    """One dispatch of a :class:`DistributedWorker` (``submit``): ``done()``,
    ``result(timeout=None)`` (re-raises the dispatch's failure) and ``wait``."""

    def __init__(self, compiled: Any, outcome: Any = None, error: Optional[BaseException] = None) -> None:
        self.compiled = compiled
        self._outcome = outcome
        self._error = error

    def done(self) -> bool:
        """Whether the dispatch completed (this runtime completes it inside ``submit``)."""
        return True

    def result(self, timeout: Optional[float] = None) -> Any:
        """The dispatch's return value; raises its failure."""
        del timeout
        if self._error is not None:
            raise self._error
        return self._outcome

    def wait(self, timeout: Optional[float] = None) -> None:
        """Waits for completion and raises the dispatch's failure, if any."""
        self.result(timeout)


class DistributedWorker:
    """Prepared L3 programs (PyPTO's ``DistributedWorker``): one or more
    ``DistributedCompiledProgram`` s sharing worker-resident memory (``alloc_tensor``,
    ``malloc`` / ``copy_to`` / ``copy_from``) and SubWorker ``callbacks`` bound once.

    ``rt(*args)`` dispatches the single program, ``rt.run(compiled, *args)`` the given one
    (the only form in multi-program mode). Host IO tensors are shared in place; resident
    :class:`~pypto.runtime.DeviceTensor` s are shared-memory blocks every chip maps, so
    they keep their contents across dispatches of any of the programs. Each dispatch runs
    the build's host orchestration over fresh chip processes (the chips are not kept
    between dispatches on this runtime); ``persistent`` windows are therefore not kept
    either, and ``persistent=True`` is refused rather than silently ignored.
    """

    __test__ = False

    def __init__(
        self,
        compiled: Any,
        config: Any = None,
        *,
        persistent: bool = False,
        reset_persistent_windows: Optional[bool] = None,
        callbacks: Optional[Mapping[str, Callable[..., Any]]] = None,
        sub_worker_overrides: Optional[Mapping[str, Callable[..., Any]]] = None,
        inherited_host_tensors: Optional[Sequence[Any]] = None,
        startup_timeout_s: Optional[float] = None,
    ) -> None:
        from pypto.ir.distributed_compiled_program import DistributedCompiledProgram
        from pypto.runtime.device_tensor import DeviceMemory

        del inherited_host_tensors, startup_timeout_s
        programs = [compiled] if isinstance(compiled, DistributedCompiledProgram) else list(compiled)
        if not programs:
            raise ValueError("DistributedWorker needs at least one DistributedCompiledProgram")
        for p in programs:
            if not isinstance(p, DistributedCompiledProgram):
                raise TypeError(
                    f"DistributedWorker takes DistributedCompiledProgram objects, got {type(p).__name__}"
                )
        first = programs[0]
        for p in programs[1:]:
            if p.platform != first.platform or list(p.distributed_config.device_ids) != list(
                first.distributed_config.device_ids
            ):
                raise ValueError(
                    "DistributedWorker programs must agree on platform and device ids: "
                    f"{first!r} vs {p!r}"
                )
        if persistent or reset_persistent_windows:
            raise ValueError(
                "DistributedWorker(persistent=True) keeps comm windows across dispatches, which "
                "this runtime does not do (each dispatch starts its chips afresh); drop "
                "persistent= or keep state in alloc_tensor() memory"
            )
        if callbacks is not None and sub_worker_overrides is not None:
            raise ValueError("pass callbacks= or its deprecated alias sub_worker_overrides=, not both")
        self._callbacks = dict(callbacks if callbacks is not None else (sub_worker_overrides or {}))
        self._programs = programs
        for p in programs:  # fail fast: every required callback bound, no unknown name
            _load_sub_workers(Path(p.output_dir), self._bound_for(p))
        if len(programs) > 1:
            declared = set().union(*(_declared_sub_workers(Path(p.output_dir)) for p in programs))
            unknown = sorted(set(self._callbacks) - declared)
            if unknown:
                raise ValueError(
                    f"callbacks name SubWorkers no program declares: {unknown}; declared "
                    f"SubWorkers: {sorted(declared)}"
                )
        self._config = config
        self._memory = DeviceMemory("DistributedWorker", len(first.distributed_config.device_ids))
        self._closed = False

    def _bound_for(self, compiled: Any) -> Dict[str, Callable[..., Any]]:
        """The callbacks that name SubWorkers of ``compiled`` (others belong to another
        program of a multi-program worker)."""
        if len(self._programs) <= 1:
            return dict(self._callbacks)
        names = _declared_sub_workers(Path(compiled.output_dir))
        return {n: fn for n, fn in self._callbacks.items() if n in names}

    def _require_open(self, op: str) -> None:
        if self._closed:
            raise RuntimeError(f"DistributedWorker.{op}: the worker is closed")

    # --- dispatch -----------------------------------------------------------------------
    def submit(self, compiled: Any, *args: Any, config: Any = None) -> DistributedRunHandle:
        """Dispatches ``compiled`` (one of this worker's programs) with ``args``; the
        returned handle is complete (its ``result()`` re-raises a failure)."""
        from pypto.runtime.device_tensor import resolve_args

        self._require_open("submit")
        if not any(compiled is p for p in self._programs):
            raise ValueError(
                "DistributedWorker.run(compiled) requires a DistributedCompiledProgram registered "
                "when this worker was constructed."
            )
        host = resolve_args(args, self._memory, "DistributedWorker")
        cfg = config if config is not None else self._config
        try:
            out = compiled._call(host, cfg, callbacks=self._bound_for(compiled))
        except Exception as e:  # noqa: BLE001 - re-raised by result()
            return DistributedRunHandle(compiled, error=e)
        return DistributedRunHandle(compiled, out)

    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        """Dispatches ``compiled`` and waits; raises its failure."""
        return self.submit(compiled, *args, config=config).result()

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Dispatches the single program (a ``TypeError`` in multi-program mode)."""
        if len(self._programs) != 1:
            raise TypeError(
                "DistributedWorker(*args) is ambiguous with several programs; use "
                "rt.run(compiled, *args)"
            )
        return self.run(self._programs[0], *args, config=config)

    def register(self, compiled: Any) -> Any:
        """A handle that dispatches ``compiled`` (one of this worker's programs)."""
        from pypto.runtime.worker import RegistrationHandle

        self._require_open("register")
        if not any(compiled is p for p in self._programs):
            raise ValueError(
                "DistributedWorker.register(compiled) requires a DistributedCompiledProgram "
                "registered when this worker was constructed."
            )
        return RegistrationHandle(self, compiled, 0)

    # --- memory -------------------------------------------------------------------------
    def malloc(self, nbytes: int, *, worker_id: int = 0) -> int:
        """Zeroed worker-resident memory on chip ``worker_id``; returns its address."""
        self._require_open("malloc")
        return self._memory.malloc(nbytes, worker_id)

    def free(self, ptr: int, *, worker_id: int = 0) -> None:
        """Frees an allocation from :meth:`malloc`."""
        self._require_open("free")
        self._memory.free(ptr, worker_id)

    def copy_to(self, dst_dev_ptr: int, src_host_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        """Host to worker memory."""
        self._require_open("copy_to")
        self._memory.copy_to(dst_dev_ptr, src_host_ptr, nbytes, worker_id)

    def copy_from(self, dst_host_ptr: int, src_dev_ptr: int, nbytes: int, *, worker_id: int = 0) -> None:
        """Worker memory to host."""
        self._require_open("copy_from")
        self._memory.copy_from(dst_host_ptr, src_dev_ptr, nbytes, worker_id)

    def alloc_tensor(self, shape: Sequence[int], dtype: Any, *, init: Any = None, worker_id: int = 0) -> Any:
        """A zeroed worker-resident :class:`~pypto.runtime.DeviceTensor`."""
        self._require_open("alloc_tensor")
        return self._memory.alloc_tensor(shape, dtype, init, worker_id)

    def free_tensor(self, t: Any, *, worker_id: int = 0) -> None:
        """Releases a tensor from :meth:`alloc_tensor`."""
        self._require_open("free_tensor")
        self._memory.free_tensor(t, worker_id)

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        """Frees every allocation (idempotent)."""
        self._memory.clear()
        self._closed = True

    def __enter__(self) -> "DistributedWorker":
        self._require_open("__enter__")
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.close()
