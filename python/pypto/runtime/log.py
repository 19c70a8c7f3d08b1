"""Older module name of :mod:`pypto.runtime.log_config`, kept for existing imports.

``log_level()`` is ``current_level()``: the runtime's threshold as an int.
"""

from pypto.runtime.log_config import configure_log, current_level

log_level = current_level

__all__ = ["configure_log", "log_level"]
