"""PTX type names -> numpy dtypes for register storage and for computing.

A register is stored as an unsigned bit pattern of its declared width (``.reg .f32 %f<4>`` is a
``uint32`` array over threads); an instruction reads it through a view in its own type::

    add.s32  %r3, %r1, %r2;      # %r1, %r2 viewed as int32
    fma.rn.f32 %f3, %f1, %f2, %f0;   # %f* viewed as float32
    cvt.rn.f16.f32 %rs1, %f1;    # %rs1 (.b16) written as uint16 bits of an f16

Half precision (``f16``, ``bf16``, the ``x2`` packs) and fp8 are computed on their bit patterns
(``uint16``/``uint32``/``uint8``), never as numpy float16, so NaN payloads survive moves.
"""

from __future__ import annotations

import numpy as np

from isa.types import FLOAT_TYPES, INT_TYPES, SIGNED_TYPES, type_bits

UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
SINT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
BOOL = np.dtype(bool)

TYPE_WORDS = frozenset(INT_TYPES | FLOAT_TYPES | {"b8", "b16", "b32", "b64", "b128", "pred"})


def nbytes(t: str) -> int:
    """Storage bytes of a type (``pred`` -> 1, ``b128`` -> 16, ``f16x2`` -> 4)."""
    if t == "pred":
        return 1
    return max(1, type_bits(t) // 8)


def storage_dtype(t: str) -> np.dtype:
    """How a register declared with type ``t`` is stored."""
    if t == "pred":
        return BOOL
    n = nbytes(t)
    return UINT[min(n, 8)]


def compute_dtype(t: str) -> np.dtype:
    """The numpy dtype an instruction of type ``t`` computes in (bit patterns for f16/bf16/fp8)."""
    if t == "pred":
        return BOOL
    if t == "f32":
        return np.dtype(np.float32)
    if t == "f64":
        return np.dtype(np.float64)
    n = nbytes(t)
    if t in SIGNED_TYPES:
        return SINT[n]
    return UINT[min(n, 8)]


def is_signed(t: str) -> bool:
    return t in SIGNED_TYPES


def is_float(t: str) -> bool:
    return t in FLOAT_TYPES


def types_of(mods) -> list[str]:
    """The type words among an instruction's modifiers, in source order."""
    return [m for m in mods if m in TYPE_WORDS]
