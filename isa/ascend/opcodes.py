"""The instruction table of the Ascend-like assembly: every intrinsic, its pipe and operands.

One row per opcode; the parser checks operands against it, the semantics and the simulator
read pipe and family from it. A real line and its row::

    mad.f16 l0c[0], l0a[%s4], l0b[%s5], %m, %k, %n, 0, 0, 0, 1

    OpSpec('mad', pipe='M', family='mad', operands=('l0c','l0a','l0b','I','I','I','I','I','I','I'),
           dtypes=('f16','bf16','s8','f32'))

Operand kinds: a buffer name (``ub``, ``gm``, ``l1``, ``l0a``, ``l0b``, ``l0c``, ``fb``) is a
buffer-qualified address; ``I`` an integer (immediate or register); ``V`` a scalar value
(integer, float or register); ``R`` a destination register; ``P`` a pipe (``PIPE_MTE2``);
``E`` an event id (``EVENT_ID0``, an integer or a register); ``L`` a label; ``Q`` a FixPipe
quantisation mode; ``O`` a ``vcmax`` order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
PIPE_NAMES = {f"PIPE_{p}": p for p in PIPES} | {"PIPE_ALL": "ALL"}
BUFFERS = ("gm", "l1", "l0a", "l0b", "l0c", "ub", "fb")
QUANT_MODES = ("NoQuant", "F322F16", "F322BF16", "DEQF16", "VDEQF16", "REQ8", "VREQ8",
               "QF322B8_PRE", "VQF322B8_PRE")
ORDERS = ("VALUE_INDEX", "INDEX_VALUE", "ONLY_VALUE", "ONLY_INDEX")
VEC_DTYPES = ("f16", "bf16", "f32", "s16", "s32", "u16", "u32", "s8", "u8")
CONV_TYPES = ("f16", "f32", "bf16", "s8", "u8", "s16", "s32")
CONV_ROUNDING = {"r": "rn", "a": "rna", "f": "rm", "c": "rp", "z": "rz", "o": "ro"}
COMPARES = ("lt", "le", "gt", "ge", "eq", "ne")


@dataclass(frozen=True)
class OpSpec:
    name: str
    pipe: str                      # S, V, M, MTE1, MTE2, MTE3, FIX, or SYNC (set/wait/barrier)
    family: str
    operands: tuple[str, ...]
    dtypes: tuple[str, ...] | None = None   # allowed dtype modifier (exactly one), None: none
    example: str = ""


_SPECS: list[OpSpec] = []


def _add(name, pipe, family, operands, dtypes=None, example=""):
    _SPECS.append(OpSpec(name, pipe, family, tuple(operands.split()) if operands else (), dtypes, example))


# ---- scalar unit (PIPE_S) ----
_add("mov", "S", "scalar", "R V", None, "mov %s0, block_idx")
for _op in ("add", "sub", "mul", "div", "rem", "min", "max", "shl", "shr", "and", "or", "xor"):
    _add(_op, "S", "scalar", "R V V", ("f32",), f"{_op} %s1, %s1, 16")
_add("cmp", "S", "scalar", "R V V", None, "cmp.lt %p0, %s1, %s2")
_add("bra", "S", "branch", "L", None, "@%p0 bra loop")
_add("ret", "S", "branch", "", None, "ret")
_add("ld", "S", "scalar_load", "R ub", VEC_DTYPES, "ld.f32 %f0, ub[%s3]")
_add("set_vector_mask", "S", "mask", "I I", None, "set_vector_mask 0, 0xffff")
_add("set_mask_norm", "S", "mask", "", None, "set_mask_norm")
_add("set_mask_count", "S", "mask", "", None, "set_mask_count")
_add("set_quant_pre", "S", "config", "I", None, "set_quant_pre 0x3c000000")
_add("set_fpc", "S", "config", "fb", None, "set_fpc fb[0]")
# Load3Dv2 feature map: W, H and pads for img2colv2 ([assumed] packing, docs/ascend-isa.md)
_add("set_fmatrix", "S", "config", "I", None, "set_fmatrix 0x0101010100200020")
# atomic GM stores (CCE set_atomic_add/max/min/none + the element type; PIPE_S)
for _a in ("add", "max", "min", "none", "f32", "f16", "bf16", "s8", "s16", "s32"):
    _add(f"set_atomic_{_a}", "S", "config", "", None, f"set_atomic_{_a}")

# ---- synchronisation ----
_add("set_flag", "SYNC", "sync", "P P E", None, "set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
_add("wait_flag", "SYNC", "sync", "P P E", None, "wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0")
_add("pipe_barrier", "SYNC", "sync", "P", None, "pipe_barrier PIPE_V")
# cross-core (AIC <-> AIV of a mix kernel): CrossCoreSetFlag<mode, pipe>(flagId) / CrossCoreWaitFlag(flagId)
_add("ffts_cross_core_sync", "SYNC", "sync", "P I I", None, "ffts_cross_core_sync PIPE_FIX, 2, 3")
_add("wait_flag_dev", "SYNC", "sync", "I", None, "wait_flag_dev 3")

# ---- MTE2: GM -> L1 / UB ----
_add("copy_gm_to_cbuf", "MTE2", "copy", "l1 gm I I I I I I", None,
     "copy_gm_to_cbuf l1[0], gm[%a], 0, 1, 64, 0, 0, 0")
for _b in ("b8", "b16", "b32s"):
    _add(f"copy_gm_to_cbuf_multi_nd2nz_{_b}", "MTE2", "nd2nz", "l1 gm I I I I I I I I I", None,
         f"copy_gm_to_cbuf_multi_nd2nz_{_b} l1[0], gm[%a], 0, 1, %m, %k, 0, %K, 128, 1, 0")
_add("copy_gm_to_ubuf", "MTE2", "copy", "ub gm I I I I I", None, "copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0")
for _b in ("b8", "b16", "b32"):
    _add(f"copy_gm_to_ubuf_align_{_b}", "MTE2", "copy_align", "ub gm I I I I I I I", None,
         f"copy_gm_to_ubuf_align_{_b} ub[0], gm[%x], 0, %rows, 200, 0, 0, 0, 0")
    _add(f"copy_ubuf_to_gm_align_{_b}", "MTE3", "copy_align", "gm ub I I I I I I I", None,
         f"copy_ubuf_to_gm_align_{_b} gm[%y], ub[0], 0, %rows, 200, 0, 0, 0, 0")
# ---- MTE3: UB -> GM ----
_add("copy_ubuf_to_gm", "MTE3", "copy", "gm ub I I I I I", None, "copy_ubuf_to_gm gm[%y], ub[0], 0, 1, 8, 0, 0")
# ---- MTE1: L1 -> L0A / L0B ----
LOAD_DTYPES = ("f16", "bf16", "s8", "u8", "f32", "s32")
_add("load_cbuf_to_ca", "MTE1", "load2d", "l0a l1 I I I I I I I", LOAD_DTYPES,
     "load_cbuf_to_ca.f16 l0a[0], l1[0], 0, 8, 1, 3, 0, 0, 0")
_add("load_cbuf_to_cb", "MTE1", "load2d", "l0b l1 I I I I I I I", LOAD_DTYPES,
     "load_cbuf_to_cb.f16 l0b[0], l1[0], 0, 16, 16, 0, 0, 1, 0")
_add("img2colv2_cbuf_to_ca", "MTE1", "load3d", "l0a l1 " + " ".join(["I"] * 15), ("f16", "bf16"),
     "img2colv2_cbuf_to_ca.f16 l0a[0], l1[0], 144, 64, 0, 0, 1, 1, 3, 3, 1, 1, 0, 0, 0, 0, 16")
_add("load_cbuf_to_ca_transpose", "MTE1", "load2d_t", "l0a l1 I I I I I", ("s8", "u8"),
     "load_cbuf_to_ca_transpose.s8 l0a[0], l1[0], 0, 4, 16, 8, 3")
_add("load_cbuf_to_cb_transpose", "MTE1", "load2d_t", "l0b l1 I I I I I", ("s8", "u8"),
     "load_cbuf_to_cb_transpose.s8 l0b[0], l1[0], 0, 8, 16, 2, 0")
# ---- cube (PIPE_M) ----
_add("mad", "M", "mad", "l0c l0a l0b I I I I I I I", ("f16", "bf16", "s8", "f32"),
     "mad.f16 l0c[0], l0a[0], l0b[0], 128, 64, 256, 0, 0, 0, 1")
# ---- FixPipe ----
_add("copy_matrix_cc_to_gm", "FIX", "fixpipe", "gm l0c I I I I I I Q I I I", ("f32", "s32"),
     "copy_matrix_cc_to_gm.f32 gm[%c], l0c[0], 0, 256, 128, 1024, 128, 0, F322F16, 0, 0, 1")
_add("copy_cbuf_to_fbuf", "FIX", "copy", "fb l1 I I I I", None, "copy_cbuf_to_fbuf fb[0], l1[0], 1, 8, 0, 0")
# ---- vector (PIPE_V) ----
for _op in ("vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vand", "vor"):
    _add(_op, "V", "vbinary", "ub ub ub I I I I I I I", VEC_DTYPES,
         f"{_op}.f16 ub[0], ub[256], ub[512], 1, 1, 1, 1, 8, 8, 8")
for _op in ("vadds", "vmuls", "vmaxs", "vmins"):
    _add(_op, "V", "vscalar", "ub ub V I I I I I", VEC_DTYPES, f"{_op}.f16 ub[0], ub[0], 0.5, 1, 1, 1, 8, 8")
for _op in ("vexp", "vln", "vabs", "vrelu", "vsqrt", "vrec", "vcopy"):
    _add(_op, "V", "vunary", "ub ub I I I I I", VEC_DTYPES, f"{_op}.f16 ub[0], ub[256], 1, 1, 1, 8, 8")
_add("vconv", "V", "vconv", "ub ub I I I I I", None, "vconv_f322f16r ub[0], ub[256], 1, 1, 1, 4, 8")
_add("vector_dup", "V", "vdup", "ub V I I I I I", VEC_DTYPES, "vector_dup.f16 ub[0], 0.0, 1, 1, 1, 8, 8")
_add("vcadd", "V", "vreduce", "ub ub I I I I I", VEC_DTYPES, "vcadd.f16 ub[0], ub[256], 4, 1, 1, 8, 0")
for _op in ("vcmax", "vcmin"):
    _add(_op, "V", "vreduce", "ub ub I I I I O", VEC_DTYPES, f"{_op}.f16 ub[0], ub[256], 4, 1, 1, 8, ONLY_VALUE")
for _op in ("vcgadd", "vcgmax", "vcgmin"):
    _add(_op, "V", "vgreduce", "ub ub I I I I", VEC_DTYPES, f"{_op}.f16 ub[0], ub[256], 1, 1, 1, 8")
_add("copy_ubuf_to_ubuf", "V", "copy", "ub ub I I I I I", None, "copy_ubuf_to_ubuf ub[0], ub[4096], 0, 1, 8, 0, 0")

OPCODES: dict[str, OpSpec] = {s.name: s for s in _SPECS}

_VCONV = re.compile(r"^vconv_(f16|f32|bf16|s8|u8|s16|s32)2(f16|f32|bf16|s8|u8|s16|s32)([rafczo]?)$")


def split_opcode(word: str) -> tuple[str, tuple[str, ...]] | None:
    """``vconv_f322f16r`` -> ``('vconv', ('f32', 'f16', 'r'))``; other names map to themselves."""
    if word in OPCODES:
        return word, ()
    m = _VCONV.match(word)
    if m:
        mods = (m.group(1), m.group(2)) + ((m.group(3),) if m.group(3) else ())
        return "vconv", mods
    return None


def spelled_opcode(opcode: str, modifiers: tuple[str, ...]) -> str:
    """The source spelling: ``vconv`` with ``('f32','f16','r')`` -> ``vconv_f322f16r``."""
    if opcode == "vconv":
        return "vconv_" + modifiers[0] + "2" + modifiers[1] + "".join(modifiers[2:])
    return ".".join((opcode,) + tuple(modifiers))
