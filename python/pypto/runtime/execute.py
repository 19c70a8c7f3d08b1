"""Older module name of :func:`pypto.runtime.runner.execute_compiled`, kept for existing
imports."""

from pypto.runtime.runner import execute_compiled

__all__ = ["execute_compiled"]
