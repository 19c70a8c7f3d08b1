"""``validate_against_golden``'s checks of ``golden.py`` itself: an unknown name in
``__outputs__`` is an error, and an output the run left untouched against a golden equal to
its initial value is a warning naming it (the comparison cannot tell whether any task wrote
it)."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pytest

from pypto._golden import validate_against_golden


def _module(outputs: list, compute=lambda tensors, params: None) -> ModuleType:
    m = ModuleType("_replay_golden")
    m.__file__ = "/b/golden.py"
    m.__outputs__ = outputs  # type: ignore[attr-defined]
    m.compute_golden = compute  # type: ignore[attr-defined]
    return m


def test_an_unknown_output_name_is_an_error() -> None:
    a = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"/b/golden.py: __outputs__ names \['zz'\], which are not parameters of the program \(parameters: \['c'\]\); fix __outputs__"):
        validate_against_golden(_module(["zz"]), {"c": a.copy()}, {"c": a})


def test_an_untouched_output_against_an_unchanged_golden_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    zeros = np.zeros(16, np.float32)
    # A no-op compute_golden (or an all-zero golden) and an output no task wrote: the
    # comparison passes, and the warning says why that proves nothing.
    assert validate_against_golden(_module(["c"]), {"c": zeros.copy()}, {"c": zeros.copy()}) == ["c"]
    err = capsys.readouterr().err
    assert "warning: output 'c' is unchanged by the run and its golden equals its initial value" in err
    assert "submits a task writing 'c'" in err
    # Written by the run: no warning.
    def golden(tensors, params):  # type: ignore[no-untyped-def]
        tensors["c"][:] = 1.0

    validate_against_golden(_module(["c"], golden), {"c": zeros.copy()}, {"c": np.ones(16, np.float32)})
    assert capsys.readouterr().err == ""
