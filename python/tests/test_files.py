"""The package's one atomic write (``pypto._files``, backed by the native writer) and the
rule that no other module of the package renames a temporary of its own (issue 25)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import pypto
from pypto._files import write_atomic, write_text_atomic


def test_write_creates_parents_and_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "f.json"
    write_text_atomic(target, "old")
    write_atomic(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert [p.name for p in target.parent.iterdir()] == ["f.json"], "no temporary left behind"


def test_many_writers_in_one_process_never_share_a_temporary(tmp_path: Path) -> None:
    # The copies this replaced named their temporary `<stem>.<pid>.tmp`: two threads
    # writing the same file raced on one temporary and could publish a mix or fail.
    target = tmp_path / "shared.txt"
    payloads = [bytes([65 + i]) * 200_000 for i in range(8)]
    errors: list[BaseException] = []

    def writer(data: bytes) -> None:
        try:
            for _ in range(5):
                write_atomic(target, data)
        except BaseException as e:  # noqa: BLE001 -- reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert target.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["shared.txt"]


def test_a_failed_write_names_the_file_and_keeps_the_errno(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    with pytest.raises(OSError) as info:
        write_atomic(blocker / "f.txt", b"data")
    assert "not_a_dir" in str(info.value)
    assert info.value.errno != 0


def test_no_module_renames_a_temporary_of_its_own() -> None:
    root = Path(pypto.__file__).parent
    # The JIT cache publishes a whole directory (a rename of a staged tree), which a file
    # write cannot do; it is the one allowed rename.
    allowed = {"_jit_cache.py"}
    offenders = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if p.name not in allowed and re.search(r"\bos\.(replace|rename)\(|getpid\(\)\}\.tmp", p.read_text("utf-8"))
    ]
    assert offenders == [], f"write files through pypto._files.write_atomic: {offenders}"
