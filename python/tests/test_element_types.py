"""The element types have one table (Rust's ``pto_base::dtype``, read through
``pypto._native.element_type_table()``). Python's mappings between dtype spellings are views
of it (``pypto._dtypes``); the lists a type checker needs written out (``DataType``'s members,
``pypto.DT_*``, ``pl.FP32`` ...) are checked against it here."""

from __future__ import annotations

import ctypes

import pypto
import pypto.language as pl
from pypto import _dtypes, _native
from pypto.language import _surface
from pypto.pypto_core.datatype import DataType

TABLE = _native.element_type_table()
MEMBERS = [t.member for t in TABLE]


def test_the_table_is_pyptos_types() -> None:
    assert len(MEMBERS) == len(set(MEMBERS)) == 21
    assert MEMBERS[-1] == "INDEX"
    bf16 = TABLE[MEMBERS.index("BF16")]
    assert (bf16.name, bf16.aliases, bf16.bits, bf16.kind, bf16.c_type) == ("bfloat16", ["bf16"], 16, "float", "bfloat16_t")
    assert (bf16.code, bf16.host_name, bf16.numpy_attr, bf16.ctypes) == (6, "bfloat16", None, "c_float")
    index = TABLE[-1]
    assert (index.code, index.host_name, index.numpy_attr, index.ctypes) == (None, "int64", "int64", "c_int64")
    assert index.torch_name == "int64"
    assert repr(index) == 'ElementType("INDEX")'


def test_simpler_codes_agree() -> None:
    simpler = _native.element_types()
    for t in TABLE:
        if t.code is not None:
            code, _, itemsize, torch_name = simpler[t.code]
            # FP4: one byte of the runtime holds two values (torch's float4_e2m1fn_x2).
            assert (code, itemsize * 8, torch_name) == (t.code, max(t.bits, 8), t.torch_name), t.member
            assert t.host_name in (None, torch_name), t.member


def test_fp8_and_fp4_are_simplers_codes_and_torchs_dtypes() -> None:
    import torch

    by_member = {t.member: t for t in TABLE}
    expected = {"FP8E4M3FN": (12, "float8_e4m3fn"), "FP8E8M0": (13, "float8_e8m0fnu"), "FP4": (14, "float4_e2m1fn_x2")}
    for member, (code, torch_name) in expected.items():
        t = by_member[member]
        assert (t.code, t.torch_name, t.host_name, t.numpy_attr, t.ctypes, t.c_type) == (code, torch_name, None, None, None, None)
        assert str(getattr(torch, torch_name)) == f"torch.{torch_name}"
    # Simpler has no code for FP8E5M2 (its MX paths use E4M3FN), so no tensor of it reaches a chip.
    assert (by_member["FP8E5M2"].code, by_member["FP8E5M2"].torch_name) == (None, None)
    assert "fp8e4m3fn" not in _dtypes.HOST_NAMES and "fp4" not in _dtypes.HOST_NAMES


def test_datatype_members_are_the_table() -> None:
    assert [n for n in DataType.__annotations__ if not n.startswith("_")] == MEMBERS
    for t in TABLE:
        d = getattr(DataType, t.member)
        assert (d.name, str(d), d.get_bit()) == (t.member, t.name, t.bits)
        assert DataType.from_string(t.name) == d
        for alias in t.aliases:
            assert DataType.from_string(alias) == d
        assert d.is_float() == (t.kind == "float") and d.is_unsigned_int() == (t.kind == "uint")


def test_package_constants_are_the_table() -> None:
    assert sorted(n for n in pypto.__all__ if n.startswith("DT_")) == sorted(f"DT_{m}" for m in MEMBERS)
    for m in MEMBERS:
        assert getattr(pypto, f"DT_{m}") == getattr(DataType, m)


def test_dsl_constants_are_the_generated_types() -> None:
    generated = [t.member for t in TABLE if t.c_type is not None]
    assert sorted(_surface.DATA_TYPES) == sorted(generated)
    for m in generated:
        assert getattr(pl, m) == _surface.DATA_TYPES[m]


def test_views() -> None:
    assert _dtypes.HOST_NAMES["bf16"] == _dtypes.HOST_NAMES["bfloat16"] == "bfloat16"
    assert _dtypes.HOST_NAMES["index"] == _dtypes.NUMPY_NAMES["index"] == "int64"
    assert "bfloat16" not in _dtypes.NUMPY_NAMES
    assert _dtypes.NUMPY_ATTR_TO_PYPTO["bool_"] == "bool" and _dtypes.NUMPY_ATTR_TO_PYPTO["int64"] == "int64"
    assert all(hasattr(ctypes, c) for c in _dtypes.CTYPES_CLASSES)
    assert _dtypes.SCALAR_CTYPES["fp16"] == "c_float"
