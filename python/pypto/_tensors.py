"""NumPy and torch glue: what a tensor argument may be, and how it becomes a NumPy array.

Tensors are NumPy arrays. A ``torch.Tensor`` (or any object with a ``.numpy()`` method
returning an array that shares its memory) is accepted too and converted with
``.numpy()``, so outputs written into the array land in the tensor. torch is never imported
here: a torch tensor is recognised by its methods, and torch is only imported (lazily) to
view a ``torch.bfloat16`` tensor as ``int16`` bits, which needs torch's dtype object.

bfloat16 has no NumPy dtype. Pass an ``ml_dtypes.bfloat16`` array when ml_dtypes is
installed, else the raw bits as a ``uint16`` array: a ``uint16`` array bound to a parameter
declared ``bfloat16`` is taken as bfloat16 bits.

NumPy itself is imported only by the functions that make arrays (:func:`numpy_dtype`,
:func:`zeros_for`, a bfloat16 torch view): the type tests look NumPy up in
``sys.modules``, since no array exists before NumPy is imported, so that runs whose
arguments are native (``pypto._native.HostArray``) never import it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from pypto._dtypes import HOST_NAMES, NUMPY_NAMES

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "as_host_array",
    "is_array_like",
    "is_ctypes_scalar",
    "is_ndarray",
    "is_numpy_scalar",
    "is_torch_tensor",
    "numpy_dtype",
    "zeros_for",
]

# PyPTO dtype names (compiled_meta.json) -> NumPy dtype names (the one table's view).
_NUMPY_DTYPES = NUMPY_NAMES


def numpy_dtype(pypto_dtype: str) -> np.dtype[Any]:
    """The NumPy dtype of a PyPTO dtype name (``fp32`` -> ``float32``).

    ``bfloat16`` gives ``ml_dtypes.bfloat16`` when ml_dtypes is installed, else ``uint16``
    (the raw bits). A name with no host type raises ``ValueError``.
    """
    import numpy as np

    if pypto_dtype in ("bfloat16", "bf16"):
        try:
            import ml_dtypes  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            return np.dtype(np.uint16)
        bfloat16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bfloat16
    name = _NUMPY_DTYPES.get(pypto_dtype)
    if name is None:
        raise ValueError(f"DataType '{pypto_dtype}' has no host element type here")
    return np.dtype(name)


# PyPTO dtype names -> torch dtype attribute names: NumPy's, plus bfloat16.
_TORCH_DTYPES = HOST_NAMES


def zeros_for(name: str, shape: list[int] | None, pypto_dtype: str, *, torch: bool = False) -> Any:
    """A zero-filled output for the pure output ``name`` of a return-style call: a NumPy
    array, or a ``torch.Tensor`` with ``torch=True``. Raises PyPTO's ``ValueError`` for a
    scalar, a dynamic shape or a dtype with no host type."""
    if shape is None:
        raise ValueError(f"Cannot allocate output tensor {name!r}: no shape in IR")
    if any(d < 0 for d in shape):
        raise ValueError(
            f"Cannot allocate output tensor {name!r}: shape {shape} contains dynamic "
            "dimensions. Pass all tensors explicitly (in-place style)."
        )
    if torch:
        import torch as _torch  # type: ignore[import-not-found, unused-ignore]  # asked for by a torch caller

        dtype = getattr(_torch, _TORCH_DTYPES.get(pypto_dtype, ""), None)
        if dtype is None:
            raise ValueError(f"Unsupported dtype {pypto_dtype} for output tensor {name!r}")
        return _torch.zeros(list(shape), dtype=dtype)
    import numpy as np

    try:
        np_dtype = numpy_dtype(pypto_dtype)
    except ValueError:
        raise ValueError(f"Unsupported dtype {pypto_dtype} for output tensor {name!r}") from None
    return np.zeros(tuple(shape), dtype=np_dtype)


def is_ndarray(obj: object) -> bool:
    """True for a NumPy array (without importing NumPy: no array exists before it is)."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(obj, numpy.ndarray)


def is_numpy_scalar(obj: object) -> bool:
    """True for a NumPy scalar (``np.float32(1)``), without importing NumPy."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(obj, numpy.generic)


def is_ctypes_scalar(obj: object) -> bool:
    """True for a ctypes scalar (``ctypes.c_int32(1)``), without importing ctypes."""
    ctypes = sys.modules.get("ctypes")
    return ctypes is not None and isinstance(obj, ctypes._SimpleCData)


def _is_torch_like(obj: object) -> bool:
    return not is_ndarray(obj) and callable(getattr(obj, "numpy", None))


def is_torch_tensor(obj: object) -> bool:
    """True for a ``torch.Tensor`` (or any tensor type with ``.numpy()`` sharing memory)."""
    return _is_torch_like(obj)


def is_array_like(obj: object) -> bool:
    """True for a NumPy array or a tensor with ``.numpy()`` (torch)."""
    return is_ndarray(obj) or _is_torch_like(obj)


def as_host_array(obj: Any, position: int) -> Any:
    """``obj`` as a NumPy array when it is a tensor; any other value is returned unchanged.

    A torch-like tensor must be on the CPU and contiguous (``ValueError`` otherwise, with
    the reference's texts); it is converted with ``.numpy()`` (after ``.detach()``), which
    shares memory, so outputs written back reach the tensor.
    """
    if not _is_torch_like(obj):
        return obj
    device = getattr(obj, "device", None)
    if device is not None and str(device) != "cpu":
        raise ValueError(
            f"Tensor at position {position} is on {device}, expected CPU. "
            "Call .cpu() before packing into orch_args."
        )
    is_contiguous = getattr(obj, "is_contiguous", None)
    if callable(is_contiguous) and not is_contiguous():
        raise ValueError(
            f"Tensor at position {position} is not contiguous. Call .contiguous() before packing "
            "into orch_args."
        )
    detach = getattr(obj, "detach", None)
    if callable(detach):
        obj = detach()
    if str(getattr(obj, "dtype", "")) == "torch.bfloat16":
        import numpy as np
        import torch  # type: ignore[import-not-found, unused-ignore]  # a torch tensor implies torch is installed

        return obj.view(torch.int16).numpy().view(np.uint16)
    return obj.numpy()
