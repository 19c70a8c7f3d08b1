"""Element-type names as views of the one table of them (``pypto._native.element_type_table()``,
Rust's ``pto_base::dtype``): every Python mapping between dtype spellings is made here, at
import, from that table. Only names are mapped (strings to strings), so importing this
module imports neither NumPy nor torch; callers look the dtype objects up when they need one.

The literal lists Python's type checkers need (``DataType``'s members, ``pypto.DT_*``,
``pl.FP32`` ...) stay written out; ``python/tests/test_element_types.py`` checks them
against the table.
"""

from __future__ import annotations

from pypto import _native

# typing is not imported at run time: the replay's command line imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, FrozenSet, Tuple

__all__ = [
    "CTYPES_CLASSES",
    "ELEMENT_TYPES",
    "HOST_NAMES",
    "NUMPY_ATTR_TO_PYPTO",
    "NUMPY_NAMES",
    "SCALAR_CTYPES",
]

#: Every PyPTO element type, in PyPTO's order (``INDEX`` last).
ELEMENT_TYPES: Tuple[_native.ElementType, ...] = tuple(_native.element_type_table())

#: PyPTO name (``str(DataType)``, or an alias such as ``bf16``) -> the NumPy / torch name of
#: a host tensor of that type (``fp32`` -> ``float32``, ``index`` -> ``int64``,
#: ``bfloat16`` -> ``bfloat16``): the ``torch.<name>`` attribute.
HOST_NAMES: Dict[str, str] = {
    name: t.host_name for t in ELEMENT_TYPES if t.host_name for name in (t.name, *t.aliases)
}

#: PyPTO name -> NumPy dtype name, for the types NumPy has natively (not bfloat16).
NUMPY_NAMES: Dict[str, str] = {t.name: t.host_name for t in ELEMENT_TYPES if t.host_name and t.numpy_attr}

#: ``np.<attr>`` -> PyPTO name, for the types NumPy has (``bool_`` -> ``bool``); ``int64``
#: is ``int64``, never ``index``.
NUMPY_ATTR_TO_PYPTO: Dict[str, str] = {
    t.numpy_attr: t.name for t in ELEMENT_TYPES if t.numpy_attr and t.code is not None
}

#: PyPTO name -> the ctypes class name a scalar of that type is passed as (``c_float``).
SCALAR_CTYPES: Dict[str, str] = {t.name: t.ctypes for t in ELEMENT_TYPES if t.ctypes}

#: Every ctypes class a scalar of some element type is passed as.
CTYPES_CLASSES: FrozenSet[str] = frozenset(SCALAR_CTYPES.values())
