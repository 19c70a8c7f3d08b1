"""``pypto.ir.serialize`` / ``deserialize``: a program or function as bytes and back.

The bytes are a one-line header naming the format and the DSL source the printer writes
(:meth:`Program.as_python`, ``Function.as_python``); :func:`deserialize` parses it back into
a structurally equal program or function. PyPTO writes msgpack: the bytes of the two are not
interchangeable (docs/DECISIONS.md)."""

from __future__ import annotations

from typing import Any

from pypto import _native
from pypto.ir.program import Program

__all__ = ["deserialize", "serialize"]

_MAGIC = b"pypto-ir-dsl 1\n"


def serialize(item: Any) -> bytes:
    """The bytes of a :class:`Program` (or native program) or a function."""
    if isinstance(item, Program):
        text = item.as_python()
    elif isinstance(item, _native.IrProgram):
        text = item.as_python("IR printed by pypto.ir")
    elif isinstance(item, _native.IrFunction):
        text = item.as_python()
    else:
        raise TypeError(f"serialize() takes a Program or a Function, got {type(item).__name__}")
    return _MAGIC + text.encode("utf-8")


def deserialize(data: bytes) -> Any:
    """The program or function :func:`serialize` wrote (``ValueError`` for other bytes)."""
    if not isinstance(data, (bytes, bytearray)) or not bytes(data).startswith(_MAGIC):
        raise ValueError("deserialize(): not bytes written by pypto.ir.serialize (the header line is missing)")
    from pypto.language import parse

    return parse(bytes(data)[len(_MAGIC) :].decode("utf-8"), filename="<serialized>")
