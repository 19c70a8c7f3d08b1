"""The persistent ``@pl.jit`` cache of PyPTO's 2026-09 generation: :class:`CacheConfig`
(the policy), :func:`configure_cache` (the process default), :func:`cache_stats` (this
process's counts) and :func:`capture_cache_config` (the policy one request uses).

Precedence: ``RunConfig.cache_config``, else the process default, else the environment
(``PYPTO_CACHE`` and ``PYPTO_CACHE_READONLY`` are ``0`` / ``1``, ``PYPTO_CACHE_DIR`` a
directory); with none of the three variables set the cache is off. An enabled policy gets an
absolute ``root`` (default ``~/.cache/pypto/jit``) and absolute ``extra_source_paths``
(relative ones are taken from the current directory when the request is made).

The cache itself (what is stored, how an entry is found) is :mod:`pypto._jit_cache`.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple, Union

__all__ = ["CacheConfig", "CacheStats", "cache_stats", "capture_cache_config", "configure_cache"]

#: Where an enabled cache without a ``root`` keeps its entries (under the home directory).
DEFAULT_ROOT = Path(".cache") / "pypto" / "jit"


@dataclass(frozen=True)
class CacheConfig:
    """A complete cache policy. ``enabled`` and ``readonly`` must be ``bool``, ``root`` a
    ``Path`` or ``None``, ``extra_source_paths`` a tuple of ``Path`` (files whose contents
    are part of every entry's key), ``extra_fingerprint`` a ``str`` or ``None`` (added to
    every key); anything else is a ``TypeError`` naming the field. A read-only cache serves
    hits and builds misses outside its root."""

    enabled: bool = False
    root: Optional[Path] = None
    readonly: bool = False
    extra_source_paths: Tuple[Path, ...] = ()
    extra_fingerprint: Optional[str] = None

    def __post_init__(self) -> None:
        for name in ("enabled", "readonly"):
            if type(getattr(self, name)) is not bool:
                raise TypeError(
                    f"CacheConfig.{name} must be a bool, got {type(getattr(self, name)).__name__}"
                )
        if self.root is not None and not isinstance(self.root, Path):
            raise TypeError(f"CacheConfig.root must be a pathlib.Path or None, got {self.root!r}")
        paths = self.extra_source_paths
        if type(paths) is not tuple or not all(isinstance(p, Path) for p in paths):
            raise TypeError(
                "CacheConfig.extra_source_paths must be a tuple of pathlib.Path, got "
                f"{paths!r}"
            )
        if self.extra_fingerprint is not None and type(self.extra_fingerprint) is not str:
            raise TypeError(
                f"CacheConfig.extra_fingerprint must be a str or None, got {self.extra_fingerprint!r}"
            )


@dataclass(frozen=True)
class CacheStats:
    """This process's cache counts since it started (never reset), and the nanoseconds
    spent looking entries up and building them. ``object_hits``: served from this process's
    memory; ``ready_hits``: from the cache directory; ``misses``: built (and stored unless
    read-only); ``disabled_requests``: requests made with the cache off; ``bypasses``: an
    enabled cache that could not serve nor store (``last_bypass_reason`` says why)."""

    requests: int = 0
    object_hits: int = 0
    ready_hits: int = 0
    generated_hits: int = 0
    misses: int = 0
    disabled_requests: int = 0
    forced_rebuilds: int = 0
    bypasses: int = 0
    last_bypass_reason: Optional[str] = None
    invalid_entries: int = 0
    storage_errors: int = 0
    generation_builds: int = 0
    binary_builds: int = 0
    lookup_ns: int = 0
    build_ns: int = 0


_lock = threading.Lock()
_override: Optional[CacheConfig] = None
_counts: Dict[str, Union[int, Optional[str]]] = dataclasses.asdict(CacheStats())


def configure_cache(config: Optional[CacheConfig]) -> None:
    """Sets this process's default policy; ``None`` goes back to the environment."""
    global _override
    if config is not None and type(config) is not CacheConfig:
        raise TypeError(f"configure_cache takes a CacheConfig or None, got {type(config).__name__}")
    with _lock:
        _override = config


def cache_stats() -> CacheStats:
    """A snapshot of this process's counts."""
    with _lock:
        return CacheStats(**_counts)  # type: ignore[arg-type]


def count(**increments: int) -> None:
    """Adds to this process's counts."""
    with _lock:
        for name, value in increments.items():
            _counts[name] = int(_counts[name] or 0) + value


def count_bypass(reason: str) -> None:
    """Counts a bypass and keeps its reason."""
    with _lock:
        _counts["bypasses"] = int(_counts["bypasses"] or 0) + 1
        _counts["last_bypass_reason"] = reason


def _env_flag(name: str) -> Optional[bool]:
    value = os.environ.get(name)
    if value is None:
        return None
    if value not in ("0", "1"):
        raise ValueError(f"{name} must be '0' or '1', got {value!r}")
    return value == "1"


def _from_env() -> CacheConfig:
    enabled = _env_flag("PYPTO_CACHE")
    readonly = _env_flag("PYPTO_CACHE_READONLY")
    root = os.environ.get("PYPTO_CACHE_DIR")
    return CacheConfig(
        enabled=bool(enabled),
        root=Path(root) if root else None,
        readonly=bool(readonly),
    )


def capture_cache_config(per_call: Optional[CacheConfig] = None) -> CacheConfig:
    """The policy a request uses (see the module docs for the precedence); ``TypeError``
    for a ``per_call`` that is not a ``CacheConfig``, ``ValueError`` for a variable that is
    not ``0`` / ``1``."""
    if per_call is not None and type(per_call) is not CacheConfig:
        raise TypeError(
            f"RunConfig.cache_config must be a CacheConfig or None, got {type(per_call).__name__}"
        )
    with _lock:
        config = per_call if per_call is not None else _override
    if config is None:
        config = _from_env()
    if not config.enabled:
        return config
    root = config.root if config.root is not None else Path.home() / DEFAULT_ROOT
    return dataclasses.replace(
        config,
        root=root.expanduser().resolve(),
        extra_source_paths=tuple(Path.cwd() / p for p in config.extra_source_paths),
    )
