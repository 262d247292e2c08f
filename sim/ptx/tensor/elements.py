"""Element types of tensor-core operands: bit width and the decode/encode of their bit patterns.

An ``mma``/``wmma``/``wgmma`` line names its element types in its modifier chain, e.g.::

    mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32  {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};

has d=f32, a=bf16, b=bf16, c=f32.  Registers hold bit patterns (uint32); :func:`decode` turns the
patterns of one type into exact float64 (floats) or int64 (integers) values, :func:`encode` the
reverse (with round-to-nearest-even for narrowing floats).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from isa.errors import SimulationError


@dataclass(frozen=True)
class ElementType:
    """One PTX element type as a tensor-core operand.

    ``bits`` is the width of one element inside a packed register (tf32 occupies a whole 32-bit
    register, f64 a 64-bit one; s4/u4 and b1 pack 8 and 32 to a register); ``np_dtype`` is the
    numpy/ml_dtypes type of its values (the narrowest numpy integer for sub-byte types; ``dtype``
    names an ml_dtypes type as a string, imported on first use: :func:`sim.numerics.formats.ml_dtype`);
    ``integer`` marks s4/u4/b1/s8/u8/s32.
    """

    name: str
    bits: int
    dtype: object
    integer: bool
    signed: bool = True

    @property
    def np_dtype(self):
        if isinstance(self.dtype, str):
            from sim.numerics.formats import ml_dtype

            return ml_dtype(self.dtype)
        return self.dtype


ELEMENT_TYPES: dict[str, ElementType] = {
    "f16": ElementType("f16", 16, np.float16, False),
    "bf16": ElementType("bf16", 16, "bfloat16", False),
    "tf32": ElementType("tf32", 32, np.float32, False),
    "f32": ElementType("f32", 32, np.float32, False),
    "f64": ElementType("f64", 64, np.float64, False),
    "e4m3": ElementType("e4m3", 8, "float8_e4m3fn", False),
    "e5m2": ElementType("e5m2", 8, "float8_e5m2", False),
    "s8": ElementType("s8", 8, np.int8, True, True),
    "u8": ElementType("u8", 8, np.uint8, True, False),
    "s32": ElementType("s32", 32, np.int32, True, True),
    "s4": ElementType("s4", 4, np.int8, True, True),
    "u4": ElementType("u4", 4, np.uint8, True, False),
    "b1": ElementType("b1", 1, np.uint8, True, False),
    "b16": ElementType("b16", 16, np.uint16, True, False),
}

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def element_type(name: str) -> ElementType:
    try:
        return ELEMENT_TYPES[name]
    except KeyError:
        raise SimulationError(f"tensor-core element type .{name} is not supported "
                              f"(supported: {', '.join(sorted(ELEMENT_TYPES))})") from None


def decode(bits: np.ndarray, etype: str) -> np.ndarray:
    """Bit patterns (any unsigned array; only the low ``bits`` are used) -> float64 or int64 values.

    tf32 ignores the low 13 mantissa bits of its 32-bit word, as the tensor cores do.
    """
    et = element_type(etype)
    if et.bits < 8:                                  # s4/u4/b1: the low bits, sign-extended for s4
        v = np.asarray(bits).astype(np.int64) & ((1 << et.bits) - 1)
        return v - ((v >> (et.bits - 1)) << et.bits) if et.signed else v
    raw = np.asarray(bits).astype(_UINT[et.bits])
    if etype == "tf32":
        raw = raw & np.uint32(0xFFFFE000)
    vals = raw.view(et.np_dtype)
    return vals.astype(np.int64) if et.integer else vals.astype(np.float64)


def encode(values: np.ndarray, etype: str) -> np.ndarray:
    """Values -> bit patterns as uint32, uint64 for f64 (float narrowing rounds to nearest even;
    ints wrap)."""
    et = element_type(etype)
    if et.bits < 8:
        return (np.asarray(values).astype(np.int64) & ((1 << et.bits) - 1)).astype(np.uint32)
    if et.bits == 64:
        return np.asarray(values).astype(et.np_dtype).view(np.uint64)
    if et.integer:
        v = np.asarray(values).astype(np.int64).astype(et.np_dtype)
    else:
        v = np.asarray(values).astype(et.np_dtype)
    return v.view(_UINT[et.bits]).astype(np.uint32)
