"""The diagnostics switches: the runner's table (``_native.dfx_switches()``) and the Python
declarations that are written out for their types (dataclass fields, PyPTO's signatures)
agree, so a switch added to the table and forgotten in one of them fails here."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any, Callable

import pytest

from pypto import _native
from pypto.runtime import RunConfig, _dfx_switches
from pypto.runtime._simpler_compat._task_interface import CallConfig
from pypto.runtime.device_runner import execute_on_device
from pypto.runtime.runner import _POSITIONAL_2026_08, DfxOptions

KEYWORDS = _dfx_switches.KEYWORDS


def _on(s: _native.DfxSwitch) -> Any:
    """A value that turns ``s`` on (its bare value, or ``True``)."""
    return s.bare if s.kind == "level" else True


def test_the_table_is_the_runners() -> None:
    for s in _dfx_switches.SWITCHES:
        assert s.python_keyword == f"enable_{s.name}"
        assert (s.max is None) == (s.bare is None) == (s.kind == "flag")
        assert s.artifact and s.help and s.cli_flag


def test_the_dataclasses_declare_every_switch() -> None:
    dfx_fields = [f.name for f in dataclasses.fields(DfxOptions)]
    assert tuple(dfx_fields) == KEYWORDS
    run_config_fields = {f.name for f in dataclasses.fields(RunConfig)}
    call_config_fields = {f.name for f in dataclasses.fields(CallConfig)}
    assert set(KEYWORDS) <= run_config_fields and set(KEYWORDS) <= call_config_fields
    # PyPTO's execute_on_device takes PyPTO's switches; each is a row of the table.
    params = inspect.signature(execute_on_device).parameters
    assert [p for p in params if p.startswith("enable_") and p != "enable_sdma"] == list(KEYWORDS[:5])


def test_pyptos_2026_08_positional_order_holds_the_first_five() -> None:
    # PyPTO 2026-08's positional order is frozen: a switch added later is keyword-only.
    start = _POSITIONAL_2026_08.index("enable_chip_swimlane")
    assert _POSITIONAL_2026_08[start : start + 5] == KEYWORDS[:5]


@pytest.mark.parametrize("switch", _dfx_switches.SWITCHES, ids=lambda s: s.python_keyword)
def test_each_switch_reaches_the_native_options_alone(switch: _native.DfxSwitch) -> None:
    config = RunConfig(**{switch.python_keyword: _on(switch)})
    options = config.native_options()
    on = [k for k in KEYWORDS if getattr(options, k)]
    assert on == [switch.python_keyword]
    assert getattr(options, switch.python_keyword) == _on(switch)
    assert config.any_dfx_enabled() and config.dfx_options().any()
    assert f"{switch.python_keyword}={_on(switch)}" in repr(options)
    assert _dfx_switches.call_config_values(config)[switch.python_keyword] == _on(switch)
    assert CallConfig(**{switch.python_keyword: _on(switch)}).any_dfx()


def test_the_native_options_refuse_an_unknown_switch() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'enable_trace'"):
        _native.RunOptions("a2a3sim", enable_trace=1)


def test_an_artifact_that_cannot_be_written_is_an_os_error(example: Callable[[str], Path]) -> None:
    from pypto._golden import load_inputs_from_golden
    from pypto.runtime.debug import replay

    import pypto.runtime

    assert issubclass(_native.ArtifactWriteError, OSError)
    assert pypto.runtime.ArtifactWriteError is _native.ArtifactWriteError
    d = example("vector_add")
    (d / "dfx_outputs").write_text("a file where the directory goes")
    tensors = [value for _, value in load_inputs_from_golden(d)]
    with pytest.raises(pypto.runtime.ArtifactWriteError, match="dfx_outputs"):
        replay(d, *tensors, config=RunConfig(enable_pmu=2))
