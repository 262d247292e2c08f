"""What a SASS instruction does, as data: :func:`describe` fills an :class:`isa.semantics.OpInfo`.

The same facts as ``isa.ptx.semantics`` gives for PTX, from tables keyed by the SASS opcode and
read from its modifiers as a set, so the analyzer, the reports and the expectations treat both
levels alike (class names are shared where they mean the same: ``TENSOR_CORE``, ``FP32_FMA``,
``LOAD_SHARED_128``, ...). Real lines (sm_90, ptxas 13.0) and what they give::

    HMMA.16816.F32.BF16 R4, R12, R16, R4 ;
        family='HMMA', unit=TENSOR, classes={TENSOR_CORE, HMMA}, in bf16 acc f32, shape (16, 8, 16),
        flops=4096 per warp
    HGMMA.64x64x16.F32 R24, gdesc[UR8], R24, gsb0 ;
        classes={TENSOR_CORE, HGMMA}, in f16, flops=131072 per warpgroup, 4096 B from shared
    QGMMA.64x64x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0 ;      in e4m3
    IMMA.16832.S8.S8.SAT R4, R8, R12, R4 ;                           int_ops=8192 per warp
    FFMA R4, R28, R4, R13 ;                 classes={FP32_FMA, FP32_ARITH}, flops=2 per lane
    HFMA2 R9, R9, R12, R9 ;                 classes={FP16_FMA, FP16_ARITH}, flops=4 per lane
    HFMA2.MMA R13, -RZ, RZ, 0, 0 ;          a move (ptxas's idiom, issued on the tensor pipe):
                                            classes={MOVE}, unit=TENSOR, flops=0
        (sgemm_naive has one, after its bounds check, run by the 159 warps that store at the corpus
        launch: ncu's smsp__inst_executed_pipe_tensor_op_hmma.sum is 159 there, a plain fp32 kernel)
    IDP.4A.S8.S8 R5, R6, R7, R5 ;           classes={INT8_DP4A}, int_ops=8 per lane
    LDS.128 R4, [R19] ;                     classes={LOAD, LOAD_SHARED, LOAD_SHARED_128}, 16 B per lane
    LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64] ;    classes={ASYNC_COPY, ASYNC_COPY_128}, 16 B
    LDSM.16.M88.4 R4, [R2] ;                classes={LDMATRIX}, 512 B per warp from shared
    ATOMS.ADD R3, [R2], R5 ;                classes={ATOMIC}, shared
    MUFU.EX2 R5, R4 ;                       classes={SFU}, flops=1 per lane
    STL [R1+0x10], R4 ;                     classes={STORE, STORE_LOCAL, STORE_LOCAL_32, SPILL}

Counting rules follow ``isa.ptx.semantics``: an FMA is 2 FLOPs per element (HFMA2 has 2
elements), add/mul/min/max and MUFU 1, tensor instructions ``2*M*N*K`` per warp (HMMA, IMMA,
DMMA) or warpgroup (HGMMA, IGMMA, QGMMA); ``bytes`` is per lane except for the warp-level
matrix moves. Uniform-datapath forms (``UIADD3``, ``ULDC``...) have the classes of their vector
form plus ``UNIFORM``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..ir import Address, Immediate, Instruction, Modified, Register
from ..semantics import (BF16_FMA, FP16_FMA, FP32_FMA, FP64_FMA, INT8_DP4A, TENSOR_CORE, OpInfo, Scope,
                         Unit)

CLASSES: dict[str, str] = {
    TENSOR_CORE: "HMMA, IMMA, DMMA, HGMMA, IGMMA, QGMMA",
    "HMMA": "warp-level f16/bf16/tf32 MMA (mma.sync, wmma)", "IMMA": "warp-level integer MMA",
    "DMMA": "warp-level f64 MMA", "HGMMA": "warpgroup f16/bf16/tf32 MMA (wgmma)",
    "IGMMA": "warpgroup integer MMA", "QGMMA": "warpgroup fp8 MMA",
    FP32_FMA: "FFMA", FP16_FMA: "HFMA2 on f16", BF16_FMA: "HFMA2.BF16_V2", FP64_FMA: "DFMA",
    INT8_DP4A: "IDP.4A / IDP.2A",
    "FP32_ARITH": "FADD, FMUL, FFMA, FMNMX", "FP16_ARITH": "HADD2, HMUL2, HFMA2, HMNMX2",
    "FP64_ARITH": "DADD, DMUL, DFMA", "INT_ARITH": "IADD3, IMAD, LEA, IMNMX, VIADD, ...",
    "SFU": "MUFU (ex2, lg2, rcp, rsq, sin, cos, tanh, sqrt)", "CONVERT": "F2F, F2I, I2F, I2FP, F2FP, HADD2.F32",
    "COMPARE": "ISETP, FSETP, HSETP2, DSETP, PLOP3", "SELECT": "SEL, FSEL", "LOGIC": "LOP3, SHF, PRMT, ...",
    "MOVE": "MOV, IMAD.MOV, CS2R, S2R, HFMA2.MMA moves", "LOAD": "any load", "STORE": "any store",
    "SPILL": "local-memory traffic (LDL/STL)", "ATOMIC": "ATOMS, ATOMG, ATOM", "REDUCTION": "RED, REDG",
    "ASYNC_COPY": "LDGSTS, UTMALDG, UTMASTG, UBLKCP", "TMA": "UTMALDG, UTMASTG, UTMAPF",
    "ASYNC_WAIT": "LDGDEPBAR, DEPBAR", "LDMATRIX": "LDSM", "STMATRIX": "STSM", "MOVMATRIX": "MOVM",
    "WGMMA_SYNC": "WARPGROUP.ARRIVE, WARPGROUP.DEPBAR", "SHUFFLE": "SHFL", "VOTE": "VOTE, VOTEU, MATCH",
    "WARP_REDUCE": "REDUX", "BARRIER": "BAR, WARPSYNC", "FENCE": "MEMBAR, FENCE, ERRBAR, CCTL",
    "MBARRIER": "SYNCS", "BRANCH": "BRA, BRX, JMP, BSSY, BSYNC", "CALL": "CALL", "RETURN": "RET, EXIT",
    "UNIFORM": "uniform-datapath instructions (one value per warp)", "NOP": "NOP",
    "OTHER": "instructions the tables do not describe",
}
for _sp in ("GLOBAL", "SHARED", "LOCAL", "CONST", "GENERIC"):
    CLASSES[f"LOAD_{_sp}"] = f"load from {_sp.lower()}"
    CLASSES[f"STORE_{_sp}"] = f"store to {_sp.lower()}"
    for _w in (8, 16, 32, 64, 128):
        CLASSES[f"LOAD_{_sp}_{_w}"] = f"{_w}-bit per lane load from {_sp.lower()}"
        CLASSES[f"STORE_{_sp}_{_w}"] = f"{_w}-bit per lane store to {_sp.lower()}"
for _w in (32, 64, 128):
    CLASSES[f"ASYNC_COPY_{_w}"] = f"LDGSTS of {_w // 8} bytes per lane"

_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "32": 32, "64": 64, "128": 128}
#: memory opcodes: (space, load, store)
_MEMORY = {
    "LDS": ("shared", True, False), "STS": ("shared", False, True),
    "LDG": ("global", True, False), "STG": ("global", False, True),
    "LDL": ("local", True, False), "STL": ("local", False, True),
    "LD": ("generic", True, False), "ST": ("generic", False, True),
    "LDC": ("const", True, False), "ULDC": ("const", True, False),
}
_ATOMIC = {"ATOMS": ("shared", "ATOMIC"), "ATOMG": ("global", "ATOMIC"), "ATOM": ("generic", "ATOMIC"),
           "RED": ("global", "REDUCTION"), "REDG": ("global", "REDUCTION"), "REDAS": ("shared", "REDUCTION")}
_FP32 = {"FADD": 1, "FMUL": 1, "FFMA": 2, "FMNMX": 1, "FADD32I": 1, "FMUL32I": 1, "FFMA32I": 2, "FSWZADD": 1}
_FP16 = {"HADD2": 2, "HMUL2": 2, "HFMA2": 4, "HMNMX2": 2, "HADD2_32I": 2, "HMUL2_32I": 2, "HFMA2_32I": 4}
_FP64 = {"DADD": 1, "DMUL": 1, "DFMA": 2, "DMNMX": 1}
_INT = frozenset("IADD3 IADD IMAD IMUL LEA IMNMX VIADD VIADDMNMX VIMNMX IABS ISCADD IMADSP XMAD IADD32I "
                 "IMAD32I IMUL32I ISAD".split())
_LOGIC = frozenset("LOP3 LOP LOP32I SHF SHL SHR BFE BFI BMSK FLO POPC BREV SGXT PRMT LEA_HI".split())
_COMPARE = frozenset("ISETP FSETP HSETP2 DSETP PSETP PLOP3 FCHK HSET2 FSET ISET".split())
_SELECT = frozenset({"SEL", "FSEL"})
_MOVE = frozenset("MOV MOV32I CS2R S2R S2UR R2UR R2P P2R UMOV SHFL_IDX B2R".split())
_CONVERT = frozenset("F2F F2I I2F I2FP F2FP F2IP FRND I2I".split())
_CONTROL = {"BRA": "BRANCH", "BRX": "BRANCH", "JMP": "BRANCH", "JMX": "BRANCH", "BSSY": "BRANCH",
            "BSYNC": "BRANCH", "BREAK": "BRANCH", "BPT": "OTHER", "CALL": "CALL", "RET": "RETURN",
            "EXIT": "RETURN", "KILL": "RETURN", "YIELD": "OTHER", "NANOSLEEP": "OTHER", "ACQBULK": "OTHER"}
_SYNC = {"BAR": "BARRIER", "WARPSYNC": "BARRIER", "MEMBAR": "FENCE", "FENCE": "FENCE", "ERRBAR": "FENCE",
         "CGAERRBAR": "FENCE", "CCTL": "FENCE", "LDGDEPBAR": "ASYNC_WAIT", "DEPBAR": "ASYNC_WAIT",
         "SYNCS": "MBARRIER", "WARPGROUP": "WGMMA_SYNC", "ELECT": "VOTE", "VOTE": "VOTE", "VOTEU": "VOTE",
         "MATCH": "VOTE", "REDUX": "WARP_REDUCE", "ENDCOLLECTIVE": "OTHER", "NOP": "NOP"}
_TENSOR_DTYPE = {"F16": "f16", "BF16": "bf16", "TF32": "tf32", "E4M3": "e4m3", "E5M2": "e5m2", "S8": "s8",
                 "U8": "u8", "S4": "s4", "U4": "u4", "F32": "f32", "F64": "f64", "S32": "s32"}
_SHAPE_GMMA = re.compile(r"(\d+)x(\d+)x(\d+)$")
_SHAPE_MMA = {"16816": (16, 8, 16), "1688": (16, 8, 8), "16832": (16, 8, 32), "884": (8, 8, 4),
              "8816": (8, 8, 16), "8832": (8, 8, 32), "1684": (16, 8, 4), "16864": (16, 8, 64)}
_EBITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "f64": 64}


def describe(instr: Instruction) -> OpInfo:
    """The facts about one SASS instruction.

    >>> from isa.ir import Instruction
    >>> describe(Instruction('LDS', ('128',), isa='sass')).bytes
    16
    """
    return _describe(instr.opcode, tuple(instr.modifiers), _operand_key(instr))


def _zero(op) -> bool:
    if isinstance(op, Modified):
        op = op.operand
    return (isinstance(op, Register) and op.name in ("RZ", "URZ")) or (isinstance(op, Immediate) and op.value == 0)


def _operand_key(instr: Instruction):
    """The one operand fact that changes the description: HFMA2/IMAD used as a move, HGMMA's A in
    registers."""
    op, ops = instr.opcode, instr.operands
    if op == "HFMA2" and len(ops) >= 3 and _zero(ops[1]) and _zero(ops[2]):
        return "move"       # HFMA2.MMA R13, -RZ, RZ, 0, 0: 0*0 + constant
    if op.endswith("GMMA") and len(ops) >= 2:
        return "a_desc" if isinstance(ops[1], Address) else "a_regs"
    return None


def _width(mods) -> int:
    for m in mods:
        if m in _WIDTH:
            return _WIDTH[m]
    return 32


@lru_cache(maxsize=8192)
def _describe(op: str, mods: tuple[str, ...], key) -> OpInfo:
    uniform = op.startswith("U") and op[1:] in _INT | _LOGIC | _COMPARE | _SELECT | _MOVE | {"LDC"} | set(_SYNC)
    base = op[1:] if uniform and op != "ULDC" else op
    info = _base(base, op, mods, key)
    if uniform:
        info = OpInfo(**{**info.__dict__, "classes": info.classes | {"UNIFORM"}})
    return info


def _base(op: str, full: str, mods, key) -> OpInfo:
    mset = set(mods)
    if op in _MEMORY:
        space, load, store = _MEMORY[op]
        bits = _width(mods)
        prefix = "LOAD" if load else "STORE"
        classes = {prefix, f"{prefix}_{space.upper()}", f"{prefix}_{space.upper()}_{bits}"}
        if space == "local":
            classes.add("SPILL")
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset(classes), bytes=bits // 8, space=space,
                      is_load=load, is_store=store, extra={"width_bits": bits, "constant": "CONSTANT" in mset})
    if op in _ATOMIC:
        space, cls = _ATOMIC[op]
        bits = _width(mods)
        classes = {cls} | ({"ATOMIC_CAS"} if "CAS" in mset else set())
        kind = next((m for m in mods if m in ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH",
                                               "CAS", "CAST")), None)
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset(classes), bytes=bits // 8, space=space,
                      is_atomic=True, extra={"op": kind, "width_bits": bits})
    if op == "LDGSTS":
        bits = _width(mods)
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset({"ASYNC_COPY", f"ASYNC_COPY_{bits}"}),
                      bytes=bits // 8, space="global", is_load=True,
                      extra={"dst_space": "shared", "src_space": "global", "bypass_l1": "BYPASS" in mset})
    if op in ("UTMALDG", "UTMASTG", "UTMAPF", "UBLKCP", "UTMAREDG"):
        cls = {"ASYNC_COPY", "TMA"} if op != "UBLKCP" else {"ASYNC_COPY"}
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset(cls), space="global",
                      is_load=op == "UTMALDG", is_store=op == "UTMASTG", scope=Scope.INSTRUCTION)
    if op in ("LDSM", "STSM"):
        num = int(mods[-1]) if mods and mods[-1].isdigit() else 1
        ebits = int(mods[0]) if mods and mods[0].isdigit() else 16
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset({"LDMATRIX" if op == "LDSM" else "STMATRIX"}),
                      bytes=num * 64 * ebits // 8, space="shared", is_load=op == "LDSM", is_store=op == "STSM",
                      scope=Scope.WARP, extra={"matrices": num, "trans": "MT88" in mset})
    if op == "MOVM":
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset({"MOVMATRIX"}), scope=Scope.WARP)
    if op in ("HMMA", "IMMA", "DMMA", "HGMMA", "IGMMA", "QGMMA"):
        return _tensor(op, full, mods, key)
    if op == "SHFL":
        return OpInfo(family=full, unit=Unit.LSU, classes=frozenset({"SHUFFLE"}), extra={"mode": mods[0] if mods else None})
    if op == "MUFU":
        return OpInfo(family=full, unit=Unit.SFU, classes=frozenset({"SFU", "FP32_ARITH"}), flops=1, in_dtype="f32",
                      out_dtype="f32", extra={"function": mods[0] if mods else None})
    if op in _FP32:
        classes = {"FP32_ARITH"} | ({FP32_FMA} if op.startswith("FFMA") else set())
        return OpInfo(family=full, unit=Unit.FP32, classes=frozenset(classes), flops=_FP32[op], in_dtype="f32",
                      out_dtype="f32", acc_dtype="f32" if op.startswith("FFMA") else None,
                      rounding=next((m.lower() for m in mods if m in ("RN", "RZ", "RM", "RP")), None))
    if op in _FP16:
        if key == "move":
            return OpInfo(family=full, unit=Unit.TENSOR if "MMA" in mset else Unit.FP16, classes=frozenset({"MOVE"}),
                          extra={"idiom": "HFMA2 with zero factors: a move of its constant"})
        if op == "HADD2" and "F32" in mset:
            return OpInfo(family=full, unit=Unit.FP16, classes=frozenset({"CONVERT"}), in_dtype="f16", out_dtype="f32",
                          extra={"idiom": "HADD2.F32 -RZ, x: f16 -> f32"})
        t = "bf16" if "BF16_V2" in mset or "BF16" in mset else "f16"
        classes = {"FP16_ARITH"}
        if op.startswith("HFMA2"):
            classes.add(BF16_FMA if t == "bf16" else FP16_FMA)
        return OpInfo(family=full, unit=Unit.FP16, classes=frozenset(classes), flops=_FP16[op], in_dtype=t + "x2",
                      out_dtype=t + "x2", acc_dtype=t + "x2" if op.startswith("HFMA2") else None,
                      extra={"on_tensor_pipe": "MMA" in mset})
    if op in _FP64:
        classes = {"FP64_ARITH"} | ({FP64_FMA} if op == "DFMA" else set())
        return OpInfo(family=full, unit=Unit.FP64, classes=frozenset(classes), flops=_FP64[op], in_dtype="f64",
                      out_dtype="f64", acc_dtype="f64" if op == "DFMA" else None)
    if op == "IDP":
        four = "4A" in mset
        signed = "s" if "S8" in mset or "S16" in mset else "u"
        return OpInfo(family=full, unit=Unit.INT, classes=frozenset({INT8_DP4A, "INT_ARITH"}),
                      in_dtype=f"{signed}8" if four else f"{signed}16", acc_dtype="s32", out_dtype="s32",
                      int_ops=8 if four else 4)
    if op == "IMAD" and "MOV" in mset:
        return OpInfo(family=full, unit=Unit.INT, classes=frozenset({"MOVE"}),
                      extra={"idiom": "IMAD.MOV: RZ*RZ + x"})
    if op in _INT:
        return OpInfo(family=full, unit=Unit.INT, classes=frozenset({"INT_ARITH"}))
    if op in _LOGIC:
        return OpInfo(family=full, unit=Unit.INT, classes=frozenset({"LOGIC"}))
    if op in _COMPARE:
        unit = Unit.FP32 if op in ("FSETP", "FSET", "FCHK") else (Unit.FP64 if op == "DSETP" else Unit.INT)
        return OpInfo(family=full, unit=unit, classes=frozenset({"COMPARE"}))
    if op in _SELECT:
        return OpInfo(family=full, unit=Unit.INT, classes=frozenset({"SELECT"}))
    if op in _MOVE:
        return OpInfo(family=full, unit=Unit.INT, classes=frozenset({"MOVE"}))
    if op in _CONVERT:
        unit = Unit.SFU if op in ("F2F", "F2I", "I2F") and "F64" not in mset else Unit.INT
        if "F64" in mset:
            unit = Unit.FP64
        return OpInfo(family=full, unit=unit, classes=frozenset({"CONVERT"}),
                      rounding=next((m.lower() for m in mods if m in ("RN", "RZ", "RM", "RP", "NTZ")), None))
    if op in _CONTROL:
        return OpInfo(family=full, unit=Unit.CONTROL, classes=frozenset({_CONTROL[op]}),
                      extra={"divergent": "DIV" in mset})
    if op in _SYNC:
        unit = Unit.INT if _SYNC[op] in ("VOTE", "NOP") else Unit.SYNC
        return OpInfo(family=full, unit=unit, classes=frozenset({_SYNC[op]}))
    return OpInfo(family=full, unit=Unit.INT, classes=frozenset({"OTHER"}), known=False)


def _tensor(op: str, full: str, mods, key) -> OpInfo:
    shape = None
    for m in mods:
        g = _SHAPE_GMMA.match(m)
        if g:
            shape = tuple(int(x) for x in g.groups())
            break
        if m in _SHAPE_MMA:
            shape = _SHAPE_MMA[m]
            break
    dtypes = [_TENSOR_DTYPE[m] for m in mods if m in _TENSOR_DTYPE]
    acc = dtypes[0] if dtypes else ("s32" if op in ("IMMA", "IGMMA") else "f32")
    ins = [d for d in dtypes[1:]] if op in ("HMMA", "HGMMA", "QGMMA", "DMMA") else dtypes
    if op in ("HMMA", "HGMMA"):
        a = ins[0] if ins else "f16"
    elif op == "QGMMA":
        a = ins[0] if ins else "e4m3"
    elif op == "DMMA":
        a, acc = "f64", "f64"
    else:  # IMMA/IGMMA: S8.S8 are A and B; the accumulator is s32
        a, acc = (ins[0] if ins else "s8"), "s32"
    b = ins[1] if len(ins) > 1 else a
    m, n, k = shape or (0, 0, 0)
    work = 2 * m * n * k
    integer = op in ("IMMA", "IGMMA")
    group = op.endswith("GMMA")
    nbytes, space, extra = 0, None, {"b_dtype": b, "satfinite": "SAT" in mods}
    if group:
        ebits = _EBITS.get(a, 16)
        nbytes = n * k * ebits // 8 + (0 if key == "a_regs" else m * k * ebits // 8)
        space = "shared"
        extra["a_from"] = "registers" if key == "a_regs" else "shared"
    return OpInfo(family=full, unit=Unit.TENSOR, classes=frozenset({TENSOR_CORE, op}), in_dtype=a, acc_dtype=acc,
                  out_dtype=acc, flops=0 if integer else work, int_ops=work if integer else 0,
                  scope=Scope.WARPGROUP if group else Scope.WARP, bytes=nbytes, space=space,
                  shape=shape, extra=extra)
