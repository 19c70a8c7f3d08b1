"""The diagnostics switches, read from the runner's table (``pypto._native.dfx_switches()``,
``pto_runner::dfx_switches::DFX_SWITCHES``): every keyword list, keyword dict and "is any
on" check of ``pypto.runtime`` is made here from that table instead of being written out.

The dataclass fields that declare the switches (``RunConfig``, ``DfxOptions``) stay written
out, for their types and defaults; ``python/tests/test_dfx_switches.py`` checks them
against the table."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple

from pypto import _native

#: The switches, in the runner's order.
SWITCHES: Tuple[_native.DfxSwitch, ...] = tuple(_native.dfx_switches())

#: Their Python keywords (``enable_chip_swimlane``, ...).
KEYWORDS: Tuple[str, ...] = tuple(s.python_keyword for s in SWITCHES)


def values(obj: Any) -> Dict[str, Any]:
    """Each switch's value on ``obj`` (an object with the keywords as attributes)."""
    return {k: getattr(obj, k) for k in KEYWORDS}


def call_config_values(obj: Any) -> Dict[str, Any]:
    """Each switch of ``obj`` as a ``CallConfig`` field holds it: a level as an int (``None``
    as 0), a flag as a bool."""
    return {
        s.python_keyword: (
            int(getattr(obj, s.python_keyword, 0) or 0)
            if s.kind == "level"
            else bool(getattr(obj, s.python_keyword, False))
        )
        for s in SWITCHES
    }


def any_enabled(switches: Mapping[str, Any]) -> bool:
    """True when one of the switches in ``switches`` (keyword → value) is on (a level above
    0, a flag true)."""
    return any(
        (switches.get(s.python_keyword) or 0) > 0 if s.kind == "level" else bool(switches.get(s.python_keyword))
        for s in SWITCHES
    )


def off() -> Dict[str, Any]:
    """Every switch off: the keyword arguments that turn them all off."""
    return {s.python_keyword: 0 if s.kind == "level" else False for s in SWITCHES}


def keywords_text() -> str:
    """The keywords joined as the runner's messages list them (``a / b / ...``)."""
    return " / ".join(KEYWORDS)
