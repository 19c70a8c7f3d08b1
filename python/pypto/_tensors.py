"""NumPy and torch glue: what a tensor argument may be, and how it becomes a NumPy array.

Tensors are NumPy arrays. A ``torch.Tensor`` (or any object with a ``.numpy()`` method
returning an array that shares its memory) is accepted too and converted with
``.numpy()``, so outputs written into the array land in the tensor. torch is never imported
here: a torch tensor is recognised by its methods, and torch is only imported (lazily) to
view a ``torch.bfloat16`` tensor as ``int16`` bits, which needs torch's dtype object.

bfloat16 has no NumPy dtype. Pass an ``ml_dtypes.bfloat16`` array when ml_dtypes is
installed, else the raw bits as a ``uint16`` array: a ``uint16`` array bound to a parameter
declared ``bfloat16`` is taken as bfloat16 bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_array_like", "as_host_array", "numpy_dtype", "zeros_for"]

# PyPTO dtype names (compiled_meta.json) -> NumPy dtype names.
_NUMPY_DTYPES = {
    "fp32": "float32",
    "fp16": "float16",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "index": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
}


def numpy_dtype(pypto_dtype: str) -> np.dtype[Any]:
    """The NumPy dtype of a PyPTO dtype name (``fp32`` -> ``float32``).

    ``bfloat16`` gives ``ml_dtypes.bfloat16`` when ml_dtypes is installed, else ``uint16``
    (the raw bits). A name with no host type raises ``ValueError``.
    """
    if pypto_dtype in ("bfloat16", "bf16"):
        try:
            import ml_dtypes  # type: ignore[import-not-found]
        except ImportError:
            return np.dtype(np.uint16)
        bfloat16: np.dtype[Any] = np.dtype(ml_dtypes.bfloat16)
        return bfloat16
    name = _NUMPY_DTYPES.get(pypto_dtype)
    if name is None:
        raise ValueError(f"DataType '{pypto_dtype}' has no host element type here")
    return np.dtype(name)


def zeros_for(name: str, shape: list[int] | None, pypto_dtype: str) -> np.ndarray:
    """A zero-filled output array for parameter ``name`` (a concrete shape is required)."""
    if shape is None or any(d < 0 for d in shape):
        raise ValueError(
            f"Output '{name}' has the dynamic shape {shape}; pass an array of the concrete "
            "shape (call the program in-place with every parameter)"
        )
    return np.zeros(tuple(shape), dtype=numpy_dtype(pypto_dtype))


def _is_torch_like(obj: object) -> bool:
    return not isinstance(obj, np.ndarray) and callable(getattr(obj, "numpy", None))


def is_array_like(obj: object) -> bool:
    """True for a NumPy array or a tensor with ``.numpy()`` (torch)."""
    return isinstance(obj, np.ndarray) or _is_torch_like(obj)


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
            "Call .cpu() before passing it."
        )
    is_contiguous = getattr(obj, "is_contiguous", None)
    if callable(is_contiguous) and not is_contiguous():
        raise ValueError(
            f"Tensor at position {position} is not contiguous. Call .contiguous() before passing it."
        )
    detach = getattr(obj, "detach", None)
    if callable(detach):
        obj = detach()
    if str(getattr(obj, "dtype", "")) == "torch.bfloat16":
        import torch  # type: ignore[import-not-found]  # a torch tensor implies torch is installed

        return obj.view(torch.int16).numpy().view(np.uint16)
    return obj.numpy()
