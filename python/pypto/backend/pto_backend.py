"""``pypto.backend.pto_backend``: the error PyPTO's code generator raises for a program it
cannot generate, :class:`PartialCodegenError`.

Here the passes and codegen are one native pipeline; every program it refuses (a pass or
codegen, ``stage`` says which) is raised by :func:`pypto.ir.compile` as a
``PartialCodegenError``, which is also a :class:`~pypto.language.errors.CompileError`
(stage, message, hint and span of the construct)."""

from __future__ import annotations

from typing import Dict, Optional

from pypto.language.errors import CompileError, Span

__all__ = ["PartialCodegenError"]


class PartialCodegenError(CompileError, RuntimeError):
    """Code generation refused the program; ``files`` maps the generated files written
    before the refusal to their text (none here: a refused program writes no build)."""

    def __init__(
        self,
        text: str,
        stage: str,
        message: str,
        hint: str,
        span: Optional[Span],
        files: Optional[Dict[str, str]] = None,
    ) -> None:
        super().__init__(text, stage, message, hint, span)
        self.files: Dict[str, str] = dict(files or {})
