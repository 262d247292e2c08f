"""Number formats as data: widths, ranges, epsilon, and the name registry.

Every format the simulators, the generators and the analyzer meet has one frozen record here,
keyed by the PTX type name (``'f16'``, ``'bf16'``, ``'e4m3'``, ``'s8'``...) with aliases
(``'fp16'``, ``'half'``, ``'int8'``, ``'hifloat8'``...).  A PTX line such as::

    cvt.rn.satfinite.e4m3x2.f32  %rs1, %f2, %f1;

converts into :data:`FORMATS` ``['e4m3']`` (each half of the ``x2`` pair).

Float formats carry ``specials``:

* ``'ieee'``: all-ones exponent holds Inf (mantissa 0) and NaN (f64, f32, tf32, f16, bf16, e5m2);
* ``'fn'``: no Inf, only S.1111.111 is NaN (OCP e4m3 / ml_dtypes ``float8_e4m3fn``);
* ``'hif8'``: HiFloat8's tapered table (:mod:`sim.numerics.hif8`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from isa.errors import InputError

from .hif8 import HIF8_VALUES, MAX_CODE


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format.

    ``mbits`` is the stored mantissa width (precision is ``mbits + 1``); ``emin``/``emax`` are the
    unbiased exponents of the smallest and largest normal binade.  ``np_dtype`` is the numpy /
    ml_dtypes type that holds the values (None for HiF8 and tf32; ``dtype`` names it: a numpy
    dtype, or the name of an ml_dtypes type, imported on first use: ml_dtypes costs ~0.5 s of CPU
    to import, which a launch without bf16 or fp8 need not pay), ``storage`` the unsigned integer
    type of a bit pattern, ``shift`` where the pattern sits inside it (tf32 is an f32 word whose
    low 13 bits are zero).
    """

    name: str
    bits: int
    ebits: int
    mbits: int
    emin: int
    emax: int
    max: float
    min_normal: float
    min_subnormal: float
    specials: str
    dtype: object
    storage: object
    nan_bits: int
    shift: int = 0

    kind = "float"

    @property
    def np_dtype(self):
        return ml_dtype(self.dtype) if isinstance(self.dtype, str) else self.dtype

    @property
    def eps(self) -> float:
        """Machine epsilon: the gap between 1.0 and the next larger value."""
        return 2.0 ** -self.mbits

    @property
    def has_inf(self) -> bool:
        return self.specials in ("ieee", "hif8")

    @property
    def has_nan(self) -> bool:
        return True

    @property
    def lowest(self) -> float:
        return -self.max

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class IntFormat:
    """A two's-complement (``signed``) or unsigned integer format of ``bits`` bits."""

    name: str
    bits: int
    signed: bool
    np_dtype: object

    kind = "int"

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1

    @property
    def eps(self) -> int:
        return 1

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    @property
    def storage(self):
        return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}.get(self.bits, np.uint8)

    def __str__(self) -> str:
        return self.name


Format = FloatFormat | IntFormat


@cache
def ml_dtype(name: str) -> np.dtype:
    """The numpy dtype of ml_dtypes' type ``name`` (``'bfloat16'``, ``'float8_e4m3fn'``...),
    importing ml_dtypes on first use (which also registers its casts with numpy)."""
    import ml_dtypes

    return np.dtype(getattr(ml_dtypes, name))


def _ieee(name, ebits, mbits, np_dtype, storage, nan_bits, specials="ieee", bits=None, shift=0):
    bias = (1 << (ebits - 1)) - 1
    emin = 1 - bias
    if specials == "ieee":
        emax = (1 << ebits) - 2 - bias
        top = 2.0 - 2.0 ** -mbits
    else:  # 'fn': the top binade is usable, except the all-ones mantissa (NaN)
        emax = (1 << ebits) - 1 - bias
        top = 2.0 - 2.0 ** (1 - mbits)
    return FloatFormat(name=name, bits=bits or 1 + ebits + mbits, ebits=ebits, mbits=mbits,
                       emin=emin, emax=emax, max=top * 2.0 ** emax, min_normal=2.0 ** emin,
                       min_subnormal=2.0 ** (emin - mbits), specials=specials, dtype=np_dtype,
                       storage=storage, nan_bits=nan_bits, shift=shift)


F64 = _ieee("f64", 11, 52, np.dtype(np.float64), np.uint64, 0x7FF8000000000000)
F32 = _ieee("f32", 8, 23, np.dtype(np.float32), np.uint32, 0x7FC00000)
TF32 = _ieee("tf32", 8, 10, None, np.uint32, 0x7FC00000, bits=32, shift=13)
F16 = _ieee("f16", 5, 10, np.dtype(np.float16), np.uint16, 0x7E00)
BF16 = _ieee("bf16", 8, 7, "bfloat16", np.uint16, 0x7FC0)
E5M2 = _ieee("e5m2", 5, 2, "float8_e5m2", np.uint8, 0x7E)
E4M3 = _ieee("e4m3", 4, 3, "float8_e4m3fn", np.uint8, 0x7F, specials="fn")
HIF8 = FloatFormat(name="hif8", bits=8, ebits=0, mbits=3, emin=-15, emax=15,
                   max=float(HIF8_VALUES[MAX_CODE]), min_normal=2.0 ** -15,
                   min_subnormal=2.0 ** -22, specials="hif8", dtype=None, storage=np.uint8,
                   nan_bits=0x80)

S4 = IntFormat("s4", 4, True, np.dtype(np.int8))
U4 = IntFormat("u4", 4, False, np.dtype(np.uint8))
S8 = IntFormat("s8", 8, True, np.dtype(np.int8))
U8 = IntFormat("u8", 8, False, np.dtype(np.uint8))
S16 = IntFormat("s16", 16, True, np.dtype(np.int16))
U16 = IntFormat("u16", 16, False, np.dtype(np.uint16))
S32 = IntFormat("s32", 32, True, np.dtype(np.int32))
U32 = IntFormat("u32", 32, False, np.dtype(np.uint32))
S64 = IntFormat("s64", 64, True, np.dtype(np.int64))
U64 = IntFormat("u64", 64, False, np.dtype(np.uint64))

#: canonical name -> format
FORMATS: dict[str, Format] = {f.name: f for f in (
    F64, F32, TF32, F16, BF16, E5M2, E4M3, HIF8, S4, U4, S8, U8, S16, U16, S32, U32, S64, U64)}

ALIASES: dict[str, str] = {
    "fp64": "f64", "float64": "f64", "double": "f64",
    "fp32": "f32", "float32": "f32", "float": "f32",
    "fp16": "f16", "float16": "f16", "half": "f16",
    "bfloat16": "bf16",
    "fp8_e4m3": "e4m3", "float8_e4m3fn": "e4m3", "e4m3fn": "e4m3",
    "fp8_e5m2": "e5m2", "float8_e5m2": "e5m2",
    "hifloat8": "hif8",
    "int4": "s4", "uint4": "u4", "int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16",
    "int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64",
}

FLOAT_NAMES = tuple(n for n, f in FORMATS.items() if f.kind == "float")
INT_NAMES = tuple(n for n, f in FORMATS.items() if f.kind == "int")


def get_format(fmt: str | Format) -> Format:
    """The format for a name (``'f16'``, ``'.f16'``, ``'fp16'``, ``'half'``) or a format itself."""
    if isinstance(fmt, (FloatFormat, IntFormat)):
        return fmt
    key = str(fmt).strip().lstrip(".").lower()
    key = ALIASES.get(key, key)
    try:
        return FORMATS[key]
    except KeyError:
        raise InputError(f"unknown number format {fmt!r}",
                         expected=sorted(FORMATS) + sorted(ALIASES)) from None


def float_format(fmt: str | Format) -> FloatFormat:
    f = get_format(fmt)
    if f.kind != "float":
        raise InputError(f"{f.name} is not a floating-point format", expected=list(FLOAT_NAMES))
    return f


def int_format(fmt: str | Format) -> IntFormat:
    f = get_format(fmt)
    if f.kind != "int":
        raise InputError(f"{f.name} is not an integer format", expected=list(INT_NAMES))
    return f


def describe(fmt: str | Format) -> dict:
    """The figures of a format as a plain dict (for reports and ``kernlens`` output)."""
    f = get_format(fmt)
    if f.kind == "int":
        return {"name": f.name, "kind": "int", "bits": f.bits, "signed": f.signed,
                "min": f.min, "max": f.max}
    return {"name": f.name, "kind": "float", "bits": f.bits, "exponent_bits": f.ebits,
            "mantissa_bits": f.mbits, "max": f.max, "min_normal": f.min_normal,
            "min_subnormal": f.min_subnormal, "eps": f.eps, "has_inf": f.has_inf,
            "specials": f.specials}
