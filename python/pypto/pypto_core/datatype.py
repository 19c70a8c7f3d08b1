"""``DataType``: PyPTO's element types, with their ``str()`` names (``fp32``,
``bfloat16``, ``index``, ...) as ``compiled_meta.json`` and ``kernel_config.py`` spell them.

Only some of them have a host element type here (``pypto._tensors``); the others (``fp8*``,
``fp4``, ``hf*``, ``int4``, ``uint4``) are names the sidecars may carry.
"""

from __future__ import annotations

from typing import Dict, Tuple

from pypto._dtypes import ELEMENT_TYPES

__all__ = ["DataType"]

# member name -> (str() name, bits, kind, C type or ""): the one table's view
# (``pypto._dtypes``); the member annotations below are checked against it by the tests.
_TABLE: Dict[str, Tuple[str, int, str, str]] = {
    t.member: (t.name, t.bits, t.kind, t.c_type or "") for t in ELEMENT_TYPES
}


class DataType:
    """One element type. The members are class attributes (``DataType.FP32``); two
    instances are equal when they name the same type."""

    __slots__ = ("_member",)

    BOOL: DataType
    INT4: DataType
    INT8: DataType
    INT16: DataType
    INT32: DataType
    INT64: DataType
    UINT4: DataType
    UINT8: DataType
    UINT16: DataType
    UINT32: DataType
    UINT64: DataType
    FP4: DataType
    FP8E4M3FN: DataType
    FP8E5M2: DataType
    FP8E8M0: DataType
    FP16: DataType
    FP32: DataType
    BF16: DataType
    HF4: DataType
    HF8: DataType
    INDEX: DataType

    def __init__(self, member: str) -> None:
        if member not in _TABLE:
            raise ValueError(f"Unknown DataType {member!r}; known: {sorted(_TABLE)}")
        self._member = member

    @classmethod
    def from_string(cls, name: str) -> DataType:
        """The type whose ``str()`` is ``name`` (``fp32``); ``bf16`` is accepted for
        ``bfloat16``. Raises ``ValueError`` with PyPTO's text for an unknown name."""
        if name == "bf16":
            name = "bfloat16"
        for member, row in _TABLE.items():
            if row[0] == name:
                return cls(member)
        known = sorted(row[0] for row in _TABLE.values())
        raise ValueError(f"Unknown DataType string {name!r}; known: {known}")

    @property
    def name(self) -> str:
        """The member name (``FP32``)."""
        return self._member

    def get_bit(self) -> int:
        """The size in bits (4 for the sub-byte types)."""
        return _TABLE[self._member][1]

    def to_string(self) -> str:
        """The name PyPTO prints (``fp32``), the same as ``str()``."""
        return _TABLE[self._member][0]

    def to_c_type_string(self) -> str:
        """The C type of generated code (``float``, ``half``, ``int32_t``); ``ValueError``
        for a type generated code has no scalar for."""
        c_type = _TABLE[self._member][3]
        if not c_type:
            raise ValueError(f"DataType {self.to_string()} has no C type for code generation")
        return c_type

    def is_float(self) -> bool:
        """True for the floating-point types (fp4 ... fp32, bfloat16, hf4, hf8)."""
        return _TABLE[self._member][2] == "float"

    def is_signed_int(self) -> bool:
        """True for int4 ... int64 and index."""
        return _TABLE[self._member][2] == "int"

    def is_unsigned_int(self) -> bool:
        """True for uint4 ... uint64."""
        return _TABLE[self._member][2] == "uint"

    def is_int(self) -> bool:
        """True for any integer type."""
        return self.is_signed_int() or self.is_unsigned_int()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataType):
            return NotImplemented
        return self._member == other._member

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self._member)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"DataType.{self._member}"


for _member in _TABLE:
    setattr(DataType, _member, DataType(_member))
del _member
