"""The runtime's log level: :func:`configure_log`, :func:`current_level` and the
``PYPTO_RUNTIME_LOG`` / ``PYPTO_RUNTIME_LOG_SYNC`` bootstrap, as PyPTO's
``pypto.runtime.log_config`` has them.

Levels are Python ``logging`` thresholds. A name is mapped case-insensitively (not
stripped): ``debug`` 10, ``info`` 20, ``timing`` 25, ``warn`` / ``warning`` 30, ``error``
40, ``null`` 60; **any other name means timing (25)**, as in PyPTO. An int is used as it
is. The threshold sets the ``simpler`` Python logger (where PyPTO's runtime logs) and this
runtime's own log on stderr (Rust ``tracing``): up to 10 debug, up to 20 info, up to 25
timing (warnings and the orchestrations' timing lines), up to 30 warn, up to 40 error,
above that nothing. The default, before any call, is 25: the ``simpler`` logger gets it when
this module first uses it (as Simpler's ``get_logger()`` gives it in PyPTO), and the
runtime's log at import (or the band of a level set on the ``simpler`` logger before).

``sync_pypto=True`` also sets PyPTO's compiler-side :class:`pypto.LogLevel` to the closest
band (up to 10 DEBUG, 20 INFO, 30 WARN, 40 ERROR, else NONE).
"""

from __future__ import annotations

import os
import sys

# Neither typing nor logging is imported at run time by importing pypto.runtime (the
# replay's command line imports it): logging is imported where the logger is used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import logging
    from typing import Union

from pypto import _native

__all__ = ["configure_log", "current_level"]

_ENV_LEVEL = "PYPTO_RUNTIME_LOG"
_ENV_SYNC = "PYPTO_RUNTIME_LOG_SYNC"

#: The level an unknown name, and an unconfigured logger, mean.
TIMING = 25

#: Level names and their thresholds (``logging.DEBUG`` ... ``logging.ERROR``, ``TIMING``).
_NAMES = {
    "debug": 10,
    "info": 20,
    "timing": TIMING,
    "warn": 30,
    "warning": 30,
    "error": 40,
    "null": 60,
}

_LOGGER_NAME = "simpler"


def _parse_level(level: Union[int, str]) -> int:
    if isinstance(level, str):
        return _NAMES.get(level.lower(), TIMING)
    if isinstance(level, int):
        return int(level)
    raise TypeError(f"configure_log(): level must be an int or a str, got {type(level).__name__}")


def _runtime_band(threshold: int) -> str:
    """The runtime's level name for a threshold."""
    for limit, name in ((10, "debug"), (20, "info"), (TIMING, "timing"), (30, "warn"), (40, "error")):
        if threshold <= limit:
            return name
    return "null"


def configure_log(level: Union[int, str], *, sync_pypto: bool = False) -> None:
    """Sets the runtime's log threshold (see the module docs); with ``sync_pypto`` also
    PyPTO's compiler-side :class:`pypto.LogLevel`."""
    threshold = _parse_level(level)
    _logger().setLevel(threshold)
    _native.configure_log(_runtime_band(threshold))
    if sync_pypto:
        _sync_to_pypto(threshold)


def _sync_to_pypto(threshold: int) -> None:
    """Sets :class:`pypto.LogLevel` to the band of ``threshold`` (timing counts as WARN)."""
    from pypto.pypto_core import LogLevel, set_log_level

    if threshold <= 10:
        set_log_level(LogLevel.DEBUG)
    elif threshold <= 20:
        set_log_level(LogLevel.INFO)
    elif threshold <= 30:
        set_log_level(LogLevel.WARN)
    elif threshold <= 40:
        set_log_level(LogLevel.ERROR)
    else:
        set_log_level(LogLevel.NONE)


def current_level() -> int:
    """The effective threshold of the runtime's logger (25 unless configured)."""
    return _logger().getEffectiveLevel()


def _logger() -> logging.Logger:
    """The ``simpler`` logger, with the threshold 25 when nothing set one."""
    import logging

    logger = logging.getLogger(_LOGGER_NAME)
    if logger.level == logging.NOTSET:
        logger.setLevel(TIMING)
    return logger


def _ensure_configured() -> None:
    """On import: the runtime's log at the ``simpler`` logger's threshold (25 when nothing
    set one; without ``logging`` imported yet nothing can have), then ``PYPTO_RUNTIME_LOG``
    when it is set (``PYPTO_RUNTIME_LOG_SYNC=1`` syncs PyPTO's level).
    """
    threshold = _logger().level if "logging" in sys.modules else TIMING
    _native.configure_log(_runtime_band(threshold))
    raw = os.environ.get(_ENV_LEVEL)
    if raw is None:
        return
    configure_log(raw, sync_pypto=os.environ.get(_ENV_SYNC) == "1")
