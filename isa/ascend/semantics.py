"""Facts about Ascend-like instructions as :class:`isa.semantics.OpInfo` (pipe, dtypes, work, traffic).

Everything is read from the opcode table (:mod:`isa.ascend.opcodes`) and small per-family
functions; work and bytes are counted per instruction (``Scope.INSTRUCTION``) when the count
operands are immediates, else left at 0 (they are only known when the kernel runs)::

    mad.f16 l0c[0], l0a[0], l0b[0], 128, 64, 256, 0, 0, 0, 1

    OpInfo(family='mad', unit=Unit.CUBE, in_dtype='f16', acc_dtype='f32', flops=4194304,
           scope=Scope.INSTRUCTION, space='l0a,l0b->l0c', shape=(128, 256, 64))
"""

from __future__ import annotations

from ..ir import Address, Immediate, Instruction
from ..semantics import OpInfo, Scope, Unit
from ..types import FLOAT_TYPES, type_bytes
from .opcodes import OPCODES

PIPE_UNIT = {"S": Unit.SCALAR, "V": Unit.VECTOR, "M": Unit.CUBE, "MTE1": Unit.MTE1, "MTE2": Unit.MTE2,
             "MTE3": Unit.MTE3, "FIX": Unit.FIXPIPE, "SYNC": Unit.SYNC}
ACCUMULATOR = {"f16": "f32", "bf16": "f32", "f32": "f32", "s8": "s32"}
QUANT_OUT = {"NoQuant": None, "F322F16": "f16", "F322BF16": "bf16", "DEQF16": "f16", "VDEQF16": "f16",
             "REQ8": "s8", "VREQ8": "s8", "QF322B8_PRE": "s8", "VQF322B8_PRE": "s8"}


#: Every class name ``describe`` can give, for expectations such as ``validate-kernel --expect 'CUBE>=1'``.
CLASSES = frozenset(
    {"CUBE", "FIXPIPE", "MTE1", "MTE2", "MTE3", "VECTOR", "SYNC", "SCALAR"}
    | {f"CUBE_{dt.upper()}" for dt in ACCUMULATOR}
    | {f"VECTOR_{dt.upper()}" for dt in ("f16", "bf16", "f32", "s16", "s32", "u16", "u32", "s8", "u8")}
)


#: the vector families, whose work is per lane of each repeat: lanes a mask turns off are counted
#: here (the tables see the operands only); ``sim.ascend.scalar`` applies the mask state
VECTOR_FAMILIES = frozenset({"vbinary", "vscalar", "vunary", "vconv", "vdup", "vreduce", "vgreduce"})


def repeat_operand(family: str) -> int:
    """Which operand of a vector instruction is its repeat count."""
    return 2 if family in ("vunary", "vconv", "vdup", "vreduce", "vgreduce") else 3


def _imm(ins: Instruction, i: int) -> int | None:
    op = ins.operands[i] if i < len(ins.operands) else None
    return int(op.value) if isinstance(op, Immediate) and op.kind == "int" else None


def _prod(*xs):
    out = 1
    for x in xs:
        if x is None:
            return 0
        out *= x
    return out


def _path(ins: Instruction) -> str | None:
    spaces = [o.space for o in ins.operands if isinstance(o, Address)]
    if len(spaces) >= 2:
        return f"{spaces[1]}->{spaces[0]}"
    return spaces[0] if spaces else None


def _copy_bytes(ins: Instruction) -> int:
    fam = OPCODES[ins.opcode].family
    if fam == "nd2nz":
        nd, n, d = _imm(ins, 3), _imm(ins, 4), _imm(ins, 5)
        size = {"b8": 1, "b16": 2, "b32s": 4}[ins.opcode.rsplit("_", 1)[1]]
        return _prod(nd, n, d) * size
    if fam == "copy_align":
        return _prod(_imm(ins, 3), _imm(ins, 4))
    if ins.opcode == "copy_cbuf_to_fbuf":
        return _prod(_imm(ins, 2), _imm(ins, 3)) * 32
    return _prod(_imm(ins, 3), _imm(ins, 4)) * 32


def describe(ins: Instruction) -> OpInfo:
    """The :class:`OpInfo` of one Ascend-like instruction."""
    spec = OPCODES.get(ins.opcode)
    if spec is None:
        return OpInfo(family="unknown", unit=Unit.SCALAR, known=False, scope=Scope.INSTRUCTION)
    unit = PIPE_UNIT[spec.pipe]
    fam = spec.family
    mods = ins.modifiers
    extra = {"pipe": spec.pipe}
    if fam == "mad":
        dt = mods[0]
        m, k, n = _imm(ins, 3), _imm(ins, 4), _imm(ins, 5)
        work = 2 * _prod(m, k, n)
        is_float = dt in FLOAT_TYPES
        return OpInfo(family="mad", unit=unit, classes=frozenset({"CUBE", f"CUBE_{dt.upper()}"}), in_dtype=dt,
                      acc_dtype=ACCUMULATOR[dt], out_dtype=ACCUMULATOR[dt], flops=work if is_float else 0,
                      int_ops=0 if is_float else work, scope=Scope.INSTRUCTION, space="l0a,l0b->l0c",
                      shape=(m, n, k) if None not in (m, n, k) else None, extra=extra)
    if fam in ("copy", "nd2nz", "copy_align", "load2d", "load2d_t"):
        path = _path(ins)
        if fam in ("load2d", "load2d_t"):
            nbytes = _prod(_imm(ins, 3)) * 512 * (2 if fam == "load2d_t" else 1)
        else:
            nbytes = _copy_bytes(ins)
        src, _, dst = (path or "").partition("->")
        cls = {"MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3", "FIX": "FIXPIPE", "V": "VECTOR"}[spec.pipe]
        return OpInfo(family=fam, unit=unit, classes=frozenset({cls}), scope=Scope.INSTRUCTION, bytes=nbytes,
                      space=path, is_load=src == "gm", is_store=dst == "gm", extra=extra)
    if fam == "load3d":
        nbytes = _prod(_imm(ins, 2), _imm(ins, 3)) * type_bytes(mods[0])
        return OpInfo(family=fam, unit=unit, classes=frozenset({"MTE1"}), scope=Scope.INSTRUCTION, bytes=nbytes,
                      space="l1->l0a", extra=extra)
    if fam == "fixpipe":
        quant = ins.operands[8].name
        out = QUANT_OUT.get(quant) or mods[0]
        n, m = _imm(ins, 3), _imm(ins, 4)
        return OpInfo(family="fixpipe", unit=unit, classes=frozenset({"FIXPIPE"}), in_dtype=mods[0], out_dtype=out,
                      scope=Scope.INSTRUCTION, bytes=_prod(n, m) * type_bytes(out), space="l0c->gm", is_store=True,
                      extra=extra | {"quant": quant})
    if fam in VECTOR_FAMILIES:
        if fam == "vconv":
            src_t, dst_t = mods[0], mods[1]
            dt = dst_t
            lanes = 256 // max(type_bytes(src_t), type_bytes(dst_t))
            rounding = {"r": "rn", "a": "rna", "f": "rm", "c": "rp", "z": "rz", "o": "ro"}.get(mods[2]) \
                if len(mods) > 2 else None
        else:
            src_t = dt = mods[0]
            lanes = 256 // type_bytes(dt)
            rounding = None
        repeat = _imm(ins, repeat_operand(fam))
        elems = _prod(repeat) * lanes
        per = {"vbinary": 1, "vscalar": 1, "vunary": 1, "vconv": 0, "vdup": 0, "vreduce": 1, "vgreduce": 1}[fam]
        is_float = dt in FLOAT_TYPES
        nsrc = {"vbinary": 2, "vdup": 0}.get(fam, 1)
        nbytes = elems * (type_bytes(src_t) * nsrc + (type_bytes(dt) if fam not in ("vreduce", "vgreduce") else 0))
        return OpInfo(family=fam, unit=unit, classes=frozenset({"VECTOR", f"VECTOR_{dt.upper()}"}), in_dtype=src_t,
                      out_dtype=dt, flops=elems * per if is_float else 0, int_ops=0 if is_float else elems * per,
                      scope=Scope.INSTRUCTION, bytes=nbytes, space="ub", rounding=rounding,
                      extra=extra | {"lanes": lanes})
    if fam == "sync":
        return OpInfo(family=ins.opcode, unit=unit, classes=frozenset({"SYNC"}), scope=Scope.INSTRUCTION,
                      extra=extra | {"pipes": tuple(o.name for o in ins.operands if hasattr(o, "name")
                                                    and o.name.startswith("PIPE_"))})
    if fam == "scalar_load":
        return OpInfo(family="scalar_load", unit=unit, classes=frozenset({"SCALAR"}), in_dtype=mods[0],
                      scope=Scope.INSTRUCTION, bytes=type_bytes(mods[0]), space="ub", is_load=True, extra=extra)
    return OpInfo(family=fam, unit=unit, classes=frozenset({"SCALAR"}), scope=Scope.INSTRUCTION,
                  in_dtype=mods[0] if mods and mods[0] in FLOAT_TYPES else None, extra=extra)
