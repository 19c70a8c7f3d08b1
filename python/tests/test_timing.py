"""PTO_TIMING through the Python API (docs/TIMING.md): a replay with ``PTO_TIMING=predicted``
writes the model's prediction and marks the swimlane; an unknown value is refused naming
the variable."""

from __future__ import annotations

import json

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
