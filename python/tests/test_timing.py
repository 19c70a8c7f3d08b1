"""PTO_TIMING through the Python API (docs/TIMING.md): a replay with ``PTO_TIMING=predicted``
writes the model's prediction and marks the swimlane; an unknown value is refused naming
the variable."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pypto._golden import load_inputs_from_golden
from pypto.runtime import RunConfig
from pypto.runtime.debug import replay


def test_pto_timing_predicted_reaches_the_run(example, monkeypatch):
    d = example("paged_attn_bf16")
    monkeypatch.setenv("PTO_TIMING", "predicted")
    monkeypatch.setenv("PYPTO_REBUILD_FROM_PTO", "0")
    tensors = [value for _, value in load_inputs_from_golden(d)]
    replay(d, *tensors, config=RunConfig(enable_chip_swimlane=True))
    out = d / "dfx_outputs"
    predicted = json.loads((out / "predicted_timing.json").read_text())
    assert predicted["timing"] == "predicted"
    assert predicted["makespan_cycles"] > 0 and predicted["modelled_subtasks"] > 0
    swimlane = json.loads((out / "chip_swimlane_records.json").read_text())
    assert swimlane["metadata"]["timing"] == "predicted"


def test_unknown_pto_timing_is_refused(monkeypatch):
    monkeypatch.setenv("PTO_TIMING", "device")
    with pytest.raises(Exception, match="PTO_TIMING"):
        RunConfig()


def _read_only_view(src: Path, dst: Path) -> bool:
    """``src`` bind-mounted read-only at ``dst`` (needs root and mount; False otherwise)."""
    dst.mkdir()
    if subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True).returncode != 0:
        return False
    if subprocess.run(["mount", "-o", "remount,ro,bind", str(dst)], capture_output=True).returncode != 0:
        subprocess.run(["umount", str(dst)], capture_output=True)
        return False
    return True


def test_predicted_timing_into_a_read_only_directory_is_refused_before_the_run(example, tmp_path, monkeypatch):
    """The predicted timing writes ``dfx_outputs/predicted_timing.json``, so, as with the five
    switches (and as ``pto replay`` does), a directory that cannot take it is refused before
    anything runs, naming it and the fix; without diagnostics the same directory runs."""
    d = example("vector_add")
    monkeypatch.setenv("PYPTO_REBUILD_FROM_PTO", "0")
    tensors = [value for _, value in load_inputs_from_golden(d)]
    replay(d, *tensors)
    ro = tmp_path / "ro"
    if not _read_only_view(d, ro):
        pytest.skip("this process cannot make a read-only bind mount (needs root)")
    try:
        replay(ro, *tensors)
        with pytest.raises(Exception, match="is not writable, so the diagnostics cannot be written"):
            replay(ro, *tensors, config=RunConfig(timing="predicted"))
        monkeypatch.setenv("PTO_TIMING", "predicted")
        with pytest.raises(Exception, match="is not writable"):
            replay(ro, *tensors)
    finally:
        subprocess.run(["umount", str(ro)], capture_output=True)
