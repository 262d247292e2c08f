"""Calls and generic addresses: what the analyzer needs to count a kernel through the functions it
calls, and to give generic ``ld``/``st``/``atom``/``red`` their state space where it is known.

Code that is not inlined (``nvcc -G``, clang at -O0, libdevice or Numba helpers) calls device
functions for ``__shfl_down_sync`` and ``atomicAdd`` and addresses memory generically::

    ld.param.u64    %rd1, [_Z6reducePKfPfi_param_0];     a kernel's pointer parameter: global
    add.s64         %rd5, %rd1, %rd4;                     pointer + offset: still global
    ld.f32          %f1, [%rd5];                          -> counted as a global load
    st.param.b64    [param0+0], %rd6;                     the argument of ...
    call.uni (retval0), _Z9atomicAddPff, (param0, param1); ... whose ``atom.add.f32 [%rd1]`` is global

:func:`call_sites` finds the calls whose callee has a body; :class:`AddressOrigins` follows an
address register back through its reaching definitions to where it came from: ``cvta.SPACE`` /
``cvta.to.SPACE`` (SPACE), a kernel's ``.param`` (global: CUDA passes pointers into global
memory), a function's ``.param`` (what the caller passed, when every path agrees), ``mov`` of a
variable (the variable's space), and ``add``/``sub``/``mad``/``mov``/``cvt``/``selp``/bitwise
operations of one such pointer with integers.  Anything else (a pointer loaded from memory, a
returned pointer) stays generic.
"""

from __future__ import annotations

from dataclasses import dataclass

from isa.ir import Address, Function, Immediate, Instruction, Module, OperandList, Register, Symbol, Variable

#: state spaces a generic address can be resolved to
SPACES = ("global", "shared", "local", "const", "param")

#: deepest call chain expanded into a kernel's counts (deeper calls are counted at their call site only)
MAX_CALL_DEPTH = 8

_NOT_ADDRESS = "not-an-address"      # an integer (index, size, immediate): joins with any pointer
_UNKNOWN = "unknown"                 # a pointer of unknown origin
_PENDING = "pending"                 # being computed (a loop): neutral in joins

#: opcodes whose result is a pointer when one operand is (pointer arithmetic, copies, selects)
_PROPAGATE = frozenset({"add", "sub", "mad", "mov", "cvt", "cvta", "selp", "and", "or", "xor", "min", "max"})

#: memory instructions with a state space modifier, and which operand is the address
_ADDRESSED = {"ld": 1, "st": 0, "atom": 1, "red": 0}


def call_target(ins: Instruction) -> str | None:
    """The callee of a direct ``call`` (``call.uni (retval0), f, (param0, param1);`` -> ``'f'``)."""
    if ins.opcode != "call":
        return None
    ops = [o for o in ins.operands if not isinstance(o, OperandList)]
    return ops[0].name if ops and isinstance(ops[0], Symbol) else None


def call_arguments(ins: Instruction) -> list[str]:
    """The caller's ``.param`` slots passed by a call, in order: the parenthesised list after the
    callee (``call.uni (retval0), f, (param0, param1);`` -> ``['param0', 'param1']``)."""
    after_callee = False
    for o in ins.operands:
        if isinstance(o, OperandList) and after_callee:
            return [x.name for x in o.items if isinstance(x, (Symbol, Register))]
        if not isinstance(o, OperandList):
            after_callee = True
    return []


def function_bodies(module: Module) -> dict[str, Function]:
    """Name -> device function with a body (a ``.weak`` or prototype declaration gives way to it)."""
    return dict(module.device_functions)


def is_generic_access(ins: Instruction) -> bool:
    """Whether a memory instruction addresses generically (no state space among its modifiers)."""
    if ins.opcode not in _ADDRESSED:
        return False
    return not any(m.split("::")[0] in SPACES for m in ins.modifiers)


def generic_accesses(instructions: list[Instruction]) -> list[int]:
    """The indices of the instructions that :func:`is_generic_access` takes (asked only of the
    memory opcodes: one set lookup for every other instruction)."""
    return [k for k, ins in enumerate(instructions) if ins.opcode in _ADDRESSED and is_generic_access(ins)]


def address_operand(ins: Instruction) -> Address | None:
    """The memory operand of ``ld``/``st``/``atom``/``red`` (its position by opcode), else the first one."""
    k = _ADDRESSED.get(ins.opcode)
    ops = ins.operands
    if k is None or len(ops) <= k or not isinstance(ops[k], Address):
        return next((o for o in ops if isinstance(o, Address)), None)
    return ops[k]


def _bits(ins: Instruction) -> int:
    for m in reversed(ins.modifiers):
        if m[:1] in "subf" and m[1:].isdigit():
            return int(m[1:])
    return 64


@dataclass
class AddressOrigins:
    """Where the address registers of one function point (see the module docstring)."""

    fn: Function
    flow: object                       # analyzer.dataflow.Dataflow of ``fn``
    module: Module
    param_spaces: dict[str, str]       # this function's .param name -> space of the pointer passed

    def __post_init__(self) -> None:
        self._memo: dict[int, str] = {}
        self._vars = dict(self.module.variable_spaces)
        self._vars.update({v.name: v.space for v in _walk_variables(self.fn)})

    # ---- public -----------------------------------------------------------------------------

    def space_of(self, k: int) -> str | None:
        """The state space the generic memory instruction ``k`` addresses, or None if unknown."""
        ins = self.fn.instructions[k]
        addr = address_operand(ins)
        if addr is None:
            return None
        base = addr.base
        if isinstance(base, Symbol) or (isinstance(base, Register) and self._is_variable(ins, base.name)):
            s = self._vars.get(base.name)
            return s if s in SPACES else None
        if isinstance(base, Register):
            o = self.register_origin(ins, base.name, k)
            return o if o in SPACES else None
        return None

    def register_origin(self, ins: Instruction, name: str, at: int) -> str:
        key = self.fn.register_key(name, ins.scope)
        defs = self.flow.reaching(key, at)
        if not defs:                        # a special register (%laneid) or a .reg parameter
            return _NOT_ADDRESS
        return self._join(self.def_origin(d) for d in defs)

    def slot_origin(self, slot: str, call_at: int) -> str | None:
        """Space of the pointer stored into the caller's ``.param`` slot before the call at ``call_at``."""
        ins = self.fn.instructions
        for j in range(call_at - 1, max(-1, call_at - 200), -1):
            i = ins[j]
            if i.opcode == "call":
                break
            if i.opcode == "st" and "param" in i.modset and isinstance(i.operands[0], Address):
                a = i.operands[0]
                if isinstance(a.base, Symbol) and a.base.name == slot and a.offset == 0:
                    v = i.operands[1]
                    if isinstance(v, Register):
                        o = self.register_origin(i, v.name, j)
                        return o if o in SPACES else None
                    return None
        return None

    # ---- the lattice ------------------------------------------------------------------------

    @staticmethod
    def _join(origins) -> str:
        seen = {o for o in origins if o != _PENDING}
        spaces = seen - {_NOT_ADDRESS}
        if not seen:
            return _PENDING
        if not spaces:
            return _NOT_ADDRESS
        return next(iter(spaces)) if len(spaces) == 1 and _UNKNOWN not in spaces else _UNKNOWN

    def _is_variable(self, ins: Instruction, name: str) -> bool:
        """A name written like a register that is a variable (``mov.u64 %rd1, smem`` parses ``smem``
        as a register): it names a variable and no instruction defines it."""
        return name in self._vars and self.fn.register_key(name, ins.scope) not in self.flow._reg_mask

    def def_origin(self, d: int) -> str:
        hit = self._memo.get(d)
        if hit is not None:
            return hit
        self._memo[d] = _PENDING
        v = self._evaluate(d)
        self._memo[d] = v
        return v

    def _evaluate(self, d: int) -> str:
        ins = self.fn.instructions[d]
        op, mods, ops = ins.opcode, ins.modset, ins.operands
        if op == "cvta":
            s = next((m for m in ins.modifiers if m in SPACES), None)
            return s or _UNKNOWN
        if op == "ld" and "param" in mods:
            a = ops[1] if len(ops) > 1 else None
            if _bits(ins) < 64:
                return _NOT_ADDRESS
            if isinstance(a, Address) and isinstance(a.base, (Symbol, Register)):
                name = a.base.name
                if self.fn.is_kernel and any(p.name == name for p in self.fn.params):
                    return "global"
                return self.param_spaces.get(name, _UNKNOWN)
            return _UNKNOWN
        if op in ("ld", "ldu", "atom", "shfl", "shfl.sync", "prmt", "red"):
            return _NOT_ADDRESS if _bits(ins) < 64 else _UNKNOWN
        if op in _PROPAGATE:
            srcs = ops[1:3] if op == "selp" else ops[1:]
            out = []
            for o in srcs:
                if isinstance(o, Register):
                    if o.component is not None:
                        out.append(_NOT_ADDRESS)              # %tid.x, v.x: not a pointer
                    elif self._is_variable(ins, o.name):
                        s = self._vars.get(o.name)
                        out.append(s if s in SPACES else _NOT_ADDRESS)
                    else:
                        out.append(self.register_origin(ins, o.name, d))
                elif isinstance(o, Symbol):
                    s = self._vars.get(o.name)
                    out.append(s if s in SPACES else _NOT_ADDRESS)
                elif isinstance(o, Immediate):
                    out.append(_NOT_ADDRESS)
            return self._join(out) if out else _NOT_ADDRESS
        return _NOT_ADDRESS


def _walk_variables(fn: Function):
    return fn.variables
