"""Reaching definitions over the CFG and a small constant evaluator for registers.

The evaluator knows kernel parameters given with ``--param`` and the launch shape (``%ntid``,
``%nctaid``); a register is a constant at a use when exactly one definition reaches it and that
definition's operands are constants in turn. That is what loop bounds and guards need::

    ld.param.u32    %r13, [sgemm_naive_param_5];     K, from --param K=4096
    and.b32         %r31, %r13, 3;                   K % 4
    setp.eq.s32     %p7, %r31, 0;                    true for K=4096: the remainder loop is skipped
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from isa.ir import Address, Immediate, Instruction, Negated, Register, Sink, Symbol, Vector

from isa.semantics import written_registers

from isa.cfg import Cfg

def dest_registers(ins: Instruction) -> list[str]:
    """Names of the registers an instruction writes (``setp p|q`` writes both), from the ISA
    tables (:func:`isa.semantics.registers`)."""
    return list(written_registers(ins))


_PENDING = object()     # Dataflow.def_value's mark of a definition being evaluated

_MASKS = {8: 0xFF, 16: 0xFFFF, 32: 0xFFFFFFFF, 64: 0xFFFFFFFFFFFFFFFF}


def _wrap(v, t: str | None):
    """``v`` as a value of PTX type ``t`` (an int, or an object array of ints over threads)."""
    if t is None or t in ("pred",):
        return v
    bits = int("".join(ch for ch in t if ch.isdigit()) or 64)
    if bits not in _MASKS:
        return v
    if isinstance(v, np.ndarray):
        v = v & _MASKS[bits]
        return np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if t.startswith("s") else v
    v &= _MASKS[bits]
    if t.startswith("s") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _as_int(v):
    return v if isinstance(v, np.ndarray) else int(v)


def _as_bool(v):
    return np.asarray(v, dtype=bool) if isinstance(v, np.ndarray) else bool(v)


def thread_indices(block: tuple[int, int, int]) -> dict[str, np.ndarray]:
    """``%tid.x/y/z`` and ``%laneid`` of every thread of one CTA (object arrays of ints, read-only:
    made once per block shape, every guard on the thread index of every kernel reads them)."""
    block = tuple(block)
    got = _THREADS.get(block)
    if got is None:
        bx, by, bz = block
        t = np.arange(bx * by * bz, dtype=np.int64)
        out = {"x": t % bx, "y": (t // bx) % by, "z": t // (bx * by), "lane": t % 32}
        got = {k: v.astype(object) for k, v in out.items()}
        for v in got.values():
            v.flags.writeable = False
        if len(_THREADS) >= 16:
            _THREADS.clear()
        _THREADS[block] = got
    return dict(got)


_THREADS: dict[tuple, dict[str, np.ndarray]] = {}


def _type(ins: Instruction) -> str | None:
    for m in reversed(ins.modifiers):
        if m[:1] in "subf" and m[1:].isdigit():
            return m
        if m == "pred":
            return m
    return None


_CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b, "hs": lambda a, b: a >= b,
}
_UNSIGNED_CMP = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


@dataclass
class Launch:
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None

    @property
    def threads(self) -> int | None:
        if self.grid is None or self.block is None:
            return None
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]


@dataclass
class Dataflow:
    """Reaching definitions and constant values for one function."""

    cfg: Cfg
    params: dict[str, int] = field(default_factory=dict)
    launch: Launch = field(default_factory=Launch)

    def __post_init__(self) -> None:
        fn = self.cfg.fn
        self.ins = fn.instructions
        scoped = len(fn.scope_parents) > 0
        if scoped:
            self.dests: list[tuple[str, ...]] = [
                tuple(fn.register_key(r, i.scope) for r in d) if i.scope else d
                for i, d in ((i, written_registers(i)) for i in self.ins)]
        else:
            self.dests = list(map(written_registers, self.ins))
        self.missing: set[str] = set()
        self._memo: dict[int, object] = {}
        self._threads: dict[str, np.ndarray] | None = None
        # block shape -> the per-thread values of definitions (thread_value), kept from one guard to
        # the next only while no evaluation met a cycle (a value computed where it did may depend
        # on where the evaluation started; one computed where none did is the same from anywhere)
        self._thread_memos: dict[tuple, dict[int, object]] = {}
        self._cyclic = False
        self._solve()

    def _key(self, ins: Instruction, name: str) -> str:
        return self.cfg.fn.register_key(name, ins.scope)

    def _solve(self) -> None:
        """Reaching definitions as bit sets: one bit per (instruction, register written) pair.

        ``out[b] = gen[b] | (in[b] & ~kill[b])`` iterated to the least fixed point, where ``gen``
        holds the last definition of each register in the block and ``kill`` every definition
        of the registers the block writes.
        """
        cfg = self.cfg
        dests = self.dests
        def_ins: list[int] = []               # bit -> instruction index
        reg_mask: dict[str, int] = {}         # register key -> bits of all its definitions
        first = [0] * len(dests)              # instruction -> the bit of its first destination
        for k, d in enumerate(dests):
            first[k] = len(def_ins)
            for r in d:
                reg_mask[r] = reg_mask.get(r, 0) | (1 << len(def_ins))
                def_ins.append(k)
        nblocks = len(cfg.blocks)
        gen = [0] * nblocks
        keep = [0] * nblocks                  # ~kill, limited to the bits that exist
        everything = (1 << len(def_ins)) - 1
        for b in cfg.blocks:
            last: dict[str, int] = {}         # register key -> the bit of its last definition here
            for k in range(b.start, b.end):
                bit = first[k]
                for r in dests[k]:
                    last[r] = bit
                    bit += 1
            g = kill = 0
            for r, bit in last.items():
                g |= 1 << bit
                kill |= reg_mask[r]
            gen[b.id] = g
            keep[b.id] = everything & ~kill
        preds = cfg.pred
        order = cfg.preorder
        inn = [0] * nblocks
        out = list(gen)
        changed = True
        while changed:
            changed = False
            for bid in order:
                x = 0
                for p in preds[bid]:
                    x |= out[p]
                inn[bid] = x
                new = gen[bid] | (x & keep[bid])
                if new != out[bid]:
                    out[bid] = new
                    changed = True
        self._in_bits = inn
        self._reg_mask = reg_mask
        self._def_ins = def_ins
        self._reach_memo: dict[tuple[int, str], frozenset[int]] = {}

    def _defs(self, bits: int) -> frozenset[int]:
        def_ins = self._def_ins
        out = []
        while bits:
            low = bits & -bits
            out.append(def_ins[low.bit_length() - 1])
            bits ^= low
        return frozenset(out)

    @property
    def block_in(self) -> dict[int, dict[str, frozenset[int]]]:
        """Block id -> register key -> definitions reaching the block's entry."""
        return {bid: {r: self._defs(bits & m) for r, m in self._reg_mask.items() if bits & m}
                for bid, bits in enumerate(self._in_bits)}

    def reaching(self, reg: str, at: int) -> frozenset[int]:
        """Definition indices of register key ``reg`` that reach instruction ``at`` (before it executes)."""
        b = self.cfg.blocks[self.cfg.block_of_index[at]]
        dests = self.dests
        for k in range(at - 1, b.start - 1, -1):
            if reg in dests[k]:
                return frozenset((k,))
        key = (b.id, reg)
        hit = self._reach_memo.get(key)
        if hit is None:
            hit = self._reach_memo[key] = self._defs(self._in_bits[b.id] & self._reg_mask.get(reg, 0))
        return hit

    # ---- evaluation -------------------------------------------------------------------------

    def thread_value(self, op, at: int, block: tuple[int, int, int]):
        """The value of an operand at ``at`` for every thread of one CTA of shape ``block``: an
        array when it depends on the thread index (``%tid``, ``%laneid``) and otherwise only on
        constants, a constant when it is one, else None (it depends on data, ``%ctaid``, ...)::

            shr.u32 %r2, %r1, 5;  setp.eq.s32 %p1, %r2, 0;   # warp == 0: true for threads 0..31
        """
        block = tuple(block)
        memo = self._thread_memos.get(block)
        if memo is None:
            memo = self._thread_memos[block] = {}
        saved = self._memo, self._threads, self._cyclic
        self._memo, self._threads, self._cyclic = memo, thread_indices(block), False
        done = False
        try:
            v = self.operand_value(op, at)
            done = True
            return v
        finally:
            if self._cyclic or not done:    # a value met a definition still being evaluated: keep none
                self._thread_memos.pop(block, None)
            self._memo, self._threads, self._cyclic = saved

    def operand_value(self, op, at: int):
        """The constant value of an operand at instruction ``at``, or None."""
        if isinstance(op, Immediate):
            return op.value if op.kind == "int" else None
        if isinstance(op, Negated):
            v = self.operand_value(op.operand, at)
            return None if v is None else (~v if isinstance(v, np.ndarray) else not v)
        if isinstance(op, Register):
            if op.component is not None:
                dims = {"%ntid": self.launch.block, "%nctaid": self.launch.grid}.get(op.name)
                if dims is not None and op.component in "xyz":
                    return dims["xyz".index(op.component)]
                if op.name == "%ctaid" and self.launch.grid is not None and op.component in "xyz" \
                        and self.launch.grid["xyz".index(op.component)] == 1:
                    return 0                                  # the only CTA index of a grid of 1

                if self._threads is not None and op.name == "%tid" and op.component in "xyz":
                    return self._threads[op.component]
                return None
            if op.name == "WARP_SZ":
                return 32
            if op.name == "%laneid":
                return None if self._threads is None else self._threads["lane"]
            key = self._key(self.ins[at], op.name)
            defs = self.reaching(key, at)
            if len(defs) != 1:
                return None
            return self.def_value(next(iter(defs)), key)
        if isinstance(op, Vector) and len(op.elements) == 1:
            return self.operand_value(op.elements[0], at)
        return None

    def def_value(self, k: int, key: str | None = None):
        """The value written by definition ``k`` (its first destination), or None."""
        memo = self._memo
        if k in memo:
            v = memo[k]
            if v is _PENDING:         # a cycle of definitions: None
                self._cyclic = True
                return None
            return v
        memo[k] = _PENDING            # cycle guard
        v = self._evaluate(k)
        self._memo[k] = v
        return v

    def _evaluate(self, k: int):
        ins = self.ins[k]
        ops = ins.operands
        op = ins.opcode
        t = _type(ins)
        if op == "ld" and "param" in ins.modifiers and len(ops) >= 2 and isinstance(ops[1], Address):
            base = ops[1].base
            if isinstance(base, Symbol) and ops[1].offset == 0:
                if base.name in self.params:
                    return _wrap(int(self.params[base.name]), t)
                self.missing.add(base.name)
            return None
        vals = [self.operand_value(o, k) for o in ops[1:]]
        if op in ("mov", "cvt") and vals and vals[0] is not None and not isinstance(vals[0], float):
            if t and t[0] == "f":
                return None
            return _wrap(_as_int(vals[0]), t) if t != "pred" else _as_bool(vals[0])
        if op == "setp" and len(ops) >= 3 and vals[0] is not None and vals[1] is not None:
            cmp = next((m for m in ins.modifiers if m in _CMP), None)
            if cmp is None or t is None or t[0] == "f" or len(ops) > 3:
                return None
            a, b = _wrap(vals[0], t), _wrap(vals[1], t)
            if cmp in _UNSIGNED_CMP or t[0] in "ub":
                a, b = _wrap(a, "u" + t[1:]), _wrap(b, "u" + t[1:])
            return _as_bool(_CMP[cmp](a, b))
        if op == "cmp" and t is None and len(ops) == 3 and not any(v is None or isinstance(v, (float, np.ndarray))
                                                                 for v in vals):
            # the Ascend-like cmp.<cc> %p, a, b: 64-bit integers (docs/ascend-isa.md)
            cmp = next((m for m in ins.modifiers if m in _CMP), None)
            return None if cmp is None else _as_bool(_CMP[cmp](int(vals[0]), int(vals[1])))
        if op == "selp" and len(vals) == 3 and vals[2] is not None:
            if isinstance(vals[2], np.ndarray):
                if vals[0] is None or vals[1] is None:
                    return None
                return np.where(vals[2], vals[0], vals[1])
            return vals[0] if vals[2] else vals[1]
        if any(v is None or isinstance(v, float) for v in vals) or not vals:
            return None
        mods = set(ins.modifiers)
        if any(isinstance(v, np.ndarray) for v in vals):
            return self._evaluate_threads(op, t, mods, vals)
        if t == "pred":
            a = bool(vals[0])
            if op == "not":
                return not a
            b = bool(vals[1]) if len(vals) > 1 else None
            return {"and": a and b, "or": a or b, "xor": a != b}.get(op)
        a = vals[0]
        b = vals[1] if len(vals) > 1 else None
        c = vals[2] if len(vals) > 2 else None
        wide_t = None
        if t and "wide" in mods:
            wide_t = t[0] + str(int(t[1:]) * 2)
        if op == "add":
            return _wrap(a + b, t)
        if op == "sub":
            return _wrap(a - b, t)
        if op == "mul":
            return _wrap(a * b, wide_t or t) if "hi" not in mods else None
        if op == "mad" and c is not None:
            return _wrap(a * b + c, wide_t or t) if "hi" not in mods else None
        if op == "shl":
            return _wrap(a << b, t)
        if op == "shr":
            return _wrap((_wrap(a, "u" + t[1:]) if t and t[0] in "ub" else a) >> b, t)
        if op == "and":
            return _wrap(a & b, t)
        if op == "or":
            return _wrap(a | b, t)
        if op == "xor":
            return _wrap(a ^ b, t)
        if op == "not":
            return _wrap(~a, t)
        if op == "neg":
            return _wrap(-a, t)
        if op == "min":
            return min(a, b)
        if op == "max":
            return max(a, b)
        if op == "div" and b:
            q = abs(a) // abs(b)
            return _wrap(q if (a >= 0) == (b >= 0) else -q, t)
        if op == "rem" and b:
            r = abs(a) % abs(b)
            return _wrap(r if a >= 0 else -r, t)
        return None


    @staticmethod
    def _evaluate_threads(op: str, t: str | None, mods: set, vals: list):
        """The integer and predicate operations of :meth:`_evaluate` on per-thread arrays."""
        if t == "pred":
            a = _as_bool(vals[0])
            if op == "not":
                return ~a
            b = _as_bool(vals[1]) if len(vals) > 1 else None
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(op)
            return None if f is None or b is None else f(a, b)
        a = vals[0]
        b = vals[1] if len(vals) > 1 else None
        c = vals[2] if len(vals) > 2 else None
        wide_t = t[0] + str(int(t[1:]) * 2) if t and "wide" in mods and t[1:].isdigit() else None
        if t and t[0] in "ub" and op == "shr":
            a = _wrap(a, "u" + t[1:])
        simple = {"add": lambda: a + b, "sub": lambda: a - b, "shl": lambda: a << b, "shr": lambda: a >> b,
                  "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b, "not": lambda: ~a,
                  "neg": lambda: -a, "min": lambda: np.minimum(a, b), "max": lambda: np.maximum(a, b)}
        if op in simple and (b is not None or op in ("not", "neg")):
            return _wrap(np.asarray(simple[op](), dtype=object), t)
        if op == "mul" and "hi" not in mods:
            return _wrap(np.asarray(a * b, dtype=object), wide_t or t)
        if op == "mad" and c is not None and "hi" not in mods:
            return _wrap(np.asarray(a * b + c, dtype=object), wide_t or t)
        if op in ("div", "rem") and not isinstance(b, np.ndarray) and b:
            aa = np.abs(np.asarray(a, dtype=object))
            q = aa // abs(b) if op == "div" else aa % abs(b)
            neg = (np.asarray(a, dtype=object) < 0) != (b < 0) if op == "div" else np.asarray(a, dtype=object) < 0
            return _wrap(np.where(neg, -q, q), t)
        return None


def is_sink(op) -> bool:
    return isinstance(op, Sink)
