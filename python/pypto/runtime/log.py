"""The runtime's log level: ``PYPTO_RUNTIME_LOG`` and :func:`configure_log`.

Level names are PyPTO's: ``debug``, ``info``, ``timing``, ``warn``, ``error``, ``null``.
The runtime (Rust) logs to stderr; ``sync_pypto=True`` also sets the ``pypto`` Python
logger to the same band (PyPTO maps the band onto its C++ logger the same way).
"""

from __future__ import annotations

import logging
import os

from pypto import _native

__all__ = ["LOG_LEVELS", "configure_log", "log_level"]

#: Accepted level names.
LOG_LEVELS = ("debug", "info", "timing", "warn", "error", "null")

_PYTHON_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "timing": logging.WARNING,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "null": logging.CRITICAL + 1,
}


def configure_log(level: str, *, sync_pypto: bool = False) -> None:
    """Sets the runtime's log level; raises ``ValueError`` for an unknown name."""
    _native.configure_log(level)
    if sync_pypto:
        python_level = _PYTHON_LEVELS.get(level.strip().lower(), logging.WARNING)
        logging.getLogger("pypto").setLevel(python_level)


def log_level() -> str:
    """The level last set (``warn`` by default)."""
    return _native.log_level()


def _ensure_log_configured() -> None:
    """Applies ``PYPTO_RUNTIME_LOG`` once, on import (``warn`` when unset; an invalid value
    is reported and ignored)."""
    level = os.environ.get("PYPTO_RUNTIME_LOG", "").strip() or "warn"
    try:
        configure_log(level)
    except ValueError:
        logging.getLogger("pypto.runtime").warning(
            "ignoring PYPTO_RUNTIME_LOG=%r; use one of %s", level, ", ".join(LOG_LEVELS)
        )
