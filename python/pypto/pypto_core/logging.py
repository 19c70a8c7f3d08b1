"""PyPTO's compiler-side logging and checks: :class:`LogLevel`, :func:`set_log_level`,
``log_debug`` ... ``log_event``, :func:`check`, :func:`internal_check`.

This logger is independent of the runtime's (``pypto.runtime.log_config``), as in PyPTO,
where it is the C++ logger: ``configure_log(..., sync_pypto=True)`` maps the runtime's
threshold onto a :class:`LogLevel` here. Messages go to stderr with PyPTO's one-letter
markers (``D |``, ``I |``, ``W |``, ``E |``, ``F |``, ``V |``).

A thread can override the level for itself (``_set_thread_log_level``; the pytest flag
``--pypto-log-level`` does this per test); :func:`get_log_level` reports the global level
regardless.
"""

from __future__ import annotations

import enum
import sys
import threading
from typing import Any, Optional

__all__ = [
    "Error",
    "InternalError",
    "LogLevel",
    "check",
    "get_log_level",
    "internal_check",
    "internal_check_span",
    "log_debug",
    "log_error",
    "log_event",
    "log_fatal",
    "log_info",
    "log_warn",
    "set_log_level",
]


class Error(RuntimeError):
    """Base class of the errors PyPTO's core raises."""


class InternalError(Error):
    """A broken internal invariant (raised by :func:`internal_check`)."""


class LogLevel(enum.IntEnum):
    """Severity levels, least severe first; ``NONE`` silences everything."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


_MARKERS = {
    LogLevel.DEBUG: "D",
    LogLevel.INFO: "I",
    LogLevel.WARN: "W",
    LogLevel.ERROR: "E",
    LogLevel.FATAL: "F",
    LogLevel.EVENT: "V",
}

# The global level; the default lets warnings and worse through.
_state = {"level": LogLevel.WARN}
_thread = threading.local()


def _as_level(level: Any, function: str) -> LogLevel:
    """``level`` as a :class:`LogLevel`: a member, or a plain int that is a member's value
    (as nanobind converts it); anything else is the ``TypeError`` nanobind raises."""
    if isinstance(level, LogLevel):
        return level
    if isinstance(level, int) and not isinstance(level, bool):
        try:
            return LogLevel(level)
        except ValueError:
            pass
    raise TypeError(
        f"{function}(): incompatible function arguments. The following argument types are "
        f"supported:\n    1. {function}(level: pypto.pypto_core.LogLevel) -> None\n\n"
        f"Invoked with types: {type(level).__name__}"
    )


def set_log_level(level: LogLevel) -> None:
    """Sets the global level (a :class:`LogLevel`, or its int value 0-6).

    Raises ``TypeError`` for any other value, a str included.
    """
    _state["level"] = _as_level(level, "set_log_level")


def get_log_level() -> LogLevel:
    """The global level (a thread's own override is not reported)."""
    return _state["level"]


def _set_thread_log_level(level: LogLevel) -> None:
    """Overrides the level for the calling thread only."""
    _thread.level = _as_level(level, "_set_thread_log_level")


def _clear_thread_log_level() -> None:
    """Drops the calling thread's override."""
    _thread.__dict__.pop("level", None)


def _effective_level() -> LogLevel:
    level: Optional[LogLevel] = getattr(_thread, "level", None)
    return level if level is not None else _state["level"]


def _log(level: LogLevel, message: str) -> None:
    if level >= _effective_level():
        print(f"{_MARKERS[level]} | {message}", file=sys.stderr)


def log_debug(message: str) -> None:
    """Logs ``message`` at DEBUG."""
    _log(LogLevel.DEBUG, message)


def log_info(message: str) -> None:
    """Logs ``message`` at INFO."""
    _log(LogLevel.INFO, message)


def log_warn(message: str) -> None:
    """Logs ``message`` at WARN."""
    _log(LogLevel.WARN, message)


def log_error(message: str) -> None:
    """Logs ``message`` at ERROR."""
    _log(LogLevel.ERROR, message)


def log_fatal(message: str) -> None:
    """Logs ``message`` at FATAL."""
    _log(LogLevel.FATAL, message)


def log_event(message: str) -> None:
    """Logs ``message`` at EVENT."""
    _log(LogLevel.EVENT, message)


def check(condition: bool, message: str) -> None:
    """Raises ``ValueError(message)`` unless ``condition`` holds (a user error)."""
    if not condition:
        raise ValueError(message)


def internal_check(condition: bool, message: str) -> None:
    """Raises :class:`InternalError` unless ``condition`` holds (a broken invariant)."""
    if not condition:
        raise InternalError(message)


def internal_check_span(condition: bool, message: str, span: Any) -> None:
    """:func:`internal_check` naming a source location (``span``, printed as it is)."""
    if not condition:
        raise InternalError(f"{message} (at {span})")
