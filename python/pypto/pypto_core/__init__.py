"""``pypto.pypto_core``: the names PyPTO's native core module gives the runtime layer.

In PyPTO this is the C++ extension; here it is plain Python: the logging framework
(:mod:`.logging`), :class:`DataType`, and the submodules ``ir`` (``ParamDirection``) and
``passes`` (the compile-side enums of ``RunConfig``). ``LogLevel``'s members are also
module attributes, as nanobind's ``export_values()`` puts them.
"""

from pypto.pypto_core import ir, passes
from pypto.pypto_core.datatype import DataType
from pypto.pypto_core.logging import (
    Error,
    InternalError,
    LogLevel,
    _clear_thread_log_level,
    _set_thread_log_level,
    check,
    get_log_level,
    internal_check,
    internal_check_span,
    log_debug,
    log_error,
    log_event,
    log_fatal,
    log_info,
    log_warn,
    set_log_level,
)

DEBUG = LogLevel.DEBUG
INFO = LogLevel.INFO
WARN = LogLevel.WARN
ERROR = LogLevel.ERROR
FATAL = LogLevel.FATAL
EVENT = LogLevel.EVENT
NONE = LogLevel.NONE

__all__ = [
    "DEBUG",
    "DataType",
    "ERROR",
    "EVENT",
    "Error",
    "FATAL",
    "INFO",
    "InternalError",
    "LogLevel",
    "NONE",
    "WARN",
    "_clear_thread_log_level",
    "_set_thread_log_level",
    "check",
    "get_log_level",
    "internal_check",
    "internal_check_span",
    "ir",
    "log_debug",
    "log_error",
    "log_event",
    "log_fatal",
    "log_info",
    "log_warn",
    "passes",
    "set_log_level",
]
