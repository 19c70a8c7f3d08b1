"""Older module name of :mod:`pypto.runtime.runner`, kept for existing imports."""

from pypto.runtime.runner import PLATFORMS, RingOverride, RunConfig, RunResult

__all__ = ["PLATFORMS", "RingOverride", "RunConfig", "RunResult"]
