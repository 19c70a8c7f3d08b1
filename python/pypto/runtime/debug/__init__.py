"""Debugging a compiled build directory: replay it, re-run it from ``debug/run.py``, rebuild
edited sources.

- :func:`replay`: re-run ``build_output/<dir>/`` with diagnostics, optionally validated
  against ``golden.py``; also ``python -m pypto.runtime.debug.replay DIR [flags]``.
- :func:`write_run_script`: write ``<dir>/debug/run.py``, a self-contained re-runner.
- :func:`rebuild_kernel_cpp_from_pto`, :func:`invalidate_binary_cache`: the two steps
  replay runs before executing, for use before ``CompiledProgram.from_dir`` or
  ``benchmark``.
"""

import warnings

# `python -m pypto.runtime.debug.replay` imports this package (which imports the `replay`
# module) before running the module as __main__; runpy then warns that the module is
# already imported. The double import is harmless here, so that one warning is ignored, by
# its exact text: a plain-text filter, as the interpreter's own default filters are, since
# `warnings.filterwarnings` would compile a pattern and import `re`, about 5 ms of the
# replay command's start.
_ALREADY_IMPORTED = (
    "'pypto.runtime.debug.replay' found in sys.modules after import of package "
    "'pypto.runtime.debug', but prior to execution of 'pypto.runtime.debug.replay'; "
    "this may result in unpredictable behaviour"
)
# The filters are a list at run time; typeshed types them as a read-only sequence of
# patterns (the interpreter's C filter matching takes a plain string as exact text).
warnings.filters.insert(0, ("ignore", _ALREADY_IMPORTED, RuntimeWarning, None, 0))  # type: ignore[attr-defined]

from pypto.runtime.debug.lifecycle import (  # noqa: E402
    invalidate_binary_cache,
    rebuild_kernel_cpp_from_pto,
)
from pypto import _lazy  # noqa: E402

# typing is not imported at run time: the replay's command line imports this package.
TYPE_CHECKING = False

from pypto.runtime.debug.replay import replay  # noqa: E402

if TYPE_CHECKING:
    from pypto.runtime.debug.run_script_writer import maybe_write_run_script, write_run_script
else:
    # The debug/run.py writers on first access (the replay does not need them).
    __getattr__, __dir__ = _lazy.attributes(
        __name__,
        globals(),
        {name: "run_script_writer" for name in ("maybe_write_run_script", "write_run_script")},
        submodules=False,
    )

__all__ = [
    "invalidate_binary_cache",
    "maybe_write_run_script",
    "rebuild_kernel_cpp_from_pto",
    "replay",
    "write_run_script",
]
