"""``CompiledProgram``: a compiled single-chip build directory as a callable, as PyPTO has
it.

``CompiledProgram.from_dir(output_dir)`` is lazy: it reads ``compiled_meta.json`` (and
nothing else) and checks neither ``platform`` nor ``backend_type``; the build is compiled
and loaded on the first call or on the first access to ``chip_callable`` /
``runtime_name`` / ``runtime_config`` (or ``load()``), where this runtime's checks run
(the platform, ``kernel_config.py``, the sources). It never splices ``.pto`` files nor
forces recompilation: call :func:`pypto.runtime.debug.rebuild_kernel_cpp_from_pto` and
:func:`pypto.runtime.debug.invalidate_binary_cache` first after editing sources.

A ``CompiledProgram`` is also its directory: ``str()``, ``os.fspath()``, ``==`` against a
path and ``hash`` use ``output_dir``.
"""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from pypto import _native
from pypto._dtypes import SCALAR_CTYPES
from pypto._tensors import is_ndarray, is_numpy_scalar, is_torch_tensor, zeros_for
from pypto.backend import BackendType, default_sim_platform
from pypto.ir.param_info import ParamInfo, from_native
from pypto.pypto_core.ir import ParamDirection

__all__ = ["CompiledProgram", "ParamInfo", "extract_param_infos"]

_COMPILED_META_FILENAME = "compiled_meta.json"
_COMPILED_META_SCHEMA = _native.COMPILED_META_SCHEMA

# str(DataType) -> the ctypes class a scalar of that type is passed as.
_DATATYPE_TO_CTYPE: Dict[str, Any] = {name: getattr(ctypes, cls) for name, cls in SCALAR_CTYPES.items()}

PathLike = Union[str, "os.PathLike[str]"]


def _extract_func_param_infos(func: Any) -> Tuple[List[ParamInfo], List[int], List[Any]]:
    """``(param_infos, output_indices, return_types)`` of an IR function with PyPTO's IR
    names (``params[i].name_hint`` / ``.type.shape`` / ``.type.dtype``,
    ``param_directions``, ``return_types``); a dimension with a ``value`` is static, any
    other is ``-1``."""
    infos: List[ParamInfo] = []
    outputs: List[int] = []
    for i, (param, direction) in enumerate(zip(func.params, func.param_directions)):
        ptype = param.type
        dims = getattr(ptype, "shape", None)
        shape = None if dims is None else [int(getattr(d, "value", -1)) for d in dims]
        infos.append(ParamInfo(param.name_hint, direction, shape, ptype.dtype))
        if direction == ParamDirection.Out:
            outputs.append(i)
    return infos, outputs, list(func.return_types)


def _extract_param_infos(program: Any) -> Tuple[List[ParamInfo], List[int], List[Any]]:
    """The metadata of ``program``'s Orchestration function (or of its only function).

    Raises ``ValueError`` when there is no Orchestration function and several others.
    """
    functions = list(program.functions.values())
    orch = next((f for f in functions if getattr(f.func_type, "name", "") == "Orchestration"), None)
    if orch is None:
        if len(functions) != 1:
            raise ValueError(
                "Program has no Orchestration function and multiple InCore functions. "
                "Add an explicit Orchestration function to define the call signature."
            )
        orch = functions[0]
    return _extract_func_param_infos(orch)


def extract_param_infos(program: Any) -> List[ParamInfo]:
    """The orchestration parameters of an IR program, in call order."""
    return _extract_param_infos(program)[0]


def _build_full_args(
    input_args: Sequence[Any], param_infos: List[ParamInfo], output_indices: List[int]
) -> List[Any]:
    """The inputs with a zero-filled output allocated at each of ``output_indices``
    (torch tensors when an input is a torch tensor, else NumPy arrays)."""
    use_torch = any(is_torch_tensor(a) for a in input_args)
    outputs = set(output_indices)
    supplied = iter(input_args)
    return [
        zeros_for(p.name, p.shape, str(p.dtype), torch=use_torch) if i in outputs else next(supplied)
        for i, p in enumerate(param_infos)
    ]


def _coerce_scalar(info: ParamInfo, arg: Any) -> Any:
    if is_torch_tensor(arg):
        raise TypeError(f"Parameter {info.name!r} is a scalar ({info.dtype}); got torch.Tensor")
    if is_ndarray(arg):
        raise TypeError(f"Parameter {info.name!r} is a scalar ({info.dtype}); got numpy.ndarray")
    expected = _DATATYPE_TO_CTYPE.get(str(info.dtype))
    if isinstance(arg, ctypes._SimpleCData):
        if expected is not None and not isinstance(arg, expected):
            raise TypeError(
                f"Parameter {info.name!r} expects {expected.__name__} for dtype {info.dtype}; "
                f"got {type(arg).__name__}"
            )
        return arg
    if expected is None:
        raise TypeError(f"Unsupported scalar dtype {info.dtype} for parameter {info.name!r}")
    if is_numpy_scalar(arg):
        return arg
    try:
        return expected(arg)
    except TypeError as e:
        raise TypeError(
            f"Parameter {info.name!r} is a scalar ({info.dtype}); got {type(arg).__name__} ({e})"
        ) from None


def _coerce_args(
    args: Sequence[Any],
    param_infos: List[ParamInfo],
    output_indices: List[int],
    return_types: List[Any],
    *,
    caller_name: str,
) -> Tuple[List[Any], bool]:
    """``(coerced, return_style)``: every parameter in order (outputs allocated for a
    return-style call, scalars as ctypes values), with PyPTO's count and type errors.
    A return-style call (the inputs only) is accepted only when the program returns
    something."""
    n_params = len(param_infos)
    n_inputs = n_params - len(output_indices)
    has_return = len(return_types) > 0
    return_style = has_return and len(args) == n_inputs and len(args) != n_params
    if len(args) == n_params:
        full = list(args)
    elif return_style:
        full = _build_full_args(args, param_infos, output_indices)
    else:
        expected = f"{n_params} (in-place)" + (f" or {n_inputs} (return)" if has_return else "")
        raise TypeError(
            f"{caller_name} expects {expected} arguments, got {len(args)}. "
            f"Parameters: {[p.name for p in param_infos]}"
        )
    coerced: List[Any] = []
    for info, arg in zip(param_infos, full):
        if info.shape is None:
            coerced.append(_coerce_scalar(info, arg))
        elif is_ndarray(arg) or is_torch_tensor(arg):
            coerced.append(arg)
        else:
            raise TypeError(
                f"Parameter {info.name!r} is a tensor; got {type(arg).__name__}. "
                "Pass a torch.Tensor (host) or DeviceTensor (worker-resident)."
            )
    return coerced, return_style


class _Dispatch:
    """What ``CompiledProgram`` and a multi-orch sub-callable share: the metadata of one
    orchestration, its directory, the lazily loaded build, and the call."""

    _output_dir: Path
    _platform: str
    _loaded: Optional[_native.Program]
    _caller_name: str
    last_report: Optional[_native.ExecuteReport]

    def _get_metadata(self) -> Tuple[List[ParamInfo], List[int], List[Any]]:
        raise NotImplementedError

    def _check_runtime_access(self) -> None:
        """Hook before the build is loaded (a multi-orch parent refuses)."""

    def _ensure_loaded(self) -> _native.Program:
        if self._loaded is None:
            self._check_runtime_access()
            from pypto.runtime.device_runner import _load_program

            self._loaded = _load_program(self._output_dir, self._platform)
        return self._loaded

    def load(self) -> None:
        """Compiles and loads the build now (otherwise the first call or artefact access
        does)."""
        self._ensure_loaded()

    @property
    def chip_callable(self) -> _native.Program:
        """The loaded build (this runtime's ``pypto._native.Program``; PyPTO's is Simpler's
        ``ChipCallable``)."""
        return self._ensure_loaded()

    @property
    def runtime_name(self) -> str:
        """``RUNTIME_CONFIG["runtime"]`` of ``kernel_config.py``."""
        return str(self._ensure_loaded().runtime_name)

    @property
    def runtime_config(self) -> Dict[str, Any]:
        """``RUNTIME_CONFIG`` of ``kernel_config.py`` (``runtime``, ``aicpu_thread_num``)."""
        return dict(self._ensure_loaded().runtime_config)

    def build_orch_args(self, *args: Any, worker: Any = None) -> Tuple[List[Any], List[Any], bool]:
        """``(orch_args, coerced, return_style)``: the arguments checked and completed as a
        call would (``coerced``; outputs allocated for a return-style call) and packed as
        the runtime binds them (``orch_args``). ``worker`` is accepted for PyPTO's
        signature; this runtime needs none."""
        del worker
        from pypto.runtime.runner import _coerced_to_orch_args

        infos, outputs, returns = self._get_metadata()
        coerced, return_style = _coerce_args(args, infos, outputs, returns, caller_name=self._caller_name)
        return _coerced_to_orch_args(coerced), coerced, return_style

    def build_call_config(
        self, config: Any = None, *, aicpu_thread_num: Optional[int] = None, dfx_dir: Any = None
    ) -> _native.RunOptions:
        """The runtime's options for ``config`` (the diagnostics and ring overrides,
        validated); the AICPU thread count and ``dfx_dir`` are accepted for PyPTO's
        signature (diagnostics go to the build's ``dfx_outputs/``)."""
        self._check_runtime_access()
        from pypto.runtime.runner import _build_call_config

        return _build_call_config(config, aicpu_thread_num_override=aicpu_thread_num, dfx_dir=dfx_dir)

    def _call(self, args: Sequence[Any], config: Any) -> Any:
        """Coerces ``args`` and runs them through ``pypto.runtime.runner._execute_compiled``
        (looked up at call time), as PyPTO's call does: a ``config`` decides the platform,
        device, diagnostics and AICPU threads, else this program's platform applies."""
        from pypto.runtime import runner

        infos, outputs, returns = self._get_metadata()
        coerced, return_style = _coerce_args(args, infos, outputs, returns, caller_name=self._caller_name)
        platform = self._platform if config is None else config.platform
        cfg = config if config is not None else runner.RunConfig(platform=platform)
        reports: List[_native.ExecuteReport] = []
        runner._execute_compiled(
            self._output_dir,
            coerced,
            platform=platform,
            device_id=cfg.device_id,
            dfx=cfg.dfx_options(),
            aicpu_thread_num=cfg.aicpu_thread_num,
            config=cfg,
            _program=self._ensure_loaded() if platform == self._platform else None,
            _reports=reports,
        )
        self.last_report = reports[-1] if reports else None
        if not return_style:
            return None
        result = [coerced[i] for i in outputs]
        return result[0] if len(result) == 1 else tuple(result)


class _SubChipCallable(_Dispatch):
    """One orchestration of a multi-orch program (``compiled[name]``): the single-chip
    build in ``next_levels/<name>/``."""

    def __init__(self, name: str, sub: CompiledProgram) -> None:
        self.name = name
        self._sub = sub
        self._output_dir = sub.output_dir
        self._platform = sub.platform
        self._loaded = None
        self._caller_name = f"orchestration {name!r}"
        self.last_report = None

    def _get_metadata(self) -> Tuple[List[ParamInfo], List[int], List[Any]]:
        return self._sub._get_metadata()

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Runs this orchestration (as ``CompiledProgram.__call__``)."""
        return self._call(args, config)

    def __repr__(self) -> str:
        return f"_SubChipCallable({self.name!r}, {self._output_dir})"


class CompiledProgram(_Dispatch):
    """A compiled single-chip program, callable with tensors (``torch.Tensor`` or NumPy
    arrays) and scalars (ctypes values, Python numbers).

    Call it in place, with every parameter (outputs are written into the tensors passed),
    or — when the program returns something — return-style, with the non-output
    parameters only (outputs are allocated, as torch tensors when the inputs are torch
    tensors, else NumPy arrays, and returned: one, or a tuple)::

        compiled = CompiledProgram.from_dir("build_output/vector_add")
        compiled(a, b, c)      # in place: c = a + b
        c = compiled(a, b)     # return-style
    """

    __test__ = False

    def __init__(
        self,
        program: Any,
        output_dir: PathLike,
        *,
        backend_type: Any = BackendType.Ascend910B,
        platform: Optional[str] = None,
        _param_infos: Optional[List[ParamInfo]] = None,
        _output_indices: Optional[List[int]] = None,
        _return_types: Optional[List[Any]] = None,
        _sub_chip_names: Optional[List[str]] = None,
    ) -> None:
        self._program = program
        self._output_dir = Path(output_dir).resolve()
        self._backend_type = backend_type
        if platform is None:
            platform = default_sim_platform(backend_type)
        self._platform = platform
        self._param_infos = _param_infos
        self._output_indices = _output_indices
        self._return_types = _return_types
        self._loaded = None
        self._caller_name = "CompiledProgram"
        #: This runtime's report of the last call (tasks, times, diagnostics written).
        self.last_report: Optional[_native.ExecuteReport] = None
        if _sub_chip_names is not None:
            names = list(_sub_chip_names)
        else:
            names = []
            next_levels = self._output_dir / "next_levels"
            has_host_orch = (self._output_dir / "orchestration" / "host_orch.py").is_file()
            if next_levels.is_dir() and not has_host_orch:
                names = [
                    c.name
                    for c in sorted(next_levels.iterdir())
                    if c.is_dir() and (c / "orchestration").is_dir()
                ]
        self._sub_chip_names = sorted(names)
        if program is not None and not self._sub_chip_names:
            self._persist_metadata()

    # --- construction ---------------------------------------------------------------

    @classmethod
    def from_dir(
        cls,
        output_dir: PathLike,
        *,
        platform: Optional[str] = None,
        backend_type: Any = None,
    ) -> CompiledProgram:
        """Rebuilds the program in ``output_dir`` from its ``compiled_meta.json`` alone.

        ``platform`` and ``backend_type`` override the recorded values (then the default
        simulator of the backend); they are not checked here — a bad platform fails when
        the program is first run or loaded. Raises ``FileNotFoundError`` when the sidecar is
        missing and ``ValueError`` when it is malformed (PyPTO's texts).
        """
        meta_path = Path(output_dir).resolve() / _COMPILED_META_FILENAME
        if not meta_path.exists():
            raise FileNotFoundError(
                f"{meta_path} not found — cannot reconstruct a compiled program from this "
                "directory. It predates the single-chip replay feature, is a distributed "
                "(L3+) build (use DistributedCompiledProgram.from_dir), or is the parent of "
                "a multi-orch build (each next_levels/<name>/ sub-build has its own sidecar "
                "— reload one of those). Recompile via ir.compile() to refresh."
            )
        meta = _native.CompiledMeta.load(meta_path)
        infos = [from_native(p) for p in meta.params]
        outputs = [i for i, p in enumerate(infos) if p.direction == ParamDirection.Out]
        backend = backend_type if backend_type is not None else BackendType[meta.backend_type]
        return cls(
            None,
            str(output_dir),
            backend_type=backend,
            platform=platform or meta.platform,
            _param_infos=infos,
            _output_indices=outputs,
            _return_types=[None] * meta.num_return_types,
        )

    def _get_metadata(self) -> Tuple[List[ParamInfo], List[int], List[Any]]:
        if self._param_infos is None:
            if self._program is None:
                raise RuntimeError(
                    "CompiledProgram has neither live IR nor persisted param metadata; "
                    "reconstruct via CompiledProgram.from_dir()."
                )
            self._param_infos, self._output_indices, self._return_types = _extract_param_infos(
                self._program
            )
        return self._param_infos, list(self._output_indices or []), list(self._return_types or [])

    def _persist_metadata(self) -> None:
        """Writes ``compiled_meta.json`` (atomically) and ``debug/run.py`` for a program
        compiled from live IR; a program whose signature cannot be extracted drops a stale
        sidecar instead."""
        meta_path = self._output_dir / _COMPILED_META_FILENAME
        try:
            infos, _, returns = self._get_metadata()
        except (ValueError, TypeError):
            meta_path.unlink(missing_ok=True)
            return
        _native.CompiledMeta.write(
            self._output_dir,
            [(p.name, p.direction.name, p.shape, str(p.dtype)) for p in infos],
            len(returns),
            self._platform,
            getattr(self._backend_type, "name", str(self._backend_type)),
        )
        from pypto.runtime.debug.run_script_writer import maybe_write_run_script

        maybe_write_run_script(self._output_dir, infos, platform=self._platform)

    # --- properties -----------------------------------------------------------------

    @property
    def output_dir(self) -> Path:
        """The build directory (resolved)."""
        return self._output_dir

    @property
    def work_dir(self) -> Path:
        """This runtime's older name of :attr:`output_dir`."""
        return self._output_dir

    @property
    def program(self) -> Any:
        """The IR program; ``None`` for a program rebuilt by :meth:`from_dir`."""
        return self._program

    @property
    def backend_type(self) -> Any:
        """The backend (a :class:`~pypto.backend.BackendType`)."""
        return self._backend_type

    @property
    def platform(self) -> str:
        """The platform calls run on unless their ``config`` names another."""
        return self._platform

    @property
    def param_infos(self) -> List[ParamInfo]:
        """The orchestration parameters, in order (this runtime's accessor)."""
        return list(self._get_metadata()[0])

    @property
    def param_names(self) -> List[str]:
        """The parameter names, in order."""
        return [p.name for p in self._get_metadata()[0]]

    @property
    def output_indices(self) -> List[int]:
        """Indices of the pure outputs (``Out``; ``InOut`` tensors are passed in)."""
        return self._get_metadata()[1]

    @property
    def num_return_types(self) -> int:
        """How many values the PyPTO function returns (this runtime's accessor)."""
        return len(self._get_metadata()[2])

    @property
    def has_return(self) -> bool:
        """Whether the program returns something (then a return-style call is allowed)."""
        return self.num_return_types > 0

    @property
    def orchestration_names(self) -> List[str]:
        """The orchestrations of a multi-orch program, sorted (``[]`` for one)."""
        return list(self._sub_chip_names)

    def _check_runtime_access(self) -> None:
        if self._sub_chip_names:
            raise TypeError(
                f"Multi-orch program has {len(self._sub_chip_names)} orchestrations "
                f"{self._sub_chip_names}; access runtime artefacts via compiled[<name>] instead."
            )

    # --- calls ------------------------------------------------------------------------

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Runs the program (see the class docs); ``None`` for an in-place call."""
        if self._sub_chip_names:
            raise TypeError(
                f"Program has {len(self._sub_chip_names)} L2 orchestrations "
                f"{self._sub_chip_names}; select one explicitly via compiled['<name>'](...) "
                "or compiled.<name>(...)."
            )
        return self._call(args, config)

    def build_orch_args(self, *args: Any, worker: Any = None) -> Tuple[List[Any], List[Any], bool]:
        """See :meth:`_Dispatch.build_orch_args`; ``TypeError`` on a multi-orch parent."""
        if self._sub_chip_names:
            raise TypeError(
                f"Multi-orch program has {len(self._sub_chip_names)} orchestrations "
                f"{self._sub_chip_names}; use compiled[<name>].build_orch_args(...)."
            )
        return super().build_orch_args(*args, worker=worker)

    def run(self, *args: Any, config: Any = None) -> _native.ExecuteReport:
        """This runtime's older call: runs in place and returns the runtime's report."""
        self._call(args, config)
        assert self.last_report is not None
        return self.last_report

    def __getitem__(self, name: str) -> _SubChipCallable:
        if name not in self._sub_chip_names:
            raise KeyError(
                f"No orchestration {name!r} under {self._output_dir}/next_levels. "
                f"Available: {self._sub_chip_names}"
            )
        if self._program is None:
            raise RuntimeError(
                f"Multi-orch dispatch needs live IR; this CompiledProgram for {self._output_dir} "
                f"has none. Reload next_levels/{name}/ directly via CompiledProgram.from_dir(), "
                "or recompile via ir.compile()."
            )
        get_function = getattr(self._program, "get_function", None)
        func = get_function(name) if callable(get_function) else None
        if func is None:
            raise KeyError(f"next_levels/{name}/ exists but function {name!r} is missing from the program IR.")
        infos, outputs, returns = _extract_func_param_infos(func)
        sub = CompiledProgram(
            None,
            self._output_dir / "next_levels" / name,
            backend_type=self._backend_type,
            platform=self._platform,
            _param_infos=infos,
            _output_indices=outputs,
            _return_types=returns,
            _sub_chip_names=[],
        )
        return _SubChipCallable(name, sub)

    def __getattr__(self, name: str) -> _SubChipCallable:
        # Only reached for names that are no attribute; dunders and privates stay errors.
        if name.startswith("_") or name not in self.__dict__.get("_sub_chip_names", []):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self[name]

    # --- the path it is -------------------------------------------------------------

    def __str__(self) -> str:
        return str(self._output_dir)

    def __fspath__(self) -> str:
        return str(self._output_dir)

    def validate_ir(
        self,
        tensors: dict[str, Any],
        expected: dict[str, Any],
        *,
        rtol: float = 5e-2,
        atol: float = 5e-2,
    ) -> None:
        """Runs every ``passes_dump/`` snapshot of this build in the IR interpreter on
        ``tensors`` (by parameter name) and raises ``AssertionError`` naming the first one
        whose outputs differ from ``expected``; ``FileNotFoundError`` when the build has no
        ``passes_dump/`` (compile with ``dump_passes=True``)."""
        from pypto.ir._validate_ir import validate_ir

        validate_ir(Path(self.work_dir), tensors, expected, rtol=rtol, atol=atol)

    def __repr__(self) -> str:
        return f"CompiledProgram({self._output_dir})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompiledProgram):
            return self._output_dir == other._output_dir
        if isinstance(other, (str, os.PathLike)):
            return str(self._output_dir) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._output_dir)

