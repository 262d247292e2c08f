"""IR -> Ascend-like assembly text, in canonical layout (parsing it again gives an equal IR)::

    .kernel add_f16 .vector (.gm .f16 %x[4096], .gm .f16 %y[4096])
    {
        copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 256, 0, 0
    loop:
        @!%p0 bra loop
    }
"""

from __future__ import annotations

import math

from .. import ir
from .opcodes import spelled_opcode


def emit_operand(op: ir.Operand) -> str:
    if isinstance(op, ir.Register):
        return op.text
    if isinstance(op, ir.Symbol):
        return op.name
    if isinstance(op, ir.Immediate):
        if op.kind == "int":
            return op.text if op.text is not None else str(op.value)
        v = float(op.value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if ("." in r or "e" in r) else r + ".0"
    if isinstance(op, ir.Address):
        if op.base is None:
            inner = str(op.offset)
        elif op.offset:
            inner = f"{op.base.text}{'+' if op.offset > 0 else '-'}{abs(op.offset)}"
        else:
            inner = op.base.text
        return f"{op.space}[{inner}]"
    raise TypeError(f"cannot emit operand {op!r} in Ascend-like assembly")


def emit_instruction(ins: ir.Instruction) -> str:
    text = spelled_opcode(ins.opcode, ins.modifiers)
    if ins.guard is not None:
        text = f"@{'!' if ins.guard.negated else ''}{ins.guard.register} {text}"
    if ins.operands:
        text += " " + ", ".join(emit_operand(o) for o in ins.operands)
    return text


def emit_param(v: ir.Variable) -> str:
    if v.space == "gm":
        return f".gm .{v.type} {v.name}[{v.dims[0]}]"
    return f".{v.type} {v.name}"


def emit_function(f: ir.Function) -> str:
    core = f.attributes[0] if f.attributes else "cube"
    params = ", ".join(emit_param(p) for p in f.params)
    out = [f".kernel {f.name} .{core} ({params})", "{"]
    for s in f.body or ():
        if isinstance(s, ir.Label):
            out.append(f"{s.name}:")
        elif isinstance(s, ir.Instruction):
            out.append("    " + emit_instruction(s))
    out.append("}")
    return "\n".join(out)


def emit_module(module: ir.Module) -> str:
    out = []
    for item in module.items:
        if isinstance(item, ir.Directive):
            out.append(f".{item.name} {item.args}".rstrip())
        elif isinstance(item, ir.Function):
            if out:
                out.append("")
            out.append(emit_function(item))
    return "\n".join(out) + "\n"
