"""The one way the package writes a file: atomically, through the native module's writer
(``pto_base::fs::write_atomic``), so the Python side and the Rust side share one temporary
naming scheme (unique per writer, in one process or several) and one durability policy.

A reader sees the old file or the new one, never a prefix; the parent directories are
created. Errors are ``OSError`` naming the file and the step that failed.
"""

from __future__ import annotations

import os
from typing import Union

from pypto import _native

__all__ = ["write_atomic", "write_text_atomic"]


def write_atomic(path: Union[str, "os.PathLike[str]"], data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically."""
    _native.write_atomic(path, data)


def write_text_atomic(path: Union[str, "os.PathLike[str]"], text: str) -> None:
    """Writes ``text`` (UTF-8) to ``path`` atomically."""
    _native.write_atomic(path, text.encode("utf-8"))
