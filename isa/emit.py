"""IR -> PTX text.

The output is canonical (one statement per line, tabs as nvcc writes them) rather than a copy
of the input layout, and ``ptxas`` accepts it for the module's own target. Parsing it again gives
an equal IR::

    mov.u32 	%r1, %tid.x;
    @%p1 bra 	$L__BB0_2;
"""

from __future__ import annotations

from . import ir


def emit_operand(op: ir.Operand) -> str:
    if isinstance(op, ir.Register):
        return op.text
    if isinstance(op, ir.Immediate):
        return op.spelled()
    if isinstance(op, ir.Symbol):
        return op.name
    if isinstance(op, ir.Expression):
        return op.text
    if isinstance(op, ir.Address):
        inner = emit_operand(op.base) if op.base is not None else ""
        if op.offset or op.base is None:
            if inner:
                inner += f"+{op.offset}"
            else:
                inner = str(op.offset)
        if op.coords is not None:
            inner += ", " + emit_operand(op.coords)
        text = f"[{inner}]"
        if op.space:
            text = f"{op.space}{text}"
        if op.suffix:
            text += f".{op.suffix}"
        return text
    if isinstance(op, ir.Vector):
        return "{" + ", ".join(emit_operand(e) for e in op.elements) + "}"
    if isinstance(op, ir.Sink):
        return "_"
    if isinstance(op, ir.Pair):
        return f"{emit_operand(op.first)}|{emit_operand(op.second)}"
    if isinstance(op, ir.Negated):
        return "!" + emit_operand(op.operand)
    if isinstance(op, ir.Modified) and op.op == "-":
        return "-" + emit_operand(op.operand)
    if isinstance(op, ir.Sum):
        sign = "-" if op.offset < 0 else "+"
        return f"{emit_operand(op.base)}{sign}{abs(op.offset)}"
    if isinstance(op, ir.OperandList):
        return "(" + ", ".join(emit_operand(e) for e in op.items) + ")"
    raise TypeError(f"not an operand: {op!r}")


def emit_instruction(ins: ir.Instruction) -> str:
    text = ins.full_opcode
    if ins.guard is not None:
        text = f"@{'!' if ins.guard.negated else ''}{ins.guard.register} {text}"
    if ins.operands:
        text += " \t" + ", ".join(emit_operand(o) for o in ins.operands)
    return text + ";"


def _dims(dims: tuple) -> str:
    return "".join(f"[{'' if d is None else d}]" for d in dims)


def _init(value) -> str:
    if isinstance(value, tuple):
        return "{" + ", ".join(_init(v) for v in value) + "}"
    return emit_operand(value)


def emit_variable(v: ir.Variable) -> str:
    parts = [f".{link}" for link in v.linkage] + [f".{v.space}"]
    if v.align is not None:
        parts.append(f".align {v.align}")
    if v.vector:
        parts.append(f".{v.vector}")
    parts.append(f".{v.type}")
    text = " ".join(parts) + f" {v.name}{_dims(v.dims)}"
    if v.initializer is not None:
        text += " = " + _init(v.initializer)
    return text + ";"


def emit_param(p: ir.Variable) -> str:
    parts = [".reg" if p.space == "reg" else ".param"]
    if p.align is not None:
        parts.append(f".align {p.align}")
    if p.vector:
        parts.append(f".{p.vector}")
    parts.append(f".{p.type}")
    if p.ptr:
        parts.append(".ptr")
        if p.ptr_space:
            parts.append(f".{p.ptr_space}")
        if p.ptr_align is not None:
            parts.append(f".align {p.ptr_align}")
    return " ".join(parts) + f" {p.name}{_dims(p.dims)}"


def _regdecl(d: ir.RegisterDecl) -> str:
    types = (f".{d.vector} " if d.vector else "") + f".{d.type}"
    if d.count is not None:
        return f".reg {types} {d.names[0]}<{d.count}>;"
    return f".reg {types} " + ", ".join(d.names) + ";"


def _loc(loc: ir.SourceLoc) -> str:
    text = f".loc\t{loc.file} {loc.line} {loc.col}"
    if loc.function_name is not None:
        text += f", function_name {loc.function_name}"
    if loc.inlined_at is not None:
        text += ", inlined_at " + " ".join(str(x) for x in loc.inlined_at)
    return text


def _body(stmts, depth: int, out: list[str]) -> None:
    pad = "\t" * depth
    for s in stmts:
        if isinstance(s, ir.Instruction):
            out.append(pad + emit_instruction(s))
        elif isinstance(s, ir.Label):
            out.append(f"{s.name}:")
        elif isinstance(s, ir.RegisterDecl):
            out.append(pad + _regdecl(s))
        elif isinstance(s, ir.Variable):
            out.append(pad + emit_variable(s))
        elif isinstance(s, ir.Loc):
            out.append(pad + _loc(s.loc))
        elif isinstance(s, ir.Pragma):
            out.append(pad + f".pragma {s.text};")
        elif isinstance(s, ir.Directive):
            if s.name in ("callprototype", "calltargets", "branchtargets"):
                name, rest = s.args.split(":", 1)
                out.append(pad + f"{name}: .{s.name} {rest.strip()};")
            else:
                out.append(pad + f".{s.name} {s.args};")
        elif isinstance(s, ir.Scope):
            out.append(pad + "{")
            _body(s.body, depth + 1, out)
            out.append(pad + "}")
        else:  # pragma: no cover - the IR has no other statement kinds
            raise TypeError(f"not a statement: {s!r}")


def emit_function(f: ir.Function) -> str:
    out: list[str] = []
    head = " ".join(f".{link}" for link in f.linkage)
    head = (head + " " if head else "") + (".entry" if f.is_kernel else ".func")
    if f.returns:
        head += " (" + ", ".join(emit_param(p) for p in f.returns) + ")"
    head += f" {f.name}"
    out.append(head + "(")
    out.append(",\n".join("\t" + emit_param(p) for p in f.params))
    out.append(")")
    for attr in f.attributes:
        out.append(f".{attr}")
    for name, values in f.directives:
        if name == "pragma":
            out.append(f".pragma {values[0]};")
        else:
            out.append(f".{name} " + ", ".join(str(v) for v in values) if values else f".{name}")
    if f.body is None:
        out.append(";")
    else:
        out.append("{")
        _body(f.body, 1, out)
        out.append("}")
    return "\n".join(line for line in out if line != "")


def _section(s: ir.Section) -> str:
    out = [f"\t.section\t{s.name}", "\t{"]
    for e in s.entries:
        if e.kind == "label":
            out.append(f"{e.label}:")
        else:
            out.append(f".{e.type} " + ",".join(emit_operand(v) for v in e.values))
    out.append("\t}")
    return "\n".join(out)


def emit_module(m: ir.Module) -> str:
    out = emit_header(m)
    for item in m.items:
        out += emit_item(item)
    return "\n".join(out) + "\n"


def emit_header(m: ir.Module) -> list[str]:
    """The lines of the module's ``.version``/``.target``/``.address_size`` header and the blank after it."""
    out = [f".version {m.version}", ".target " + ", ".join(m.targets)]
    if m.address_size is not None:
        out.append(f".address_size {m.address_size}")
    out.append("")
    return out


def emit_item(item) -> list[str]:
    """The lines one module-level item is written as (a function is followed by a blank line)."""
    if isinstance(item, ir.Function):
        return [emit_function(item), ""]
    if isinstance(item, ir.Variable):
        return [emit_variable(item)]
    if isinstance(item, ir.FileEntry):
        extra = ""
        if item.timestamp is not None:
            extra = f", {item.timestamp}" + (f", {item.size}" if item.size is not None else "")
        name = item.name.replace("\\", "\\\\").replace('"', '\\"')
        return [f'.file\t{item.index} "{name}"{extra}']
    if isinstance(item, ir.Section):
        return [_section(item)]
    if isinstance(item, ir.Pragma):
        return [f".pragma {item.text};"]
    raise TypeError(f"not a module item: {item!r}")  # pragma: no cover
