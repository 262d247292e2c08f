"""HiFloat8 (Ascend HiF8), decoded by hand from its bit rules.

HiF8 is a tapered 8-bit float: sign, a prefix-coded *Dot* field that says how many exponent
bits follow, a sign-magnitude exponent with an implicit leading 1, then the mantissa
(``../shared/facts/ascend.md`` section 4, from MindSpore ``hifloat8.h`` and arXiv 2409.16626)::

    bits 6..0     exponent E          mantissa bits   value
    11 s eee m    +-(8..15)  = 1eee   1               2^E * 1.m
    10 s ee mm    +-(4..7)   = 1ee    2
    01 s e mmm    +-(2..3)   = 1e     3
    001 s mmm     +-1                 3
    0001 mmm      0                   3
    0000 mmm      denormal (m != 0)   -               2^(m - 23)   (2^-22 .. 2^-16)

``s`` is the exponent sign (1 = negative).  Specials: 0x00 zero (there is no -0), 0x80 NaN,
0x6F / 0xEF = +-Inf (the E=15, m=1 code).  Max finite 2^15 = 32768 (0x6E), min normal 2^-15,
min denormal 2^-22: 38 binades.

Because the codes are not monotone in value, rounding goes through the sorted table of the
126 positive finite non-zero values (see :func:`sim.numerics.rounding.round_float`).
"""

from __future__ import annotations

import numpy as np

NAN_CODE = 0x80
POS_INF_CODE = 0x6F
NEG_INF_CODE = 0xEF
MAX_CODE = 0x6E
#: what the Inf code would be worth as a number (E=15, m=1: 1.5 * 2^15); rounding treats it as
#: the value just above the largest finite one, so the overflow midpoint is 40960
BEYOND_MAX = 1.5 * 2.0 ** 15


def _decode_magnitude(low7: int) -> float:
    """Value of the 7 low bits (the sign is bit 7)."""
    if low7 >> 5 == 0b11:                          # 11 s eee m
        es, e, m = (low7 >> 4) & 1, (low7 >> 1) & 7, low7 & 1
        mag, mbits = 8 + e, 1
    elif low7 >> 5 == 0b10:                        # 10 s ee mm
        es, e, m = (low7 >> 4) & 1, (low7 >> 2) & 3, low7 & 3
        mag, mbits = 4 + e, 2
    elif low7 >> 5 == 0b01:                        # 01 s e mmm
        es, e, m = (low7 >> 4) & 1, (low7 >> 3) & 1, low7 & 7
        mag, mbits = 2 + e, 3
    elif low7 >> 4 == 0b001:                       # 001 s mmm
        es, m = (low7 >> 3) & 1, low7 & 7
        mag, mbits = 1, 3
    elif low7 >> 3 == 0b0001:                      # 0001 mmm
        es, m, mag, mbits = 0, low7 & 7, 0, 3
    else:                                          # 0000 mmm: zero or denormal
        m = low7 & 7
        return 0.0 if m == 0 else 2.0 ** (m - 23)
    exp = -mag if es else mag
    return (1.0 + m / 2.0 ** mbits) * 2.0 ** exp


def _build_table() -> np.ndarray:
    vals = np.empty(256, dtype=np.float64)
    for code in range(256):
        low7 = code & 0x7F
        v = _decode_magnitude(low7)
        if code == NAN_CODE:
            v = np.nan
        elif low7 == POS_INF_CODE:
            v = np.inf
        vals[code] = -v if code & 0x80 else v
    return vals


#: value of every code 0..255 (float64; NaN at 0x80, +-inf at 0x6F/0xEF)
HIF8_VALUES: np.ndarray = _build_table()
HIF8_VALUES.setflags(write=False)


def hif8_decode(bits) -> np.ndarray:
    """HiF8 bit patterns (any integer array) -> float64 values."""
    return HIF8_VALUES[np.asarray(bits).astype(np.int64) & 0xFF]


def _positive_codes() -> tuple[np.ndarray, np.ndarray]:
    """Codes 0x00..0x7F holding finite values >= 0, sorted by value (zero first)."""
    codes = np.array([c for c in range(0x80) if np.isfinite(HIF8_VALUES[c])], dtype=np.int64)
    order = np.argsort(HIF8_VALUES[codes], kind="stable")
    codes = codes[order]
    return HIF8_VALUES[codes].copy(), codes


#: sorted finite non-negative values (0, 2^-22, ..., 32768) and their codes
POS_VALUES, POS_CODES = _positive_codes()
POS_VALUES.setflags(write=False)
POS_CODES.setflags(write=False)
