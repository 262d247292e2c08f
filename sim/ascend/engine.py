"""Functional engine: runs an Ascend-like kernel on every core of a launch, in program order.

Per core it keeps the scalar registers, the on-chip buffers (L1, L0A, L0B, L0C, UB, FB) as
bytes, the vector mask and FixPipe configuration, and the set/wait flags. Data operations are
in :mod:`sim.ascend.dataops` (numpy, one fractal block or one repeat array at a time). Every
pipe instruction becomes an :class:`~sim.ascend.events.Event` for the timing model.

Undefined behaviour is reported, not raised, as a :class:`Report` with kernel, instruction and
source line; out-of-range or misaligned accesses and unsatisfiable waits stop that core (what
it already computed is kept), cross-pipe data races are reported and execution goes on::

    b.asm:7:5: error: kernel 'k' core 0: copy_matrix_cc_to_gm (PIPE_FIX) reads l0c[0x0, 0x10000)
    written by mad at line 6 (PIPE_M) with no set_flag(PIPE_M, PIPE_FIX)/wait_flag in between

With ``functional=False`` only addresses, control flow and sync are evaluated (no numerics):
that is the fast path for timing-only runs.
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from dataclasses import dataclass, field

import numpy as np

from isa import ir
from isa.ascend.mix import mix_kernels
from isa.ascend.opcodes import OPCODES, PIPE_NAMES, PIPES
from isa.errors import Diagnostic, InputError, SimulationError, Span

from . import dataops
from .events import Event, ScalarLoad
from .machine import AscendModel

PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
_S = PIPE_INDEX["S"]
# hazard-tracking granularity in bytes: fractal-sized for the cube buffers, one block for UB
GRAINS = {"l1": 512, "l0a": 512, "l0b": 512, "l0c": 512, "ub": 32, "fb": 64}
#: instructions one core may run before it is stopped as looping (``--max-steps`` changes it). The
#: bundled and generated kernels need at most 73,914 per core (a 4096^3 GEMM on 24 cores; 27,632 for
#: 1024^3 on one core), so this is over 250x any of them; a spinning scalar loop reaches it in about
#: 6 s of CPU (about 3.5 M instructions/s), as PTX's default (5 M steps per CTA batch) stops one in
#: about 8 s. It was 200 M (about 60 s of CPU)
MAX_STEPS = 20_000_000
#: instructions between two looks at the clock for the progress line
TICK_STEPS = 1 << 18


class Blocked(Exception):
    """Raised by ``wait_flag_dev`` when no cross-core release is pending: the core yields."""


class UndefinedBehaviour(Exception):
    """Raised inside the engine to stop one core; becomes a :class:`Report`."""

    def __init__(self, message: str, notes: list[str] | None = None):
        super().__init__(message)
        self.message = message
        self.notes = notes or []


@dataclass
class Report:
    """One undefined-behaviour finding: where, what, and whether the core was stopped."""

    message: str
    span: Span
    source_line: str | None
    core: int
    kernel: str
    stopped: bool
    notes: list[str] = field(default_factory=list)
    other_cores: list[int] = field(default_factory=list)

    def render(self) -> str:
        notes = list(self.notes)
        if self.other_cores:
            notes.append(f"the same happens on {len(self.other_cores)} other core(s)")
        d = Diagnostic(self.message, self.span, severity="error", notes=notes)
        return d.render(self.source_line)


# ----------------------------------------------------------------------------------------------
# Global memory
# ----------------------------------------------------------------------------------------------

class GlobalMemory:
    """GM parameters laid out at 512-B aligned byte addresses, each with its own byte array."""

    BASE = 0x10000000

    def __init__(self, params: list[ir.Variable], inputs: dict[str, np.ndarray], functional: bool):
        from isa.types import type_bytes
        self.names, self.lo, self.hi, self.data, self.dtypes = [], [], [], [], []
        addr = self.BASE
        for p in params:
            n = p.dims[0] * type_bytes(p.type)
            self.names.append(p.name)
            self.lo.append(addr)
            self.hi.append(addr + n)
            self.dtypes.append(p.type)
            buf = None
            if functional:
                buf = np.zeros(n, dtype=np.uint8)
                arr = inputs.get(p.name.lstrip("%"))
                if arr is not None:
                    buf[:] = _input_bytes(np.asarray(arr), p, n)
            self.data.append(buf)
            addr = (addr + n + 4096 + 511) // 512 * 512
        self.touched = [[] for _ in self.lo]     # per parameter: (starts, ends) byte ranges, merged when many
        self.owners = None   # cross-core race tracking (mix launches), see track()

    GRAIN = 32

    def track(self) -> None:
        """Record, per 32-B block of every parameter, the last writer and last reader (core, pipe,
        tick) so that accesses by another core without cross-core synchronisation are reported."""
        self.owners = []
        for lo, hi in zip(self.lo, self.hi):
            n = max(1, (hi - lo + self.GRAIN - 1) // self.GRAIN)
            self.owners.append({k: np.full(n, -1, dtype=np.int64) for k in ("wc", "wp", "wt", "rc", "rp", "rt", "wa")})

    def locate(self, lo: int, hi: int) -> tuple[int, int]:
        """(parameter index, byte offset) holding ``[lo, hi)``; raises UndefinedBehaviour if none."""
        for i, (a, b) in enumerate(zip(self.lo, self.hi)):
            if a <= lo < b + 4096:
                if hi > b or lo < a:
                    raise UndefinedBehaviour(
                        f"GM access [{lo - a:#x}, {hi - a:#x}) is out of bounds of parameter {self.names[i]} "
                        f"({b - a} bytes)")
                return i, lo - a
        raise UndefinedBehaviour(f"GM address {lo:#x} is not inside any kernel parameter")

    def touch(self, i: int, off: int, nbytes: int, n: int = 1, stride: int = 0) -> None:
        """Parameter ``i``'s bytes ``[off + k*stride, off + k*stride + nbytes)`` for k < ``n`` are accessed."""
        starts = off + np.arange(n, dtype=np.int64) * stride
        t = self.touched[i]
        t.append((starts, starts + nbytes))
        if len(t) > 4096:
            self.touched[i] = [_union(t)]

    def footprint(self) -> int:
        """Distinct GM bytes accessed (exact: the union of the accessed byte ranges)."""
        total = 0
        for t in self.touched:
            if t:
                s, e = _union(t)
                total += int((e - s).sum())
        return total

    def array(self, name: str) -> np.ndarray | None:
        import ml_dtypes  # noqa: F401  (registers bfloat16)
        i = self.names.index(name)
        if self.data[i] is None:
            return None
        return self.data[i].view(dataops.np_dtype(self.dtypes[i])).copy()


def _union(ranges) -> tuple[np.ndarray, np.ndarray]:
    """The union of ``[(starts, ends), ...]`` byte ranges as disjoint sorted (starts, ends)."""
    s = np.concatenate([r[0] for r in ranges])
    e = np.concatenate([r[1] for r in ranges])
    o = np.argsort(s, kind="stable")
    s, e = s[o], e[o]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], reach[last]


def _input_bytes(arr: np.ndarray, p: ir.Variable, nbytes: int) -> np.ndarray:
    """The bytes an input array puts in GM parameter ``p``: the parameter's own dtype or its bit
    patterns (same-size unsigned ints, e.g. bf16 as uint16) are taken as they are; another
    numeric dtype with the right element count is converted by value (float64 -> .f16)."""
    want = np.dtype(dataops.np_dtype(p.type))
    key = p.name.lstrip("%")
    if arr.dtype == want or (arr.dtype.kind in "uV" and arr.dtype.itemsize == want.itemsize):
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
    elif arr.dtype.kind in "biuf" and arr.size == p.dims[0]:
        raw = np.ascontiguousarray(arr.astype(want)).view(np.uint8).reshape(-1)
    else:
        raise InputError(f"input '{key}' ({arr.size} x {arr.dtype}) does not fit parameter {p.name} "
                         f"({p.dims[0]} x .{p.type})", p.span)
    if raw.size != nbytes:
        raise InputError(f"input '{key}' has {arr.size} x {arr.dtype} = {raw.size} bytes, parameter {p.name} "
                         f"declares {p.dims[0]} x .{p.type} = {nbytes} bytes", p.span)
    return raw


# ----------------------------------------------------------------------------------------------
# Cross-pipe hazard tracking with vector clocks
# ----------------------------------------------------------------------------------------------

class Hazards:
    """Last writer / readers of every 32-B line of each buffer, and one vector clock per pipe.

    A pipe's clock entry for pipe Q says up to which of Q's instructions it has synchronised
    (through set_flag/wait_flag, pipe_barrier(PIPE_ALL) or a unit flag).
    """

    def __init__(self, machine: AscendModel):
        np_ = len(PIPES)
        self.vc = np.zeros((np_, np_), dtype=np.int64)
        self.w_pipe, self.w_t, self.w_idx, self.r_t, self.r_idx = {}, {}, {}, {}, {}
        self.grain = {}
        for name, b in machine.buffers.items():
            self.grain[name] = g = GRAINS.get(name, 32)
            n = b.size // g
            self.w_pipe[name] = np.full(n, -1, dtype=np.int8)
            self.w_t[name] = np.zeros(n, dtype=np.int64)
            self.w_idx[name] = np.zeros(n, dtype=np.int32)
            self.r_t[name] = np.zeros((n, np_), dtype=np.int64)
            self.r_idx[name] = np.zeros((n, np_), dtype=np.int32)

    def tick(self, p: int) -> int:
        self.vc[p, p] += 1
        return int(self.vc[p, p])

    def _unsynced_writer(self, space: str, a: int, b: int, p: int, known) -> tuple[int, int] | None:
        """(pipe, instruction index) of a write by another pipe to lines ``a..b`` of ``space``
        that pipe ``p`` has not synchronised with, or None."""
        wp = self.w_pipe[space][a:b]
        sel = (wp >= 0) & (wp != p)
        if not sel.any():
            return None
        late = sel & (self.w_t[space][a:b] > known[np.maximum(wp, 0)])
        if not late.any():
            return None
        j = int(np.argmax(late))
        return int(wp[j]), int(self.w_idx[space][a + j])

    def access(self, p: int, t: int, idx: int, reads, writes) -> list[tuple]:
        """Record reads/writes ``(space, lo, hi)`` of pipe ``p``; return races found."""
        bad = []
        known = self.vc[p]
        grain = self.grain
        for space, lo, hi in reads:
            g = grain[space]
            a, b = lo // g, (hi + g - 1) // g
            w = self._unsynced_writer(space, a, b, p, known)
            if w is not None:
                bad.append(("reads", space, lo, hi) + w)
            self.r_t[space][a:b, p] = t
            self.r_idx[space][a:b, p] = idx
        for space, lo, hi in writes:
            g = grain[space]
            a, b = lo // g, (hi + g - 1) // g
            rt = self.r_t[space][a:b]
            late = rt > known[None, :]
            late[:, p] = False
            if late.any():
                j, q = np.argwhere(late)[0]
                bad.append(("overwrites", space, lo, hi, int(q), int(self.r_idx[space][a + j, q])))
            w = self._unsynced_writer(space, a, b, p, known)
            if w is not None:
                bad.append(("overwrites the result of", space, lo, hi) + w)
            self.w_pipe[space][a:b] = p
            self.w_t[space][a:b] = t
            self.w_idx[space][a:b] = idx
        return bad


# ----------------------------------------------------------------------------------------------
# One core
# ----------------------------------------------------------------------------------------------

class Core:
    """Registers, buffers, mask, flags and event list of one core while it runs the kernel."""

    def __init__(self, launch: "Launch", core_id: int, gid: int | None = None, group: int | None = None,
                 sub: int = 0):
        m = launch.machine
        self.launch = launch
        self.id = core_id
        self.gid = core_id if gid is None else gid       # index among all cores of the launch (AIC first)
        self.kind = launch.core_type
        self.group = core_id if group is None else group  # AI core (AIC + its two AIVs) it belongs to
        self.sub = sub
        self.pc = 0
        self.steps = 0
        self.remote: dict[int, np.ndarray] = {}           # what this core knows of other cores' pipes
        self.functional = launch.functional
        self.buffers = {name: np.zeros(b.size, dtype=np.uint8) for name, b in m.buffers.items()} \
            if launch.functional else {}
        self.sizes = {name: b.size for name, b in m.buffers.items()}
        self.aligns = {name: b.align for name, b in m.buffers.items()}
        self.regs: dict[str, object] = launch.initial_registers(core_id, sub)
        self.mask_mode = "norm"
        self.mask = (-1, -1)
        self.quant_pre = 0
        self.fpc = 0
        self.fmatrix = None         # set_fmatrix: (W, H, pad left, right, top, bottom) of the L1 feature map
        self.atomic = None          # set_atomic_add/max/min: GM stores combine with GM
        self.atomic_type = "f32"    # set_atomic_<type> (f32 until set [assumed])
        self.flags: dict[tuple, tuple] = {}      # key -> (set eid, vc snapshot, instr idx)
        self.consumed: dict[tuple, int] = {}     # key -> idx of the last wait that consumed it
        self.events: list[Event] = []
        self.scal = 0
        self.hz = Hazards(m)
        self.last_unit_mad: tuple | None = None
        self.steps = 0

    # ---- helpers used by instruction closures ----
    def emit(self, idx, pipe, kind, name, work=None, key=None, pair=None) -> Event:
        ev = Event(len(self.events), idx, pipe, kind, name, work, key, pair, self.scal)
        self.scal = 0
        self.events.append(ev)
        return ev

    def check_range(self, space: str, lo: int, hi: int, what: str) -> None:
        size = self.sizes[space]
        if lo < 0 or hi > size:
            raise UndefinedBehaviour(f"{what} accesses {space}[{lo:#x}, {hi:#x}) beyond the {size // 1024} KB {space} "
                                     f"buffer (overflow by {max(hi - size, -lo)} bytes)")

    def check_align(self, space: str, addr: int, what: str, align: int | None = None) -> None:
        a = align or self.aligns[space]
        if addr % a:
            raise UndefinedBehaviour(f"{what}: {space} address {addr:#x} is not {a}-byte aligned "
                                     f"({space} requires {a}-B alignment)")

    def gm_race(self, pipe: str, idx: int, span, write: bool) -> None:
        """Report a GM access that conflicts with another core's access it has not synchronised with
        (through cross-core flags); only mix launches track GM (``GlobalMemory.track``)."""
        gm = self.launch.gm
        if gm.owners is None or span is None:
            return
        lo, hi = span[0], span[1]
        i, off = gm.locate(lo, hi)
        g = gm.GRAIN
        pattern = span[2] if len(span) > 2 else None
        if pattern is None or pattern[0] == 1 or pattern[1] >= pattern[2]:
            sel_idx = np.arange(off // g, (off + (hi - lo) + g - 1) // g)
        else:  # bursts with gaps: only the bytes moved
            n, blen, stride = pattern
            starts = off + np.arange(n) * stride
            first, last = starts // g, (starts + blen - 1) // g
            width = int((last - first).max()) + 1
            sel_idx = np.unique((first[:, None] + np.arange(width)[None, :])[
                np.arange(width)[None, :] <= (last - first)[:, None]])
        own = gm.owners[i]
        p = PIPE_INDEX[pipe]
        tick = int(self.hz.vc[p, p])
        checks = [("w", "written")] + ([("r", "read")] if write else [])
        atomic = write and self.atomic is not None
        for key, verb in checks:
            cores = own[key + "c"][sel_idx]
            other = (cores >= 0) & (cores != self.gid)
            if atomic and key == "w":          # atomic stores into GM do not race with each other
                other &= own["wa"][sel_idx] != 1
            if not other.any():
                continue
            for c in np.unique(cores[other]):
                sel = cores == c
                pipes, ticks = own[key + "p"][sel_idx][sel], own[key + "t"][sel_idx][sel]
                known = self.remote.get(int(c))
                late = ticks > (known[pipes] if known is not None else -1)
                if late.any():
                    j = int(np.argmax(late))
                    other_core = self.launch.core_name(int(c))
                    me = self.launch.instrs[idx]
                    self.launch.report(self, idx, f"{me.opcode} (PIPE_{pipe}) {'writes' if write else 'reads'} "
                                       f"{gm.names[i]}[{int(sel_idx[np.flatnonzero(sel)[j]]) * g:#x}, ...) "
                                       f"{verb} by {other_core} (PIPE_{PIPES[int(pipes[j])]}) with no cross-core "
                                       f"flag (ffts_cross_core_sync / wait_flag_dev) between them", stopped=False)
                    break
        side = "w" if write else "r"
        own[side + "c"][sel_idx] = self.gid
        own[side + "p"][sel_idx] = p
        own[side + "t"][sel_idx] = tick
        if write:
            own["wa"][sel_idx] = 1 if atomic else 0

    def race(self, pipe: str, idx: int, reads, writes) -> None:
        p = PIPE_INDEX[pipe]
        t = self.hz.tick(p)
        vc = self.hz.vc
        vc[p, _S] = vc[_S, _S]  # the scalar unit issues in order: what it did is done before any dispatch
        if not self.functional:
            return  # timing-only runs skip the race checker (sync itself is still checked)
        for verb, space, lo, hi, q, widx in self.hz.access(p, t, idx, reads, writes):
            other = self.launch.instrs[widx]
            opipe = PIPES[q]
            me = self.launch.instrs[idx]
            self.launch.report(self, idx, f"{me.opcode} (PIPE_{pipe}) {verb} {space}[{lo:#x}, {hi:#x}) "
                               f"{'written' if verb == 'reads' else 'used'} by {other.opcode} at line {other.span.line} "
                               f"(PIPE_{opipe}) with no set_flag(PIPE_{opipe}, "
                               f"PIPE_{pipe})/wait_flag between them",
                               stopped=False,
                               notes=[f"line {other.span.line}: {self.launch.source_line(other.span.line) or ''}".rstrip()])


# ----------------------------------------------------------------------------------------------
# The launch
# ----------------------------------------------------------------------------------------------

@dataclass
class LaunchResult:
    kernel: str
    core_type: str
    blocks: int
    events: list[list[Event]]
    gm: GlobalMemory
    reports: list[Report]
    instructions_executed: int
    outputs: dict[str, np.ndarray]
    core_types: list[str] | None = None     # per core (events index): 'cube' | 'vector'
    core_kernels: list[str] | None = None   # per core: the kernel (code segment) it ran
    vector_blocks: int = 0                  # vector cores of a mix launch
    #: per kernel (code segment) run: how often each instruction index was executed (issued, a
    #: guarded one whose predicate is false included), summed over its cores -- measured
    pc_counts: dict[str, list[int]] = field(default_factory=dict)
    #: per kernel: how often each branch (``bra``, ``ret``) jumped, summed over its cores
    taken_counts: dict[str, list[int]] = field(default_factory=dict)

    def core_label(self, i: int) -> str:
        kind = self.core_types[i] if self.core_types else self.core_type
        first = self.core_types.index(kind) if self.core_types else 0
        return f"{kind} core {i - first}"


class Launch:
    def __init__(self, module: ir.Module, kernel: ir.Function, machine: AscendModel, inputs: dict, blocks: int,
                 functional: bool, gm: "GlobalMemory | None" = None, xcore: "CrossCore | None" = None,
                 gid_base: int = 0, mix: bool = False, max_steps: int | None = None, progress=None):
        self.module = module
        self.progress = progress      # callable(instructions, core name, cores): about every 2 s of a long run
        self._shown = None            # when the progress line was last shown (monotonic seconds)
        self.kernel = kernel
        self.max_steps = MAX_STEPS if max_steps is None else int(max_steps)   # per core
        self.machine = machine
        self.functional = functional
        self.blocks = blocks
        self.instrs = kernel.instructions
        self.labels = kernel.labels
        self.reports: list[Report] = []
        self._seen: dict = {}
        self.scalars = {}
        known = [p.name.lstrip("%") for p in kernel.params]
        extra = sorted(set(inputs) - set(known))
        if extra:
            raise InputError(f"input{'s' if len(extra) > 1 else ''} {', '.join(repr(e) for e in extra)} "
                             f"match{'' if len(extra) > 1 else 'es'} no parameter of kernel '{kernel.name}'",
                             kernel.span, expected=known)
        for p in kernel.params:
            if p.space == "param":
                key = p.name.lstrip("%")
                if key not in inputs:
                    raise InputError(f"no value for scalar parameter {p.name} (give it in --inputs as '{key}')",
                                     p.span)
                v = np.asarray(inputs[key]).reshape(-1)[0]
                self.scalars[p.name] = float(v) if p.type.startswith(("f", "bf")) else int(v)
        self.core_type = kernel.attributes[0] if kernel.attributes else "cube"
        self.gid_base = gid_base
        self.mix = mix
        self.gm = gm if gm is not None else GlobalMemory([p for p in kernel.params if p.space == "gm"], inputs,
                                                          functional)
        self.xcore = xcore if xcore is not None else CrossCore()
        for i, p in enumerate(q for q in kernel.params if q.space == "gm"):
            self.scalars[p.name] = self.gm.lo[i]
        self.code = [compile_instruction(ins, i, self) for i, ins in enumerate(self.instrs)]
        self.pc_counts = [0] * len(self.instrs)      # executions per instruction, all cores (measured)
        self.taken_counts = [0] * len(self.instrs)   # jumps per branch, all cores

    def initial_registers(self, core_id: int, sub: int = 0) -> dict[str, object]:
        """The scalar registers a core starts with: ``block_idx``, ``block_num``, ``subblock_idx``,
        the scalar parameters and the GM parameters' addresses (also what
        :mod:`sim.ascend.scalar` steps from)."""
        regs: dict[str, object] = {"block_idx": core_id, "block_num": self.blocks, "subblock_idx": sub}
        regs.update(self.scalars)
        return regs

    def source_line(self, line: int) -> str | None:
        return self.module.source_line(line)

    interrupted = False

    def _stop_looping(self, core: Core, pc: int, steps: int, why: str | None = None) -> None:
        """The core ran ``max_steps`` instructions (a loop that never exits?): report where it loops
        -- the innermost backward branch around ``pc``, about how many iterations, the registers its
        exit test reads -- and stop this core, keeping every result written so far (issue #15)."""
        ins = self.instrs
        loops = [(t, k) for k, i in enumerate(ins) if i.opcode == "bra" and i.operands
                 and (t := self.labels.get(getattr(i.operands[0], "name", None))) is not None and t <= pc <= k]
        msg = (f"max_steps: stopped after {steps:,} instructions (max_steps={self.max_steps:,})" if why is None
               else f"interrupted ({why}) after {steps:,} instructions")
        if loops:
            top, br = min(loops, key=lambda tk: tk[1] - tk[0])
            body = br - top + 1
            msg += (f": in the loop at lines {ins[top].span.line}-{ins[br].span.line} (about {steps // body:,} "
                    f"iterations so far)")
            g = ins[br].guard
            cmp_ = next((k for k in range(br - 1, top - 1, -1) if ins[k].opcode == "cmp" and ins[k].operands
                         and g is not None and getattr(ins[k].operands[0], "name", None) == g.register), None)
            if cmp_ is not None:
                regs = [o.name for o in ins[cmp_].operands[1:] if isinstance(o, ir.Register)]
                vals = ", ".join(f"{r} = {core.regs.get(r, '?')}" for r in regs)
                msg += (f"; its exit test at line {ins[cmp_].span.line} ({(self.source_line(ins[cmp_].span.line) or '').strip()})"
                        + (f" reads {vals}" if vals else ""))
        self.report(core, pc, msg, stopped=True,
                    notes=["this core stopped here; results written before it are kept"]
                    + (["a kernel that needs more steps: kernlens run --max-steps N"] if why is None else []))

    def _tick(self, core: Core, steps: int) -> None:
        import time

        now = time.monotonic()
        if self._shown is None:
            self._shown = now                 # the first look: runs shorter than 2 s show nothing
        elif now - self._shown >= 2.0:
            self._shown = now
            self.progress(steps, self.core_name(core.gid), self.blocks)

    def report(self, core: Core, idx: int, message: str, *, stopped: bool, notes=None) -> None:
        key = (idx, message)
        seen = self._seen.get(key)
        if seen is not None:  # the same finding on another core: count it once
            seen.other_cores.append(core.id)
            return
        ins = self.instrs[idx]
        r = Report(f"kernel '{self.kernel.name}' core {core.id}: {message}", ins.span,
                   self.source_line(ins.span.line), core.id, self.kernel.name, stopped, list(notes or []))
        self._seen[key] = r
        self.reports.append(r)

    def core_name(self, gid: int) -> str:
        return self.xcore.name(gid)

    def make_cores(self) -> list["Core"]:
        out = []
        for cid in range(self.blocks):
            if self.mix and self.core_type == "vector":
                core = Core(self, cid, gid=self.gid_base + cid, group=cid // 2, sub=cid % 2)
            else:
                core = Core(self, cid, gid=self.gid_base + cid)
            out.append(core)
        self.xcore.add(out)
        return out

    def run(self) -> LaunchResult:
        cores = self.make_cores()
        executed = run_cores(cores)
        outputs = {}
        if self.functional:
            for name in self.gm.names:
                outputs[name.lstrip("%")] = self.gm.array(name)
        return LaunchResult(self.kernel.name, self.core_type, self.blocks, [c.events for c in cores], self.gm,
                            self.reports, executed, outputs, pc_counts={self.kernel.name: self.pc_counts},
                            taken_counts={self.kernel.name: self.taken_counts})

    def run_core(self, core: Core) -> str:
        """Run ``core`` from its pc until it ends (``'done'``) or waits for a cross-core flag (``'blocked'``)."""
        code = self.code
        n = len(code)
        pc = core.pc
        steps = core.steps
        limit = self.max_steps
        # the step count is compared with one bound: the limit, or the next look at the clock (progress)
        check = min(limit, steps + TICK_STEPS) if self.progress is not None else limit
        counts, taken = self.pc_counts, self.taken_counts
        try:
            while pc < n:
                steps += 1
                if steps > check:
                    if steps > limit:
                        steps -= 1
                        self._stop_looping(core, pc, steps)
                        break
                    self._tick(core, steps)
                    check = min(limit, steps + TICK_STEPS)
                counts[pc] += 1
                nxt = code[pc](core)
                if nxt is None:
                    pc += 1
                else:
                    taken[pc] += 1
                    pc = nxt
        except KeyboardInterrupt:     # Ctrl-C: say where this core was, keep the results, run no more cores
            steps -= 1
            self.interrupted = True
            self._stop_looping(core, pc, steps, why="Ctrl-C")
        except Blocked:
            counts[pc] -= 1               # it runs again when the flag comes
            core.pc, core.steps = pc, steps - 1
            return "blocked"
        except UndefinedBehaviour as ub:
            self.report(core, pc, ub.message, stopped=True, notes=ub.notes + ["this core stopped here; results "
                                                                               "written before it are kept"])
        except KeyError as exc:
            ins = self.instrs[pc]
            raise SimulationError(f"register {exc.args[0]} is read before it is written", ins.span,
                                  source_line=self.source_line(ins.span.line)) from None
        # waits left pending at the end are fine; sets never waited are fine (hardware leaves them set)
        core.pc, core.steps = n, steps
        return "done"


def run_cores(cores: list[Core]) -> int:
    """Run every core, switching to another core whenever one waits for a cross-core flag that no
    core has set yet (cores of one type run in index order, as far as their flags allow); when
    every unfinished core waits, each is reported as deadlocked and stopped."""
    live = list(cores)
    while live:
        progressed = False
        still = []
        for core in live:
            if any(c.launch.interrupted for c in cores):
                break                   # Ctrl-C: the cores not run yet stay so (the results so far are kept)
            before = (core.pc, core.steps)
            status = core.launch.run_core(core)
            if (core.pc, core.steps) != before:
                progressed = True
            if status == "blocked":
                still.append(core)
        if any(c.launch.interrupted for c in cores):
            break
        live = still
        if live and not progressed:
            for core in live:
                launch = core.launch
                ins = launch.instrs[core.pc]
                flag = int(_getter(ins.operands[0])(core))
                launch.report(core, core.pc, f"deadlock: wait_flag_dev {flag} can never be satisfied: no "
                              f"ffts_cross_core_sync releases flag {flag} for this core, and every other core has "
                              f"finished or waits too", stopped=True,
                              notes=["this core stopped here; results written before it are kept"])
            break
    return sum(c.steps for c in cores)


class CrossCore:
    """Cross-core flags of one launch (CrossCoreSetFlag / CrossCoreWaitFlag [ASC-XCORE]).

    Each (core, flag id) has a counter, kept as a FIFO of releases so that a wait knows which
    set(s) released it: a set by mode 0 releases every core of the setter's type once all of
    them have set; mode 1 the two vector cores of one AI core once both have set; mode 2 from a
    cube core releases its two vector cores, from a vector core releases its cube core once both
    vector cores have set. A release record is ``[(gid, eid, pipe clock row, remote knowledge)]``.
    """

    MAX_PENDING = 15

    def __init__(self):
        self.cores: list[Core] = []
        self.fifo: dict[tuple[int, int], deque] = defaultdict(deque)
        self.pending: dict[tuple, dict[int, deque]] = defaultdict(lambda: defaultdict(deque))

    def add(self, cores: list[Core]) -> None:
        self.cores.extend(cores)

    def name(self, gid: int) -> str:
        c = self.cores[gid]
        return f"{c.kind} core {c.id}"

    def _groups(self, core: Core, mode: int):
        kind = core.kind
        same = [c for c in self.cores if c.kind == kind]
        if mode == 0:
            return ("all", kind), same, same
        if not core.launch.mix:
            raise UndefinedBehaviour(f"ffts_cross_core_sync mode {mode} joins a cube core and its vector cores: it "
                                     f"needs a mix kernel (.mix), not a {kind}-only launch")
        aivs = [c for c in self.cores if c.kind == "vector" and c.group == core.group]
        aic = [c for c in self.cores if c.kind == "cube" and c.group == core.group]
        if mode == 1:
            if kind != "vector":
                raise UndefinedBehaviour("ffts_cross_core_sync mode 1 synchronises the two vector cores of an AI core; "
                                         "a cube core cannot use it")
            return ("aiv", core.group), aivs, aivs
        if mode == 2:
            if kind == "cube":
                return ("c2v", core.group), aic, aivs
            return ("v2c", core.group), aivs, aic
        raise UndefinedBehaviour(f"ffts_cross_core_sync mode {mode} is not 0, 1 or 2")

    def set(self, core: Core, mode: int, flag: int, record) -> None:
        key, setters, receivers = self._groups(core, mode)
        pend = self.pending[key + (flag,)]
        pend[core.gid].append(record)
        if all(pend[c.gid] for c in setters):
            rel = [pend[c.gid].popleft() for c in setters]
            for r in receivers:
                q = self.fifo[(r.gid, flag)]
                if len(q) >= self.MAX_PENDING:
                    raise UndefinedBehaviour(f"ffts_cross_core_sync: flag {flag} of {self.name(r.gid)} already has "
                                             f"{len(q)} releases not yet waited for (at most {self.MAX_PENDING})")
                q.append(rel)

    def take(self, core: Core, flag: int):
        q = self.fifo.get((core.gid, flag))
        if not q:
            return None
        return q.popleft()


# ----------------------------------------------------------------------------------------------
# Instruction compilation: one closure per instruction
# ----------------------------------------------------------------------------------------------

def _getter(op):
    if isinstance(op, ir.Immediate):
        v = op.value
        return lambda c: v
    if isinstance(op, ir.Register):
        name = op.name
        return lambda c: c.regs[name]
    if isinstance(op, ir.Symbol):
        name = op.name
        if name.startswith("EVENT_ID"):
            v = int(name[8:])
            return lambda c: v
        return lambda c: name
    if isinstance(op, ir.Address):
        off = op.offset
        if op.base is None:
            return lambda c: off
        name = op.base.name
        return lambda c: c.regs[name] + off
    raise TypeError(op)


def _int(v) -> int:
    return int(v)


def _cdiv(a, b):
    if b == 0:
        raise UndefinedBehaviour("scalar division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_SCALAR_INT = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": _cdiv,
    "rem": lambda a, b: a - b * _cdiv(a, b), "min": min, "max": max, "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b, "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
}
_SCALAR_F32 = {
    "add": lambda a, b: float(np.float32(a) + np.float32(b)), "sub": lambda a, b: float(np.float32(a) - np.float32(b)),
    "mul": lambda a, b: float(np.float32(a) * np.float32(b)),
    "div": lambda a, b: float(np.float32(a) / np.float32(b)) if b != 0 else math.copysign(math.inf, a) if a else math.nan,
    "min": min, "max": max,
}
_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
        "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


def compile_instruction(ins: ir.Instruction, idx: int, launch: Launch):
    spec = OPCODES[ins.opcode]
    gets = [_getter(o) for o in ins.operands]
    body = _compile_body(ins, idx, launch, spec, gets)
    if ins.guard is None:
        return body
    reg, neg = ins.guard.register, ins.guard.negated

    def guarded(c):
        if bool(c.regs[reg]) != neg:
            return body(c)
        c.scal += 1
        return None
    return guarded


def _compile_body(ins, idx, launch, spec, gets):
    op = ins.opcode
    fam = spec.family
    name = ins.opcode if op != "vconv" else "vconv_" + ins.modifiers[0] + "2" + "".join(ins.modifiers[1:])
    if fam == "scalar":
        dst = ins.operands[0].name
        if op == "mov":
            g = gets[1]

            def run(c):
                c.regs[dst] = g(c)
                c.scal += 1
            return run
        ga, gb = gets[1], gets[2]
        if op == "cmp":
            f = _CMP[ins.modifiers[0]]
        elif ins.modifiers == ("f32",):
            if op not in _SCALAR_F32:
                raise SimulationError(f"{op}.f32 is not a float operation", ins.span)
            f = _SCALAR_F32[op]
        else:
            fi = _SCALAR_INT[op]

            def f(a, b, fi=fi):
                if isinstance(a, float) or isinstance(b, float):
                    raise UndefinedBehaviour(f"integer '{op}' on a float value ({a}, {b}); use {op}.f32")
                return fi(a, b)

        def run(c):
            c.regs[dst] = f(ga(c), gb(c))
            c.scal += 1
        return run
    if op == "bra":
        target = launch.labels[ins.operands[0].name]

        def run(c):
            c.scal += 1
            return target
        return run
    if op == "ret":
        end = len(launch.instrs)

        def run(c):
            c.scal += 1
            return end
        return run
    if op == "set_mask_norm" or op == "set_mask_count":
        mode = op[9:]

        def run(c):
            c.mask_mode = mode
            c.scal += 1
        return run
    if op == "set_vector_mask":
        gh, gl = gets

        def run(c):
            c.mask = (int(gh(c)), int(gl(c)))
            c.scal += 1
        return run
    if op.startswith("set_atomic_"):
        what = op[len("set_atomic_"):]

        def run(c):
            c.scal += 1
            if what == "none":
                c.atomic = None
            elif what in ("add", "max", "min"):
                c.atomic = what
            else:
                c.atomic_type = what
        return run
    if op == "set_fmatrix":
        g = gets[0]

        def run(c):
            v = int(g(c)) & ((1 << 64) - 1)
            c.fmatrix = (v & 0xFFFF, (v >> 16) & 0xFFFF, (v >> 32) & 0xFF, (v >> 40) & 0xFF, (v >> 48) & 0xFF,
                         (v >> 56) & 0xFF)
            c.scal += 1
        return run
    if op == "set_quant_pre":
        g = gets[0]

        def run(c):
            c.quant_pre = int(g(c)) & ((1 << 64) - 1)
            c.scal += 1
        return run
    if op == "set_fpc":
        g = gets[0]

        def run(c):
            addr = g(c)
            c.check_range("fb", addr, addr + 8, "set_fpc")
            c.fpc = addr
            c.scal += 1
        return run
    if fam == "sync":
        return _compile_sync(ins, idx, launch, gets)
    if op == "ld":
        dst = ins.operands[0].name
        g = gets[1]
        dt = ins.modifiers[0]
        size = dataops.dtype_size(dt)

        def run(c):
            addr = g(c)
            c.check_range("ub", addr, addr + size, "ld")
            c.check_align("ub", addr, "ld", size)
            c.scal += 1
            c.race("S", idx, [("ub", addr, addr + size)], [])
            c.emit(idx, "S", "op", name, ScalarLoad())
            if c.functional:
                v = c.buffers["ub"][addr:addr + size].view(dataops.np_dtype(dt))[0]
                c.regs[dst] = float(v) if dt[0] in "fb" else int(v)
            else:
                c.regs[dst] = 0.0 if dt[0] in "fb" else 0
        return run
    handler = dataops.HANDLERS.get(fam)
    if handler is None:
        raise SimulationError(f"{ins.opcode} is not modelled by the simulator", ins.span)
    impl = handler(ins, launch.machine)
    pipe = spec.pipe

    def run(c):
        c.scal += 1
        args = [g(c) for g in gets]
        work, reads, writes = impl(c, args)
        c.race(pipe, idx, reads, writes)
        if c.functional and work.kind == "move" and work.span is not None:
            c.gm_race(pipe, idx, work.span, work.path.endswith("->gm"))
        ev = c.emit(idx, pipe, "op", name, work)
        if fam == "mad":
            ev.unit_flag = int(args[6])
            if ev.unit_flag == 3:
                c.last_unit_mad = (ev.eid, c.hz.vc[PIPE_INDEX["M"]].copy())
        elif fam == "fixpipe":
            ev.unit_flag = int(args[7])
        return None
    if fam == "fixpipe":
        inner = run

        def run(c):  # noqa: F811  unit-flag handshake with the last mad, then the copy itself
            args_uf = int(gets[7](c))
            if args_uf:
                if c.last_unit_mad is None:
                    raise UndefinedBehaviour("FixPipe with unitFlagMode set but no mad with unitFlag=3 before it")
                fix = PIPE_INDEX["FIX"]
                c.hz.vc[fix] = np.maximum(c.hz.vc[fix], c.last_unit_mad[1])
            inner(c)
            if args_uf:
                c.events[-1].unit_dep = c.last_unit_mad[0]
                c.last_unit_mad = None
        return run
    return run


def _compile_xsync(ins, idx, launch, gets):
    op = ins.opcode
    if op == "ffts_cross_core_sync":
        pipe = PIPE_NAMES[ins.operands[0].name]
        if pipe in ("S", "ALL"):
            raise SimulationError("ffts_cross_core_sync runs on a pipe other than PIPE_S and PIPE_ALL", ins.span)
        gmode, gflag = gets[1], gets[2]
        p = PIPE_INDEX[pipe]

        def run(c):
            c.scal += 1
            mode, flag = int(gmode(c)), int(gflag(c))
            if not 0 <= flag <= 10:
                raise UndefinedBehaviour(f"cross-core flag id {flag} is outside 0..10")
            c.hz.tick(p)
            e = c.emit(idx, pipe, "xset", "ffts_cross_core_sync", key=(mode, flag))
            snap = c.hz.vc[p].copy()
            c.launch.xcore.set(c, mode, flag, (c.gid, e.eid, snap, {k: v.copy() for k, v in c.remote.items()}))
        return run
    gflag = gets[0]

    def run(c):
        flag = int(gflag(c))
        if not 0 <= flag <= 10:
            raise UndefinedBehaviour(f"cross-core flag id {flag} is outside 0..10")
        rel = c.launch.xcore.take(c, flag)
        if rel is None:
            raise Blocked()
        c.scal += 1
        for gid, _eid, snap, remote in rel:
            for k, v in list(remote.items()) + [(gid, snap)]:
                if k == c.gid:
                    continue
                old = c.remote.get(k)
                c.remote[k] = v.copy() if old is None else np.maximum(old, v)
        c.emit(idx, "S", "xwait", "wait_flag_dev", key=flag, pair=[(gid, eid) for gid, eid, _, _ in rel])
    return run


def _compile_sync(ins, idx, launch, gets):
    op = ins.opcode
    if op in ("ffts_cross_core_sync", "wait_flag_dev"):
        return _compile_xsync(ins, idx, launch, gets)
    if op == "pipe_barrier":
        pipe = PIPE_NAMES[ins.operands[0].name]

        def run(c):
            c.scal += 1
            if pipe == "ALL":
                merged = c.hz.vc.max(axis=0)
                c.hz.vc[:] = merged
            c.emit(idx, pipe, "barrier", "pipe_barrier")
        return run
    src = PIPE_NAMES[ins.operands[0].name]
    dst = PIPE_NAMES[ins.operands[1].name]
    gev = gets[2]
    if src == "ALL" or dst == "ALL":
        raise SimulationError(f"{op} takes two concrete pipes, not PIPE_ALL", ins.span)
    text = f"({ins.operands[0].name}, {ins.operands[1].name}, EVENT_ID"

    if op == "set_flag":
        def run(c):
            c.scal += 1
            ev_id = int(gev(c))
            if not 0 <= ev_id <= 7:
                raise UndefinedBehaviour(f"event id {ev_id} is outside EVENT_ID0..EVENT_ID7")
            key = (src, dst, ev_id)
            p = PIPE_INDEX[src]
            c.hz.tick(p)
            if key in c.flags:
                prev = launch.instrs[c.flags[key][2]]
                launch.report(c, idx, f"set_flag{text}{ev_id}) sets a flag that is already set (by line "
                              f"{prev.span.line}) and not yet waited for; the second set is lost",
                              stopped=False)
            e = c.emit(idx, src, "set", "set_flag", key=key)
            c.flags[key] = (e.eid, c.hz.vc[p].copy(), idx)
        return run

    def run(c):
        c.scal += 1
        ev_id = int(gev(c))
        key = (src, dst, ev_id)
        got = c.flags.pop(key, None)
        if got is None:
            last = c.consumed.get(key)
            pending = [(k, v) for k, v in c.flags.items() if k[:2] == (src, dst)]
            notes = [f"pending instead: set_flag(PIPE_{k[0]}, PIPE_{k[1]}, EVENT_ID{k[2]}) at line "
                     f"{launch.instrs[v[2]].span.line}: {(launch.source_line(launch.instrs[v[2]].span.line) or '').strip()}"
                     for k, v in pending]
            if last is None:
                note = f"no set_flag{text}{ev_id}) was issued before it"
            else:
                w = launch.instrs[last]
                note = (f"the last set_flag{text}{ev_id}) was already consumed by the wait_flag at line "
                        f"{w.span.line}")
                notes.append(f"line {w.span.line}: {launch.source_line(w.span.line) or ''}".rstrip())
            raise UndefinedBehaviour(f"deadlock: wait_flag{text}{ev_id}) can never be satisfied: {note}; "
                                     f"PIPE_{dst} would wait forever", notes)
        set_eid, snap, set_idx = got
        p = PIPE_INDEX[dst]
        c.hz.tick(p)
        c.hz.vc[p] = np.maximum(c.hz.vc[p], snap)
        c.consumed[key] = idx
        c.emit(idx, dst, "wait", "wait_flag", key=key, pair=set_eid)
    return run


def launch_kernel(module: ir.Module, machine: AscendModel, *, kernel: str | None = None, inputs: dict | None = None,
                  cores: int | None = None, functional: bool = True, max_steps: int | None = None,
                  progress=None) -> LaunchResult:
    """Run ``kernel`` (default: the only kernel) on as many cores as its type has (or ``cores``)."""
    kernels = module.kernels
    if not kernels:
        raise InputError("the file has no kernel", Span(module.path or "<text>"))
    mixes = mix_kernels(module)
    if kernel is None and mixes and len(kernels) == 2 * len(mixes) and len(mixes) == 1:
        kernel = next(iter(mixes))
    for mname, pair in mixes.items():
        if kernel in (pair[0].name, pair[1].name):   # a code segment of a mix kernel runs as the whole mix
            kernel = mname
    if kernel in mixes:
        return _launch_mix(module, machine, kernel, mixes[kernel], inputs or {}, cores, functional, max_steps,
                           progress)
    if kernel is None:
        if len(kernels) > 1:
            raise InputError(f"the file has {len(kernels)} kernels; choose one with --kernel",
                             expected=[k.name for k in kernels])
        k = kernels[0]
    else:
        k = module.function(kernel)
    core_type = k.attributes[0] if k.attributes else "cube"
    n = machine.cores(core_type)
    if cores is not None:
        if cores < 1:
            raise InputError(f"--cores must be at least 1, got {cores}")
        n = min(n, cores)
    return Launch(module, k, machine, inputs or {}, n, functional, max_steps=max_steps, progress=progress).run()


def _launch_mix(module, machine, name, pair, inputs, cores, functional, max_steps=None, progress=None) -> LaunchResult:
    """AIC:AIV = 1:2 [ASC-ARCH]: ``n`` cube cores (all, or ``cores``) and ``2n`` vector cores, one GM."""
    fa, fv = pair
    n = machine.cube_cores
    if cores is not None:
        if cores < 1:
            raise InputError(f"--cores must be at least 1, got {cores}")
        n = min(n, cores)
    xcore = CrossCore()
    aic = Launch(module, fa, machine, inputs, n, functional, xcore=xcore, gid_base=0, mix=True, max_steps=max_steps,
                 progress=progress)
    aiv = Launch(module, fv, machine, inputs, 2 * n, functional, gm=aic.gm, xcore=xcore, gid_base=n, mix=True,
                 max_steps=max_steps, progress=progress)
    if functional:
        aic.gm.track()
    all_cores = aic.make_cores() + aiv.make_cores()
    executed = run_cores(all_cores)
    outputs = {}
    if functional:
        for pname in aic.gm.names:
            outputs[pname.lstrip("%")] = aic.gm.array(pname)
    return LaunchResult(name, "mix", n, [c.events for c in all_cores], aic.gm, aic.reports + aiv.reports, executed,
                        outputs, core_types=[c.kind for c in all_cores],
                        core_kernels=[c.launch.kernel.name for c in all_cores], vector_blocks=2 * n,
                        pc_counts={fa.name: aic.pc_counts, fv.name: aiv.pc_counts},
                        taken_counts={fa.name: aic.taken_counts, fv.name: aiv.taken_counts})
