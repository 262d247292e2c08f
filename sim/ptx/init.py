"""Initialisers of ``.const``/``.global`` variables as little-endian bytes::

    .const .align 4 .b8 cvals[16] = {0, 0, 128, 63, 0, 0, 32, 64, 0, 0, 64, 192, 205, 204, 204, 61};
    .global .align 4 .f32 gtable[3] = {0f3F000000, 0f3FC00000, 0f40200000};
    .const .align 8 .u64 table[2] = {cx, generic(gy)};   // const offset of cx, generic address of gy
"""

from __future__ import annotations

import re

import numpy as np

from isa import ir

from .dtypes import compute_dtype, nbytes


def _flat(init) -> list:
    if isinstance(init, (tuple, list)):
        out = []
        for x in init:
            out.extend(_flat(x))
        return out
    return [init]


def flatten_initializer(v: ir.Variable, symbols: dict, size: int) -> bytes:
    """The variable's initial bytes (zero-filled to ``size``)."""
    if v.initializer is None:
        return bytes(size)
    t = v.type
    esize = nbytes(t)
    cd = compute_dtype(t)
    out = bytearray()
    for x in _flat(v.initializer):
        if isinstance(x, ir.Immediate):
            if cd.kind == "f":
                out += np.array(x.value, dtype=cd).tobytes()
            elif x.kind == "f32":
                out += np.array(x.value, dtype=np.float32).tobytes()[:esize]
            elif x.kind in ("f64", "float"):
                out += np.array(x.value, dtype=np.float64).tobytes()[:esize]
            else:
                out += (int(x.value) & ((1 << (8 * esize)) - 1)).to_bytes(esize, "little")
        elif isinstance(x, ir.Expression):
            m = re.fullmatch(r"\s*(generic\()?\s*([\w$%]+)\s*\)?\s*([+-]\s*\d+)?\s*", x.text)
            val = 0
            if m and m.group(2) in symbols:
                from .machine import to_generic

                # `{x, y}` holds the variables' addresses in their own state space (what
                # `mov.u64 %rd1, x;` gives: 0x0 and 0x8 for two .const variables on the H200);
                # `generic(x)` their generic addresses (ISA 5.4.4)
                space, addr = symbols[m.group(2)]
                if m.group(1):
                    addr = to_generic(space, addr)
                val = addr + (int(m.group(3).replace(" ", "")) if m.group(3) else 0)
            out += (val & ((1 << (8 * esize)) - 1)).to_bytes(esize, "little")
    out = bytes(out[:size])
    return out + bytes(size - len(out))
