"""SASS instructions and modules back to listing text (the spelling nvdisasm uses).

    >>> from isa.sass.parser import parse
    >>> m = parse('.section .text.k,"ax",@progbits\\n/*0000*/ @!P0 LDS.128 R4, [R19+0x10] ;\\n')
    >>> str(m.functions[0].instructions[0])
    '@!P0 LDS.128 R4, [R19+0x10] ;'

``parse(emit_module(m))`` equals ``m`` (offsets are renumbered 16 bytes apart).
"""

from __future__ import annotations

from .. import ir


def _hex(v: int) -> str:
    return f"-0x{-v:x}" if v < 0 else f"0x{v:x}"


def emit_operand(op) -> str:
    t = type(op)
    if t is ir.Register:
        return op.name if op.component is None else f"{op.name}.{op.component}"
    if t is ir.Immediate:
        if op.text is not None:
            return op.text
        return _hex(op.value) if op.kind == "int" else repr(op.value)
    if t is ir.Symbol:
        return f"`({op.name})"
    if t is ir.Expression:                 # a relocation: 32@lo((k + .L_x_0@srel))
        return op.text
    if t is ir.Negated:
        return "!" + emit_operand(op.operand)
    if t is ir.Modified:
        inner = emit_operand(op.operand)
        if op.op == "|":
            return f"|{inner}|" + (f".{op.suffix}" if op.suffix else "")
        return op.op + inner
    if t is ir.Address:
        terms = [emit_operand(x) for x in (op.base, op.index) if x is not None]
        if op.offset or not terms:
            terms.append(_hex(op.offset))
        return (op.space or "") + "[" + "+".join(terms) + "]" + (f".{op.suffix}" if op.suffix else "")
    raise TypeError(f"not a SASS operand: {op!r}")  # pragma: no cover


def emit_instruction(ins: ir.Instruction) -> str:
    guard = ""
    if ins.guard is not None:
        guard = "@" + ("!" if ins.guard.negated else "") + ins.guard.register + " "
    ops = ", ".join(emit_operand(o) for o in ins.operands)
    return f"{guard}{ins.full_opcode}{' ' + ops if ops else ''} ;"


def emit_module(module: ir.Module) -> str:
    out = []
    if module.target:
        out.append(f"\t.target\t{module.target}")
    for fn in module.functions:
        out.append(f"\t.section\t.text.{fn.name},\"ax\",@progbits")
        if fn.is_kernel:
            out.append(f"\t.other\t{fn.name},@\"STO_CUDA_ENTRY STV_DEFAULT\"")
        out.append(f"{fn.name}:")
        pc = 0
        last = None
        for s in fn.body or ():
            if isinstance(s, ir.Label):
                out.append(f"{s.name}:")
                continue
            if s.loc is not None and s.loc != last:
                fname = ".nv_debug_ptx_txt" if s.loc.file == 0 else "source"
                out.append(f'\t//## File "{fname}", line {s.loc.line}')
            last = s.loc
            out.append(f"        /*{pc:04x}*/  {emit_instruction(s)}")
            pc += 16
    return "\n".join(out) + "\n"
