"""Which registers a PTX instruction reads and writes, as tables keyed by canonical opcode.

The analyzer's reaching definitions and the timing model's scoreboard both read these facts
(:func:`isa.semantics.registers`); neither decides for itself which operand is a destination::

    fma.rn.f32 %f5, %f3, %f4, %f5;            writes %f5; reads %f3 %f4 %f5
    setp.lt.s32 %p1|%p2, %r1, %r2;            writes %p1 %p2; reads %r1 %r2
    @%p1 st.global.f32 [%rd4+8], %f1;         writes nothing; reads %p1 %rd4 %f1
    wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%f1, ..., %f32}, %rd5, %rd6, p, 1, 1, 0, 1;
                                              writes %f1..%f32 (D) and reads them (accumulates), %rd5 %rd6

Rules: the first operand is the destination unless the opcode is in :data:`NO_DEST` (stores,
reductions, branches, fences, async copies, ...); :data:`ACCUMULATES` marks destinations that are
also read; a few opcodes write only under some modifiers (:func:`_writes`). Special registers
(``%tid.x``, ``%clock``) and sinks (``_``) are neither read nor written here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Address, Immediate, Instruction, Negated, OperandList, Pair, Register, Symbol, Vector
from . import opcodes

#: canonical opcodes whose first operand is not a register written by the instruction
NO_DEST = frozenset({
    "bra", "brx.idx", "ret", "exit", "trap", "call", "brkpt", "nanosleep", "pmevent", "setmaxnreg",
    "st", "st.async", "st.bulk", "red", "red.async", "membar", "fence", "prefetch", "prefetchu",
    "griddepcontrol", "discard", "applypriority", "stmatrix", "sust", "sured", "bar.warp.sync",
    "barrier.cluster", "cp.async", "cp.async.commit_group", "cp.async.wait_group", "cp.async.wait_all",
    "cp.async.mbarrier.arrive", "cp.async.bulk", "cp.async.bulk.tensor", "cp.reduce.async.bulk",
    "cp.reduce.async.bulk.tensor", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group",
    "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor", "wgmma.fence", "wgmma.commit_group",
    "wgmma.wait_group", "tensormap.replace", "tensormap.cp_fenceproxy", "multimem.st", "multimem.red",
    "mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx", "mbarrier.complete_tx", "wmma.store",
})

#: canonical opcodes whose destination registers are also inputs (accumulators)
ACCUMULATES = frozenset({"wgmma.mma_async", "wgmma.mma_async.sp"})

#: special registers: read-only machine state, no dependency between instructions
SPECIAL_PREFIXES = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
                    "%gridid", "%clock", "%globaltimer", "%lanemask", "%cluster", "%nclusterid",
                    "%is_explicit_cluster", "%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size",
                    "%envreg", "%pm")


@dataclass(frozen=True)
class RegisterUse:
    """Registers an instruction reads (guard predicate included) and writes, by name, in operand order."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]


def _special(name: str) -> bool:
    return name.startswith(SPECIAL_PREFIXES)


_SPECIAL: dict[str, bool] = {}


def _names(op, out: list[str]) -> None:
    t = type(op)
    if t is Register:                   # the common cases first, by exact type
        if op.component is None:
            name = op.name
            special = _SPECIAL.get(name)
            if special is None:
                special = _special(name)
                if len(_SPECIAL) < 1 << 16:
                    _SPECIAL[name] = special
            if not special:
                out.append(name)
        return
    if t is Address:
        base = op.base
        if type(base) is Register:
            _names(base, out)
        elif isinstance(base, Register):
            _names(base, out)
        if op.coords is not None:
            _names(op.coords, out)
        return
    if t is Immediate or t is Symbol:
        return
    if isinstance(op, Register):
        if op.component is None and not _special(op.name):
            out.append(op.name)
    elif isinstance(op, Vector):
        for e in op.elements:
            _names(e, out)
    elif isinstance(op, Pair):
        _names(op.first, out)
        _names(op.second, out)
    elif isinstance(op, Negated):
        _names(op.operand, out)
    elif isinstance(op, Address):
        if isinstance(op.base, Register):
            _names(op.base, out)
        if op.coords is not None:
            _names(op.coords, out)
    elif isinstance(op, OperandList):
        for e in op.items:
            _names(e, out)


def _writes(name: str, ins: Instruction) -> bool:
    """False for the forms of an opcode that write no register although it has a first operand."""
    if name in NO_DEST:
        return False
    if name in ("bar", "barrier"):
        return "red" in ins.modifiers
    return True


def registers(ins: Instruction) -> RegisterUse:
    """The :class:`RegisterUse` of one PTX instruction."""
    name, _ = opcodes.split(ins)
    ops = ins.operands
    reads: list[str] = []
    if ins.guard is not None:
        reads.append(ins.guard.register)
    writes: list[str] = []
    rest = ops
    if ops and _writes(name, ins) and isinstance(ops[0], (Register, Vector, Pair)):
        _names(ops[0], writes)
        rest = ops[1:]
        if name in ACCUMULATES:
            reads.extend(writes)
    for op in rest:
        _names(op, reads)
    return RegisterUse(tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(writes)))


#: (opcode, modifiers) -> whether the opcode writes its first operand (:func:`_writes` of its
#: canonical name): one lookup per instruction instead of resolving the opcode each time
_WRITING: dict[tuple[str, tuple[str, ...]], bool] = {}


def writes(ins: Instruction) -> tuple[str, ...]:
    """The registers one PTX instruction writes: ``registers(ins).writes``, without collecting
    what it reads (the analyzer's reaching definitions need only these)::

        setp.lt.s32 %p1|%p2, %r1, %r2;            ('%p1', '%p2')
    """
    ops = ins.operands
    if not ops:
        return ()
    first = ops[0]
    t = type(first)
    if t is not Register and not isinstance(first, (Register, Vector, Pair)):
        return ()
    key = (ins.opcode, ins.modifiers)
    writing = _WRITING.get(key)
    if writing is None:
        writing = _writes(opcodes.split(ins)[0], ins)
        if len(_WRITING) >= 1 << 14:
            _WRITING.clear()
        _WRITING[key] = writing
    if not writing:
        return ()
    if t is Register and first.component is None:       # the common case: one register
        name = first.name
        special = _SPECIAL.get(name)
        if special is None:
            special = _special(name)
        return () if special else (name,)
    out: list[str] = []
    _names(first, out)
    return tuple(dict.fromkeys(out))


__all__ = ["RegisterUse", "registers", "writes", "NO_DEST", "ACCUMULATES"]
