"""Dynamic estimates: loop trip counts, branch probabilities and per-block execution counts.

A loop's trip count comes from its exit test when the test compares an induction variable
(``add r, r, STEP`` in the loop, one initial value before it) with a loop-invariant bound that
evaluates to a constant (immediates, ``--param`` values, the launch shape)::

    $L__BB0_4:                              ; header
        ...
        add.s32      %r29, %r29, -4;        ; step -4, initial value K - K%4
        setp.ne.s32  %p6, %r29, 0;
        @%p6 bra     $L__BB0_4;             ; K/4 iterations for K % 4 == 0

Where that closed form does not apply (unoptimised code tests through ``not.pred`` and carries the
induction variable through copies, or steps it by shifts: ``for (off = 16; off > 0; off >>= 1)``
under ``nvcc -G``), the exit test is run: its slice of integer registers is stepped from the values
they have on entry until the test leaves the loop (``Estimator._stepped``).

Branch conditions that evaluate to constants are followed exactly. Other branches are estimates:
a branch to a block that only returns (a bounds check) is assumed not taken, and any other
unknown branch splits 50/50. A loop whose trip count cannot be derived is assumed to run
``assumed_trips`` times. Execution counts per thread then solve ``x = e0 + P^T x`` (numpy), and a
block's count is exact when every branch that can lead to it was decided exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from isa.ir import Pair, Register

from isa.cfg import EXIT, Cfg, Loop
from .dataflow import Dataflow, _type

ASSUMED_TRIPS = 16

#: the compare that writes a loop's exit predicate: PTX ``setp.<cc>.<type>``; the Ascend-like
#: ``cmp.<cc> %p, a, b`` (64-bit integers, docs/ascend-isa.md)
COMPARES = ("setp", "cmp")


@dataclass
class LoopInfo:
    header: int
    depth: int
    blocks: tuple[int, ...]
    trips: int | None                 # times the exit test stays in the loop (back edges taken), per entry
    exact: bool
    reason: str
    induction: str | None = None
    bound: str | None = None
    first_line: int = 0
    last_line: int = 0
    exit_at_latch: bool = True        # the exit test is at the bottom (do-while): one more iteration than trips
    needs: tuple[str, ...] = ()       # parameters without a value that the exit test depends on
    measured: float | None = None     # iterations per entry measured by a run (the launch's average)
    basis: str = "measured"           # what ``measured`` is: "measured" (a run) or "exact" (stepped counts)
    entered: bool = True              # False: no thread reaches the loop for these values (exactly)

    @property
    def iterations(self) -> int | None:
        """Iterations per entry: how often the loop body runs (``for (k = 0; k < 4; ++k)`` runs 4
        times, whether nvcc tests at the bottom, 3 back edges taken, or at the top); None when unknown,
        0 for a loop that is not entered."""
        if not self.entered:
            return 0
        if self.measured is not None:
            return int(self.measured) if float(self.measured).is_integer() else round(self.measured, 3)
        if self.trips is None:
            return None
        return self.trips + 1 if self.exit_at_latch else self.trips

    def to_json(self) -> dict:
        return {"header": self.header, "depth": self.depth, "blocks": list(self.blocks),
                "lines": [self.first_line, self.last_line], "iterations": self.iterations,
                "back_edges_taken": self.trips, "exact": self.exact,
                "reason": self.reason, "induction": self.induction, "bound": self.bound,
                **({"measured": True} if self.measured is not None and self.basis == "measured" else
                   {"stepped": True} if self.measured is not None else {}),
                **({"entered": False} if not self.entered else {})}


@dataclass
class Estimate:
    counts: dict[int, float]                  # block id -> executions per thread
    exact: dict[int, bool]                    # block id -> count is exact
    loops: dict[int, LoopInfo]
    notes: list[str] = field(default_factory=list)
    missing_params: set[str] = field(default_factory=set)
    assumed_iterations: int = 16
    #: what the inexact counts rest on: {"line", "what", "assumed", "exact_with"} per guess
    guesses: list[dict] = field(default_factory=list)


def _cmp_word(ins) -> str | None:
    for m in ins.modifiers:
        if m in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
            return m
    return None


_SWAP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def first_failure(v0: int, step: int, bound: int, cmp: str, stay_when_true: bool) -> int | None:
    """The first k >= 0 for which ``(v0 + step*k) cmp bound`` no longer keeps the loop going."""
    def stays(v: int) -> bool:
        r = {"lt": v < bound, "le": v <= bound, "gt": v > bound, "ge": v >= bound, "eq": v == bound,
             "ne": v != bound}[cmp]
        return r if stay_when_true else not r

    if not stays(v0):
        return 0
    if step == 0:
        return None
    # reduce "stays" to a comparison against the bound
    eff = cmp if stay_when_true else {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}[cmp]
    if eff == "ne":
        d = bound - v0
        if d % step == 0 and d // step > 0:
            return d // step
        return None
    if eff == "eq":
        return 1
    if eff in ("lt", "le"):
        if step < 0:
            return None
        lim = bound - v0 if eff == "lt" else bound - v0 + 1
        return max(0, math.ceil(lim / step))
    if step > 0:
        return None
    lim = v0 - bound if eff == "gt" else v0 - bound + 1
    return max(0, math.ceil(lim / -step))


class Estimator:
    def __init__(self, cfg: Cfg, flow: Dataflow, assumed_trips: int = ASSUMED_TRIPS):
        self.cfg = cfg
        self.flow = flow
        self.assumed = assumed_trips
        self.ins = cfg.fn.instructions

    # ---- loops ------------------------------------------------------------------------------

    def _exit_branches(self, loop: Loop) -> list[tuple[int, int, int]]:
        """(block, in-loop successor, out-of-loop successor) for conditional exits of a loop."""
        out = []
        for b in sorted(loop.blocks):
            succ = self.cfg.succ[b]
            if len(succ) != 2:
                continue
            inside = [s for s in succ if s in loop.blocks]
            outside = [s for s in succ if s not in loop.blocks]
            if len(inside) == 1 and len(outside) == 1:
                out.append((b, inside[0], outside[0]))
        return out

    def loop_info(self, loop: Loop) -> LoopInfo:
        blocks = self.cfg.blocks
        lines = [self.ins[k].span.line for b in loop.blocks for k in range(blocks[b].start, blocks[b].end)]
        base = dict(header=loop.header, depth=loop.depth, blocks=tuple(sorted(loop.blocks)),
                    first_line=min(lines, default=0), last_line=max(lines, default=0))
        exits = self._exit_branches(loop)
        if not exits:
            return LoopInfo(trips=None, exact=False, reason="no conditional exit", **base)
        exits.sort(key=lambda e: (e[0] not in loop.latches, e[0] != loop.header))
        b, inside, _outside = exits[0]
        base["exit_at_latch"] = b in loop.latches
        branch_idx = blocks[b].end - 1
        br = self.ins[branch_idx]
        if br.guard is None:
            return LoopInfo(trips=None, exact=False, reason="exit is not a predicated branch", **base)
        taken_inside = self.cfg.edge_kind[(b, inside)] == "taken"
        stay_when_true = taken_inside != br.guard.negated
        fn = self.cfg.fn
        pkey = fn.register_key(br.guard.register, br.scope)
        pdefs = self.flow.reaching(pkey, branch_idx)
        if len(pdefs) != 1:
            return LoopInfo(trips=None, exact=False, reason=f"exit predicate {br.guard.register} has several definitions",
                            **base)
        k = next(iter(pdefs))
        setp = self.ins[k]
        cmp = _cmp_word(setp)
        if setp.opcode not in COMPARES or cmp is None or len(setp.operands) != 3:
            return self._stepped(loop, b, branch_idx, stay_when_true, base) or \
                LoopInfo(trips=None, exact=False, reason=f"exit test is not a simple compare (line {setp.span.line})",
                         **base)
        t = _type(setp)
        if t and t[0] == "f":
            return LoopInfo(trips=None, exact=False, reason="floating-point exit test", **base)
        cmp = _UNSIGNED.get(cmp, cmp)
        a, bop = setp.operands[1], setp.operands[2]
        for iv_op, bound_op, c in ((a, bop, cmp), (bop, a, _SWAP[cmp])):
            res = self._induction(loop, k, iv_op)
            if res is None:
                continue
            v0, step, name = res
            bound = self._invariant(loop, k, bound_op)
            btext = _text(bound_op)
            missing = sorted(self._missing_for(loop, k, (iv_op, bound_op)))
            need = f": it depends on parameter(s) {', '.join(missing)}: give --param" if missing else ""
            if bound is None:
                return LoopInfo(trips=None, exact=False, reason=f"bound {btext} is not a constant{need}",
                                induction=name, bound=btext, needs=tuple(missing), **base)
            if v0 is None:
                return LoopInfo(trips=None, exact=False, reason=f"initial value of {name} is not a constant{need}",
                                induction=name, bound=btext, needs=tuple(missing), **base)
            n = first_failure(v0, step, bound, c, stay_when_true)
            if n is None:
                return LoopInfo(trips=None, exact=False, reason="the exit test never fails for these values",
                                induction=name, bound=btext, **base)
            return LoopInfo(trips=n, exact=True,
                            reason=f"{name} from {v0} step {step} while {c} {bound}" if stay_when_true
                            else f"{name} from {v0} step {step} until {c} {bound}",
                            induction=name, bound=btext if btext == str(bound) else f"{btext} = {bound}", **base)
        return self._stepped(loop, b, branch_idx, stay_when_true, base) or \
            LoopInfo(trips=None, exact=False, reason=f"no induction variable in the exit test (line {setp.span.line})",
                     **base)

    #: most iterations :meth:`_stepped` runs a loop's exit test through
    STEP_LIMIT = 1 << 16

    def _stepped(self, loop: Loop, exit_block: int, branch_idx: int, stay_when_true: bool, base: dict):
        """The trip count found by running the loop's exit test, when the closed form does not
        apply: code that is not optimised (``nvcc -G``, clang -O0) tests through ``not.pred`` and
        carries the induction variable through copies (``mov %r3, %r14`` ... ``shr.s32 %r4, %r3, 1;
        mov %r14, %r4``), or steps it by shifts or products.

        The registers the exit predicate depends on inside the loop (its *slice*) must each have
        one definition in the loop, of an integer operation :func:`_step_value` knows, and a
        constant value on entry; the slice is then executed in program order from the header,
        iteration by iteration (at most :data:`STEP_LIMIT`), until the test leaves the loop.
        None when any of that does not hold."""
        fn = self.cfg.fn
        blocks = self.cfg.blocks
        if not all(self.cfg.dominates(exit_block, lb) for lb in loop.latches):
            return None
        order = sorted(k for bb in loop.blocks for k in range(blocks[bb].start, blocks[bb].end))
        h0 = blocks[loop.header].start
        order = [k for k in order if k >= h0] + [k for k in order if k < h0]     # from the header on
        in_loop = set(order)
        br = self.ins[branch_idx]
        slice_defs: dict[str, int] = {}
        todo = [(fn.register_key(br.guard.register, br.scope), branch_idx)]
        entry: dict[str, int] = {}
        while todo:
            key, at = todo.pop()
            if key in slice_defs or key in entry:
                continue
            defs = self.flow.reaching(key, at)
            inside = [d for d in defs if d in in_loop]
            outside = [d for d in defs if d not in in_loop]
            if len(inside) > 1 or not defs:
                return None
            if outside:
                if len(outside) != 1:
                    return None
                v = self.flow.def_value(outside[0], key)
                if v is None or isinstance(v, np.ndarray):
                    return None
                entry[key] = int(v)
            if not inside:
                if key not in entry:
                    return None
                continue
            d = inside[0]
            slice_defs[key] = d
            ins = self.ins[d]
            if _step_value(ins, {}) is _UNSUPPORTED or ins.guard is not None:
                return None
            db = self.cfg.block_of_index[d]              # it must run in every iteration
            if not all(self.cfg.dominates(db, lb) for lb in loop.latches):
                return None
            for o in ins.operands[1:]:
                if isinstance(o, Register) and o.component is None:
                    todo.append((fn.register_key(o.name, ins.scope), d))
                elif isinstance(o, Register):
                    v = self.flow.operand_value(o, d)
                    if v is None or isinstance(v, np.ndarray):
                        return None
        defs_in_order = [k for k in order if k in set(slice_defs.values())]
        env: dict[str, int] = dict(entry)
        stays = 0
        pos = {k: i for i, k in enumerate(order)}
        test_at = pos[branch_idx]
        for _ in range(self.STEP_LIMIT):
            for k in defs_in_order:
                if pos[k] < test_at:
                    if not self._apply(k, env):
                        return None
            g = env.get(fn.register_key(br.guard.register, br.scope))
            if g is None:
                return None
            taken = bool(g) != br.guard.negated
            inside_now = taken == (self.cfg.edge_kind.get((exit_block, self._inside_succ(loop, exit_block)))
                                   == "taken")
            if not inside_now:
                return LoopInfo(trips=stays, exact=True,
                                reason=f"exit test at line {br.span.line} run through the loop ({stays} times "
                                       f"staying): its registers are stepped from their values on entry",
                                **base)
            stays += 1
            for k in defs_in_order:
                if pos[k] > test_at:
                    if not self._apply(k, env):
                        return None
        return None

    def _inside_succ(self, loop: Loop, b: int) -> int:
        return next(s for s in self.cfg.succ[b] if s in loop.blocks)

    def _apply(self, k: int, env: dict[str, int]) -> bool:
        ins = self.ins[k]
        v = _step_value(ins, env, lambda o: self.flow.operand_value(o, k), self.cfg.fn)
        if v is None or v is _UNSUPPORTED:
            return False
        for key in self.flow.dests[k][:1]:
            env[key] = v
        return True

    def _missing_for(self, loop: Loop, at: int, ops) -> set[str]:
        """Parameters without a value that the operands of a loop test depend on."""
        saved = set(self.flow.missing)
        self.flow.missing.clear()
        self.flow._memo.clear()
        for op in ops:
            self.flow.operand_value(op, at)
            if isinstance(op, Register):
                key = self.cfg.fn.register_key(op.name, self.ins[at].scope)
                for d in self.flow.reaching(key, at):
                    upd = self.ins[d]
                    for src in upd.operands[1:]:
                        if isinstance(src, Register):
                            skey = self.cfg.fn.register_key(src.name, upd.scope)
                            for d2 in self.flow.reaching(skey, d):
                                self.flow.def_value(d2)
        found = set(self.flow.missing)
        self.flow.missing |= saved
        return found

    def _invariant(self, loop: Loop, at: int, op):
        if isinstance(op, Register) and op.component is None:
            key = self.cfg.fn.register_key(op.name, self.ins[at].scope)
            defs = self.flow.reaching(key, at)
            if any(self.cfg.block_of_index[d] in loop.blocks for d in defs):
                return None
        v = self.flow.operand_value(op, at)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    def _induction(self, loop: Loop, at: int, op):
        """(value compared in the first iteration, step, name) when ``op`` is an induction variable."""
        if not isinstance(op, Register) or op.component is not None:
            return None
        fn = self.cfg.fn
        key = fn.register_key(op.name, self.ins[at].scope)
        defs = self.flow.reaching(key, at)
        inside = [d for d in defs if self.cfg.block_of_index[d] in loop.blocks]
        outside = [d for d in defs if self.cfg.block_of_index[d] not in loop.blocks]
        if len(inside) != 1:
            return None
        u = inside[0]
        upd = self.ins[u]
        if upd.opcode not in ("add", "sub") or len(upd.operands) != 3:
            return None
        src = upd.operands[1]
        if not (isinstance(src, Register) and fn.register_key(src.name, upd.scope) == key):
            return None
        step = self._invariant(loop, u, upd.operands[2])
        if step is None:
            return None
        if upd.opcode == "sub":
            step = -step
        src_defs = self.flow.reaching(key, u)
        init_defs = [d for d in src_defs if self.cfg.block_of_index[d] not in loop.blocks]
        if len(init_defs) != 1 or len(src_defs) != 2 or u not in src_defs:
            return None
        v0 = self.flow.def_value(init_defs[0])
        if outside:   # compared before the update in this iteration
            if outside != init_defs:
                return None
            return v0, step, op.name
        return (None if v0 is None else v0 + step), step, op.name

    # ---- frequencies ------------------------------------------------------------------------

    def estimate(self) -> Estimate:
        cfg = self.cfg
        succs = cfg.succ
        kinds = cfg.edge_kind
        n = len(cfg.blocks)
        loops = {h: self.loop_info(l) for h, l in cfg.loops.items()}
        prob: dict[tuple[int, int], float] = {}
        exact_branch: dict[int, bool] = {}
        notes: list[str] = []
        guesses: list[dict] = []
        controlling: dict[int, int] = {}
        for h, l in cfg.loops.items():
            ex = self._exit_branches(l)
            if ex:
                ex.sort(key=lambda e: (e[0] not in l.latches, e[0] != l.header))
                controlling[ex[0][0]] = h
        return_only = {b.id for b in cfg.blocks if not succs[b.id] and len(b) <= 2}
        shares = self._thread_shares(controlling)
        for b in cfg.blocks:
            succ = succs[b.id]
            if len(succ) == 1:
                prob[(b.id, succ[0])] = 1.0
                exact_branch[b.id] = True
                continue
            if len(succ) != 2:
                exact_branch[b.id] = True
                for s in succ:
                    prob[(b.id, s)] = 1.0 / len(succ)
                if len(succ) > 2:
                    exact_branch[b.id] = False
                continue
            last_idx = b.end - 1
            br = self.ins[last_idx]
            taken = next(s for s in succ if kinds[(b.id, s)] == "taken")
            fall = next(s for s in succ if s != taken)
            if b.id in controlling:
                h = controlling[b.id]
                info = loops[h]
                # an unknown count is assumed to be `assumed` iterations
                trips = info.trips if info.trips is not None else max(0, self.assumed - (1 if info.exit_at_latch else 0))
                stay = trips / (trips + 1.0)
                inside = taken if taken in cfg.loops[h].blocks else fall
                prob[(b.id, inside)] = stay
                prob[(b.id, fall if inside == taken else taken)] = 1.0 - stay
                exact_branch[b.id] = info.exact
                continue
            value = None
            if br.guard is not None:
                value = self.flow.operand_value(Register(br.guard.register), last_idx)
            if isinstance(value, bool):
                take = value != br.guard.negated
                prob[(b.id, taken)] = 1.0 if take else 0.0
                prob[(b.id, fall)] = 0.0 if take else 1.0
                exact_branch[b.id] = True
            elif b.id in shares:
                p_taken, ex = shares[b.id]
                prob[(b.id, taken)] = p_taken if p_taken is not None else 0.5
                prob[(b.id, fall)] = 1.0 - prob[(b.id, taken)]
                exact_branch[b.id] = ex
                if not ex:
                    guesses.append({"line": br.span.line, "what": "branch on the thread index",
                                    "assumed": "50% of threads" if p_taken is None else f"{p_taken:.1%} of threads",
                                    "exact_with": ["--block"] if p_taken is None else []})
                if p_taken is None:
                    notes.append(f"line {br.span.line}: branch on the thread index (a warp or lane role, not a "
                                 "bounds check): give --block for the share of threads that take it; 50% assumed")
                elif not ex:
                    notes.append(f"line {br.span.line}: branch on the thread index, taken by {p_taken:.1%} of the "
                                 "threads that reach it (estimate: an unknown branch decides which threads get there)")
            elif taken in return_only or fall in return_only:
                to_exit = taken if taken in return_only else fall
                prob[(b.id, to_exit)] = 0.0
                prob[(b.id, fall if to_exit == taken else taken)] = 1.0
                exact_branch[b.id] = False
                notes.append(f"line {br.span.line}: branch to an exit assumed not taken (bounds check)")
                guesses.append({"line": br.span.line, "what": "branch to an exit (bounds check)",
                                "assumed": "not taken", "exact_with": []})
            else:
                in_loop = [h for h, l in cfg.loops.items() if b.id in l.blocks]
                leaving = [s for s in succ if in_loop and any(s not in cfg.loops[h].blocks for h in in_loop)]
                if len(leaving) == 1:  # a second exit from a loop (break): assume the loop runs to its count
                    prob[(b.id, leaving[0])] = 0.0
                    prob[(b.id, succ[0] if leaving[0] == succ[1] else succ[1])] = 1.0
                else:
                    prob[(b.id, taken)] = 0.5
                    prob[(b.id, fall)] = 0.5
                exact_branch[b.id] = False
                notes.append(f"line {br.span.line}: branch outcome unknown (data or thread dependent)")
                guesses.append({"line": br.span.line, "what": "branch on data",
                                "assumed": "loop runs to its count" if len(leaving) == 1 else "50% taken",
                                "exact_with": []})
        counts = self._solve(n, prob)
        for h, info in loops.items():
            if info.trips is None and counts.get(h, 0) > 0:
                notes.append(f"loop at line {info.first_line}: iteration count unknown ({info.reason}); "
                             f"assumed {self.assumed} iterations")
                guesses.append({"line": info.first_line, "what": "loop iterations", "assumed": f"{self.assumed} iterations",
                                "exact_with": [f"--param {p}" for p in info.needs]})
        # A block's count is exact unless an inexact branch can lead to it: one in a block that
        # reaches it (itself only when it lies on a loop).
        # A branch in a block that is exactly never reached decides nothing.
        tainted: set[int] = set()
        done: set[int] = set()
        changed = True
        while changed:
            changed = False
            for a in range(n):
                if a in done or exact_branch.get(a, True) or (counts.get(a, 0) == 0 and a not in tainted):
                    continue
                done.add(a)
                changed = True
                tainted |= self._taint_from(a, succs)
        exact = {b: b not in tainted for b in range(n)}
        return Estimate(counts=counts, exact=exact, loops=loops, notes=notes, missing_params=set(self.flow.missing),
                        assumed_iterations=self.assumed, guesses=guesses)

    def _taint_from(self, a: int, succs) -> set[int]:
        """The blocks whose counts an inexact branch in block ``a`` can change: those it reaches
        before its immediate post-dominator (every path meets there, so the branch's odds do not
        change how often it runs), and ``a`` itself when it lies on a loop."""
        tainted: set[int] = set(self._self_loop_blocks(a))
        stop = self.cfg.ipdom.get(a, EXIT)
        seen: set[int] = set()
        stack = [a]
        while stack:
            for v in succs[stack.pop()]:
                if v not in seen and v != stop:
                    seen.add(v)
                    stack.append(v)
        seen.discard(a)
        tainted |= seen
        return tainted

    def _thread_shares(self, controlling: dict[int, int]) -> dict[int, tuple[float | None, bool]]:
        """Branches whose guard depends only on the thread index (``%tid``, ``%laneid``) and
        constants: block -> (share of the threads reaching it that take the branch, exact?).

        With the launch's block shape the guard is evaluated for every thread of a CTA, and the
        threads that reach each block are followed through the acyclic part of the graph (back
        edges ignored: a guard on the thread index alone decides the same in every iteration), so
        ``if (warp == 0) { if (lane == 0) atomicAdd(...); }`` counts one thread in 32 x warps.
        The share is None when the block shape is unknown."""
        cfg = self.cfg
        block = self.flow.launch.block
        probe = block or (128, 1, 1)
        guards: dict[int, np.ndarray] = {}
        for b in cfg.blocks:
            if len(cfg.succ[b.id]) != 2 or b.id in controlling or not len(b):
                continue
            br = self.ins[b.end - 1]
            if br.guard is None or br.opcode != "bra":
                continue
            reg = Register(br.guard.register)
            if self.flow.operand_value(reg, b.end - 1) is not None:
                continue
            v = self.flow.thread_value(reg, b.end - 1, probe)
            if isinstance(v, np.ndarray):
                guards[b.id] = v != br.guard.negated          # True: the branch is taken
        if not guards:
            return {}
        if block is None:
            return {b: (None, False) for b in guards}
        n = len(cfg.blocks)
        nthreads = len(next(iter(guards.values())))
        masks = [np.zeros(nthreads, bool) for _ in range(n)]
        masks[0][:] = True
        back = set(cfg.back_edges)
        kinds = cfg.edge_kind
        unknown: set[int] = set()       # blocks that an unknown branch decides which threads reach
        for b in cfg.reachable:
            succ = cfg.succ[b]
            if len(succ) < 2 or b in guards or b in controlling:
                continue
            last = self.ins[cfg.blocks[b].end - 1]
            if last.guard is not None and isinstance(
                    self.flow.operand_value(Register(last.guard.register), cfg.blocks[b].end - 1), bool):
                continue
            stop = cfg.ipdom.get(b, EXIT)
            stack = [x for x in succ if x != stop]
            while stack:                 # the region between the branch and its post-dominator
                x = stack.pop()
                if x in unknown or x == stop:
                    continue
                unknown.add(x)
                stack.extend(cfg.succ[x])
        for b in (b for b in reversed(self._postorder()) if b in cfg.reachable):
            succ = cfg.succ[b]
            last = self.ins[cfg.blocks[b].end - 1] if len(cfg.blocks[b]) else None
            value = None
            if b not in guards and len(succ) > 1 and last is not None and last.guard is not None:
                value = self.flow.operand_value(Register(last.guard.register), cfg.blocks[b].end - 1)
            for s in succ:
                if (b, s) in back:
                    continue
                if b in guards:
                    masks[s] |= masks[b] & (guards[b] if kinds[(b, s)] == "taken" else ~guards[b])
                elif isinstance(value, bool) and (value != last.guard.negated) != (kinds[(b, s)] == "taken"):
                    continue                   # this edge is never taken
                else:
                    masks[s] |= masks[b]
        out = {}
        for b, g in guards.items():
            reach = masks[b]
            k = int(reach.sum())
            out[b] = ((float((reach & g).sum()) / k) if k else 0.5, b not in unknown and k > 0)
        return out

    def _postorder(self) -> list[int]:
        cfg = self.cfg
        post: list[int] = []
        seen = {0}
        stack = [(0, iter(cfg.succ[0]))]
        while stack:
            node, it = stack[-1]
            for v in it:
                if v not in seen:
                    seen.add(v)
                    stack.append((v, iter(cfg.succ[v])))
                    break
            else:
                stack.pop()
                post.append(node)
        return post

    def _self_loop_blocks(self, b: int) -> set[int]:
        return {b} if (b, b) in self.cfg.edge_kind or any(b in l.blocks for l in self.cfg.loops.values()) else set()

    @staticmethod
    def _solve(n: int, prob: dict[tuple[int, int], float]) -> dict[int, float]:
        if n == 0:
            return {}
        a = np.eye(n)
        for (u, v), p in prob.items():
            a[v, u] -= p
        e = np.zeros(n)
        e[0] = 1.0
        try:
            x = np.linalg.solve(a, e)
        except np.linalg.LinAlgError:
            x = np.linalg.lstsq(a, e, rcond=None)[0]
        out = {}
        for i, v in enumerate(x.tolist()):     # Python floats: the same values, without numpy scalars
            r = round(v)
            out[i] = float(r) if abs(v - r) <= 1e-6 * max(1.0, abs(v)) else float(v)
            if out[i] < 0:
                out[i] = 0.0
        return out


_UNSUPPORTED = object()

_STEP_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b, "and": lambda a, b: a & b,
    "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "min": min, "max": max,
}


def _step_value(ins, env: dict, const=None, fn=None):
    """The integer (or predicate) an instruction of a loop's exit slice computes from ``env``
    (register key -> value); :data:`_UNSUPPORTED` for an operation it does not model (also when
    called with an empty ``env`` and no ``const``: the check of the opcode alone)."""
    from .dataflow import _CMP, _UNSIGNED_CMP, _wrap

    op, mods = ins.opcode, ins.modset
    t = _type(ins)
    known = op in ("mov", "cvt", "not") or op in COMPARES or op in _STEP_OPS
    if not known or (t and t[0] == "f") or (op == "mul" and "lo" not in mods and "wide" not in mods):
        return _UNSUPPORTED
    if const is None:
        return None

    def val(o):
        if isinstance(o, Register) and o.component is None:
            key = fn.register_key(o.name, ins.scope)
            if key in env:
                return env[key]
        v = const(o)
        return None if v is None or isinstance(v, np.ndarray) else v

    args = [val(o) for o in ins.operands[1:]]
    if any(a is None for a in args):
        return None
    if op in ("mov", "cvt"):
        return _wrap(int(args[0]), t) if t != "pred" else bool(args[0])
    if op == "not":
        return (not args[0]) if t == "pred" else _wrap(~int(args[0]), t)
    if op in COMPARES:
        cmp = next((m for m in ins.modifiers if m in _CMP), None)
        if cmp is None or len(args) < 2:
            return None
        a, b = (int(x) for x in args[:2])
        if cmp in _UNSIGNED_CMP:
            bits = int("".join(ch for ch in (t or "u64") if ch.isdigit()) or 64)
            a, b, cmp = a % (1 << bits), b % (1 << bits), _UNSIGNED_CMP[cmp]
        return bool(_CMP[cmp](a, b))
    if len(args) < 2:
        return None
    return _wrap(_STEP_OPS[op](int(args[0]), int(args[1])), t)


def _text(op) -> str:
    if isinstance(op, Register):
        return op.text
    if isinstance(op, Pair):
        return _text(op.first)
    v = getattr(op, "value", None)
    return str(v) if v is not None else str(op)
