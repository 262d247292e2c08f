"""What a PTX instruction does, as data: :func:`describe` fills an :class:`isa.semantics.OpInfo`.

The facts come from small tables keyed by the canonical opcode (``isa.ptx.opcodes``) and read the
modifiers as a set. Results are memoised by ``(opcode, modifiers)`` plus the one operand that
changes the facts for a few instructions (the cp-size of ``cp.async``, the size of a bulk copy,
whether ``wgmma`` reads A from registers). Some real lines and what they give::

    fma.rn.f16x2 %r21, %r20, %r20, %r20;
        family='fma', unit=FP16, classes={FP16_FMA, FP16_ARITH}, flops=4 per lane
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,..}, {%r31,..}, {%r36,%r37}, {%f1,..};
        family='mma', unit=TENSOR, classes={TENSOR_CORE}, in f16 acc f32, flops=4096 per warp
    wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {..}, %rd92, %rd93, %p14, 1, 1, 0, 1;
        flops = 2*64*128*16 = 262144 per warpgroup
    ld.global.nc.v4.f32 {%f7,%f8,%f9,%f10}, [%rd3];
        classes={LOAD_GLOBAL, LOAD_GLOBAL_128}, bytes=16 per lane, space='global'
    cp.async.cg.shared.global [%r18], [%rd12], 16;
        classes={ASYNC_COPY, ASYNC_COPY_128}, bytes=16 per lane read from 'global' into shared
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1,%r2,%r3,%r4}, [%r202+32768];
        bytes=512 per warp from 'shared'
    st.local.v4.f32 [%rd30], {%f33, %f32, %f31, %f30};
        classes={STORE_LOCAL, STORE_LOCAL_128, SPILL}, bytes=16 per lane

Counting rules (the analyzer and the PTX simulator both rely on them):

* ``flops``: an FMA/MAD is 2 per element, add/sub/mul/min/max/div/sqrt/rcp/rsqrt/ex2/lg2/sin/cos/
  tanh are 1 per element; packed ``x2`` types have 2 elements; compares, moves, abs/neg and
  conversions are 0. Tensor-core instructions count ``2*M*N*K``, per warp for ``mma``/``wmma`` and
  per warpgroup for ``wgmma``; sparse forms (``mma.sp``, ``wgmma.mma_async.sp``) count the useful
  work, ``M*N*K`` (A stores half of each row: the products with the stored non-zeros), which the
  tensor cores run at the dense rate; NVIDIA's "sparse TFLOPS" dense-equivalent figure, twice that,
  is kept as ``extra["dense_equivalent_ops"]``.
* ``int_ops``: integer multiply-accumulate work of dot-product and integer tensor instructions
  only: ``dp4a`` 8 per lane, ``dp2a`` 4, an ``s8`` ``mma.m16n8k32`` ``2*16*8*32`` per warp.
* ``bytes``: data moved in ``space`` per scope. ``ld``/``st``/``atom``/``red`` move type size x
  vector length per lane; ``cp.async`` its cp-size; ``ldmatrix``/``stmatrix`` 128 B per 8x8 b16
  matrix per warp; ``wmma.load``/``wmma.store`` one fragment per warp; ``wgmma`` the shared
  memory it reads through its descriptors per warpgroup. Local-memory traffic is a spill.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..ir import Immediate, Instruction, Register, Vector
from ..semantics import (BF16_FMA, FP16_FMA, FP32_FMA, FP64_FMA, INT8_DP4A, TENSOR_CORE, OpInfo, Scope,
                         Unit)
from ..types import FLOAT_TYPES, INT_TYPES, type_bits
from . import opcodes

# --------------------------------------------------------------------------------------------
# Named classes (beyond the six in isa.semantics)
# --------------------------------------------------------------------------------------------

CLASSES: dict[str, str] = {
    FP16_FMA: "fma on f16/f16x2 (HFMA2)",
    BF16_FMA: "fma on bf16/bf16x2",
    FP32_FMA: "fma/mad on f32 (FFMA)",
    FP64_FMA: "fma/mad on f64 (DFMA)",
    INT8_DP4A: "dp4a/dp2a integer dot products",
    TENSOR_CORE: "mma, mma.sp, wmma.mma, wgmma.mma_async",
    "FP16_ARITH": "any f16/bf16 (scalar or packed) arithmetic",
    "FP32_ARITH": "any f32 arithmetic",
    "FP64_ARITH": "any f64 arithmetic",
    "INT_ARITH": "integer arithmetic",
    "SFU": "special functions: ex2, lg2, sin, cos, tanh, rsqrt, approximate rcp/sqrt/div",
    "CONVERT": "cvt and cvt.pack (rounding in OpInfo.rounding)",
    "CONVERT_NARROW": "float conversion to a narrower float type",
    "COMPARE": "setp, set",
    "SELECT": "selp, slct",
    "LOGIC": "and, or, xor, not, cnot, lop3, shifts, bit-field ops",
    "MOVE": "mov, prmt",
    "LOAD": "any ld/ldu", "STORE": "any st",
    "SPILL": "local-memory traffic (register spills and local arrays)",
    "ATOMIC": "atom", "ATOMIC_CAS": "atom.cas", "REDUCTION": "red, red.async, cp.reduce.async.bulk",
    "ASYNC_COPY": "cp.async and cp.async.bulk(.tensor)", "TMA": "cp.async.bulk.tensor",
    "ASYNC_WAIT": "cp.async commit/wait groups",
    "LDMATRIX": "ldmatrix", "STMATRIX": "stmatrix", "MOVMATRIX": "movmatrix",
    "WMMA_LOAD": "wmma.load", "WMMA_STORE": "wmma.store", "WGMMA_SYNC": "wgmma fence/commit/wait",
    "SHUFFLE": "shfl, shfl.sync", "VOTE": "vote, match, activemask, elect",
    "WARP_REDUCE": "redux.sync",
    "BARRIER": "bar, barrier, bar.warp.sync, barrier.cluster", "FENCE": "membar, fence",
    "MBARRIER": "mbarrier.*", "BRANCH": "bra, brx.idx", "CALL": "call", "RETURN": "ret, exit",
    "ADDRESS": "cvta, isspacep, mapa, getctarank", "PREFETCH": "prefetch and cache control",
    "TEXTURE": "tex, tld4, txq, suld, sust, sured, suq", "VIDEO": "SIMD video instructions",
    "OTHER": "instructions the tables do not describe",
}
for _sp in ("GLOBAL", "SHARED", "LOCAL", "CONST", "PARAM", "GENERIC"):
    CLASSES[f"LOAD_{_sp}"] = f"ld from {_sp.lower()}"
    CLASSES[f"STORE_{_sp}"] = f"st to {_sp.lower()}"
    for _w in (8, 16, 32, 64, 128, 256):
        CLASSES[f"LOAD_{_sp}_{_w}"] = f"{_w}-bit per lane ld from {_sp.lower()}"
        CLASSES[f"STORE_{_sp}_{_w}"] = f"{_w}-bit per lane st to {_sp.lower()}"
for _w in (32, 64, 128):
    CLASSES[f"ASYNC_COPY_{_w}"] = f"cp.async of {_w // 8} bytes per lane"

# --------------------------------------------------------------------------------------------
# Helpers over modifiers
# --------------------------------------------------------------------------------------------

_SPACE_WORDS = {
    "global": "global", "shared": "shared", "shared::cta": "shared", "shared::cluster": "shared",
    "local": "local", "const": "const", "param": "param", "param::entry": "param", "param::func": "param",
}
_ROUNDINGS = ("rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi")
_VEC = {"v2": 2, "v4": 4, "v8": 8}
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


_EXTRA_BITS = {"e2m3x2": 16, "e3m2x2": 16, "e2m3x4": 32, "e3m2x4": 32, "e2m1x4": 16, "ue8m0x2": 16,
               "ue4m3": 8, "u16x2": 32, "s16x2": 32, "f32x2": 64}


def _bits(t: str) -> int:
    """Storage width of a type word (``e2m1x2`` -> 8, ``f16x2`` -> 32)."""
    if t in _EXTRA_BITS:
        return _EXTRA_BITS[t]
    return type_bits(t)


def _types(mods) -> list[str]:
    return [m for m in mods if m in _ALL_TYPES]


_ALL_TYPES = frozenset(INT_TYPES | FLOAT_TYPES | {"b8", "b16", "b32", "b64", "b128", "pred", "b1", "s4", "u4",
                                                   "u16x2", "s16x2", "f32x2", "e2m3x2", "e3m2x2", "e2m3x4",
                                                   "e3m2x4", "e2m1x4", "ue8m0x2", "ue4m3"})


def _space(mods) -> str | None:
    for m in mods:
        if m in _SPACE_WORDS:
            return _SPACE_WORDS[m]
    return None


def _rounding(mods) -> str | None:
    for m in mods:
        if m in _ROUNDINGS:
            return m
    return "approx" if "approx" in mods else None


def _elems(t: str | None) -> int:
    return 2 if t and t.endswith("x2") else (4 if t and t.endswith("x4") else 1)


def _fp_unit(t: str | None) -> Unit:
    if t is None:
        return Unit.INT
    if t in ("f16", "f16x2", "bf16", "bf16x2"):
        return Unit.FP16
    if t in ("f32", "f32x2", "tf32"):
        return Unit.FP32
    if t == "f64":
        return Unit.FP64
    return Unit.INT


_ARITH_CLASS = {Unit.FP16: "FP16_ARITH", Unit.FP32: "FP32_ARITH", Unit.FP64: "FP64_ARITH", Unit.INT: "INT_ARITH"}
_FMA_CLASS = {"f16": FP16_FMA, "f16x2": FP16_FMA, "bf16": BF16_FMA, "bf16x2": BF16_FMA, "f32": FP32_FMA,
              "f32x2": FP32_FMA, "f64": FP64_FMA}


def _is_float(t: str | None) -> bool:
    return t is not None and (t in FLOAT_TYPES or t == "f32x2")


# --------------------------------------------------------------------------------------------
# Families
# --------------------------------------------------------------------------------------------

# canonical opcode -> flops per element for floating-point types
_FLOP_PER_ELEM = {"add": 1, "sub": 1, "mul": 1, "min": 1, "max": 1, "div": 1, "fma": 2, "mad": 2,
                  "rcp": 1, "sqrt": 1, "rsqrt": 1, "sin": 1, "cos": 1, "lg2": 1, "ex2": 1, "tanh": 1,
                  "abs": 0, "neg": 0, "copysign": 0, "testp": 0, "rem": 0, "sad": 0}
_SFU_OPS = frozenset({"rsqrt", "sin", "cos", "lg2", "ex2", "tanh"})
_LOGIC = frozenset({"and", "or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr", "popc", "clz", "bfind",
                    "fns", "brev", "bfe", "bfi", "szext", "bmsk"})
_INT_ONLY = frozenset({"add.cc", "sub.cc", "addc", "subc", "mad.cc", "madc", "mul24", "mad24"})
_CONTROL = {"bra": "BRANCH", "brx.idx": "BRANCH", "call": "CALL", "ret": "RETURN", "exit": "RETURN",
            "trap": "RETURN", "brkpt": "OTHER", "nanosleep": "OTHER", "pmevent": "OTHER"}
_SYNC = {"bar": "BARRIER", "barrier": "BARRIER", "bar.warp.sync": "BARRIER", "barrier.cluster": "BARRIER",
         "membar": "FENCE", "fence": "FENCE", "griddepcontrol": "FENCE", "setmaxnreg": "OTHER",
         "cp.async.commit_group": "ASYNC_WAIT", "cp.async.wait_group": "ASYNC_WAIT",
         "cp.async.wait_all": "ASYNC_WAIT", "cp.async.bulk.commit_group": "ASYNC_WAIT",
         "cp.async.bulk.wait_group": "ASYNC_WAIT", "cp.async.mbarrier.arrive": "MBARRIER",
         "wgmma.fence": "WGMMA_SYNC", "wgmma.commit_group": "WGMMA_SYNC", "wgmma.wait_group": "WGMMA_SYNC",
         "tensormap.cp_fenceproxy": "FENCE"}
_WARP = {"shfl": "SHUFFLE", "shfl.sync": "SHUFFLE", "vote": "VOTE", "vote.sync": "VOTE", "match.sync": "VOTE",
         "activemask": "VOTE", "elect.sync": "VOTE", "redux.sync": "WARP_REDUCE"}
_ADDRESS = frozenset({"cvta", "isspacep", "mapa", "getctarank", "alloca", "stacksave", "stackrestore"})
_CACHE_CTRL = frozenset({"prefetch", "prefetchu", "applypriority", "discard", "createpolicy",
                         "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor", "tensormap.replace"})
_TEXTURE = frozenset({"tex", "tld4", "txq", "istypep", "suld", "sust", "sured", "suq"})
_INT_TENSOR_TYPES = frozenset({"s8", "u8", "s4", "u4", "b1"})


def describe(instr: Instruction) -> OpInfo:
    """The facts about one PTX instruction.

    >>> from isa.ir import Instruction
    >>> describe(Instruction('fma', ('rn', 'f16x2'))).flops
    4
    """
    mods = instr.modifiers
    spelled = (instr.opcode, mods if mods.__class__ is tuple else tuple(mods))
    hit = _SPELLED.get(spelled)
    if hit is None:
        name, mods = opcodes.split(instr)
        hit = (name, mods, None if _keyed(name) else _describe(name, mods, None))
        if len(_SPELLED) >= 1 << 16:
            _SPELLED.clear()
        _SPELLED[spelled] = hit
    info = hit[2]
    if info is not None:        # the spelling alone decides (most opcodes): one lookup per instruction
        return info
    return _describe(hit[0], hit[1], _operand_key(hit[0], instr))


#: opcode and modifiers as spelled -> (canonical opcode, its modifiers, the description when no
#: operand changes it): a big file describes ~100,000 instructions per 5 MB of a few hundred spellings
_SPELLED: dict[tuple, tuple] = {}


def _keyed(name: str) -> bool:
    """Whether :func:`_operand_key` may look at the operands of an instruction of opcode ``name``."""
    return name in ("cp.async", "cp.async.bulk", "cp.reduce.async.bulk", "st.bulk") or name.startswith("wgmma.mma_async")


def _operand_key(name: str, instr: Instruction):
    """The one operand fact that changes an instruction's description, if any."""
    ops = instr.operands
    if name == "cp.async" and len(ops) >= 3 and isinstance(ops[2], Immediate):
        return int(ops[2].value)
    if name in ("cp.async.bulk", "cp.reduce.async.bulk", "st.bulk") and len(ops) >= 3:
        size = ops[2] if name != "st.bulk" else ops[1]
        return int(size.value) if isinstance(size, Immediate) else None
    if name.startswith("wgmma.mma_async") and len(ops) >= 2:
        return "a_regs" if isinstance(ops[1], Vector) else ("a_desc" if isinstance(ops[1], Register) else None)
    return None


@lru_cache(maxsize=16384)
def _describe(name: str, mods: tuple[str, ...], key) -> OpInfo:
    if name not in opcodes.SPECS:
        return OpInfo(family=name, unit=Unit.INT, classes=frozenset({"OTHER"}), known=False)
    for family_test, handler in _HANDLERS:
        if family_test(name):
            return handler(name, mods, key)
    return OpInfo(family=name, unit=Unit.INT, classes=frozenset({"OTHER"}), known=False)  # pragma: no cover


def _arith(name: str, mods, key) -> OpInfo:
    types = _types(mods)
    out_t = types[0] if types else None      # add.f32.f16: d is f32, a/b are f16
    in_t = types[-1] if types else None
    rounding = _rounding(mods)
    if _is_float(out_t):
        unit = _fp_unit(out_t)
        flops = _FLOP_PER_ELEM.get(name, 0) * _elems(out_t)
        classes = {_ARITH_CLASS[unit]}
        if name in ("fma", "mad"):
            classes.add(_FMA_CLASS[out_t])
        # MUFU work: transcendental ops and the approximate/full-range f32 reciprocal family
        if name in _SFU_OPS or (out_t == "f32" and name in ("rcp", "sqrt", "div")
                                and ("approx" in mods or "full" in mods)):
            unit = Unit.SFU
            classes.add("SFU")
        return OpInfo(family=name, unit=unit, classes=frozenset(classes), in_dtype=in_t,
                      acc_dtype=out_t if name in ("fma", "mad") else None, out_dtype=out_t, flops=flops,
                      rounding=rounding, extra={"ftz": "ftz" in mods, "sat": "sat" in mods})
    if name in ("testp", "copysign"):
        unit = _fp_unit(in_t)
        return OpInfo(family=name, unit=unit, classes=frozenset({_ARITH_CLASS[unit]}), in_dtype=in_t,
                      out_dtype=out_t)
    return OpInfo(family=name, unit=Unit.INT, classes=frozenset({"INT_ARITH"}), in_dtype=in_t, out_dtype=out_t,
                  extra={"hi": "hi" in mods, "wide": "wide" in mods})


def _dot(name: str, mods, key) -> OpInfo:
    types = _types(mods)
    a = types[0] if types else "s32"
    b = types[1] if len(types) > 1 else a
    signed = "s" if "s32" in (a, b) else "u"
    if name == "dp4a":
        in_t, ops = ("s8" if a == "s32" else "u8"), 8
    else:
        in_t, ops = ("s16" if a == "s32" else "u16"), 4
    return OpInfo(family=name, unit=Unit.INT, classes=frozenset({INT8_DP4A, "INT_ARITH"}), in_dtype=in_t,
                  acc_dtype=f"{signed}32", out_dtype=f"{signed}32", int_ops=ops,
                  extra={"a_type": a, "b_type": b, "b_dtype": "s8" if b == "s32" else "u8"})


def _cvt(name: str, mods, key) -> OpInfo:
    types = _types(mods)
    if name == "cvt.pack":
        return OpInfo(family=name, unit=Unit.INT, classes=frozenset({"CONVERT"}),
                      in_dtype=types[1] if len(types) > 1 else None, out_dtype=types[0] if types else None,
                      extra={"sat": "sat" in mods})
    out_t = types[0] if types else None
    in_t = types[1] if len(types) > 1 else out_t
    classes = {"CONVERT"}
    if _is_float(out_t) and _is_float(in_t):
        if _bits(out_t) // _elems(out_t) < _bits(in_t) // _elems(in_t) or out_t in ("tf32",):
            classes.add("CONVERT_NARROW")
    if "f64" in (in_t, out_t):
        unit = Unit.FP64
    elif _is_float(in_t) or _is_float(out_t):
        unit = Unit.SFU if (in_t == "f64" or out_t == "f64" or not ({in_t, out_t} <= {"f32", "f16", "bf16", "f16x2",
                                                                                       "bf16x2"})) else Unit.FP16
        if {in_t, out_t} <= {"f32"}:
            unit = Unit.FP32
    else:
        unit = Unit.INT
    return OpInfo(family="cvt", unit=unit, classes=frozenset(classes), in_dtype=in_t, out_dtype=out_t,
                  rounding=_rounding(mods),
                  extra={"sat": "sat" in mods, "satfinite": "satfinite" in mods, "relu": "relu" in mods,
                         "ftz": "ftz" in mods})


def _simple(cls: str, unit: Unit):
    def handler(name: str, mods, key) -> OpInfo:
        types = _types(mods)
        t = types[-1] if types else None
        u = unit
        if name in ("setp", "set", "selp", "slct") and _is_float(t):
            u = _fp_unit(t)
        out = "pred" if cls == "COMPARE" and name == "setp" else (types[0] if types else None)
        return OpInfo(family=name, unit=u, classes=frozenset({cls}), in_dtype=t, out_dtype=out)
    return handler


def _memory(name: str, mods, key) -> OpInfo:
    types = _types(mods)
    t = types[-1] if types else None
    vec = next((_VEC[m] for m in mods if m in _VEC), 1)
    nbytes = max(1, _bits(t) // 8) * vec if t else 0
    space = _space(mods) or ("global" if name == "ldu" else "generic")
    load = name in ("ld", "ldu")
    store = name in ("st", "st.async")
    prefix = "LOAD" if load else "STORE"
    classes = {prefix, f"{prefix}_{space.upper()}", f"{prefix}_{space.upper()}_{nbytes * 8}"}
    if space == "local":
        classes.add("SPILL")
    if name == "st.async":
        space = "shared"
        classes = {"STORE", "STORE_SHARED", f"STORE_SHARED_{nbytes * 8}"}
    extra = {"qualified_space": next((m for m in mods if m in _SPACE_WORDS), None), "vector": vec,
             "nc": "nc" in mods, "volatile": "volatile" in mods}
    return OpInfo(family=name, unit=Unit.LSU, classes=frozenset(classes), in_dtype=t, out_dtype=t, bytes=nbytes,
                  space=space, is_load=load, is_store=store, extra=extra)


def _atomic(name: str, mods, key) -> OpInfo:
    types = _types(mods)
    t = types[-1] if types else None
    vec = next((_VEC[m] for m in mods if m in _VEC), 1)
    nbytes = max(1, _bits(t) // 8) * vec if t else 0
    op = next((m for m in mods if m in ("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max")), None)
    space = _space(mods) or "generic"
    classes = {"ATOMIC" if name == "atom" else "REDUCTION"}
    if op == "cas":
        classes.add("ATOMIC_CAS")
    if name.startswith("multimem"):
        classes = {"REDUCTION"} if "red" in name or "ld_reduce" in name else {"STORE"}
        space = "global"
    return OpInfo(family=name, unit=Unit.LSU, classes=frozenset(classes), in_dtype=t, out_dtype=t, bytes=nbytes,
                  space=space, is_atomic=name in ("atom", "red", "red.async", "multimem.red"),
                  is_load=name in ("multimem.ld_reduce",), is_store=name == "multimem.st",
                  extra={"op": op, "vector": vec})


def _async_copy(name: str, mods, key) -> OpInfo:
    if name == "cp.async":
        nbytes = key if isinstance(key, int) else 0
        classes = {"ASYNC_COPY"}
        if nbytes:
            classes.add(f"ASYNC_COPY_{nbytes * 8}")
        return OpInfo(family=name, unit=Unit.LSU, classes=frozenset(classes), bytes=nbytes, space="global",
                      is_load=True,
                      extra={"dst_space": "shared", "src_space": "global", "bytes_known": bool(nbytes),
                             "cache": "cg" if "cg" in mods else "ca"})
    spaces = [_SPACE_WORDS[m] for m in mods if m in _SPACE_WORDS]
    dst, src = (spaces + [None, None])[:2]
    classes = {"ASYNC_COPY"}
    if "tensor" in name:
        classes.add("TMA")
    if name.startswith("cp.reduce"):
        classes = {"REDUCTION"} | ({"TMA"} if "tensor" in name else set())
    nbytes = key if isinstance(key, int) else 0
    space = "global" if "global" in (dst, src) else (src or dst)
    return OpInfo(family=name, unit=Unit.LSU, classes=frozenset(classes), bytes=nbytes, space=space,
                  is_load=src == "global", is_store=dst == "global",
                  extra={"dst_space": dst, "src_space": src, "bytes_known": bool(nbytes)})


def _matrix_move(name: str, mods, key) -> OpInfo:
    num = next((int(m[1:]) for m in mods if re.fullmatch(r"x\d+", m)), 1)
    shape = next((m for m in mods if re.fullmatch(r"m\d+n\d+", m)), "m8n8")
    rows, cols = (int(v) for v in re.fullmatch(r"m(\d+)n(\d+)", shape).groups())
    types = _types(mods)
    t = types[-1] if types else "b16"
    elem_bits = 8 if t.startswith("b8") or t.startswith("b6") or t.startswith("b4") else 16
    nbytes = num * rows * cols * elem_bits // 8
    cls = {"ldmatrix": "LDMATRIX", "stmatrix": "STMATRIX", "movmatrix": "MOVMATRIX"}[name]
    if name == "movmatrix":
        return OpInfo(family=name, unit=Unit.LSU, classes=frozenset({cls}), in_dtype=t, scope=Scope.WARP)
    return OpInfo(family=name, unit=Unit.LSU, classes=frozenset({cls}), in_dtype=t, out_dtype=t, bytes=nbytes,
                  space="shared", is_load=name == "ldmatrix", is_store=name == "stmatrix", scope=Scope.WARP,
                  extra={"matrices": num, "trans": "trans" in mods})


def _mma_types(name: str, types: list[str]) -> tuple[str, str, str, str]:
    """(a, b, c, d) element types from the type modifiers of an mma-like instruction."""
    if name == "wmma.mma":
        if len(types) == 2:  # .dtype.ctype; a/b are f16
            return "f16", "f16", types[1], types[0]
        if len(types) >= 4:
            return types[1], types[2], types[3], types[0]
    if name.startswith("wgmma"):
        d = types[0]
        a = types[1] if len(types) > 1 else "f16"
        b = types[2] if len(types) > 2 else a
        return a, b, d, d
    if len(types) >= 4:
        d, a, b, c = types[:4]
        return a, b, c, d
    d = types[0] if types else "f32"
    return (types[1] if len(types) > 1 else "f16"), (types[2] if len(types) > 2 else "f16"), d, d


#: mma forms where one warp computes several independent products: mma.m8n8k4 with .f16 A/B is
#: four 8x8x4 MMAs, one per quad-pair (ISA 9.7.14.5.1)
_MMAS_PER_WARP = {("mma", "m8n8k4", "f16"): 4}


def _tensor(name: str, mods, key) -> OpInfo:
    shape = next((m for m in mods if _SHAPE.fullmatch(m)), None)
    m, n, k = (int(v) for v in _SHAPE.fullmatch(shape).groups()) if shape else (0, 0, 0)
    types = [t for t in _types(mods) if t not in ("ue8m0", "ue4m3")]
    kind = next((w.split("::")[1] for w in mods if w.startswith("kind::")), None)
    a, b, c, d = _mma_types(name, types)
    work = 2 * m * n * k * _MMAS_PER_WARP.get((name, shape, a), 1)
    sparse = ".sp" in name
    extra = {"b_dtype": b, "sparse": sparse, "kind": kind, "layout": [w for w in mods if w in ("row", "col")],
             "satfinite": "satfinite" in mods}
    if sparse:                          # useful work: the stored half of A (module docstring)
        extra["dense_equivalent_ops"] = work
        work //= 2
    integer = a in _INT_TENSOR_TYPES
    scope = Scope.WARPGROUP if name.startswith("wgmma") else Scope.WARP
    nbytes, space = 0, None
    if name.startswith("wgmma"):
        # operands come from shared memory through descriptors: B always, A unless in registers
        ebits = _bits(a)
        nbytes = (n * k * ebits) // 8 + (0 if key == "a_regs" else (m * k * ebits) // 8)
        if ".sp" in name:
            nbytes -= (0 if key == "a_regs" else (m * k * ebits) // 16)
        space = "shared"
        extra["a_from"] = "registers" if key == "a_regs" else "shared"
    return OpInfo(family=name, unit=Unit.TENSOR, classes=frozenset({TENSOR_CORE}), in_dtype=a, acc_dtype=c,
                  out_dtype=d, flops=0 if integer else work, int_ops=work if integer else 0, scope=scope,
                  bytes=nbytes, space=space, shape=(m, n, k) if shape else None,
                  rounding=_rounding(mods), extra=extra)


def _wmma_memory(name: str, mods, key) -> OpInfo:
    shape = next((x for x in mods if _SHAPE.fullmatch(x)), None)
    m, n, k = (int(v) for v in _SHAPE.fullmatch(shape).groups()) if shape else (0, 0, 0)
    frag = next((x for x in mods if x in ("a", "b", "c", "d")), "d")
    types = _types(mods)
    t = types[-1] if types else "f16"
    elems = {"a": m * k, "b": k * n, "c": m * n, "d": m * n}[frag]
    nbytes = elems * _bits(t) // 8
    load = name == "wmma.load"
    return OpInfo(family=name, unit=Unit.LSU, classes=frozenset({"WMMA_LOAD" if load else "WMMA_STORE"}),
                  in_dtype=t, out_dtype=t, bytes=nbytes, space=_space(mods) or "generic", is_load=load,
                  is_store=not load, scope=Scope.WARP, shape=(m, n, k) if shape else None,
                  extra={"fragment": frag, "layout": next((x for x in mods if x in ("row", "col")), None)})


def _texture(name: str, mods, key) -> OpInfo:
    types = _types(mods)
    t = types[0] if types else None
    vec = next((_VEC[m] for m in mods if m in _VEC), 1)
    nbytes = (max(1, _bits(t) // 8) * vec) if t and name in ("tex", "tld4", "suld", "sust", "sured") else 0
    return OpInfo(family=name, unit=Unit.LSU, classes=frozenset({"TEXTURE"}), in_dtype=t, out_dtype=t,
                  bytes=nbytes, space="texture" if nbytes else None, is_load=name in ("tex", "tld4", "suld"),
                  is_store=name in ("sust", "sured"))


def _mbarrier(name: str, mods, key) -> OpInfo:
    return OpInfo(family=name, unit=Unit.SYNC, classes=frozenset({"MBARRIER"}), space="shared",
                  extra={"parity": "parity" in mods, "expect_tx": "expect_tx" in mods})


def _tcgen05(name: str, mods, key) -> OpInfo:
    if ".mma" in name:
        return OpInfo(family=name, unit=Unit.TENSOR, classes=frozenset({TENSOR_CORE}),
                      extra={"kind": next((w for w in mods if w.startswith("kind::")), None), "work_known": False})
    return OpInfo(family=name, unit=Unit.LSU if name in ("tcgen05.ld", "tcgen05.st", "tcgen05.cp") else Unit.SYNC,
                  classes=frozenset({"OTHER"}))


_HANDLERS = (
    (lambda n: n in _FLOP_PER_ELEM or n in _INT_ONLY, _arith),
    (lambda n: n in ("dp4a", "dp2a"), _dot),
    (lambda n: n in ("cvt", "cvt.pack"), _cvt),
    (lambda n: n in ("setp", "set"), _simple("COMPARE", Unit.INT)),
    (lambda n: n in ("selp", "slct"), _simple("SELECT", Unit.INT)),
    (lambda n: n in _LOGIC, _simple("LOGIC", Unit.INT)),
    (lambda n: n in ("mov", "prmt"), _simple("MOVE", Unit.INT)),
    (lambda n: n in ("ld", "ldu", "st", "st.async"), _memory),
    (lambda n: n in ("atom", "red", "red.async") or n.startswith("multimem."), _atomic),
    (lambda n: n.startswith(("cp.async.bulk", "cp.reduce")) and n not in _SYNC and n not in _CACHE_CTRL, _async_copy),
    (lambda n: n == "cp.async", _async_copy),
    (lambda n: n in ("ldmatrix", "stmatrix", "movmatrix"), _matrix_move),
    (lambda n: n in ("mma", "mma.sp", "wmma.mma", "wgmma.mma_async", "wgmma.mma_async.sp"), _tensor),
    (lambda n: n in ("wmma.load", "wmma.store"), _wmma_memory),
    (lambda n: n.startswith("mbarrier."), _mbarrier),
    (lambda n: n in _SYNC, lambda n, m, k: OpInfo(family=n, unit=Unit.SYNC, classes=frozenset({_SYNC[n]}))),
    (lambda n: n in _WARP, lambda n, m, k: OpInfo(family=n, unit=Unit.LSU if n.startswith("shfl") else Unit.INT,
                                                  classes=frozenset({_WARP[n]}),
                                                  in_dtype=(_types(m) or [None])[-1])),
    (lambda n: n in _CONTROL, lambda n, m, k: OpInfo(family=n, unit=Unit.CONTROL, classes=frozenset({_CONTROL[n]}),
                                                     extra={"uniform": "uni" in m})),
    (lambda n: n in _ADDRESS, lambda n, m, k: OpInfo(family=n, unit=Unit.INT, classes=frozenset({"ADDRESS"}),
                                                     space=_space(m))),
    (lambda n: n in _CACHE_CTRL, lambda n, m, k: OpInfo(family=n, unit=Unit.LSU, classes=frozenset({"PREFETCH"}),
                                                        space=_space(m))),
    (lambda n: n in _TEXTURE, _texture),
    (lambda n: n.startswith("tcgen05."), _tcgen05),
    (lambda n: n.startswith("v") and n[1:4] in ("add", "sub", "abs", "min", "max", "shl", "shr", "mad", "set", "avr"),
     lambda n, m, k: OpInfo(family=n, unit=Unit.INT, classes=frozenset({"VIDEO"}))),
    (lambda n: n == "st.bulk", lambda n, m, k: OpInfo(family=n, unit=Unit.LSU, classes=frozenset({"STORE"}),
                                                      bytes=k if isinstance(k, int) else 0, space="shared",
                                                      is_store=True)),
)
