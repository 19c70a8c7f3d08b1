"""The decorators: ``@pl.program``, ``@pl.function(type=...)``, ``@pl.jit`` /
``@pl.jit.inline``, and ``pl.parse`` for source text.

``@pl.function`` only marks a method; ``@pl.program`` reads the class's source with
``inspect``, parses its AST and returns a :class:`pypto.ir.Program`. ``@pl.jit`` defers to
the first call (or ``.compile(*args)`` / ``.lower(*args)``): the arguments fix the shapes of
bare ``pl.Tensor`` parameters, the body and every ``@pl.jit.inline`` helper it calls become
a program ``_jit_<name>`` (the entry an Orchestration, the helpers Inline functions).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
from typing import Any, Callable, Dict, List, Optional, Tuple

from pypto import _native
from pypto.ir.program import Program
from pypto.language import _parser as P
from pypto.language import _surface as S
from pypto.language.errors import ParserError, ParserSyntaxError, PythonSyntaxError

__all__ = ["HostJitFunction", "JitFunction", "function", "inline", "jit", "loads", "parse", "program"]


def function(
    fn: Optional[Callable[..., Any]] = None,
    *,
    type: S.FunctionType = S.FunctionType.Opaque,
    level: Optional[S.Level] = None,
    role: Optional[S.Role] = None,
) -> Any:
    """Marks a method of a ``@pl.program`` class as a DSL function of ``type``
    (``pl.FunctionType.Orchestration``, ``InCore``, ``AIC``, ``AIV``, ``Group``, ``Inline``),
    or with ``level=pl.Level.HOST`` and ``role=pl.Role.Orchestrator`` / ``SubWorker`` a
    HOST function of an L3 program. The parser reads the decorator from the source; the
    method is never called."""

    def mark(f: Callable[..., Any], depth: int = 1) -> Callable[..., Any]:
        setattr(f, "__pypto_function_type__", type)
        # The names of the scope that applies the decorator (a builder function's locals
        # used only in annotations are no closure variables of the function).
        caller = sys._getframe(depth)
        setattr(f, "__pypto_scope__", dict(caller.f_locals) if caller.f_locals is not caller.f_globals else {})
        del caller
        return f

    if fn is not None:
        return mark(fn, 2)
    return mark


def inline(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``@pl.inline``: ``@pl.function(type=pl.FunctionType.Inline)``."""
    setattr(fn, "__pypto_function_type__", S.FunctionType.Inline)
    return fn


def _class_source(cls: type, scope: Optional[Dict[str, Any]] = None) -> Tuple[ast.ClassDef, P.Source, Dict[str, Any]]:
    try:
        lines, start = inspect.getsourcelines(cls)
    except (OSError, TypeError) as e:
        raise ParserSyntaxError(
            f"cannot read the source of {cls.__name__}: {e}",
            None,
            "Define @pl.program classes in a .py file (or use pl.parse(text) for source strings).",
        ) from None
    filename = inspect.getsourcefile(cls) or "<unknown>"
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = tree.body[0]
    if not isinstance(node, ast.ClassDef):
        raise ParserSyntaxError(f"{cls.__name__} is not a class definition")
    module = sys.modules.get(cls.__module__)
    globals_ = dict(vars(module)) if module is not None else {}
    if scope is not None:
        globals_.update(scope)
    return node, P.Source(filename, start - 1, indent, linecache.getlines(filename)), globals_


def program(cls: type) -> Program:
    """Parses a ``@pl.program`` class into a :class:`pypto.ir.Program`.

    Names the class reads (shape constants, module-level ``@pl.function`` kernels) resolve in
    the scope that applies the decorator: its globals, then its locals, so a class defined
    inside a builder function sees that function's variables (as in PyPTO)."""
    caller = sys._getframe(1)
    scope = {**caller.f_globals, **caller.f_locals}
    del caller
    node, src, globals_ = _class_source(cls, scope)
    return Program(P.parse_class(node, src, globals_))


def parse(text: str, filename: str = "<string>") -> Any:
    """Parses DSL source text holding one ``@pl.program`` class (what
    :meth:`Program.as_python` and ``passes_dump/*.py`` hold) or one module-level
    ``@pl.function`` (what ``Function.as_python`` holds); returns the :class:`Program` or the
    function. ``import pypto.language as pl`` may be omitted (the text is never executed).

    Raises ``SyntaxError`` for text that is not Python, and ``ValueError`` when the text
    holds no program or function, or more than one (as PyPTO's ``pl.parse``)."""
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as e:
        raise PythonSyntaxError(
            f"invalid Python syntax: Failed to compile code from {filename}: {e.msg}",
            {"filename": filename, "line": int(e.lineno or 0), "column": int(e.offset or 0)},
            "Fix the syntax error.",
            None,
            text.splitlines(),
        ) from None
    src = P.Source(filename, 0, 0, text.splitlines(keepends=True))
    items: List[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            items.append(node)
        elif isinstance(node, ast.FunctionDef) and P.function_type_of(node, src) is not None:
            items.append(node)
    if not items:
        raise ValueError(
            f"No @pl.function or @pl.program found in {filename}: write one function decorated "
            "with @pl.function or one class decorated with @pl.program."
        )
    if len(items) > 1:
        names = [n.name for n in items if isinstance(n, (ast.ClassDef, ast.FunctionDef))]
        raise ValueError(
            f"Multiple functions/programs found in {filename}: {names}; pl.parse() parses text "
            "holding a single function or program (parse each separately)."
        )
    item = items[0]
    if isinstance(item, ast.ClassDef):
        return Program(P.parse_class(item, src, {}))
    assert isinstance(item, ast.FunctionDef)
    ftype = P.function_type_of(item, src) or "Opaque"
    decl = P.declare_function(item, ftype, src, {}, False, False)
    native = P.build_checked(P.ProgramBuilder(item.name, [decl]), src)
    return native.functions[0]


def loads(filepath: str) -> Any:
    """:func:`parse` of the text of the file ``filepath`` (spans name that file)."""
    with open(filepath, encoding="utf-8") as f:
        text = f.read()
    return parse(text, filename=str(filepath))


class JitFunction:
    """A ``@pl.jit`` function (or a ``@pl.jit.inline`` helper): compiled for the shapes
    of its first call, then run."""

    def __init__(self, fn: Callable[..., Any], ftype: str, config: Any = None) -> None:
        self.fn = fn
        self.ftype = ftype
        self.config = config
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self._compiled: Dict[Tuple[str, ...], Any] = {}

    def _decls(self) -> Tuple[List[P.FunctionDecl], P.Source]:
        decls: List[P.FunctionDecl] = []
        seen: Dict[str, bool] = {}
        main_src: Optional[P.Source] = None

        def visit(jf: "JitFunction") -> None:
            nonlocal main_src
            if jf.fn.__name__ in seen:
                return
            seen[jf.fn.__name__] = True
            fdef, src = P.function_source(jf.fn)
            if main_src is None:
                main_src = src
            globals_ = dict(jf.fn.__globals__)
            decls.append(jf._declare(fdef, src, globals_))
            for dep in P.jit_dependencies(fdef, globals_, lambda v: isinstance(v, JitFunction)):
                target = globals_[dep]
                assert isinstance(target, JitFunction)
                visit(target)

        visit(self)
        assert main_src is not None
        # Helpers first, the entry last (definition order of a program class).
        return decls[1:] + decls[:1], main_src

    def _declare(self, fdef: Any, src: P.Source, globals_: Dict[str, Any]) -> P.FunctionDecl:
        return P.declare_function(fdef, self.ftype, src, globals_, False, True)

    def lower(self, *args: Any, config: Any = None) -> Program:
        """The program for arguments ``args`` (arrays fix the shapes of bare tensors) after
        the pass pipeline, as PyPTO's ``lower`` returns it: scopes outlined into kernels
        (``<entry>_incore_<k>``, a mixed scope's halves ``..._aic`` / ``..._aiv``), kernel
        core types resolved, call directions derived. No code is generated. ``config`` is
        accepted for PyPTO's signature; the pipeline does not depend on it."""
        del config
        return self.front_end(*args).run_passes()

    def front_end(self, *args: Any) -> Program:
        """The program for arguments ``args`` as the front end builds it (before the passes;
        what ``compile`` hands to :func:`pypto.ir.compile`)."""
        decls, src = self._decls()
        builder = P.ProgramBuilder(f"_jit_{self.fn.__name__}", decls, jit=True)
        entry = self.fn.__name__
        types = [_arg_type(a, i, entry) for i, a in enumerate(args)]
        decl = builder.decls[entry]
        if len(types) != len(decl.params):
            raise TypeError(f"{entry}() takes {len(decl.params)} argument(s), got {len(types)}")
        try:
            builder.specialise(entry, types, decl.node, decl.src)
        except ParserError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise P.wrap_foreign(entry, decl.src, decl.node, e) from e
        return Program(P.build_checked(builder, src))

    def compile(self, *args: Any, output_dir: Optional[str] = None, config: Any = None) -> Any:
        """Compiles for ``args`` (cached per argument signature in this object, and in the
        persistent cache when the config's ``cache_config`` / ``configure_cache`` /
        ``PYPTO_CACHE`` enable it); returns the :class:`~pypto.ir.CompiledProgram`."""
        from pypto import _cache_config, _jit_cache
        from pypto.ir.compile import compile as ir_compile

        cfg = config if config is not None else self.config
        key = tuple(_signature_key(a) for a in args)
        cache = _cache_config.capture_cache_config(getattr(cfg, "cache_config", None))
        if key in self._compiled:
            if cache.enabled:
                _cache_config.count(requests=1, object_hits=1)
            return self._compiled[key]
        out = output_dir
        if out is None and cfg is not None and getattr(cfg, "save_kernels_dir", None):
            out = str(cfg.save_kernels_dir)
        platform = getattr(cfg, "platform", None) if cfg is not None else None
        program = self.front_end(*args)

        def compile_into(where: Any) -> Any:
            return ir_compile(program, output_dir=where, platform=platform)

        if not cache.enabled:
            _cache_config.count(requests=1, disabled_requests=1)
            compiled = compile_into(out)
        elif out is not None:
            _cache_config.count(requests=1)
            _cache_config.count_bypass(f"an explicit output directory ({out}) is not cached")
            compiled = compile_into(out)
        else:
            compiled = _jit_cache.fetch_or_build(program, platform or "a2a3sim", cache, compile_into)
        self._compiled[key] = compiled
        return compiled

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Compiles on the first call with these shapes, then runs; returns what the
        compiled program returns."""
        if self.ftype != "Orchestration":
            raise RuntimeError(
                f"@pl.jit.{self.ftype.lower()} helper {self.fn.__name__} is only called from @pl.jit code, "
                "where it is inlined"
            )
        cfg = config if config is not None else self.config
        compiled = self.compile(*args, config=cfg)
        return compiled(*args, config=cfg)

    def __repr__(self) -> str:
        return f"<pl.jit {self.ftype} {self.fn.__name__}>"


class HostJitFunction(JitFunction):
    """A ``@pl.jit.host`` function: the HOST orchestrator of an L3 program. It dispatches
    ``@pl.jit`` chip programs per rank (``chip(args..., device=r)``); ``compile`` writes the
    L3 build (``host_orch.py``, ``next_levels/``) and returns the
    :class:`~pypto.ir.DistributedCompiledProgram`."""

    def __init__(self, fn: Callable[..., Any], config: Any = None) -> None:
        super().__init__(fn, "Host", config)

    def _declare(self, fdef: Any, src: P.Source, globals_: Dict[str, Any]) -> P.FunctionDecl:
        decl = P.declare_function(fdef, "Opaque", src, globals_, False, True)
        decl.host = True
        return decl

    def lower(self, *args: Any, config: Any = None) -> Program:
        """The front end's program for ``args``: the HOST function with its chip programs and
        kernels. PyPTO runs its passes on it; here the pass pipeline runs on each chip program
        separately when ``compile`` splits them (a HOST dispatch of a chip orchestration is
        not a kernel call), so the program is returned before the passes."""
        del config
        return self.front_end(*args)

    def compile(self, *args: Any, output_dir: Optional[str] = None, config: Any = None) -> Any:
        """Compiles for ``args`` (cached per argument signature in this object) for the
        config's ``distributed_config``; returns the ``DistributedCompiledProgram``."""
        from pypto.ir._compile_distributed import compile_distributed

        cfg = config if config is not None else self.config
        key = tuple(_signature_key(a) for a in args)
        if key in self._compiled:
            return self._compiled[key]
        out = output_dir
        if out is None and cfg is not None and getattr(cfg, "save_kernels_dir", None):
            out = str(cfg.save_kernels_dir)
        compiled = compile_distributed(
            self.front_end(*args).native,
            self.fn.__name__,
            out,
            platform=getattr(cfg, "platform", None),
            distributed_config=getattr(cfg, "distributed_config", None),
        )
        self._compiled[key] = compiled
        return compiled

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Compiles on the first call with these shapes, then runs over the devices."""
        cfg = config if config is not None else self.config
        return self.compile(*args, config=cfg)(*args, config=cfg)


def _arg_type(a: Any, i: int, entry: str) -> Any:
    shape = getattr(a, "shape", None)
    dtype = getattr(a, "dtype", None)
    if shape is not None and dtype is not None:
        name = str(dtype).replace("torch.", "")
        d = P.NUMPY_DTYPES.get(name)
        if d is None:
            raise TypeError(f"argument {i} of {entry}: unsupported tensor dtype {dtype}")
        return _native.IrType.tensor([int(x) for x in shape], d)
    if isinstance(a, bool):
        return _native.IrType.scalar("BOOL")
    if isinstance(a, int):
        return _native.IrType.scalar("INT64")
    if isinstance(a, float):
        return _native.IrType.scalar("FP32")
    raise TypeError(f"argument {i} of {entry} must be an array or a number, got {type(a).__name__}")


def _signature_key(a: Any) -> str:
    shape = getattr(a, "shape", None)
    if shape is not None:
        return f"{tuple(shape)}:{getattr(a, 'dtype', '')}"
    return type(a).__name__


class _Jit:
    """``pl.jit``: ``@pl.jit``, ``@pl.jit(config=...)``, ``@pl.jit.inline``."""

    def __call__(self, fn: Optional[Callable[..., Any]] = None, *, config: Any = None) -> Any:
        if fn is not None:
            return JitFunction(fn, "Orchestration", config)
        return lambda f: JitFunction(f, "Orchestration", config)

    def inline(self, fn: Callable[..., Any]) -> JitFunction:
        """``@pl.jit.inline``: a helper spliced into every ``@pl.jit`` caller."""
        return JitFunction(fn, "Inline")

    def host(self, fn: Optional[Callable[..., Any]] = None, *, config: Any = None) -> Any:
        """``@pl.jit.host``: the HOST orchestrator of an L3 (several-chip) program."""
        if fn is not None:
            return HostJitFunction(fn, config)
        return lambda f: HostJitFunction(f, config)

    def incore(self, fn: Callable[..., Any]) -> JitFunction:
        """``@pl.jit.incore``: a kernel helper."""
        return JitFunction(fn, "InCore")

    def opaque(self, fn: Callable[..., Any]) -> JitFunction:
        """``@pl.jit.opaque``: an unspecified helper."""
        return JitFunction(fn, "Opaque")


jit = _Jit()
