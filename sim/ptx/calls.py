"""Device-function calls: linking a kernel with the functions it reaches, and call frames.

nvcc passes arguments and results through ``.param`` variables of a call sequence::

    { // callseq 7, 0
    .param .b32 param0;
    st.param.f32 	[param0+0], %f6;
    .param .b32 retval0;
    call.uni (retval0), fmaf, (param0, param1, param2);
    ld.param.f32 	%f4, [retval0+0];
    } // callseq 7

The simulator links the kernel and every device function it can reach into one program (the
kernel first, then each function at a fixed pc offset); each function keeps its own registers,
``.local`` depot and ``.param`` slots (formal parameters, ``func_retval0`` and the call-sequence
``param0``/``retval0`` of its own calls) at fixed offsets of per-thread memory. ``call`` copies the
caller's argument slots into the callee's formal parameters and pushes a *frame*: a stack entry at
the callee's first instruction, above the caller's entry that waits at the instruction after the
call. ``ret`` in a function removes its threads from the frame's entries; when the frame's last
entry is gone, the caller's ``retval`` slots receive ``func_retval0`` and the caller goes on.
A function called while it is already on the frame stack (recursion) has its registers, depot and
slots saved at the call and restored at the return.

Indirect calls (``call (retval0), %rd10, (param0, param1), prototype_7;``) take the function
from the address in the register: every function has an address (``mov.u64 %rd8, f;``,
``.global .u64 table[2] = {f_a, f_b};``); threads with different targets run one frame each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from isa import ir

FUNC_BASE = 0x6000_0000_0000      # device-function "addresses" (not in any memory window)
FUNC_STRIDE = 16


def function_table(module: ir.Module) -> dict[str, ir.Function]:
    """Name -> defined function (a ``.weak``/prototype declaration is replaced by its body)."""
    out: dict[str, ir.Function] = {}
    for f in module.functions:
        if f.body is not None or f.name not in out:
            out[f.name] = f
    return out


def function_addresses(module: ir.Module) -> dict[str, int]:
    """Every device function's address, for ``mov.u64 %rd, f`` and initialisers naming ``f``."""
    names = [n for n, f in function_table(module).items() if not f.is_kernel]
    return {n: FUNC_BASE + FUNC_STRIDE * i for i, n in enumerate(names)}


def _names_used(fn: ir.Function) -> set[str]:
    out = set()
    for ins in fn.instructions:
        for o in ins.operands:
            for x in (o.items if isinstance(o, ir.OperandList) else (o,)):
                if isinstance(x, (ir.Symbol, ir.Register)):
                    out.add(x.name)
                elif isinstance(x, ir.Expression):
                    out.update(re.findall(r"[A-Za-z_$%][\w$]*", x.text))
    return out


def _initializer_names(module: ir.Module) -> set[str]:
    out = set()
    for v in module.variables:
        stack = [v.initializer]
        while stack:
            x = stack.pop()
            if isinstance(x, (tuple, list)):
                stack.extend(x)
            elif isinstance(x, ir.Expression):
                out.update(re.findall(r"[A-Za-z_$%][\w$]*", x.text))
            elif isinstance(x, ir.Symbol):
                out.add(x.name)
    return out


def reachable_functions(module: ir.Module, kernel: ir.Function) -> list[ir.Function]:
    """Device functions (with bodies) that ``kernel`` can call, directly or through addresses it
    takes; functions named in module initialisers join when an indirect call exists."""
    table = {n: f for n, f in function_table(module).items() if not f.is_kernel and f.body is not None}
    order: list[str] = []
    todo = [kernel]
    indirect = False
    init_names = None
    seen = set()
    while todo:
        f = todo.pop()
        used = _names_used(f)
        if not indirect and any(i.opcode == "call" and len(_call_parts(i)[1:2]) and
                                isinstance(_call_parts(i)[1], ir.Register) for i in f.instructions):
            indirect = True
            if init_names is None:
                init_names = _initializer_names(module)
            used |= init_names
        for n in sorted(used):
            g = table.get(n)
            if g is not None and n not in seen:
                seen.add(n)
                order.append(n)
                todo.append(g)
    return [table[n] for n in order]


def _call_parts(ins: ir.Instruction):
    """(return list, callee operand, argument list, prototype) of a ``call``."""
    ops = list(ins.operands)
    rets = ()
    if ops and isinstance(ops[0], ir.OperandList):
        rets = ops[0].items
        ops = ops[1:]
    callee = ops[0] if ops else None
    args = ()
    rest = ops[1:]
    if rest and isinstance(rest[0], ir.OperandList):
        args = rest[0].items
        rest = rest[1:]
    proto = rest[0] if rest else None
    return rets, callee, args, proto


def call_parts(ins: ir.Instruction):
    return _call_parts(ins)


def call_graph_cycles(functions: dict[str, ir.Function]) -> set[str]:
    """Functions that can reach themselves through direct calls: the members of the call graph's
    strongly connected components that hold a cycle (Tarjan's algorithm, iterative)."""
    succ: dict[str, list[str]] = {}
    for n, f in functions.items():
        succ[n] = [c.name for ins in f.instructions if ins.opcode == "call"
                   for c in (_call_parts(ins)[1],) if isinstance(c, ir.Symbol) and c.name in functions]
    return cyclic_nodes(succ)


def cyclic_nodes(succ: dict[str, list[str]]) -> set[str]:
    """The nodes of the graph ``succ`` (node -> successors) that lie on a cycle (a self-loop
    included): the members of its strongly connected components that hold a cycle."""
    out: set[str] = set()
    if not any(succ.values()):
        return out
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in succ:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:  # v roots a component: pop it
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in succ[v]:
                    out |= comp
            if work:  # back in the caller: fold the callee's low-link into it
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return out


@dataclass
class FunctionInfo:
    """One function of the linked program: where its code, slots and registers are."""

    fid: int
    fn: ir.Function
    base: int                                  # pc of its first instruction
    symbols: dict = field(default_factory=dict)     # (scope id, name) -> (space, offset)
    sizes: dict = field(default_factory=dict)       # (scope id, name) -> bytes of a .param slot
    params: tuple = ()                         # formal parameters: (offset, size)
    returns: tuple = ()                        # func_retval slots: (offset, size)
    local_range: tuple[int, int] = (0, 0)
    param_range: tuple[int, int] = (0, 0)
    recursive: bool = False


@dataclass
class Frame:
    """A call in progress: the stack index of the callee's first entry and what to do at return."""

    base: int
    lanes: np.ndarray
    copies: tuple                              # (callee retval offset, caller retval offset, size)
    saved: tuple | None = None                 # recursion: saved registers and memory
    info: FunctionInfo | None = None           # the callee
    reg_copies: tuple = ()                     # .reg results: (callee register reader, caller writer)
