"""The scalar program of an Ascend-like kernel, stepped alone: exact per-instruction counts.

An Ascend-like kernel's loop bounds are computed by its scalar program -- scalar registers,
``cmp`` and ``bra`` -- from ``block_idx``, ``block_num``, the scalar parameters and immediates
(the shapes ``kernlens generate`` bakes in). Stepping that program for every core of the launch,
with no tiles and no data movement, gives how often each instruction runs, exactly, in a few
thousand Python steps where the static estimate assumed 16 iterations per unknown loop::

    steps = step_scalar(module, fn, load_machine("davinci-a2"))
    steps.exact, steps.cores, sum(steps.counts)      # True, 24, 1716 (gemm_f16_256x192x320)

The instructions are those of :class:`sim.ascend.engine.Launch`: its compiled closures run the
scalar and branch instructions (one set of semantics, from the opcode table's families); every
other instruction (pipes, sync, masks) is counted and passed over. A scalar load (``ld`` from UB)
reads data: its register becomes *unknown*, and so does every register computed from it; a
branch whose predicate is unknown ends the stepping (the counts then depend on data, and the
result says which line). So does a program that needs more than ``limit`` steps in all, a
register read before it is written, or a scalar parameter without a value.

The counts assume no core stops early on undefined behaviour in a pipe instruction (an
out-of-range copy): a run stops such a core, this stepping does not see it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from isa import ir
from isa.ascend.mix import mix_kernels
from isa.ascend.opcodes import OPCODES

#: the most scalar-program steps (instructions, all cores together) :func:`step_scalar` takes
STEP_LIMIT = 2_000_000

_SKIP, _SCALAR, _BRANCH, _LOAD, _MASK = 0, 1, 2, 3, 4
#: the vector mask state, as a register: unknown when a mask was set from loaded data
_MASK_REG = "(vector mask)"


@dataclass
class ScalarSteps:
    """What stepping the scalar program gave: per-instruction counts summed over the cores, or
    why there are none (``exact`` False, ``reason``, ``line``, ``needs``)."""

    kernel: str
    core_type: str
    cores: int
    exact: bool
    counts: list[int] = field(default_factory=list)      # executions per instruction, all cores
    taken: list[int] = field(default_factory=list)       # jumps per branch instruction, all cores
    per_core: list[int] = field(default_factory=list)    # instructions executed by each core
    steps: int = 0
    reason: str = ""
    line: int = 0                                        # the instruction that stopped the stepping
    needs: tuple[str, ...] = ()                          # parameters that would let it go on
    stopped: list[str] = field(default_factory=list)     # cores ended by undefined behaviour (scalar)
    #: per pipe instruction, its work summed over the executions whose guard held, each described
    #: (``isa.ascend.semantics.describe``) with its register operands' values: (flops, int_ops, bytes)
    work: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    #: pipe instructions whose count operands came from loaded data at least once (work unknown)
    work_unknown: set[int] = field(default_factory=set)

    @property
    def block_idx(self) -> str:
        """Which ``block_idx`` values were stepped: ``'0-23'`` (every core of the launch)."""
        return f"0-{self.cores - 1}" if self.cores > 1 else "0"


def launch_cores(module: ir.Module, fn: ir.Function, machine) -> tuple[int, str, bool]:
    """(cores, core type, part of a mix kernel) of ``fn`` as ``kernlens run`` launches it: every
    core of its type, or for a code segment of a mix kernel the cube cores and twice as many
    vector cores (:func:`sim.ascend.engine.launch_kernel`)."""
    core_type = fn.attributes[0] if fn.attributes else "cube"
    for fa, fv in mix_kernels(module).values():
        if fn.name == fa.name:
            return machine.cube_cores, "cube", True
        if fn.name == fv.name:
            return 2 * machine.cube_cores, "vector", True
    return machine.cores(core_type), core_type, False


def step_scalar(module: ir.Module, fn: ir.Function, machine, *, params: dict[str, int] | None = None,
                cores: int | None = None, limit: int = STEP_LIMIT) -> ScalarSteps:
    """Step ``fn``'s scalar program on every core of its launch (``cores``: that many instead);
    ``params`` gives scalar parameters by name (``%n`` or ``n``)."""
    from isa.errors import InputError
    from .engine import Launch, UndefinedBehaviour

    n_cores, core_type, mix = launch_cores(module, fn, machine)
    if cores is not None:
        n_cores = cores * (2 if mix and core_type == "vector" else 1)
    out = ScalarSteps(fn.name, core_type, n_cores, False)
    given = {k.lstrip("%"): v for k, v in (params or {}).items()}
    missing = [p.name for p in fn.params if p.space == "param" and p.name.lstrip("%") not in given]
    if missing:
        out.reason = f"scalar parameter(s) {', '.join(missing)} have no value"
        out.needs = tuple(missing)
        out.line = fn.span.line
        return out
    inputs = {p.name.lstrip("%"): given[p.name.lstrip("%")] for p in fn.params if p.space == "param"}
    try:
        launch = Launch(module, fn, machine, inputs, n_cores, functional=False, mix=mix)
    except InputError as exc:
        out.reason = f"the kernel cannot be launched: {exc}"
        return out
    ins = launch.instrs
    n = len(ins)
    kinds, reads, dests = [], [], []
    for i in ins:
        fam = OPCODES[i.opcode].family
        kind = {"scalar": _SCALAR, "branch": _BRANCH, "scalar_load": _LOAD, "mask": _MASK}.get(fam, _SKIP)
        kinds.append(kind)
        r = {o.name for o in i.operands[1 if kind in (_SCALAR, _LOAD) else 0:] if isinstance(o, ir.Register)}
        r |= {o.base.name for o in i.operands if isinstance(o, ir.Address) and isinstance(o.base, ir.Register)}
        if i.guard is not None:
            r.add(i.guard.register)
        reads.append(frozenset(r))
        dests.append(i.operands[0].name if kind in (_SCALAR, _LOAD) else _MASK_REG if kind == _MASK else None)
    # pipe instructions: their integer operands in registers (counts, strides: the table's kind 'I';
    # scalar values 'V' and address bases decide no work)
    regops = [tuple((j, o.name) for j, (o, what) in enumerate(zip(i.operands, OPCODES[i.opcode].operands))
                    if isinstance(o, ir.Register) and what == "I")
              if kind == _SKIP and OPCODES[i.opcode].family not in _NO_WORK else None
              for i, kind in zip(ins, kinds)]
    work_of: dict[tuple, tuple[int, int, int]] = {}
    work = {k: [0, 0, 0] for k, r in enumerate(regops) if r is not None}
    counts, taken = [0] * n, [0] * n
    code = launch.code
    steps = 0
    for core_id in range(n_cores):
        sub = core_id % 2 if mix and core_type == "vector" else 0
        core = _ScalarCore(launch.initial_registers(core_id, sub))
        unknown: set[str] = set()
        loaded_at: dict[str, int] = {}
        pc = 0
        mine = 0
        while pc < n:
            steps += 1
            mine += 1
            if steps > limit:
                out.reason = (f"the scalar program needs more than {limit:,} steps (all cores together; stopped on "
                              f"core {core_id})")
                out.line = ins[pc].span.line
                return out
            counts[pc] += 1
            kind = kinds[pc]
            if kind == _SKIP:
                ro = regops[pc]
                if ro is not None:
                    _add_work(ins[pc], pc, ro, core, unknown, work, work_of, out.work_unknown)
                pc += 1
                continue
            i = ins[pc]
            if unknown and not unknown.isdisjoint(reads[pc]):
                if kind == _BRANCH:
                    src = sorted(loaded_at[r] for r in unknown & reads[pc] if r in loaded_at)
                    out.reason = (f"the branch at line {i.span.line} depends on data (a value loaded from UB"
                                  + (f" at line {src[0]}" if src else "") + ")")
                    out.line = i.span.line
                    return out
                unknown.add(dests[pc])          # computed from a loaded value (or under a guard on one)
                loaded_at.setdefault(dests[pc], next((loaded_at[r] for r in reads[pc] if r in loaded_at), 0))
                pc += 1
                continue
            if kind == _LOAD:
                if i.guard is None or bool(core.regs[i.guard.register]) != i.guard.negated:
                    unknown.add(dests[pc])
                    loaded_at[dests[pc]] = i.span.line
                pc += 1
                continue
            writes = kind in (_SCALAR, _MASK) and (i.guard is None or bool(core.regs[i.guard.register]) != i.guard.negated)
            try:
                nxt = code[pc](core)
            except KeyError as exc:
                out.reason = f"register {exc.args[0]} is read before it is written (line {i.span.line})"
                out.line = i.span.line
                return out
            except UndefinedBehaviour as ub:   # a run stops this core here too
                out.stopped.append(f"core {core_id}: line {i.span.line}: {ub.message}")
                break
            if writes:
                unknown.discard(dests[pc])
                loaded_at.pop(dests[pc], None)
            if nxt is None:
                pc += 1
            else:
                taken[pc] += 1
                pc = nxt
        out.per_core.append(mine)
    out.exact, out.counts, out.taken, out.steps = True, counts, taken, steps
    out.work = {k: tuple(v) for k, v in work.items()}
    return out


#: families that do no work of their own (synchronisation, masks, configuration)
_NO_WORK = frozenset({"sync", "mask", "config"})


def _add_work(i: ir.Instruction, pc: int, regops, core, unknown, work, memo, work_unknown) -> None:
    """Add one execution of pipe instruction ``i`` to ``work[pc]``: described with its register
    operands replaced by their values (once per distinct set of values), nothing when its guard
    is false. A vector instruction's work is per active lane: its lanes as the vector mask and
    mode leave them (``sim.ascend.dataops._active``, what the engine runs), times the work of one
    lane (the description of one repeat over its lanes)."""
    from dataclasses import replace

    from isa.ascend.semantics import VECTOR_FAMILIES, describe, repeat_operand

    from .dataops import _active

    regs = core.regs
    g = i.guard
    if g is not None:
        if g.register in unknown:
            work_unknown.add(pc)
            return
        if bool(regs[g.register]) == g.negated:
            return
    if unknown and any(r in unknown for _, r in regops):
        work_unknown.add(pc)
        return
    fam = OPCODES[i.opcode].family
    vector = fam in VECTOR_FAMILIES
    if vector and _MASK_REG in unknown:
        work_unknown.add(pc)
        return
    values = tuple(regs.get(r) for _, r in regops)
    key = (pc, values, core.mask_mode, core.mask) if vector else (pc, values)
    w = memo.get(key)
    if w is None:
        ops = list(i.operands)
        for (j, _), v in zip(regops, values):
            if isinstance(v, int):
                ops[j] = ir.Immediate(v)
        if vector:
            r = repeat_operand(fam)
            repeat = ops[r].value if isinstance(ops[r], ir.Immediate) else None
            ops[r] = ir.Immediate(1)
            one = describe(replace(i, operands=tuple(ops)))     # one full repeat
            lanes = one.extra["lanes"]
            if repeat is None or not isinstance(repeat, int):
                work_unknown.add(pc)
                return
            _reps, act = _active(core, lanes, int(repeat))
            on = int(act.sum())
            w = memo[key] = (one.flops * on / lanes, one.int_ops * on / lanes, one.bytes * on / lanes)
        else:
            info = describe(replace(i, operands=tuple(ops)))
            w = memo[key] = (info.flops, info.int_ops, info.bytes)
    acc = work[pc]
    acc[0] += w[0]
    acc[1] += w[1]
    acc[2] += w[2]


class _ScalarCore:
    """What the engine's scalar and branch closures touch of a core: its registers."""

    __slots__ = ("regs", "scal", "mask", "mask_mode")

    def __init__(self, regs: dict):
        self.regs = regs
        self.scal = 0
        self.mask_mode, self.mask = "norm", (-1, -1)       # as sim.ascend.engine.Core starts
