"""The persistent ``@pl.jit`` cache: one build directory per key under
``<root>/artifacts/<k0>/<k1>/<k2>/<key>/``, with an ``artifact_manifest.json`` written last.

The key is a SHA-256 over the lowered program's printed IR (its functions, shapes and dtypes),
the platform, this runtime's version, the contents of the policy's ``extra_source_paths`` and
its ``extra_fingerprint``. A miss is compiled into a private directory under ``<root>/tmp/``
and renamed into place, so a reader never sees half an entry and two processes building the
same key keep one (the first rename wins). A read-only cache builds a miss outside its root
(``build_output/``, as without a cache). The policy is :mod:`pypto._cache_config`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

from pypto import _cache_config as policy
from pypto import _native

#: The manifest's name; an entry without it (or with another key in it) is not an entry.
MANIFEST = "artifact_manifest.json"
#: The build directory inside an entry.
BUILD = "build"


def fingerprint(program_text: str, platform: str, config: policy.CacheConfig) -> str:
    """The key of a program (its printed IR) for ``platform`` under ``config``."""
    h = hashlib.sha256()
    for part in ("pypto-jit-cache-1", _native.__version__, platform, program_text):
        h.update(part.encode())
        h.update(b"\0")
    for path in config.extra_source_paths:
        h.update(str(path).encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError as e:
            raise FileNotFoundError(
                f"CacheConfig.extra_source_paths: cannot read {path}: {e.strerror}"
            ) from e
        h.update(b"\0")
    h.update((config.extra_fingerprint or "").encode())
    return h.hexdigest()


def entry_dir(root: Path, key: str) -> Path:
    """Where the entry of ``key`` lives."""
    return root / "artifacts" / key[0:2] / key[2:4] / key[4:6] / key


def _ready(entry: Path, key: str) -> Optional[bool]:
    """``True`` for a complete entry of ``key``, ``False`` for a broken one, ``None`` when
    there is none."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return False
    ok = isinstance(manifest, dict) and manifest.get("key") == key
    return bool(ok and manifest.get("state") == "ready" and (entry / BUILD).is_dir())


def _payload_bytes(build: Path) -> int:
    return sum(p.stat().st_size for p in build.rglob("*") if p.is_file())


def _store(root: Path, key: str, platform: str, build: Callable[[Path], Any]) -> Path:
    """Builds into a private directory and renames it into place; returns the entry."""
    tmp = root / "tmp" / f"{key}.{os.getpid()}.{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    try:
        build(tmp / BUILD)
        manifest = {
            "schema": 1,
            "key": key,
            "state": "ready",
            "platform": platform,
            "payload_bytes": _payload_bytes(tmp / BUILD),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest) + "\n", encoding="utf-8")
        entry = entry_dir(root, key)
        entry.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(tmp, entry)
        except OSError:
            if _ready(entry, key) is not True:  # not another process's entry
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return entry


def fetch_or_build(
    program: Any,
    platform: str,
    config: policy.CacheConfig,
    compile_into: Callable[[Optional[Path]], Any],
) -> Any:
    """The compiled program of ``program`` from the cache of ``config`` (enabled), else
    built with ``compile_into(dir)`` (``None``: the default build directory) and stored."""
    from pypto.ir.compiled_program import CompiledProgram

    assert config.root is not None
    start = time.perf_counter_ns()
    key = fingerprint(str(program), platform, config)
    entry = entry_dir(config.root, key)
    state = _ready(entry, key)
    policy.count(requests=1, lookup_ns=time.perf_counter_ns() - start)
    if state is True:
        policy.count(ready_hits=1)
        return CompiledProgram.from_dir(entry / BUILD, platform=platform)
    if state is False:
        policy.count(invalid_entries=1)
        if not config.readonly:
            shutil.rmtree(entry, ignore_errors=True)  # entries appear whole: this one broke
    policy.count(misses=1)
    start = time.perf_counter_ns()
    try:
        if config.readonly:
            policy.count_bypass(f"read-only cache: {key} is built outside {config.root}")
            return compile_into(None)
        try:
            entry = _store(config.root, key, platform, compile_into)
        except OSError as e:
            policy.count(storage_errors=1)
            policy.count_bypass(f"cannot store {key} under {config.root}: {e}")
            return compile_into(None)
        policy.count(generation_builds=1)
        return CompiledProgram.from_dir(entry / BUILD, platform=platform)
    finally:
        policy.count(build_ns=time.perf_counter_ns() - start)
