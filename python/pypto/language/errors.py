"""Diagnostics of the DSL front end: PyPTO's parser exception types.

Every error carries the message, the source span (``{"filename", "line", "column"}``), a
hint and an optional note. ``str(e)`` starts with the message (so ``pytest.raises(...,
match=...)`` on PyPTO's texts works) and goes on with the location, the source line with
the construct underlined, and the hint::

    pl.dump_tag() argument must be a bare variable name
      --> prog.py:12:22
       |
    12 |         pl.dump_tag(a[0:8])
       |                     ^^^^^^
      hint: Write pl.dump_tag(q) where q is a tensor variable bound in this orchestration ...
"""

from __future__ import annotations

from typing import Dict, List, Optional, Union

__all__ = [
    "CompileError",
    "InvalidOperationError",
    "ParserError",
    "ParserSyntaxError",
    "ParserTypeError",
    "PythonSyntaxError",
    "Span",
]

#: A source location: ``{"filename": str, "line": int, "column": int}`` (1-based), plus
#: ``end_column`` when the construct's extent is known.
Span = Dict[str, Union[str, int]]


def _render(
    message: str, span: Optional[Span], hint: Optional[str], note: Optional[str], source_lines: Optional[List[str]]
) -> str:
    parts = [message]
    if span is not None:
        line = int(span.get("line", 0))
        col = int(span.get("column", 0))
        parts.append(f"  --> {span.get('filename', '<unknown>')}:{line}:{col}")
        if source_lines and 0 < line <= len(source_lines):
            text = source_lines[line - 1].rstrip("\n")
            gutter = " " * len(str(line))
            end = int(span.get("end_column", col + 1))
            width = max(1, end - col) if end > col else 1
            parts.append(f"{gutter} |")
            parts.append(f"{line} | {text}")
            parts.append(f"{gutter} | {' ' * max(0, col - 1)}{'^' * width}")
    if hint:
        parts.append(f"  hint: {hint}")
    if note:
        parts.append(f"  note: {note}")
    return "\n".join(parts)


class ParserError(Exception):
    """A program the DSL front end does not accept.

    ``message`` is the bare message (PyPTO's text), ``span`` where it is, ``hint`` how to
    fix it.
    """

    def __init__(
        self,
        message: str,
        span: Optional[Span] = None,
        hint: Optional[str] = None,
        note: Optional[str] = None,
        source_lines: Optional[List[str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.note = note
        self.source_lines = source_lines

    def __str__(self) -> str:
        return _render(self.message, self.span, self.hint, self.note, self.source_lines)


class ParserSyntaxError(ParserError):
    """A construct the DSL does not have, or one written in the wrong form."""


class PythonSyntaxError(ParserSyntaxError, SyntaxError):
    """Source text that is not Python at all (``pl.parse``): a ``ParserSyntaxError`` that is
    also the ``SyntaxError`` PyPTO raises there."""


class ParserTypeError(ParserError):
    """A construct used with a value of the wrong kind (a scalar where a tensor is needed)."""


class InvalidOperationError(ParserError):
    """An operation that does not exist, or that its operands do not fit."""


class CompileError(Exception):
    """A program the passes or codegen refuse (``stage`` names which), located at its source."""

    def __init__(self, text: str, stage: str, message: str, hint: str, span: Optional[Span]) -> None:
        super().__init__(text)
        self.stage = stage
        self.message = message
        self.hint = hint
        self.span = span
