"""``TensorSpec`` / ``ScalarSpec``: how a test harness describes one orchestration
argument (PyPTO's ``pypto.runtime.tensor_spec``)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from pypto._dtypes import CTYPES_CLASSES

__all__ = ["ScalarSpec", "TensorSpec"]

#: ``ScalarSpec.ctype`` -> its ctypes class: the C name of every class a scalar of some element
#: type is passed as (the one table's ``ctypes`` column, ``c_int64`` -> ``int64``), and C's
#: ``double``, which PyPTO's ``ScalarSpec`` accepts though no element type is passed as one.
_CTYPES: Dict[str, Any] = {
    **{cls[len("c_") :]: getattr(ctypes, cls) for cls in sorted(CTYPES_CLASSES)},
    "double": ctypes.c_double,
}


@dataclass
class TensorSpec:
    """A tensor argument: its name, shape and dtype (a ``torch.dtype`` or a NumPy dtype),
    its initial value (``None`` zeros; a scalar fills; a torch factory — ``torch.randn``,
    ``rand``, ``zeros``, ``ones`` — is called with the shape and dtype, any other callable
    with no arguments, as PyPTO does; a tensor or array is used as it is) and whether it is
    an output."""

    name: str
    shape: Sequence[int]
    dtype: Any
    init_value: Optional[Union[int, float, Callable[..., Any], Any]] = None
    is_output: bool = False

    def create_tensor(self) -> Any:
        """The tensor: a ``torch.Tensor`` when ``dtype`` is a torch dtype, else a NumPy
        array."""
        shape: List[int] = [int(d) for d in self.shape]
        if type(self.dtype).__module__.startswith("torch"):
            import torch  # type: ignore[import-not-found, unused-ignore]  # a torch dtype implies torch

            if self.init_value is None:
                return torch.zeros(shape, dtype=self.dtype)
            if callable(self.init_value):
                if self.init_value in (torch.randn, torch.rand, torch.zeros, torch.ones):
                    return self.init_value(shape, dtype=self.dtype)
                return torch.as_tensor(self.init_value()).to(self.dtype)
            if isinstance(self.init_value, (int, float)):
                return torch.full(shape, self.init_value, dtype=self.dtype)
            return torch.as_tensor(self.init_value).to(self.dtype)
        import numpy as np

        if self.init_value is None:
            return np.zeros(shape, dtype=self.dtype)
        if callable(self.init_value):
            return np.asarray(self.init_value(), dtype=self.dtype)
        if isinstance(self.init_value, (int, float)):
            return np.full(shape, self.init_value, dtype=self.dtype)
        return np.asarray(self.init_value, dtype=self.dtype)


@dataclass
class ScalarSpec:
    """A scalar argument: its name, value and C type (PyPTO's ``int64``, ``int32``,
    ``uint64``, ``uint32``, ``float``, ``double``, and the C name of any other ctypes class a
    scalar of an element type is passed as)."""

    name: str
    value: Union[int, float]
    ctype: str = "int64"

    def create_scalar(self) -> Any:
        """The value as its ctypes type; ``ValueError`` for an unknown ``ctype``."""
        maker: Any = _CTYPES.get(self.ctype)
        if maker is None:
            raise ValueError(
                f"ScalarSpec {self.name!r}: unknown ctype {self.ctype!r}; use one of {sorted(_CTYPES)}"
            )
        return maker(self.value)
