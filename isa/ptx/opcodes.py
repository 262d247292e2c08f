"""The PTX opcodes kernlens knows (PTX ISA 9.0, sm_80 .. sm_90a, plus the sm_100 families) and the
modifiers each one allows.

The parser splits ``cp.async.cg.shared.global`` into ``opcode='cp'`` and the dotted words after it.
Some instructions have dotted names of their own (``cp.async``, ``cp.async.bulk.tensor``,
``wgmma.mma_async``, ``mbarrier.try_wait``, ``bar.warp.sync``); :func:`canonical` picks the longest
such name that the words spell, and the remaining words are that instruction's modifiers, in any
order (ptxas accepts ``vote.ballot.sync`` as well as ``vote.sync.ballot``)::

    cp.async.cg.shared.global [%r18], [%rd12], 16;
      -> canonical 'cp.async', modifiers {'cg', 'shared', 'global'}
    mbarrier.try_wait.parity.shared::cta.b64 P1, [%r4], %r7;
      -> canonical 'mbarrier.try_wait', modifiers {'parity', 'shared::cta', 'b64'}

:func:`validate` returns ``None`` for a known opcode whose modifiers are all allowed, and otherwise
a one-line message (``unknown opcode 'fmaa'``, ``unknown modifier '.xyz' for 'ld'``). The tables
say which words may appear; they do not check every combination ptxas would reject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

# --------------------------------------------------------------------------------------------
# Modifier groups (words without the leading dot)
# --------------------------------------------------------------------------------------------


def _w(text: str) -> frozenset[str]:
    return frozenset(text.split())


U = _w("u8 u16 u32 u64")
S = _w("s8 s16 s32 s64")
B = _w("b8 b16 b32 b64")
INT = U | S
INT_ARITH = _w("u16 u32 u64 s16 s32 s64")
PACKED_INT = _w("u16x2 s16x2")
HALF = _w("f16 f16x2 bf16 bf16x2")
FLT = _w("f32 f64")
FLOAT = HALF | FLT | _w("f32x2")
FP8 = _w("e4m3 e5m2 e4m3x2 e5m2x2 e4m3x4 e5m2x4 e2m3 e3m2 e2m1 e2m3x2 e3m2x2 e2m1x2 e2m3x4 e3m2x4"
         " e2m1x4 ue8m0 ue8m0x2 ue4m3 tf32")
FRND = _w("rn rz rm rp")
IRND = _w("rni rzi rmi rpi")
SCOPES = _w("cta cluster gpu sys")
SEMS = _w("weak volatile relaxed acquire release acq_rel mmio sc")
CMP = _w("eq ne lt le gt ge lo ls hi hs equ neu ltu leu gtu geu num nan")
BOOL = _w("and or xor")
LD_SPACES = _w("const global local param param::entry param::func shared shared::cta shared::cluster")
ST_SPACES = _w("global local param param::func shared shared::cta shared::cluster")
CACHE = _w("ca cg cs lu cv wb wt nc")
EVICT = _w("L1::evict_normal L1::evict_unchanged L1::evict_first L1::evict_last L1::no_allocate"
           " L2::evict_normal L2::evict_first L2::evict_last L2::evict_unchanged L2::cache_hint"
           " L2::64B L2::128B L2::256B")
VEC = _w("v2 v4 v8")
LDST_TYPES = B | U | S | FLT | _w("b128")
SYNC = _w("sync aligned")
ATOM_OPS = _w("and or xor cas exch add inc dec min max")
ATOM_TYPES = _w("b16 b32 b64 b128 u32 u64 s32 s64 f32 f64") | HALF
GEOM = _w("1d 2d 3d a1d a2d cube acube 2dms a2dms")
COMPLETE_TX = _w("mbarrier::complete_tx::bytes")
BULK_DIMS = _w("1d 2d 3d 4d 5d")
LOAD_MODES = _w("tile tile::gather4 tile::scatter4 im2col im2col::w im2col::w::128 im2col_no_offs")
VIDEO_TYPES = _w("u32 s32")

# Parametric words: shapes and the like, checked by pattern.
MMA_SHAPE = re.compile(r"m(8|16|32|64)n(4|8|16|32)k(4|8|16|32|64|128|256)")
WMMA_SHAPE = re.compile(r"m(16n16k16|32n8k16|8n32k16|16n16k8|8n8k4|8n8k32|8n8k128)")
WGMMA_SHAPE = re.compile(r"m64n(8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160"
                         r"|168|176|184|192|200|208|216|224|232|240|248|256)k(8|16|32|64|256)")
LDMATRIX_SHAPE = re.compile(r"m(8n8|16n16|8n16|16n8)")
TCGEN05_SHAPE = re.compile(r"(\d+x\d+b|\d+x\d+bx\d+|\d+x\d+b::\w+|warpx\d+(::\w+)?)")
NUM = re.compile(r"x(1|2|4|8|16|32|64|128)")


@dataclass(frozen=True)
class OpcodeSpec:
    """One PTX instruction: its canonical dotted name and the words that may follow it.

    ``loose`` means the words of the dotted name may sit anywhere among the modifiers
    (``vote.ballot.sync.b32`` is ``vote.sync``); otherwise they must come first, in order.
    """

    name: str
    modifiers: frozenset[str]
    patterns: tuple[re.Pattern, ...] = ()
    loose: bool = False
    summary: str = ""
    since: str = "sm_80"
    words: tuple[str, ...] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", tuple(self.name.split(".")))

    def allows(self, word: str) -> bool:
        return word in self.modifiers or any(p.fullmatch(word) for p in self.patterns)


SPECS: dict[str, OpcodeSpec] = {}


def _op(name: str, *groups: frozenset[str] | str, patterns: tuple[re.Pattern, ...] = (),
        loose: bool = False, summary: str = "", since: str = "sm_80") -> None:
    mods: set[str] = set()
    for g in groups:
        mods |= _w(g) if isinstance(g, str) else set(g)
    SPECS[name] = OpcodeSpec(name, frozenset(mods), tuple(patterns), loose, summary, since)


# ---- integer and floating-point arithmetic ([ISA 9.7.1-9.7.4]) -----------------------------
_ARITH_F = FRND | _w("ftz sat relu oob") | FLOAT | FP8
_op("add", INT_ARITH, PACKED_INT, _ARITH_F, "sat", summary="add.s32 %r3, %r1, %r2;")
_op("sub", INT_ARITH, PACKED_INT, _ARITH_F, "sat", summary="sub.f32 %f3, %f1, %f2;")
_op("add.cc", _w("u32 s32 u64 s64"), summary="add.cc.u32 %r3, %r1, %r2;")
_op("sub.cc", _w("u32 s32 u64 s64"), summary="sub.cc.u32 %r3, %r1, %r2;")
_op("addc", _w("cc u32 s32 u64 s64"), summary="addc.cc.u32 %r3, %r1, %r2;")
_op("subc", _w("cc u32 s32 u64 s64"), summary="subc.cc.u32 %r3, %r1, %r2;")
_op("mul", INT_ARITH, _w("hi lo wide"), _ARITH_F, summary="mul.wide.s32 %rd4, %r1, 4;")
_op("mad", INT_ARITH, _w("hi lo wide"), _ARITH_F, summary="mad.lo.s32 %r1, %r9, %r8, %r10;")
_op("mad.cc", _w("hi lo u32 s32 u64 s64"), loose=True, summary="mad.lo.cc.u32 %r1, %r2, %r3, %r4;")
_op("madc", _w("hi lo cc u32 s32 u64 s64"), summary="madc.lo.cc.u32 %r1, %r2, %r3, %r4;")
_op("mul24", _w("hi lo u32 s32"), summary="mul24.lo.s32 %r1, %r2, %r3;")
_op("mad24", _w("hi lo sat u32 s32"), summary="mad24.lo.s32 %r1, %r2, %r3, %r4;")
_op("sad", INT_ARITH, summary="sad.u32 %r1, %r2, %r3, %r4;")
_op("div", INT_ARITH, FRND, _w("approx full ftz"), FLT, summary="div.rn.f32 %f3, %f1, %f2;")
_op("rem", INT_ARITH, summary="rem.s32 %r3, %r1, %r2;")
_op("abs", INT_ARITH, FLOAT, _w("ftz relu"), summary="abs.f32 %f2, %f1;")
_op("neg", INT_ARITH, FLOAT, _w("ftz relu"), summary="neg.s32 %r2, %r1;")
_op("min", INT_ARITH, PACKED_INT, FLOAT, _w("ftz NaN xorsign abs relu"), summary="min.s32 %r3, %r1, %r2;")
_op("max", INT_ARITH, PACKED_INT, FLOAT, _w("ftz NaN xorsign abs relu"), summary="max.f32 %f3, %f1, %f2;")
_op("popc", _w("b32 b64"), summary="popc.b32 %r2, %r1;")
_op("clz", _w("b32 b64"), summary="clz.b32 %r2, %r1;")
_op("bfind", _w("shiftamt u32 u64 s32 s64"), summary="bfind.u32 %r2, %r1;")
_op("fns", _w("b32"), summary="fns.b32 %r1, %r2, %r3, 1;")
_op("brev", _w("b32 b64"), summary="brev.b32 %r2, %r1;")
_op("bfe", _w("u32 u64 s32 s64"), summary="bfe.u32 %r78, %r2, 4, 4;")
_op("bfi", _w("b32 b64"), summary="bfi.b32 %r1, %r2, %r3, 0, 8;")
_op("szext", _w("clamp wrap u32 s32"), summary="szext.wrap.s32 %r1, %r2, 8;")
_op("bmsk", _w("clamp wrap b32"), summary="bmsk.clamp.b32 %r1, %r2, %r3;")
_op("dp4a", _w("u32 s32"), summary="dp4a.s32.s32 %r11, %r14, %r17, %r14;")
_op("dp2a", _w("lo hi u32 s32"), summary="dp2a.lo.s32.s32 %r1, %r2, %r3, %r4;")
_op("testp", _w("finite infinite number notanumber normal subnormal"), FLT, summary="testp.finite.f32 %p1, %f1;")
_op("copysign", FLT, summary="copysign.f32 %f3, %f1, %f2;")
_op("fma", FRND, _w("ftz sat relu oob"), FLOAT, summary="fma.rn.f16x2 %r21, %r20, %r20, %r20;")
_op("rcp", FRND, _w("approx ftz"), FLT, summary="rcp.rn.f32 %f2, %f1;")
_op("sqrt", FRND, _w("approx ftz"), FLT, summary="sqrt.rn.f32 %f2, %f1;")
_op("rsqrt", _w("approx ftz"), FLT, summary="rsqrt.approx.f32 %f2, %f1;")
_op("sin", _w("approx ftz f32"), summary="sin.approx.f32 %f2, %f1;")
_op("cos", _w("approx ftz f32"), summary="cos.approx.f32 %f2, %f1;")
_op("lg2", _w("approx ftz f32"), summary="lg2.approx.ftz.f32 %f2, %f1;")
_op("ex2", _w("approx ftz f32"), HALF, summary="ex2.approx.ftz.f32 %f2, %f1;")
_op("tanh", _w("approx f32"), HALF, summary="tanh.approx.f32 %f2, %f1;")

# ---- comparison, selection, logic, shifts ([ISA 9.7.6-9.7.8]) ------------------------------
_op("set", CMP, BOOL, _w("ftz"), B, INT, FLOAT, PACKED_INT, summary="set.lt.u32.f32 %r1, %f1, %f2;")
_op("setp", CMP, BOOL, _w("ftz"), B, INT, FLOAT, PACKED_INT, summary="setp.lt.s32 %p2, %r1, %r7;")
_op("selp", B, INT, FLT, _w("f16 f16x2 bf16 bf16x2"), summary="selp.b32 %r41, 8, 0, %p2;")
_op("slct", _w("ftz b16 b32 b64 u16 u32 u64 s16 s32 s64 f32 f64"), summary="slct.s32.s32 %r1, %r2, %r3, %r4;")
_op("and", _w("pred b16 b32 b64"), summary="and.pred %p8, %p9, %p10;")
_op("or", _w("pred b16 b32 b64"), summary="or.b32 %r1, %r2, %r3;")
_op("xor", _w("pred b16 b32 b64"), summary="xor.b32 %r1, %r2, %r3;")
_op("not", _w("pred b16 b32 b64"), summary="not.b32 %r1, %r2;")
_op("cnot", _w("b16 b32 b64"), summary="cnot.b32 %r1, %r2;")
_op("lop3", _w("b32 and or"), summary="lop3.b32 %r1, %r2, %r3, %r4, 0x96;")
_op("shf", _w("l r clamp wrap b32"), summary="shf.l.wrap.b32 %r1, %r2, %r3, %r4;")
_op("shl", _w("b16 b32 b64"), summary="shl.b32 %r2, %r1, 2;")
_op("shr", _w("b16 b32 b64 u16 u32 u64 s16 s32 s64"), summary="shr.s32 %r2, %r1, 31;")

# ---- data movement and conversion ([ISA 9.7.9]) --------------------------------------------
_op("mov", _w("pred b16 b32 b64 b128 u16 u32 u64 s16 s32 s64 f32 f64 v2 v4"), summary="mov.u32 %r10, %tid.x;")
_op("shfl", _w("up down bfly idx b32"), summary="shfl.down.b32 %r2, %r1, 1, 31;", since="sm_30")
_op("shfl.sync", _w("up down bfly idx b32"), loose=True, summary="shfl.sync.bfly.b32 %r27, %r26, 16, 31, -1;")
_op("prmt", _w("b32 f4e b4e rc8 ecl ecr rc16"), summary="prmt.b32 %r65, %r11, %r15, %r64;")
_op("ld", SEMS, SCOPES, LD_SPACES, CACHE, EVICT, VEC, LDST_TYPES, _w("unified"),
    summary="ld.global.nc.v4.f32 {%f7,%f8,%f9,%f10}, [%rd3];")
_op("ldu", _w("global"), VEC, LDST_TYPES, summary="ldu.global.u32 %r1, [%rd1];")
_op("st", SEMS, SCOPES, ST_SPACES, CACHE, EVICT, VEC, LDST_TYPES, summary="st.global.v4.f32 [%rd9], {%f1,%f2,%f3,%f4};")
_op("st.async", _w("weak release shared::cluster cluster"), COMPLETE_TX, _w("mmio sys global v2 v4"),
    _w("b32 b64 u32 s32 u64 s64 f32 f64 b128"), summary="st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r3];",
    since="sm_90")
_op("st.bulk", _w("weak shared::cta"), summary="st.bulk.weak.shared::cta [%r1], 64, 0;", since="sm_100")
_op("multimem.ld_reduce", SEMS, SCOPES, _w("global add min max and or xor acc::f32 acc::f16 v2 v4 v8"), B, INT,
    HALF, FLT, _w("e5m2 e4m3 e5m2x2 e4m3x2 e5m2x4 e4m3x4"), summary="multimem.ld_reduce.relaxed.sys.global.add.f32 %f1, [%rd1];",
    since="sm_90")
_op("multimem.st", SEMS, SCOPES, _w("global v2 v4 v8"), B, INT, HALF, FLT, summary="multimem.st.relaxed.sys.global.f32 [%rd1], %f1;",
    since="sm_90")
_op("multimem.red", SEMS, SCOPES, _w("global add min max and or xor inc dec v2 v4 v8"), B, INT, HALF, FLT,
    summary="multimem.red.relaxed.sys.global.add.f32 [%rd1], %f1;", since="sm_90")
_op("prefetch", _w("global local L1 L2 L2::evict_last L2::evict_normal tensormap const param"),
    summary="prefetch.global.L2 [%rd1];")
_op("prefetchu", _w("L1"), summary="prefetchu.L1 [%rd1];")
_op("applypriority", _w("global L2::evict_normal"), summary="applypriority.global.L2::evict_normal [%rd1], 128;")
_op("discard", _w("global L2"), summary="discard.global.L2 [%rd1], 128;")
_op("createpolicy", _w("fractional range L2::evict_last L2::evict_normal L2::evict_first L2::evict_unchanged b64"),
    summary="createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;")
_op("isspacep", _w("const global local shared shared::cta shared::cluster param param::entry"),
    summary="isspacep.global %p1, %rd1;")
_op("cvta", _w("to const global local shared shared::cta shared::cluster param param::entry u32 u64"),
    summary="cvta.to.global.u64 %rd9, %rd3;")
_op("cvt", IRND, FRND, _w("rna rs ftz sat satfinite relu"), B, INT, FLOAT, FP8,
    summary="cvt.rn.f16x2.f32 %r315, %r486, %r485;")
_op("cvt.pack", _w("sat u2 u4 u8 u16 s2 s4 s8 s16 u32 s32 b32"), summary="cvt.pack.sat.u8.s32.b32 %r1, %r2, %r3, %r4;")
_op("mapa", _w("shared::cluster u32 u64"), summary="mapa.shared::cluster.u32 %r1, %r2, %r3;", since="sm_90")
_op("getctarank", _w("shared::cluster u32 u64"), summary="getctarank.shared::cluster.u32 %r1, %r2;", since="sm_90")

# ---- asynchronous copies ([ISA 9.7.9.25]) --------------------------------------------------
_op("cp.async", _w("ca cg shared shared::cta global L2::cache_hint L2::64B L2::128B L2::256B"),
    summary="cp.async.cg.shared.global [%r18], [%rd12], 16;")
_op("cp.async.commit_group", (), summary="cp.async.commit_group;")
_op("cp.async.wait_group", (), summary="cp.async.wait_group 0;")
_op("cp.async.wait_all", (), summary="cp.async.wait_all;")
_op("cp.async.mbarrier.arrive", _w("noinc shared shared::cta b64"), summary="cp.async.mbarrier.arrive.noinc.shared.b64 [%r1];")
_op("cp.async.bulk", _w("shared::cluster shared::cta global bulk_group multicast::cluster L2::cache_hint cp_mask"),
    COMPLETE_TX, summary="cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];",
    since="sm_90")
_op("cp.async.bulk.tensor", BULK_DIMS, LOAD_MODES, COMPLETE_TX,
    _w("shared::cluster shared::cta global bulk_group multicast::cluster cta_group::1 cta_group::2 L2::cache_hint"),
    summary="cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
    since="sm_90")
_op("cp.reduce.async.bulk", _w("shared::cluster shared::cta global bulk_group L2::cache_hint noftz"), COMPLETE_TX,
    ATOM_OPS, _w("b32 b64 u32 s32 u64 s64 f32 f64 f16 bf16"),
    summary="cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], %r2;", since="sm_90")
_op("cp.reduce.async.bulk.tensor", BULK_DIMS, LOAD_MODES, ATOM_OPS, _w("global shared::cta bulk_group L2::cache_hint"),
    summary="cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%rd1, {%r1}], [%r2];",
    since="sm_90")
_op("cp.async.bulk.prefetch", _w("L2 global L2::cache_hint"), summary="cp.async.bulk.prefetch.L2.global [%rd1], %r1;",
    since="sm_90")
_op("cp.async.bulk.prefetch.tensor", BULK_DIMS, LOAD_MODES, _w("L2 global L2::cache_hint"),
    summary="cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd1, {%r1}];", since="sm_90")
_op("cp.async.bulk.commit_group", (), summary="cp.async.bulk.commit_group;", since="sm_90")
_op("cp.async.bulk.wait_group", _w("read"), summary="cp.async.bulk.wait_group.read 0;", since="sm_90")
_op("tensormap.replace", _w("tile global shared::cta b1024 b128 b32 b64 global_address rank box_dim global_dim"
                            " global_stride element_stride elemtype interleave_layout swizzle_mode"
                            " swizzle_atomicity fill_mode"),
    summary="tensormap.replace.tile.global_address.global.b1024.b64 [%rd1], %rd2;", since="sm_90")
_op("tensormap.cp_fenceproxy", _w("global shared::cta tensormap::generic release acquire sync aligned"), SCOPES,
    summary="tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%r1], 128;",
    since="sm_90")

# ---- warp-level matrix data movement ([ISA 9.7.14.5.15-17]) --------------------------------
_op("ldmatrix", SYNC, _w("trans shared shared::cta b16 b8 b8x16 b6x16_p32 b4x16_p64"), patterns=(LDMATRIX_SHAPE, NUM),
    summary="ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r144, %r145, %r146, %r147}, [%r202+32768];")
_op("stmatrix", SYNC, _w("trans shared shared::cta b16 b8"), patterns=(LDMATRIX_SHAPE, NUM),
    summary="stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r10], {%r11, %r12};", since="sm_90")
_op("movmatrix", SYNC, _w("trans b16"), patterns=(LDMATRIX_SHAPE,), summary="movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;")

# ---- textures and surfaces ([ISA 9.7.10-11]) -----------------------------------------------
_TEX_TYPES = _w("u32 s32 f16 f16x2 f32")
_op("tex", GEOM, _w("v2 v4 base level grad clamp_to_edge"), _TEX_TYPES, summary="tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [tex0, {%f5,%f6}];")
_op("tld4", _w("r g b a 2d a2d cube acube v4"), _TEX_TYPES, summary="tld4.r.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [tex0, {%f5,%f6}];")
_op("txq", _w("level width height depth channel_data_type channel_order normalized_coords filter_mode"
              " addr_mode_0 addr_mode_1 addr_mode_2 samp_pos array_size num_mipmap_levels num_samples force_unnormalized_coords b32"),
    summary="txq.width.b32 %r1, [tex0];")
_op("istypep", _w("texref samplerref surfref"), summary="istypep.texref %p1, %rd1;")
_op("suld", _w("b") | GEOM | _w("v2 v4 b8 b16 b32 b64 ca cg cs cv trap clamp zero"), summary="suld.b.2d.b32.trap %r1, [surf0, {%r2, %r3}];")
_op("sust", _w("b p") | GEOM | _w("v2 v4 b8 b16 b32 b64 wb cg cs wt trap clamp zero"), summary="sust.b.2d.b32.trap [surf0, {%r2, %r3}], %r1;")
_op("sured", _w("b p add min max and or u32 u64 s32 b32 b64 1d 2d 3d trap clamp zero"), summary="sured.b.add.2d.u32.trap [surf0, {%r2, %r3}], %r1;")
_op("suq", _w("width height depth channel_data_type channel_order array_size memory_layout b32"), summary="suq.width.b32 %r1, [surf0];")

# ---- control flow ([ISA 9.7.12]) -----------------------------------------------------------
_op("bra", _w("uni"), summary="@%p1 bra $L__BB0_3;")
_op("brx.idx", _w("uni"), summary="brx.idx %r1, $L_targets;")
_op("call", _w("uni"), summary="call.uni (retval0), vprintf, (param0, param1);")
_op("ret", _w("uni"), summary="ret;")
_op("exit", (), summary="exit;")

# ---- synchronisation and communication ([ISA 9.7.13]) --------------------------------------
_op("bar", _w("cta sync arrive red popc u32 and or pred"), summary="bar.sync 0;")
_op("barrier", _w("cta sync arrive red aligned popc u32 and or pred"), summary="barrier.sync.aligned 0;")
_op("bar.warp.sync", (), summary="bar.warp.sync -1;")
_op("barrier.cluster", _w("arrive wait relaxed release acquire aligned"), summary="barrier.cluster.arrive.aligned;", since="sm_90")
_op("membar", _w("cta gl sys proxy alias"), summary="membar.gl;")
_op("fence", _w("sc acq_rel release acquire proxy alias async global shared shared::cta shared::cluster"
                " tensormap::generic mbarrier_init op_restrict sync_restrict::shared::cta"
                " sync_restrict::shared::cluster"), SCOPES,
    summary="fence.proxy.async.shared::cta;")
_op("atom", SEMS, SCOPES, _w("global shared shared::cta shared::cluster"), ATOM_OPS, ATOM_TYPES,
    _w("noftz L2::cache_hint v2 v4 v8"), summary="atom.global.gpu.acq_rel.add.f32 %r9, [%rd3], %r10;")
_op("red", SEMS, SCOPES, _w("global shared shared::cta shared::cluster"), ATOM_OPS, ATOM_TYPES,
    _w("noftz L2::cache_hint v2 v4 v8"), summary="red.global.add.f32 [%rd1], %f1;")
_op("red.async", _w("relaxed cluster shared::cluster inc dec min max add and or xor u32 s32 b32 u64 s64"), COMPLETE_TX,
    summary="red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r3];",
    since="sm_90")
_op("vote", _w("all any uni ballot pred b32"), summary="vote.any.pred %p1, %p2;", since="sm_30")
_op("vote.sync", _w("all any uni ballot pred b32"), loose=True, summary="vote.sync.ballot.b32 %r97, %p9, %r48;")
_op("match.sync", _w("any all b32 b64"), loose=True, summary="match.any.sync.b32 %r1, %r2, -1;")
_op("activemask", _w("b32"), summary="activemask.b32 %r1;")
_op("redux.sync", _w("add min max and or xor u32 s32 b32 f32 abs NaN"), loose=True, summary="redux.sync.add.u32 %r20, %r9, %r19;")
_op("griddepcontrol", _w("launch_dependents wait"), summary="griddepcontrol.wait;", since="sm_90")
_op("elect.sync", (), loose=True, summary="elect.sync _|P, 0xffffffff;", since="sm_90")
_MBAR = _w("shared shared::cta shared::cluster b64") | SCOPES | _w("relaxed release acquire")
_op("mbarrier.init", _MBAR, summary="mbarrier.init.shared::cta.b64 [%r2], %r3;")
_op("mbarrier.inval", _MBAR, summary="mbarrier.inval.shared::cta.b64 [%r2];")
_op("mbarrier.expect_tx", _MBAR, summary="mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r2], %r3;", since="sm_90")
_op("mbarrier.complete_tx", _MBAR, summary="mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r2], %r3;", since="sm_90")
_op("mbarrier.arrive", _MBAR, _w("expect_tx noComplete"), summary="mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], %r7;")
_op("mbarrier.arrive_drop", _MBAR, _w("expect_tx noComplete"), summary="mbarrier.arrive_drop.shared::cta.b64 %rd1, [%r4];")
_op("mbarrier.test_wait", _MBAR, _w("parity"), summary="mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r4], %r7;")
_op("mbarrier.try_wait", _MBAR, _w("parity"), summary="mbarrier.try_wait.parity.shared::cta.b64 P1, [%r4], %r7;")
_op("mbarrier.pending_count", _w("b64"), summary="mbarrier.pending_count.b64 %r1, %rd1;")
_op("clusterlaunchcontrol.try_cancel", _w("async shared::cta mbarrier::complete_tx::bytes multicast::cluster::all b128"),
    summary="clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
    since="sm_100")
_op("clusterlaunchcontrol.query_cancel", _w("is_canceled get_first_ctaid pred b128 v4 b32 x y z"),
    summary="clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 %p1, %rq1;", since="sm_100")

# ---- warp and warpgroup matrix multiply ([ISA 9.7.14-9.7.15]) ------------------------------
_MMA_TYPES = _w("f16 f32 f64 bf16 tf32 s32 s8 u8 s4 u4 b1") | FP8
_op("wmma.load", _w("a b c") | SYNC | _w("row col global shared shared::cta") | _MMA_TYPES, patterns=(WMMA_SHAPE,),
    summary="wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1,...}, [%rd22], %r50;")
_op("wmma.store", _w("d") | SYNC | _w("row col global shared shared::cta f16 f32 s32 f64"), patterns=(WMMA_SHAPE,),
    summary="wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd23], {%f9,...}, %r50;")
_op("wmma.mma", SYNC | _w("row col satfinite xor and popc") | FRND | _MMA_TYPES, patterns=(WMMA_SHAPE,),
    summary="wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f9,...}, {%r61,...}, {%r69,...}, {%f8,...};")
_MMA_MODS = SYNC | _w("row col satfinite xor and popc block_scale kind::f8f6f4 kind::mxf4 kind::mxf4nvf4"
                      " kind::mxf8f6f4 kind::f16 kind::tf32 kind::i8 scale_vec::1X scale_vec::2X scale_vec::4X") | _MMA_TYPES
_op("mma", _MMA_MODS, patterns=(MMA_SHAPE,),
    summary="mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r31,...}, {%r36,%r37}, {%f1,...};")
_op("mma.sp", _MMA_MODS, patterns=(MMA_SHAPE,),
    summary="mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {...}, {...}, {...}, {...}, %r1, 0x0;")
_op("wgmma.fence", SYNC, summary="wgmma.fence.sync.aligned;", since="sm_90a")
_op("wgmma.commit_group", SYNC, summary="wgmma.commit_group.sync.aligned;", since="sm_90a")
_op("wgmma.wait_group", SYNC, summary="wgmma.wait_group.sync.aligned 1;", since="sm_90a")
_WGMMA_MODS = SYNC | _w("satfinite and popc f16 f32 bf16 tf32 s32 s8 u8 b1 e4m3 e5m2")
_op("wgmma.mma_async", _WGMMA_MODS, patterns=(WGMMA_SHAPE,),
    summary="wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {...64 regs...}, %rd92, %rd93, %p14, 1, 1, 0, 1;",
    since="sm_90a")
_op("wgmma.mma_async.sp", _WGMMA_MODS, patterns=(WGMMA_SHAPE,),
    summary="wgmma.mma_async.sp.sync.aligned.m64n128k32.f32.f16.f16 {...}, %rd1, %rd2, %r1, 0, 1, 1, 1, 0, 0;",
    since="sm_90a")

# ---- tcgen05 (sm_100a): names and the words they take, checked loosely ---------------------
_TC = (_w("cta_group::1 cta_group::2 sync aligned shared::cta shared::cluster b32 b64 u32 pack::16b unpack::16b"
          " 16x64b 16x128b 16x256b 32x32b 16x32bx2 128x256b 4x256b 128x128b 64x128b warpx2::02_13 warpx2::01_23"
          " warpx4 num x1 x2 x4 x8 x16 x32 x64 x128 ld st wait mbarrier::arrive::one multicast::cluster"
          " before_thread_sync after_thread_sync kind::tf32 kind::f16 kind::f8f6f4 kind::i8 kind::mxf8f6f4"
          " kind::mxf4 kind::mxf4nvf4 block_scale scale_vec::1X scale_vec::2X scale_vec::4X collector::a::fill"
          " collector::a::use collector::a::lastuse collector::a::discard collector::b0::fill collector::b0::use"
          " collector::b0::lastuse collector::b0::discard ashift down b6x16_p32 b4x16_p64"),)
for _n in ("alloc", "dealloc", "relinquish_alloc_permit", "ld", "st", "wait", "cp", "shift", "mma", "mma.sp",
           "mma.ws", "mma.ws.sp", "commit", "fence"):
    _op("tcgen05." + _n, *_TC, summary=f"tcgen05.{_n} ...;", since="sm_100a")

# ---- video instructions ([ISA 9.7.16]) ------------------------------------------------------
for _n in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
    _op(_n, VIDEO_TYPES, _w("sat add min max"), summary=f"{_n}.u32.u32.u32.sat %r1, %r2, %r3, %r4;", since="sm_20")
_op("vshl", VIDEO_TYPES, _w("sat add min max clamp wrap"), summary="vshl.u32.u32.u32.clamp %r1, %r2, %r3;", since="sm_20")
_op("vshr", VIDEO_TYPES, _w("sat add min max clamp wrap"), summary="vshr.u32.u32.u32.clamp %r1, %r2, %r3;", since="sm_20")
_op("vmad", VIDEO_TYPES, _w("sat po shr7 shr15"), summary="vmad.u32.u32.u32 %r1, %r2, %r3, %r4;", since="sm_20")
_op("vset", VIDEO_TYPES, CMP, _w("add min max"), summary="vset.u32.u32.lt %r1, %r2, %r3;", since="sm_20")
for _n in ("vadd2", "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vadd4", "vsub4", "vavrg4", "vabsdiff4",
           "vmin4", "vmax4"):
    _op(_n, VIDEO_TYPES, _w("sat add"), summary=f"{_n}.u32.u32.u32.sat %r1, %r2, %r3, %r4;", since="sm_30")
_op("vset2", VIDEO_TYPES, CMP, _w("add"), summary="vset2.u32.u32.lt %r1, %r2, %r3, %r4;", since="sm_30")
_op("vset4", VIDEO_TYPES, CMP, _w("add"), summary="vset4.u32.u32.lt %r1, %r2, %r3, %r4;", since="sm_30")

# ---- miscellaneous ([ISA 9.7.17-9.7.19]) ---------------------------------------------------
_op("brkpt", (), summary="brkpt;")
_op("nanosleep", _w("u32"), summary="nanosleep.u32 %r1;")
_op("pmevent", _w("mask"), summary="pmevent 1;")
_op("trap", (), summary="trap;")
_op("setmaxnreg", _w("inc dec sync aligned u32"), summary="setmaxnreg.inc.sync.aligned.u32 232;", since="sm_90a")
_op("alloca", _w("u32 u64 local"), summary="alloca.u32 %r1, %r2;", since="sm_52")
_op("stacksave", _w("u32 u64"), summary="stacksave.u64 %rd1;", since="sm_52")
_op("stackrestore", _w("u32 u64"), summary="stackrestore.u64 %rd1;", since="sm_52")

# Dotted spellings that name the same instruction.
ALIASES = {
    "mma.sp::ordered_metadata": "mma.sp",
    "tcgen05.mma.sp::ordered_metadata": "tcgen05.mma.sp",
}

# first word -> specs with that first word, longest dotted name first
_BY_FIRST: dict[str, list[OpcodeSpec]] = {}
for _spec in SPECS.values():
    _BY_FIRST.setdefault(_spec.words[0], []).append(_spec)
for _alias, _target in ALIASES.items():
    _BY_FIRST.setdefault(_alias.split(".")[0], []).append(
        OpcodeSpec(_alias, SPECS[_target].modifiers, SPECS[_target].patterns, False, SPECS[_target].summary))
for _lst in _BY_FIRST.values():
    _lst.sort(key=lambda s: -len(s.words))

KNOWN_OPCODES = frozenset(SPECS)


@lru_cache(maxsize=8192)
def resolve(opcode: str, modifiers: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """``(canonical name, remaining modifiers)`` for an opcode and its dotted words, or ``None``.

    >>> resolve('cp', ('async', 'cg', 'shared', 'global'))
    ('cp.async', ('cg', 'shared', 'global'))
    """
    specs = _BY_FIRST.get(opcode)
    if not specs:
        return None
    for spec in specs:
        sub = spec.words[1:]
        if tuple(modifiers[: len(sub)]) == sub:
            return ALIASES.get(spec.name, spec.name), tuple(modifiers[len(sub):])
        if spec.loose and sub and set(sub) <= set(modifiers):
            rest = list(modifiers)
            for w in sub:
                rest.remove(w)
            return spec.name, tuple(rest)
    return None


def canonical(instr) -> str:
    """The canonical opcode of an instruction (``cp.async``, ``wgmma.mma_async``, ``ld``).

    An unknown opcode gives its first word.
    """
    r = resolve(instr.opcode, tuple(instr.modifiers))
    return r[0] if r else instr.opcode


def split(instr) -> tuple[str, tuple[str, ...]]:
    """``(canonical opcode, its modifiers)`` for an instruction: ``ldmatrix.sync.aligned.m8n8.x4.shared.b16``
    gives ``('ldmatrix', ('sync', 'aligned', 'm8n8', 'x4', 'shared', 'b16'))``."""
    r = resolve(instr.opcode, tuple(instr.modifiers))
    return r if r else (instr.opcode, tuple(instr.modifiers))


@lru_cache(maxsize=8192)
def _check(opcode: str, modifiers: tuple[str, ...]) -> str | None:
    r = resolve(opcode, modifiers)
    if r is None:
        words = (opcode,) + modifiers
        shown = ".".join(words[:2]) if opcode in _BY_FIRST else opcode
        return f"unknown opcode '{shown}'" + _suggest(opcode)
    name, rest = r
    spec = SPECS[name]
    for m in rest:
        if not spec.allows(m):
            return f"unknown modifier '.{m}' for '{name}'" + _suggest_modifier(m, spec)
    return None


def validate(instr) -> str | None:
    """``None`` when the instruction's opcode and every modifier are known, else a message.

    >>> from isa.ir import Instruction
    >>> validate(Instruction('fmaa', ('rn', 'f32')))
    "unknown opcode 'fmaa' (did you mean 'fma'?)"
    """
    return _check(instr.opcode, tuple(instr.modifiers))


def _suggest(word: str) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(_BY_FIRST), n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _suggest_modifier(word: str, spec: OpcodeSpec) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(spec.modifiers), n=1, cutoff=0.7)
    return f" (did you mean '.{close[0]}'?)" if close else ""


def spec(name: str) -> OpcodeSpec:
    """The table entry of a canonical opcode name."""
    return SPECS[name]
