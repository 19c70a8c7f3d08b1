"""The L3 runner's per-dispatch diagnostics directories: before a run it removes only what
an earlier run wrote (``rank<r>/d<k>/`` of this run's ranks, real directories holding the
marker), never follows a link and never writes through one. Needs no torch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pypto.runtime import distributed_runner as dr


class _Orch:
    def __init__(self) -> None:
        self.seen: list = []

    def submit_next_level(self, cid, ta, config, *, worker):  # type: ignore[no-untyped-def]
        self.seen.append((worker, config.output_prefix))


def _submit(base: Path, workers: list) -> None:
    from simpler.task_interface import CallConfig

    orch = _Orch()
    cid = object()
    dr._reset_dfx_dispatch_state(orch, {"child": cid})
    orch._pypto_chip_count = 2  # type: ignore[attr-defined]
    cfg = CallConfig(output_prefix=str(base))
    for w in workers:
        dr._submit_chip(orch, cid, None, cfg, w)


def test_cleanup_removes_only_marked_dispatch_dirs_of_this_runs_ranks(tmp_path: Path) -> None:
    base = tmp_path / "dfx_outputs"
    base.mkdir()
    outside = tmp_path / "elsewhere"
    (outside / "d1_important").mkdir(parents=True)
    (outside / "d1").mkdir()
    (outside / "d1" / dr.DISPATCH_MARKER).write_text("")
    (outside / "d1_important" / "data").write_text("precious")
    # A user's directories whose names the old `rank*/d[0-9]*` glob matched.
    survivors = [
        base / "rank_notes" / "d2024_results",
        base / "rank7" / "d9_keep",
        base / "ranking" / "d1x",
        base / "rank1" / "d3_notes",
        base / "rank1" / "d5",  # exactly d<int> but no marker: never removed
        base / "rank7" / "d0",  # marked, but rank 7 is not a rank of this run
    ]
    for s in survivors:
        s.mkdir(parents=True)
        (s / "keep.txt").write_text("keep")
    (base / "rank7" / "d0" / dr.DISPATCH_MARKER).write_text("")
    # A marker that is a link does not count.
    (base / "rank1" / "d6").mkdir()
    os.symlink(outside / "d1" / dr.DISPATCH_MARKER, base / "rank1" / "d6" / dr.DISPATCH_MARKER)
    survivors.append(base / "rank1" / "d6")
    # What an earlier run wrote: removed, including a link inside (not followed).
    _submit(base, [1, 1])
    os.symlink(outside, base / "rank1" / "d1" / "link")
    dr._clear_dfx_dispatch_dirs(base, range(2))
    for s in survivors:
        assert s.is_dir(), s
    assert not (base / "rank1" / "d0").exists() and not (base / "rank1" / "d1").exists()
    assert (outside / "d1_important" / "data").read_text() == "precious"
    assert (outside / "d1").is_dir()


def test_a_linked_rank_dir_is_refused_and_nothing_behind_it_is_touched(tmp_path: Path) -> None:
    base = tmp_path / "dfx_outputs"
    base.mkdir()
    outside = tmp_path / "elsewhere"
    (outside / "d1_important").mkdir(parents=True)
    (outside / "d0").mkdir()
    (outside / "d0" / dr.DISPATCH_MARKER).write_text("")
    os.symlink(outside, base / "rank0")
    with pytest.raises(FileExistsError, match=r"rank0 is a symbolic link.*remove or rename it"):
        dr._clear_dfx_dispatch_dirs(base, range(2))
    assert (outside / "d1_important").is_dir() and (outside / "d0").is_dir()
    # Nor does a dispatch write through it.
    with pytest.raises(FileExistsError, match="rank0 is a symbolic link"):
        _submit(base, [0])
    assert sorted(p.name for p in outside.iterdir()) == ["d0", "d1_important"]


def test_an_unmarked_dispatch_dir_in_the_way_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "dfx_outputs"
    (base / "rank0" / "d0").mkdir(parents=True)
    (base / "rank0" / "d0" / "mine.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=r"d0 exists but was not written by an L3 run"):
        _submit(base, [0])
    assert (base / "rank0" / "d0" / "mine.txt").read_text() == "mine"
    assert not (base / "rank0" / "d0" / dr.DISPATCH_MARKER).exists()


def test_submitting_marks_each_dispatch_dir_and_a_rerun_reuses_it(tmp_path: Path) -> None:
    base = tmp_path / "dfx_outputs"
    _submit(base, [0, 1, 0])
    assert [p.name for p in dr._dispatch_dirs(base, range(2))] == ["d0", "d1", "d0"]
    for d in dr._dispatch_dirs(base, range(2)):
        assert (d / dr.DISPATCH_MARKER).is_file()
    _submit(base, [0, 1, 0])  # the timing pass of a swimlane run writes the same dirs
    dr._clear_dfx_dispatch_dirs(base, range(2))
    assert dr._dispatch_dirs(base, range(2)) == []
    assert sorted(p.name for p in base.iterdir()) == ["rank0", "rank1"]
