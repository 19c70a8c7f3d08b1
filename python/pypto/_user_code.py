"""Running the user's Python (``golden.py``, an L3 build's ``host_orch.py`` and SubWorkers)
so that it cannot end the run behind the runner's back.

Inside :func:`user_code`, ``sys.exit()`` (any ``SystemExit``) and ``os._exit()`` are errors
(:class:`UserCodeExit`) naming the code that called them: a golden function or an
orchestration must return, and a run that it ended early has validated nothing. What this
cannot intercept (a C library's ``exit()``, a signal) is caught by the parent of a replay,
which requires the explicit result record (:mod:`pypto.runtime.debug.replay`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable, Iterator, NoReturn, TypeVar

__all__ = ["UserCodeExit", "call_user", "user_code"]

T = TypeVar("T")

_lock = threading.Lock()
_depth = 0
_saved_exit: Any = None


class UserCodeExit(RuntimeError):
    """User code called ``sys.exit()`` or ``os._exit()`` where it must return."""


def _refuse_os_exit(what: str) -> Callable[[int], NoReturn]:
    def _exit(status: int) -> NoReturn:
        raise UserCodeExit(
            f"{what} called os._exit({status!r}); it must return instead: the run ended there "
            "would have validated nothing (remove the call, or raise an exception to report "
            "an error)"
        )

    return _exit


@contextlib.contextmanager
def user_code(what: str) -> Iterator[None]:
    """Runs the block as user code ``what`` (e.g. ``"golden.py's compute_golden (<path>)"``):
    ``SystemExit`` raised in it and ``os._exit()`` called in it (on any thread) raise
    :class:`UserCodeExit` naming ``what`` and the call."""
    global _depth, _saved_exit
    with _lock:
        if _depth == 0:
            _saved_exit = os._exit
        _depth += 1
        previous = os._exit
        os._exit = _refuse_os_exit(what)  # type: ignore[assignment]
    try:
        yield
    except SystemExit as e:
        raise UserCodeExit(
            f"{what} called sys.exit({e.code!r}) (or raised SystemExit); it must return "
            "instead: the run ended there would have validated nothing (remove the call, or "
            "raise an exception to report an error)"
        ) from None
    finally:
        with _lock:
            _depth -= 1
            os._exit = previous if _depth > 0 else _saved_exit


def call_user(what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` inside :func:`user_code` ``(what)``."""
    with user_code(what):
        return fn(*args, **kwargs)
