"""Fundamental types shared by both ISAs: ``.b32``, ``.f16x2``, ``.e4m3``, ``.s8`` ...

Widths are in bits; a type name is written without its dot.
"""

from __future__ import annotations

_BITS = {
    "pred": 1,
    "b8": 8, "b16": 16, "b32": 32, "b64": 64, "b128": 128,
    "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 32,
    "f16x2": 32, "bf16x2": 32,
    "e4m3": 8, "e5m2": 8, "e4m3x2": 16, "e5m2x2": 16, "e4m3x4": 32, "e5m2x4": 32,
    "e2m3": 8, "e3m2": 8, "e2m1": 4, "e2m1x2": 8, "ue8m0": 8,
    "s4": 4, "u4": 4, "b1": 1, "s2": 2,
    "hif8": 8,
}

INT_TYPES = frozenset(t for t in _BITS if t[0] in "su" and t[1:].isdigit())
SIGNED_TYPES = frozenset(t for t in INT_TYPES if t[0] == "s")
BIT_TYPES = frozenset({"b8", "b16", "b32", "b64", "b128", "b1"})
FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64", "tf32", "f16x2", "bf16x2", "e4m3", "e5m2",
                         "e4m3x2", "e5m2x2", "e4m3x4", "e5m2x4", "e2m3", "e3m2", "e2m1", "e2m1x2",
                         "ue8m0", "hif8"})
ALL_TYPES = frozenset(_BITS)


def type_bits(t: str) -> int:
    """Width in bits of a type name (``'f16x2'`` -> 32)."""
    t = t.lstrip(".")
    try:
        return _BITS[t]
    except KeyError:
        raise KeyError(f"unknown type .{t}") from None


def type_bytes(t: str) -> int:
    """Storage size in bytes (a predicate takes 1 byte in memory)."""
    return max(1, type_bits(t) // 8)


def is_type(word: str) -> bool:
    return word.lstrip(".") in _BITS
