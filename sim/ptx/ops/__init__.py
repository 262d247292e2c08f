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

import numpy as np

from isa import ir

BUILDERS: dict[str, Callable] = {}

#: canonical opcode -> the forms its builder refuses (docs/ptx-coverage.md is generated from it)
LIMITS: dict[str, str] = {}


def limit(name: str, what: str) -> None:
    """Record what the builder of ``name`` does not run (shown in docs/ptx-coverage.md)."""
    LIMITS[name] = what


def per_thread_i64(M, fn: Callable):
    """``fn()`` (an operand reader: a scalar or one value per thread) as one int64 per thread of the CTA."""
    return np.broadcast_to(np.asarray(fn()).astype(np.int64), (M.T,))


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
    acc = getattr(M, "wgmma_accumulators", None)
    if acc and canon != "wgmma.mma_async":
        res = _accumulator_check(M, pc, ins, acc, res)
    return 0, _guarded(M, ins, res)


def _registers(op):
    if isinstance(op, ir.Register):
        yield op
    elif isinstance(op, (ir.Vector, ir.OperandList)):
        for e in (op.elements if isinstance(op, ir.Vector) else op.items):
            yield from _registers(e)
    elif isinstance(op, ir.Address) and isinstance(op.base, ir.Register):
        yield op.base
    elif isinstance(op, ir.Negated):
        yield from _registers(op.operand)


def _accumulator_check(M, pc, ins, acc, f):
    """Wrap an instruction that reads or writes a ``wgmma`` accumulator register: touching it
    while the wgmma that writes it is in flight (before ``wgmma.wait_group``) is an ``async_race``."""
    keys = []
    for o in ins.operands:
        for r in _registers(o):
            try:
                k = M.reg_key(r.name, ins.scope)
            except Exception:  # noqa: BLE001 - special registers and symbols
                continue
            if k in acc:
                keys.append((k, r.name))
    if not keys:
        return f

    def run(m):
        A = M.asyncs
        if A.wg:
            for k, name in keys:
                v = A.wg_inflight_warps(k)
                if v is None:
                    continue
                act = np.ones(M.T // 32, bool) if m is None else m.reshape(-1, 32).any(axis=1)
                bad = act & v
                if bad.any():
                    w = np.flatnonzero(bad)
                    lanes = w * 32 if m is None else np.array([int(np.flatnonzero(m[x * 32:(x + 1) * 32])[0]) + x * 32
                                                                for x in w[:8]])
                    rec = next((r for r in A.wg if not r[6] and k in r[0].keys), None)
                    at = ""
                    if rec is not None:
                        wi = M.instructions[rec[5]]
                        src = M.source_of(wi)
                        at = f" at line {wi.span.line}" + (f" ({src})" if src else "")
                    M.report("async_race", pc, lanes, f"{ins.full_opcode} uses {name}, an accumulator of the "
                             f"wgmma.mma_async{at} that has not completed (no wgmma.wait_group covers it yet): "
                             f"it reads the value from before that wgmma")
                    break
        f(m)
    return run


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


from . import control, convert, floating, integer, memory, tensor_ops, video, warp  # noqa: E402,F401
