"""Instruction semantics, one builder per canonical opcode.

A builder turns one decoded instruction into a closure once per launch (register slots resolved,
immediates converted, the semantic function picked from the modifiers), so the run loop does no
parsing or string work::

    fma.rn.f32 %f14, %f13, %f12, %f29;
      -> ('simple', f) with f(mask) = write %f14 := fma_rn_f32(%f13, %f12, %f29) under mask

``build(machine, pc, ins)`` returns ``(kind, fn)``: kind 0 is a plain instruction called as
``fn(mask)`` (mask None = every thread of the batch), kind 1 a control instruction called as
``fn(machine, stack, top)``. Guards (``@%p1``) are folded into the mask of plain instructions;
control builders read their own guard.
"""

from __future__ import annotations

from typing import Callable

from isa import ir

BUILDERS: dict[str, Callable] = {}


def op(*names: str):
    """Register a builder for the canonical opcode names."""

    def deco(f):
        for n in names:
            BUILDERS[n] = f
        return f

    return deco


def not_implemented(M, ins, what: str):
    """An instruction the simulator cannot run yet: decoding works, executing it raises."""

    def f(m):
        raise M.error(f"not implemented: {what}", ins)

    return f


def build(M, pc: int, ins: ir.Instruction):
    canon, mods = M.canon[pc]
    b = BUILDERS.get(canon)
    if b is None:
        return 0, _guarded(M, ins, not_implemented(M, ins, canon))
    res = b(M, pc, ins, canon, frozenset(mods), mods)
    if isinstance(res, tuple):
        return res
    return 0, _guarded(M, ins, res)


def _guarded(M, ins: ir.Instruction, f):
    g = ins.guard
    if g is None:
        return f
    P, _ = M.reg(g.register, ins.scope)
    if g.negated:
        def run(m):
            f(~P if m is None else m & ~P)
    else:
        def run(m):
            f(P.copy() if m is None else m & P)
    return run


def guard_mask(M, ins: ir.Instruction):
    """For control builders: a callable giving the guard as a bool array (or None if unguarded)."""
    g = ins.guard
    if g is None:
        return None
    P, _ = M.reg(g.register, ins.scope)
    if g.negated:
        return lambda: ~P
    return lambda: P


from . import control, convert, floating, integer, memory, tensor_ops, warp  # noqa: E402,F401
