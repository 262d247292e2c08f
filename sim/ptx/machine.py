"""The SIMT state of one kernel launch (:class:`LaunchState`): registers over all threads of a batch of CTAs, the
decoded program, the reconvergence stack and the run loop.

Many warps run in lock step: every register is a numpy array over all threads of a batch of CTAs
(``[T]``), and one decoded instruction is a closure that does a few numpy operations for all of
them under an active mask. Divergence uses a stack of :class:`StackEntry` (pc, reconvergence pc, mask) whose
reconvergence points are immediate post-dominators of the branch (:mod:`isa.cfg`), so all
threads that sit at the same pc on the same path run together, whatever warp or CTA they are in::

    @%p3 bra $L__BB0_9;     # some threads jump: top entry waits at the ipdom, two paths pushed
    ...
    bar.sync 0;             # checked per CTA: every non-exited thread must be here

Registers are stored as unsigned bit patterns of their declared width and read through typed
views (:mod:`sim.ptx.dtypes`); writes are masked with ``np.copyto(where=mask)``.
"""

from __future__ import annotations

import weakref

import numpy as np

from isa import ir
from isa.errors import SimulationError, Span
from sim.arrays import distinct

from .dtypes import BOOL, SINT, UINT, compute_dtype, is_signed, storage_dtype
from .memory import (GLOBAL_BASE, WINDOW_SIZE, WINDOWS, GlobalMemory, Region, gather, mark_written, scatter,
                     unwritten)
from .problems import Problem, ProblemLog

U64 = np.uint64
WARP = 32

#: the default step limit, per batch of CTAs: a step is one instruction for every thread of a
#: batch on one path; the corpus's largest launches need under 1 % of it (bench/startup.py)
STEPS_PER_BATCH = 5_000_000


class Writer:
    """Writes values of an instruction type into a register, converting width as PTX says:
    a narrower signed value is sign-extended, others zero-extended, wider values are chopped."""

    __slots__ = ("view", "conv")

    def __init__(self, store: np.ndarray, t: str):
        cd = compute_dtype(t)
        sd = store.dtype
        self.conv = None
        if sd == cd or (sd.itemsize == cd.itemsize and sd != BOOL and cd != BOOL):
            self.view = store.view(cd)
        else:
            self.view = store
            self.conv = _converter(cd, sd, is_signed(t))

    def m(self, v, m) -> None:
        if self.conv is not None:
            v = self.conv(v)
        if m is None:
            self.view[...] = v
        else:
            np.copyto(self.view, v, where=m, casting="unsafe")

    def at(self, v, lanes) -> None:
        if self.conv is not None:
            v = self.conv(v)
        if lanes is None:
            self.view[...] = v
        else:
            self.view[lanes] = v


class _Sink:
    __slots__ = ()
    view = None

    def m(self, v, m) -> None:
        pass

    def at(self, v, lanes) -> None:
        pass


SINK = _Sink()


def _converter(src: np.dtype, dst: np.dtype, signed: bool):
    """Value of dtype ``src`` -> storage dtype ``dst`` (different widths, or predicates)."""
    if dst == BOOL:
        return lambda v: np.asarray(v) != 0
    if src == BOOL:
        return lambda v: np.asarray(v).astype(dst)
    s, d = src.itemsize, dst.itemsize
    if d > s and signed:
        wide = SINT[d]
        return lambda v: np.asarray(v).astype(wide).view(dst)
    us = UINT[s]
    return lambda v: np.asarray(v).view(us).astype(dst)


def _reader(store: np.ndarray, t: str):
    """A callable giving register ``store`` as values of type ``t`` (with PTX width rules)."""
    cd = compute_dtype(t)
    sd = store.dtype
    if sd == cd:
        return _const(store)
    if sd.itemsize == cd.itemsize and sd != BOOL and cd != BOOL:
        return _const(store.view(cd))
    if cd == BOOL:
        return lambda: store != 0
    if sd == BOOL:
        return lambda: store.astype(cd)
    s, c = sd.itemsize, cd.itemsize
    if s > c:   # chop
        uc = UINT[c]
        return lambda: store.astype(uc).view(cd)
    if is_signed(t):  # extend narrower register
        ss = SINT[s]
        return lambda: store.view(ss).astype(cd)
    uc = UINT[c]
    return lambda: store.astype(uc).view(cd)


def _const(v):
    f = lambda: v  # noqa: E731
    f.static = v
    return f


def imm_value(imm: ir.Immediate, t: str):
    """A PTX immediate as a numpy scalar of type ``t`` (``0f3F800000`` in a ``.b32`` op is its bits)."""
    cd = compute_dtype(t)
    if cd == BOOL:
        return np.bool_(imm.value != 0)
    if cd.kind == "f":
        return cd.type(imm.value)
    v = imm.value
    if imm.kind == "f32":
        v = int(np.float32(v).view(np.uint32))
    elif imm.kind in ("f64", "float"):
        if cd.itemsize == 4 and imm.kind == "float":
            v = int(np.float32(v).view(np.uint32))
        else:
            v = int(np.float64(v).view(np.uint64))
            if cd.itemsize < 8:
                v &= (1 << (8 * cd.itemsize)) - 1
    if t in ("f16", "bf16") and imm.kind != "int":
        from sim.numerics import encode
        v = int(encode(float(imm.value), t))
    bits = 8 * cd.itemsize
    v = int(v) & ((1 << bits) - 1)
    if cd.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return cd.type(v)


class StackEntry:
    """One path of the divergence (SIMT) stack: the threads in ``mask`` run from ``pc`` until they
    reach ``rpc``, their reconvergence pc (-1: none, they run until they exit or return).
    ``threads`` and ``warps`` count the active threads and warps (kept by ``LaunchState.refresh``);
    ``arg`` is the mask handed to instruction kernels, ``None`` when every thread is active."""

    __slots__ = ("pc", "rpc", "mask", "threads", "warps", "arg")

    def __init__(self, pc: int, rpc: int, mask: np.ndarray, threads: int = 0, warps: int = 0, arg=None):
        self.pc = pc
        self.rpc = rpc
        self.mask = mask
        self.threads = threads
        self.warps = warps
        self.arg = arg

    def __repr__(self) -> str:
        return f"StackEntry(pc={self.pc}, rpc={self.rpc}, threads={self.threads}, warps={self.warps})"


class LaunchState:
    """The state of one launch of one kernel: the decoded program, registers over all threads of a
    batch of CTAs, the reconvergence stack and the run loop (kept between batches of the launch)."""

    def __init__(self, module: ir.Module, fn: ir.Function, grid, block, params: bytes,
                 param_offsets: dict[str, int], gmem: GlobalMemory, global_symbols: dict[str, int],
                 dynamic_shared: int, *, batch_threads: int = 16384, listeners=(), max_steps=None,
                 check_uninitialized: bool = True, check_races: bool = True, memory_model: str = "sc",
                 seed: int = 0):
        from isa.cfg import Cfg

        # weakly: run_kernel's decode cache holds launch states for as long as their module lives,
        # which a strong reference from here would make for ever
        self._module = weakref.ref(module)
        self.fn = fn
        self.kernel = fn.name
        self.grid = tuple(int(g) for g in grid)
        self.block = tuple(int(b) for b in block)
        nthr = self.block[0] * self.block[1] * self.block[2]
        if nthr <= 0 or nthr > 1024:
            raise SimulationError(f"block {self.block} has {nthr} threads (1..1024 allowed)")
        self.nthreads = nthr
        self.tpc = -(-nthr // WARP) * WARP
        self.ncta = self.grid[0] * self.grid[1] * self.grid[2]
        self.batch = max(1, min(self.ncta, batch_threads // self.tpc))
        self.batches = -(-self.ncta // self.batch)
        self.max_steps = STEPS_PER_BATCH * self.batches if max_steps == "auto" else max_steps
        self.T = T = self.batch * self.tpc
        self.gmem = gmem
        self.global_symbols = global_symbols
        self.problems = ProblemLog()
        self.steps = 0
        self.progress = None         # callable(steps, batch, batches), called about every 2 s
        self._set_listeners(listeners)
        self.check_uninit = check_uninitialized
        self.bytes_load: dict[str, int] = {}
        self.bytes_store: dict[str, int] = {}
        self.barrier_waits = 0

        # thread geometry of a batch
        t = np.arange(T, dtype=np.int64)
        local = t % self.tpc
        self.all_lanes = t
        self.cta_local = t // self.tpc
        self.local = local
        bx, by, _ = self.block
        self.tid = [(local % bx).astype(np.uint32), ((local // bx) % by).astype(np.uint32),
                    (local // (bx * by)).astype(np.uint32)]
        self.padding = local >= nthr
        self.lane = (t & 31).astype(np.uint32)
        self.warp_in_cta = (local // WARP).astype(np.uint32)
        self.ctaid = [np.zeros(T, np.uint32) for _ in range(3)]
        self.cta_linear = np.zeros(T, np.int64)          # launch CTA id of each batch thread
        self.cta_ids = np.arange(self.batch, dtype=np.int64)  # launch CTA id of each batch slot (ascending)
        self.batch_serial = 0                             # numbers the batches run (event-part caches)
        self.batch_index = 0                              # the batch being run, for progress reports
        self.exited = np.zeros(T, bool)

        # state spaces
        self.params = Region("param", len(params), 1)
        self.params.data[:len(params)] = np.frombuffer(params, dtype=np.uint8)
        self.param_offsets = param_offsets
        self.symbols: dict[str, tuple[str, int]] = {}
        for name, off in param_offsets.items():
            self.symbols[name] = ("param", off)
        for name, addr in global_symbols.items():
            self.symbols[name] = ("global", addr)
        from .calls import FunctionInfo, call_graph_cycles, function_addresses, reachable_functions

        for name, addr in function_addresses(module).items():
            self.symbols.setdefault(name, ("global", addr))
        # the linked program: the kernel, then every device function it reaches
        self.funcs: list[FunctionInfo] = [FunctionInfo(0, fn, 0)]
        base = len(fn.instructions)
        for k, g in enumerate(reachable_functions(module, fn), start=1):
            self.funcs.append(FunctionInfo(k, g, base))
            base += len(g.instructions)
        self.func_by_name = {f.fn.name: f for f in self.funcs[1:]}
        self.func_by_addr = {}
        for name, addr in function_addresses(module).items():
            if name in self.func_by_name:
                self.func_by_addr[addr] = self.func_by_name[name]
        for name in call_graph_cycles({f.fn.name: f.fn for f in self.funcs}):
            if name in self.func_by_name:
                self.func_by_name[name].recursive = True
        self.cur = self.funcs[0]
        self._layout_const(module)
        self.static_shared = self._layout_shared(module, fn)
        self.dynamic_shared = int(dynamic_shared)
        self.shared_size = self.static_shared_end + self.dynamic_shared
        self.shared = Region("shared", self.shared_size, self.batch, track_writes=check_uninitialized)
        # shared-memory race check: per byte, (barrier epoch << 8) | (writing warp + 1); a load that
        # reads a byte another warp of the CTA wrote in the current epoch is a race
        self.check_races = check_races
        self.tags = np.zeros(self.shared.data.size, np.uint16) if check_races else None
        self.epoch = np.ones(self.batch, np.uint16)
        self.epoch_stores = np.zeros(self.batch, bool)   # a CTA stored to shared in its current epoch
        self.local_size, self.callparam_size = self._layout_frames()
        self.localmem = Region("local", self.local_size, T)
        self.callparams = Region("callparam", self.callparam_size, T)
        self.frames: list = []

        # registers
        self.regs: dict[str, np.ndarray] = {}
        self.reg_types: dict[str, str] = {}
        for info in self.funcs:
            self._declare_registers(info)

        # program
        self.code = [self._expand_vectors(info) for info in self.funcs]
        self.instructions = [ins for code in self.code for ins in code]
        self.reconv = []
        for info in self.funcs:
            self.cur = info
            self.reconv += [r if r < 0 else r + info.base
                             for r in Cfg(info.fn, self.branch_table(info)).reconvergence_pcs()]
        from isa.ptx.opcodes import split
        from isa.semantics import describe

        self.canon = []
        self.infos = []
        for ins in self.instructions:
            c, mods = split(ins)
            self.canon.append((c, mods))
            try:
                self.infos.append(describe(ins))
            except Exception:  # noqa: BLE001 - unknown facts do not stop simulation
                self.infos.append(None)
        from .completion import ASYNC_OPCODES, Async

        self.asyncs = Async(self) if any(c in ASYNC_OPCODES for c, _ in self.canon) else None
        if memory_model not in ("sc", "relaxed"):
            raise SimulationError(f"memory model '{memory_model}' is not one of sc, relaxed")
        self.memory_model = memory_model
        self.warps_per_cta = self.tpc // WARP
        from .order import Order

        self.order = Order(self, check_races, memory_model == "relaxed", seed) \
            if check_races or memory_model == "relaxed" else None
        self.wgmma_accumulators = set()
        for info in self.funcs:
            self.cur = info
            for ins in info.fn.instructions:
                if ins.opcode == "wgmma" and ins.operands and isinstance(ins.operands[0], ir.Vector) \
                        and "mma_async" in ins.modifiers:
                    self.wgmma_accumulators.update(self.reg_key(e.name, ins.scope) for e in ins.operands[0].elements
                                                   if isinstance(e, ir.Register))
        self.cur = self.funcs[0]
        from .ops import build

        self.prog = []
        for info in self.funcs:
            self.cur = info
            self.prog += [build(self, info.base + i, ins) for i, ins in enumerate(self.code[info.fid])]
        self.cur = self.funcs[0]
        n = len(self.prog)
        self.pc_warps = [0] * n
        self.pc_threads = [0] * n
        self.pc_taken = [0] * n        # threads that took a conditional branch, per pc
        if memory_model == "relaxed":
            from .order import hoist_stores

            self.hoisted = hoist_stores(self)       # load buffering: stores that may go before a load
        self._event_const: list = [None] * n
        self._warp_parts: dict = {}

    def _set_listeners(self, listeners) -> None:
        """``mem_listeners`` is non-empty when any listener wants memory accesses (memory ops test
        it before building an access event); ``all_listeners`` take one event per executed
        instruction, ``access_listeners`` (``memory_only``) one per memory access."""
        self.listeners = list(listeners)
        self.mem_listeners = self.listeners
        self.all_listeners = [l for l in self.listeners if not getattr(l, "memory_only", False)]
        self.access_listeners = [l for l in self.listeners if getattr(l, "memory_only", False)]
        self._parts = None

    @property
    def module(self) -> ir.Module:
        """The module the program was decoded from (held weakly: it outlives every launch of it)."""
        return self._module()

    def release(self) -> None:
        """Drop what only the launch just run needed: its global memory, its listeners (the timing
        model's event streams among them) and the race and ordering shadows (32 bytes per byte of
        global memory with race checks on). The decoded program stays for :meth:`relaunch`, so a
        cached machine holds its decoding, not its last launch's buffers."""
        self.gmem = None
        self._set_listeners(())
        if self.order is not None:
            self.order.release()

    def relaunch(self, gmem: GlobalMemory, listeners=()) -> None:
        """Make a decoded machine ready for another launch with the same program, geometry and
        parameter bytes (``run_kernel``'s decode cache): new global memory, listeners, counters."""
        self.gmem = gmem
        if self.order is not None:
            self.order.reset()
        self._set_listeners(listeners)
        self.problems = ProblemLog()
        self.steps = 0
        self.aborted = False
        self.bytes_load = {}
        self.bytes_store = {}
        self.barrier_waits = 0
        n = len(self.prog)
        self.pc_warps = [0] * n
        self.pc_threads = [0] * n
        self.pc_taken = [0] * n        # threads that took a conditional branch, per pc

    # ------------------------------------------------------------------ layout
    def _layout_shared(self, module: ir.Module, fn: ir.Function) -> int:
        off = 0
        externs = []
        variables = [v for v in module.variables if v.space == "shared"]
        for info in self.funcs:
            variables += [d for d in info.fn.declarations if isinstance(d, ir.Variable) and d.space == "shared"]
        self.shared_vars: list[tuple[str, int, int]] = []
        for v in variables:
            if v.size_bytes is None:
                externs.append(v)
                continue
            a = v.align or v.element_bytes
            off = -(-off // a) * a
            self.symbols[v.name] = ("shared", off)
            self.shared_vars.append((v.name, off, v.size_bytes))
            off += v.size_bytes
        a = max([16] + [v.align or 1 for v in externs])
        dyn = -(-off // a) * a if externs else off
        for v in externs:
            self.symbols[v.name] = ("shared", dyn)
            self.shared_vars.append((v.name, dyn, -1))
        self.static_shared_end = dyn
        return off

    def _layout_frames(self) -> tuple[int, int]:
        """Per-thread memory of every function: its ``.local`` depot in local memory, and its
        ``.param`` slots (formal parameters, ``func_retval``, call-sequence ``param``/``retval``
        variables) in call-parameter memory; names resolve per function and scope."""
        loff = 0
        poff = 0

        def place(off, v):
            a = v.align or v.element_bytes or 1
            off = -(-off // a) * a
            return off, off + (v.size_bytes or 0)

        for info in self.funcs:
            l0, p0 = loff, poff
            if info.fid:
                params = []
                for v in info.fn.params:
                    at, poff = place(poff, v)
                    info.symbols[(0, v.name)] = ("callparam", at)
                    params.append((at, v.size_bytes or 0))
                rets = []
                for v in info.fn.returns:
                    at, poff = place(poff, v)
                    info.symbols[(0, v.name)] = ("callparam", at)
                    rets.append((at, v.size_bytes or 0))
                info.params, info.returns = tuple(params), tuple(rets)
            for sid, d in _scoped_declarations(info.fn.body or (), 0):
                if d.space == "local":
                    at, loff = place(loff, d)
                    info.symbols[(sid, d.name)] = ("local", at)
                elif d.space == "param":
                    at, poff = place(poff, d)
                    info.symbols[(sid, d.name)] = ("callparam", at)
                    info.sizes[(sid, d.name)] = d.size_bytes or 0
            info.local_range, info.param_range = (l0, loff), (p0, poff)
        return loff, poff

    def _layout_const(self, module: ir.Module) -> None:
        from .init import flatten_initializer

        chunks = []
        off = 0
        for v in module.static_variables:
            if v.space != "const":
                continue
            a = v.align or v.element_bytes
            off = -(-off // a) * a
            self.symbols[v.name] = ("const", off)
            size = v.size_bytes or 0
            chunks.append((off, flatten_initializer(v, self.symbols, size)))
            off += size
        self.const = Region("const", off, 1)
        for o, b in chunks:
            self.const.data[o:o + len(b)] = np.frombuffer(b, dtype=np.uint8)

    def _declare_registers(self, info) -> None:
        """Register types by register-file key; a vector register ``.reg .v4 .b32 v;`` is its
        components ``v.x`` .. ``v.w``; ``.reg`` parameters and results are registers of the function."""
        prefix = f"{info.fid}:" if info.fid else ""
        if not hasattr(self, "vector_regs"):
            self.vector_regs: dict[str, int] = {}
        for p in info.fn.params + info.fn.returns:
            if p.space == "reg":
                self.reg_types[prefix + p.name] = p.type

        def visit(body, sid):
            for s in body:
                if isinstance(s, ir.RegisterDecl):
                    n = {"v2": 2, "v4": 4, "v8": 8}.get(s.vector or "", 0)
                    for name in s.expanded():
                        key = prefix + (name if sid == 0 else f"{name}@{sid}")
                        if n:
                            self.vector_regs[key] = n
                            for c in _COMPONENTS[:n]:
                                self.reg_types[f"{key}.{c}"] = s.type
                        else:
                            self.reg_types[key] = s.type
                elif isinstance(s, ir.Scope):
                    visit(s.body, s.id)

        visit(info.fn.body or (), 0)

    def _expand_vectors(self, info) -> list:
        """The function's instructions with every whole vector register written out as the vector
        of its components (``st.global.v4.u32 [%rd1], v;`` -> ``... {v.x, v.y, v.z, v.w};``)."""
        self.cur = info
        out = []
        for ins in info.fn.instructions:
            ops = ins.operands
            if self.vector_regs and any(self._is_vector(o, ins) for o in ops):
                ops = tuple(self._as_components(o, ins) for o in ops)
                ins = ir.Instruction(ins.opcode, ins.modifiers, ops, ins.guard, span=ins.span, loc=ins.loc,
                                     scope=ins.scope)
            out.append(ins)
        return out

    def _is_vector(self, o, ins) -> bool:
        return isinstance(o, ir.Register) and o.component is None and self.reg_key(o.name, ins.scope) in self.vector_regs

    def _as_components(self, o, ins):
        if not self._is_vector(o, ins):
            return o
        n = self.vector_regs[self.reg_key(o.name, ins.scope)]
        return ir.Vector(tuple(ir.Register(o.name, c, o.span) for c in _COMPONENTS[:n]))

    def reg_key(self, name: str, scope: int) -> str:
        """The register file key of ``name`` in ``scope`` of the function being decoded."""
        key = self.cur.fn.register_key(name, scope)
        return f"{self.cur.fid}:{key}" if self.cur.fid else key

    def component(self, op: ir.Register, ins: ir.Instruction) -> tuple[np.ndarray, str]:
        """The store of a vector register's component (``v.x``, ``v.g``), with an error that says
        what is wrong when ``op`` names no component of a declared vector register."""
        key = self.reg_key(op.name, ins.scope)
        comp = {"r": "x", "g": "y", "b": "z", "a": "w"}.get(op.component, op.component)
        n = self.vector_regs.get(key)
        if n is None:
            if key in self.reg_types:
                what = (f"'.{op.component}' is a byte/half-word selector, allowed only in video instructions"
                        if op.component[0] in "bh" and len(op.component) > 1 else
                        f"'.{op.component}' selects a component of a vector register, but '{op.name}' is declared "
                        f".{self.reg_types[key]} (not .v2/.v4)")
                raise self.error(what, ins)
            raise self.error(f"register '{op.name}' is not declared (nor a special register)", ins)
        if comp not in _COMPONENTS[:n]:
            raise self.error(f"'{op.text}': a .v{n} register has components {', '.join(_COMPONENTS[:n])}", ins)
        return self.reg(f"{op.name}.{comp}", ins.scope, key=f"{key}.{comp}")

    def reg(self, name: str, scope: int, key: str | None = None) -> tuple[np.ndarray, str]:
        key = key or self.reg_key(name, scope)
        arr = self.regs.get(key)
        if arr is None:
            t = self.reg_types.get(key)
            if t is None:
                raise SimulationError(f"register '{name}' is not declared")
            # a .b128 register is two uint64 halves per thread (low first); only ld/st/mov use it
            arr = np.zeros((self.T, 2), np.uint64) if t == "b128" else np.zeros(self.T, storage_dtype(t))
            self.regs[key] = arr
        return arr, self.reg_types[key]

    def label_pc(self, name: str) -> int | None:
        """The program pc of label ``name`` in the function being decoded."""
        i = self.cur.fn.labels.get(name)
        return None if i is None else i + self.cur.base

    def branch_table(self, info=None) -> dict[str, tuple[str, ...]]:
        """``.branchtargets`` lists of a function (default: the one being decoded)."""
        from isa.cfg import branch_tables

        info = info or self.cur
        if not hasattr(info, "_targets"):
            info._targets = branch_tables(info.fn)
        return info._targets

    # ------------------------------------------------------------------ operand decoding
    def src(self, op, t: str, ins: ir.Instruction):
        """A callable returning operand ``op`` as values of PTX type ``t`` (array over all threads,
        or a numpy scalar); ``.static`` is set on it when the value is a fixed array or scalar."""
        if isinstance(op, ir.Immediate):
            return _const(imm_value(op, t))
        if isinstance(op, ir.Register):
            if op.name in SPECIAL:
                return self.special(op, t, ins)
            if op.component is not None:
                key = self.reg_key(op.name, ins.scope)
                if key not in self.vector_regs and key not in self.reg_types:
                    return self.special(op, t, ins)       # names the unsupported special register
                store, _ = self.component(op, ins)
                return _reader(store, t)
            store, _ = self.reg(op.name, ins.scope)
            return _reader(store, t)
        if isinstance(op, ir.Modified) and op.op == "-":   # -a: negated in the instruction's type
            inner = self.src(op.operand, t, ins)
            return lambda: np.negative(inner())
        if isinstance(op, ir.Negated):
            inner = self.src(op.operand, "pred", ins)
            return lambda: ~inner()
        if isinstance(op, ir.Sum):            # reg + imm: added (wrapping) in the instruction's type
            base = self.src(op.base, t, ins)
            k = imm_value(ir.Immediate(op.offset), t) if compute_dtype(t).kind in "ui" else \
                compute_dtype(t).type(op.offset)
            return lambda: base() + k
        if isinstance(op, ir.Symbol):
            space, addr = self.symbol(op.name, ins)
            return _const(compute_dtype(t).type(addr) if compute_dtype(t).kind in "ui" else addr)
        if isinstance(op, ir.Expression):
            return _const(compute_dtype(t).type(self.expression(op.text, ins)))
        raise self.error(f"unsupported operand {op!r}", ins)

    def dst(self, op, t: str, ins: ir.Instruction):
        if isinstance(op, ir.Sink) or op is None:
            return SINK
        if isinstance(op, ir.Register):
            store, _ = self.component(op, ins) if op.component is not None else self.reg(op.name, ins.scope)
            return Writer(store, t)
        raise self.error(f"unsupported destination {op!r}", ins)

    def lookup(self, name: str, ins: ir.Instruction) -> tuple[str, int] | None:
        """A variable of the function being decoded (innermost scope first), else of the module."""
        info = self.cur
        if info.symbols:
            sid = ins.scope
            parents = info.fn.scope_parents
            while True:
                r = info.symbols.get((sid, name))
                if r is not None:
                    return r
                if sid == 0:
                    break
                sid = parents.get(sid, 0)
        return self.symbols.get(name)

    def param_slot_size(self, name: str, ins: ir.Instruction) -> int:
        """Bytes of the call-sequence ``.param`` variable ``name`` seen from ``ins``."""
        sid = ins.scope
        while True:
            if (sid, name) in self.cur.sizes:
                return self.cur.sizes[(sid, name)]
            if sid == 0:
                return 0
            sid = self.cur.fn.scope_parents.get(sid, 0)

    def symbol(self, name: str, ins: ir.Instruction) -> tuple[str, int]:
        r = self.lookup(name, ins)
        if r is not None:
            return r
        raise self.error(f"unknown symbol '{name}'", ins)

    def expression(self, text: str, ins: ir.Instruction) -> int:
        import re

        m = re.fullmatch(r"\s*(generic\()?\s*([A-Za-z_$%][\w$]*)\s*\)?\s*([+-]\s*\d+)?\s*", text)
        if not m:
            raise self.error(f"unsupported constant expression '{text}'", ins)
        space, addr = self.symbol(m.group(2), ins)
        if m.group(1):
            addr = to_generic(space, addr)
        return addr + (int(m.group(3).replace(" ", "")) if m.group(3) else 0)

    def address(self, op: ir.Address, ins: ir.Instruction):
        """(space named by a symbol base or None, callable(lanes) -> uint64 addresses)."""
        off = int(op.offset)
        base = op.base
        T = self.T
        if base is None:
            a = U64(off & 0xFFFFFFFFFFFFFFFF)
            return None, lambda lanes: np.full(T if lanes is None else len(lanes), a, np.uint64)
        if isinstance(base, ir.Symbol) or (isinstance(base, ir.Register) and self.lookup(base.name, ins) is not None
                                           and self.reg_key(base.name, ins.scope) not in self.reg_types):
            space, addr = self.symbol(base.name, ins)
            a = U64((addr + off) & 0xFFFFFFFFFFFFFFFF)
            return space, lambda lanes: np.full(T if lanes is None else len(lanes), a, np.uint64)
        store, _ = self.reg(base.name, ins.scope)
        if store.dtype.itemsize == 8:
            o = U64(off & 0xFFFFFFFFFFFFFFFF)
            return None, lambda lanes: (store if lanes is None else store[lanes]) + o
        o32 = np.uint32(off & 0xFFFFFFFF)
        s32 = store.view(np.uint32) if store.dtype.itemsize == 4 else store.astype(np.uint32)
        if store.dtype.itemsize == 4:
            return None, lambda lanes: ((s32 if lanes is None else s32[lanes]) + o32).astype(np.uint64)
        return None, lambda lanes: ((store if lanes is None else store[lanes]).astype(np.uint32) + o32).astype(
            np.uint64)

    # ------------------------------------------------------------------ special registers
    def special(self, op: ir.Register, t: str, ins: ir.Instruction):
        name, comp = op.name, op.component
        idx = {"x": 0, "y": 1, "z": 2, None: 0, "w": 3}.get(comp, 0)
        cd = compute_dtype(t)
        u = np.uint32
        if name == "%tid":
            v = self.tid[idx] if idx < 3 else u(0)
        elif name == "%ntid":
            v = u(self.block[idx] if idx < 3 else 0)
        elif name == "%ctaid":
            v = self.ctaid[idx] if idx < 3 else u(0)
        elif name == "%nctaid":
            v = u(self.grid[idx] if idx < 3 else 0)
        elif name == "%laneid":
            v = self.lane
        elif name == "%warpid":
            v = self.warp_in_cta
        elif name == "%nwarpid":
            v = u(self.tpc // WARP)
        elif name.startswith("%lanemask_"):
            kind = name[len("%lanemask_"):]
            lane = self.lane.astype(np.uint64)
            one = np.uint64(1)
            eq = (one << lane)
            tbl = {"eq": eq, "lt": eq - one, "le": (eq << one) - one,
                   "gt": ~((eq << one) - one), "ge": ~(eq - one)}
            v = (tbl[kind] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        elif name in ("%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"):
            def clock():
                return cd.type(self.steps) if cd.kind in "ui" else cd.type(self.steps)
            return clock
        elif name == "%smid":
            v = (self.cta_linear % 132).astype(np.uint32)
        elif name == "%nsmid":
            v = u(132)
        elif name in ("%dynamic_smem_size",):
            v = u(self.dynamic_shared)
        elif name in ("%total_smem_size", "%aggr_smem_size"):
            v = u(self.shared_size)
        elif name in ("%clusterid", "%cluster_ctaid"):
            v = self.ctaid[idx] if (name == "%clusterid" and idx < 3) else u(0)
        elif name in ("%nclusterid",):
            v = u(self.grid[idx] if idx < 3 else 0)
        elif name in ("%cluster_nctaid", "%cluster_nctarank"):
            v = u(1)
        elif name in ("%cluster_ctarank", "%is_explicit_cluster", "%gridid") or name.startswith(("%envreg", "%pm")):
            v = u(0)
        else:
            raise self.error(f"unsupported special register {op.text}", ins)
        if isinstance(v, np.ndarray):
            if v.dtype == cd:
                return _const(v)
            if v.dtype.itemsize == cd.itemsize:
                return _const(v.view(cd))
            conv = v.astype(cd)
            return lambda: v.astype(cd) if v is not self.lane else conv
        return _const(cd.type(v))

    # ------------------------------------------------------------------ problems
    def error(self, message: str, ins: ir.Instruction | None = None) -> SimulationError:
        span = ins.span if ins is not None else Span(self.module.path or "<ptx>")
        line = self.module.source_line(span.line) if ins is not None else None
        return SimulationError(message, span, source_line=line)

    def source_of(self, ins: ir.Instruction) -> str | None:
        if ins.loc is None:
            return None
        f = self.module.files.get(ins.loc.file)
        name = f.name.rsplit("/", 1)[-1] if f else f"file{ins.loc.file}"
        return f"{name}:{ins.loc.line}"

    def thread_coords(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        cta = (int(self.ctaid[0][lane]), int(self.ctaid[1][lane]), int(self.ctaid[2][lane]))
        thr = (int(self.tid[0][lane]), int(self.tid[1][lane]), int(self.tid[2][lane]))
        return cta, thr

    def report(self, kind: str, pc: int, lanes: np.ndarray, message, *, addresses=None, buffer=None) -> None:
        """Record problem ``kind`` at ``pc`` for threads ``lanes`` (batch thread indices)."""
        n = len(lanes)
        if n == 0:
            return
        room = max(0, self.problems.room(kind, pc))
        ins = self.instructions[pc]
        text = str(ins).strip()
        for i in range(min(n, room)):
            lane = int(lanes[i])
            cta, thr = self.thread_coords(lane)
            addr = None if addresses is None else int(addresses[i])
            buf = buffer(addr) if callable(buffer) else buffer
            msg = message(addr) if callable(message) else message
            self.problems.add(pc, Problem(kind, self.kernel, text, ins.span.line, self.source_of(ins), cta, thr,
                                          addr, buf, msg))
        if n > room:
            self.problems.count_only(kind, pc, n - room)

    def report_cta(self, kind: str, pc: int, cta_local: int, message: str, lane: int | None = None) -> None:
        ins = self.instructions[pc]
        first = cta_local * self.tpc if lane is None else lane
        cta, thr = self.thread_coords(first)
        if self.problems.room(kind, pc) <= 0:
            self.problems.count_only(kind, pc, 1)
            return
        self.problems.add(pc, Problem(kind, self.kernel, str(ins).strip(), ins.span.line, self.source_of(ins), cta,
                                      thr if lane is not None else None, None, None, message))

    # ------------------------------------------------------------------ memory access
    def lanes_of(self, m) -> np.ndarray:
        return self.all_lanes if m is None else np.flatnonzero(m)

    def resolve(self, pc: int, space: str, lanes: np.ndarray, addr: np.ndarray, width: int, kind: str,
                align: int | None = None):
        """Split an access into groups ``(space, region data, written, sel, flat)``; lanes that are out
        of bounds or misaligned are reported and dropped (``sel`` indexes ``lanes``)."""
        align = width if align is None else align
        if space in ("generic", None):
            groups = []
            rest = np.ones(len(lanes), bool)
            for sp, base in WINDOWS.items():
                inside = (addr >= U64(base)) & (addr < U64(base + WINDOW_SIZE))
                if inside.any():
                    sel = np.flatnonzero(inside)
                    rest &= ~inside
                    groups += self._resolve_one(pc, sp, lanes[sel], addr[sel] - U64(base), width, kind, align, sel)
            if rest.all():
                return self._resolve_one(pc, "global", lanes, addr, width, kind, align, None)
            if rest.any():
                sel = np.flatnonzero(rest)
                groups += self._resolve_one(pc, "global", lanes[sel], addr[sel], width, kind, align, sel)
            return groups
        return self._resolve_one(pc, space, lanes, addr, width, kind, align, None)

    def _resolve_one(self, pc, space, lanes, addr, width, kind, align, sel):
        if space == "global":
            flat, ok = self.gmem.check(addr, width)
            data, written = self.gmem.data, None
        elif space == "shared":
            flat, ok = self.shared.check(self.cta_local[lanes], addr, width)
            data, written = self.shared.data, self.shared.written
        elif space == "local":
            flat, ok = self.localmem.check(lanes, addr, width)
            data, written = self.localmem.data, None
        elif space == "param":
            flat, ok = self.params.check(0, addr, width)
            data, written = self.params.data, None
        elif space == "callparam":
            flat, ok = self.callparams.check(lanes, addr, width)
            data, written = self.callparams.data, None
        elif space == "const":
            flat, ok = self.const.check(0, addr, width)
            data, written = self.const.data, None
        else:
            raise self.error(f"unsupported state space '{space}'", self.instructions[pc])
        if align > 1:
            aligned = (addr & U64(align - 1)) == 0
            good = ok & aligned
        else:
            aligned = None
            good = ok
        if not good.all():
            bad = np.flatnonzero(~good)
            self._report_access(pc, space, lanes[bad], addr[bad], width, kind,
                                None if aligned is None else aligned[bad], ok[bad])
            keep = np.flatnonzero(good)
            flat = flat[keep]
            addr = addr[keep]
            sel = keep if sel is None else sel[keep]
        return [(space, data, written, sel, flat, addr)]

    def _report_access(self, pc, space, lanes, addr, width, kind, aligned, ok):
        verb = {"load": "load from", "store": "store to", "atomic": "atomic on"}.get(kind, "access to")
        oob = ~ok
        if oob.any():
            idx = np.flatnonzero(oob)
            if space == "global":
                buf = lambda a: self.gmem.describe(a, width)  # noqa: E731
                null = addr[idx] < U64(4096)
                kinds = "null_pointer" if null.all() else "out_of_bounds"
                msg = lambda a: (f"{width}-byte {verb} global 0x{a:x} is outside every buffer")  # noqa: E731
            else:
                size = {"shared": self.shared_size, "local": self.local_size, "param": self.params.size,
                        "const": self.const.size, "callparam": self.callparam_size}[space]
                buf = (lambda a: self.shared_var_at(a)) if space == "shared" else f"{space} memory of {size} bytes"
                kinds = "out_of_bounds"
                msg = lambda a: f"{width}-byte {verb} {space} address 0x{a:x} is past the end ({size} bytes)"  # noqa
            self.report(kinds, pc, lanes[idx], msg, addresses=addr[idx], buffer=buf)
        if aligned is not None:
            mis = ok & ~aligned
            if mis.any():
                idx = np.flatnonzero(mis)
                buf = (lambda a: self.gmem.describe(a, width)) if space == "global" else None
                self.report("misaligned", pc, lanes[idx],
                            lambda a: f"{width}-byte {verb} {space} 0x{a:x} is not {width}-byte aligned",
                            addresses=addr[idx], buffer=buf)

    def shared_var_at(self, addr: int) -> str | None:
        best = None
        for name, off, size in self.shared_vars:
            end = off + (size if size >= 0 else self.dynamic_shared)
            d = 0 if off <= addr < end else (addr - end if addr >= end else off - addr)
            if best is None or d < best[0]:
                best = (d, name, off, end)
        if best is None:
            return None
        _, name, off, end = best
        if off <= addr < end:
            return f"{name}: offset {addr - off} of {end - off} bytes"
        if addr >= end:
            return f"{name}: {addr - end} bytes past the end of {end - off} bytes"
        return f"{name}: {off - addr} bytes before the start"

    def load(self, pc: int, space: str, m, addr_fn, esize: int, nelem: int):
        """Gather ``nelem`` elements of ``esize`` bytes per active lane: (lanes, [n, nelem] values)."""
        lanes = self.lanes_of(m)
        if len(lanes) == 0:
            return lanes, None
        addr = addr_fn(None if m is None else lanes)
        width = esize * nelem
        groups = self.resolve(pc, space, lanes, addr, width, "load")
        relaxed = self.order is not None and self.order.relaxed
        if len(groups) == 1 and groups[0][3] is None:
            sp, data, written, _, flat, a = groups[0]
            vals = gather(data, flat, esize, nelem)
            if relaxed and sp == "global":
                vals = self._relaxed_read(pc, lanes, flat, vals, width)
            if written is not None and self.check_uninit:
                self._check_written(pc, written, flat, esize, nelem, lanes, a)
            if sp == "shared" and self.tags is not None:
                self._check_race(pc, flat, width, lanes, a)
            if sp == "shared" and self.asyncs is not None and self.asyncs.any_inflight:
                self._async_generic(pc, flat, width, lanes, a, False)
            self._account(pc, sp, "load", lanes, a, width)
            return lanes, vals
        out_lanes = []
        out_vals = []
        for sp, data, written, sel, flat, a in groups:
            v = gather(data, flat, esize, nelem)
            if relaxed and sp == "global":
                v = self._relaxed_read(pc, lanes[sel], flat, v, width)
            if written is not None and self.check_uninit:
                self._check_written(pc, written, flat, esize, nelem, lanes[sel], a)
            if sp == "shared" and self.tags is not None:
                self._check_race(pc, flat, width, lanes[sel], a)
            if sp == "shared" and self.asyncs is not None and self.asyncs.any_inflight:
                self._async_generic(pc, flat, width, lanes[sel], a, False)
            self._account(pc, sp, "load", lanes[sel], a, width)
            out_lanes.append(lanes[sel])
            out_vals.append(v)
        if not out_lanes:
            return lanes[:0], None
        return np.concatenate(out_lanes), np.concatenate(out_vals)

    def _check_written(self, pc, written, flat, esize, nelem, lanes, addr):
        bad = unwritten(written, flat, esize, nelem)
        if bad.any():
            idx = np.flatnonzero(bad)
            self.report("uninitialized_shared", pc, lanes[idx],
                        lambda a: f"{esize * nelem}-byte load from shared 0x{a:x} reads bytes no thread of the "
                                  f"CTA has written", addresses=addr[idx], buffer=lambda a: self.shared_var_at(a))

    def tag_writes(self, flat: np.ndarray, width: int, lanes: np.ndarray) -> None:
        """Remember which warp wrote these shared bytes in the CTA's current barrier epoch."""
        ctas = self.cta_local[lanes]
        self.epoch_stores[ctas] = True
        tag = (self.epoch[ctas] << np.uint16(8)) | (self.warp_in_cta[lanes] + 1).astype(np.uint16)
        idx = flat[:, None] + np.arange(width)
        self.tags[idx] = tag[:, None]

    def _check_race(self, pc, flat, width, lanes, addr) -> None:
        if not self.epoch_stores.any() or not self.epoch_stores[self.cta_local[lanes]].any():
            return                          # nothing was stored since the last barrier: no RAW race
        t = self.tags[flat[:, None] + np.arange(width)]
        ep = (self.epoch[self.cta_local[lanes]] << np.uint16(8))[:, None]
        mine = (self.warp_in_cta[lanes] + 1).astype(np.uint16)[:, None]
        race = ((t & np.uint16(0xFF00)) == ep) & ((t & np.uint16(0xFF)) != mine) & (t != 0)
        bad = race.any(axis=1)
        if bad.any():
            idx = np.flatnonzero(bad)
            writer = (t[idx] & np.uint16(0xFF)).astype(np.int64) - 1
            who = [int(writer[i][race[idx[i]]][0]) for i in range(min(len(idx), 8))]
            k = iter(who + [-1] * len(idx))
            self.report("shared_race", pc, lanes[idx],
                        lambda a: f"{width}-byte load from shared 0x{a:x} reads bytes that warp {next(k)} of the CTA "
                                  f"wrote with no barrier in between (missing bar.sync?)",
                        addresses=addr[idx], buffer=lambda a: self.shared_var_at(a))

    def barrier_epoch_for(self, threads: np.ndarray) -> None:
        """A barrier completed for the CTAs of ``threads`` (a [T] mask of whole CTAs)."""
        if self.tags is not None or self.order is not None:
            self.barrier_epoch(np.flatnonzero(threads.reshape(self.batch, self.tpc).any(axis=1)))

    def barrier_epoch(self, ctas: np.ndarray) -> None:
        """CTAs whose threads passed a barrier start a new race-check epoch (tags hold 8 bits)."""
        if self.order is not None:
            self.order.barrier(self.cta_ids[np.asarray(ctas, np.int64)])
        if self.tags is None:
            return
        e = self.epoch[ctas] + np.uint16(1)
        wrap = e > 255
        if wrap.any():
            st = self.shared.stride
            for c in ctas[wrap]:
                self.tags[c * st:(c + 1) * st] = 0
        self.epoch[ctas] = np.where(wrap, np.uint16(1), e)
        self.epoch_stores[ctas] = False

    def store(self, pc: int, space: str, m, addr_fn, esize: int, values_fn) -> None:
        """Scatter per-lane values: ``values_fn(lanes)`` gives [n, nelem] unsigned values."""
        lanes = self.lanes_of(m)
        if len(lanes) == 0:
            return
        addr = addr_fn(None if m is None else lanes)
        vals = values_fn(None if m is None else lanes)
        nelem = vals.shape[1]
        width = esize * nelem
        relaxed = self.order is not None and self.order.relaxed
        for sp, data, written, sel, flat, a in self.resolve(pc, space, lanes, addr, width, "store"):
            v = vals if sel is None else vals[sel]
            if relaxed and sp == "global":
                ln = lanes if sel is None else lanes[sel]
                if self.order.sem[pc].release:
                    self.order.fence(pc, ln)
                self.order.write(ln, flat, data[flat[:, None] + np.arange(width)])
            scatter(data, flat, v, esize)
            if written is not None:
                mark_written(written, flat, esize, nelem)
            if sp == "shared" and self.tags is not None:
                self.tag_writes(flat, width, lanes if sel is None else lanes[sel])
            if sp == "shared" and self.asyncs is not None:
                self._async_generic(pc, flat, width, lanes if sel is None else lanes[sel], a, True)
            self._account(pc, sp, "store", lanes if sel is None else lanes[sel], a, width)

    def _relaxed_read(self, pc, lanes, flat, vals, width):
        """A global load under the relaxed memory model (buffered stores may not be visible yet)."""
        vals = np.ascontiguousarray(vals)
        self.order.read(lanes, flat, vals.view(np.uint8).reshape(len(lanes), width))
        if self.order.sem[pc].acquire:
            self.order.fence(pc, lanes)
        return vals

    def _async_generic(self, pc, flat, width, lanes, addr, store: bool) -> None:
        """A generic-proxy shared access in a kernel with asynchronous operations."""
        a = self.asyncs
        if a.any_inflight:
            a.check_generic(pc, flat, width, lanes, addr, store)
        if store:
            a.dirty[flat[:, None] + np.arange(width)] = True

    def global_write(self, pc: int, flat: np.ndarray, vals: np.ndarray, lanes: np.ndarray) -> None:
        """Bytes ``vals`` [n, w] land at global flat indices ``flat`` [n, w] (an async copy completing)."""
        self.gmem.data[flat] = vals

    def _account(self, pc: int, space: str, kind: str, lanes: np.ndarray, addr: np.ndarray, width: int) -> None:
        if space == "callparam":
            space = "param"
        d = self.bytes_load if kind == "load" else self.bytes_store
        d[space] = d.get(space, 0) + len(lanes) * width
        if space == "global" and self.order is not None:
            self.order.access(pc, kind, lanes, addr, width)
        if self.mem_listeners:
            self.emit(pc, lanes, space=space, kind=kind, width=width, addresses=addr)

    def emit(self, pc: int, lanes: np.ndarray, *, space=None, kind=None, width=0, addresses=None) -> None:
        """One memory access of instruction ``pc`` by ``lanes`` (``kind`` given): handed to the
        ``memory_only`` listeners at once and, while the run loop collects for listeners of every
        instruction, kept as one of the accesses of that instruction's single event."""
        ev = self._event(pc, lanes, space, kind, width, addresses)
        if ev is not None:
            self._deliver_access(ev)

    def _deliver_access(self, ev) -> None:
        if self._parts is not None:
            self._parts.append(ev)
        for l in self.access_listeners:
            l(ev)

    def _event(self, pc: int, lanes: np.ndarray, space, kind, width, addresses, count: bool = False):
        """A :class:`sim.events.InstructionEvent` for ``lanes`` (None when no warp has one);
        ``count`` numbers it in each warp's stream (``seq``) and advances the streams."""
        from sim.events import InstructionEvent

        const = self._event_const[pc]
        if const is None:
            const = self._event_const[pc] = self._event_constants(pc)
        if len(lanes) == self.T:           # every thread of the batch, in order
            parts = self._full_parts
            if parts is None or parts[0] != self.batch_serial:
                parts = self._full_parts = self._full_event_parts()
            a2 = None if addresses is None else np.asarray(addresses, np.uint64).reshape(-1, WARP)
            seq = None
            if count:
                seq = self.warp_seq.copy()
                self.warp_seq += 1
            return InstructionEvent(self.kernel, pc, const[0], const[1], parts[2], parts[3], parts[1], space, kind,
                                    width, a2, const[2], seq)
        act = np.zeros(self.T, bool)
        act[lanes] = True
        act = act.reshape(-1, WARP)
        w = np.flatnonzero(act.any(axis=1))
        if len(w) == 0:
            return None
        act = act[w]
        a2 = None
        if addresses is not None:
            full = np.zeros(self.T, np.uint64)
            full[lanes] = addresses
            a2 = full.reshape(-1, WARP)[w]
        seq = None
        if count:
            seq = self.warp_seq[w]
            self.warp_seq[w] += 1
        return InstructionEvent(self.kernel, pc, const[0], const[1],
                                self.cta_ids[(w * WARP) // self.tpc],
                                ((w * WARP) % self.tpc // WARP).astype(np.int64), act, space, kind, width, a2,
                                const[2], seq)

    def _batch_warps(self, ev) -> np.ndarray:
        """Index of each warp of ``ev`` within the batch (ascending, as events list them)."""
        return np.searchsorted(self.cta_ids, ev.ctas) * (self.tpc // WARP) + ev.warps

    def _emit_instruction(self, pc: int, lanes: np.ndarray) -> None:
        """The one event of an executed instruction (warps with a lane in the stack entry's mask):
        for a memory instruction it carries the accesses its op reported (``accesses``), the first
        access's space, kind and width and the lanes and addresses of the accesses of that kind."""
        parts, self._parts = self._parts, None
        ev = self._event(pc, lanes, None, None, 0, None, count=True)
        if ev is None:
            return
        if parts:
            from dataclasses import replace

            first = parts[0]
            if len(parts) == 1 and len(first.warps) == len(ev.warps):
                ev = replace(first, seq=ev.seq, accesses=(first,))
            else:
                evb = self._batch_warps(ev)
                act = np.zeros(ev.active.shape, bool)
                addr = np.zeros(ev.active.shape, np.uint64)
                for p in parts:
                    if (p.space, p.kind, p.width) != (first.space, first.kind, first.width):
                        continue
                    i = np.searchsorted(evb, self._batch_warps(p))
                    act[i] |= p.active
                    if p.addresses is not None:
                        addr[i] = np.where(p.active, p.addresses, addr[i])
                ev = replace(ev, space=first.space, kind=first.kind, width=first.width, active=act,
                             addresses=addr, accesses=tuple(parts))
        for l in self.all_listeners:
            l(ev)

    def emit_warps(self, pc: int, w: np.ndarray, *, space, kind, width, addresses) -> None:
        """:meth:`emit` for every lane of the batch warps ``w`` (ascending), ``addresses``
        ``[len(w), 32]``: the warp-wide tensor instructions, without lane-mask bookkeeping."""
        from sim.events import InstructionEvent

        if len(w) * WARP == self.T:
            self.emit(pc, self.all_lanes, space=space, kind=kind, width=width, addresses=addresses)
            return
        const = self._event_const[pc]
        if const is None:
            const = self._event_const[pc] = self._event_constants(pc)
        key = (self.batch_serial, w.tobytes())
        parts = self._warp_parts.get(key)
        if parts is None:
            if len(self._warp_parts) >= 64:
                self._warp_parts.clear()
            act = np.ones((len(w), WARP), bool)
            ctas = self.cta_ids[(w * WARP) // self.tpc]
            warps = ((w * WARP) % self.tpc // WARP).astype(np.int64)
            for a in (act, ctas, warps):
                a.setflags(write=False)
            parts = self._warp_parts[key] = (act, ctas, warps)
        self._deliver_access(InstructionEvent(self.kernel, pc, const[0], const[1], parts[1], parts[2], parts[0],
                                              space, kind, width,
                                              np.asarray(addresses, np.uint64).reshape(len(w), WARP), const[2]))

    _full_parts = None

    def _full_event_parts(self) -> tuple:
        """(batch start, active [W, 32], CTA [W], warp-in-CTA [W]) of an event covering every
        thread of the batch; read-only, shared by all such events of the batch."""
        w = np.arange(self.T // WARP)
        act = np.ones((len(w), WARP), bool)
        ctas = self.cta_ids[(w * WARP) // self.tpc]
        warps = ((w * WARP) % self.tpc // WARP).astype(np.int64)
        for a in (act, ctas, warps):
            a.setflags(write=False)
        return self.batch_serial, act, ctas, warps

    _opcode_lines = None

    def opcode_lines(self) -> tuple[list[str], list[int]]:
        """(full opcode, PTX line) of every instruction of the linked program, built once."""
        if self._opcode_lines is None:
            self._opcode_lines = ([ins.full_opcode for ins in self.instructions],
                                  [ins.span.line for ins in self.instructions])
        return self._opcode_lines

    def _event_constants(self, pc: int) -> tuple[str, str, int]:
        """(full opcode, unit, PTX line) of instruction ``pc`` for its events."""
        info = self.infos[pc]
        ins = self.instructions[pc]
        return ins.full_opcode, info.unit.value if info is not None else "other", ins.span.line

    # ------------------------------------------------------------------ running
    cta_end = None

    def run(self, ctas: tuple[int, int] | None = None, only=None) -> None:
        """Run every CTA, or the linear CTA indices ``lo <= i < hi`` of ``ctas`` (``run_kernel(jobs=N)``
        gives each process one such range), or only the linear CTA indices listed in ``only`` (the
        timing model's samples), in ascending order, up to :attr:`batch` of them per batch: a batch
        holds any set of CTAs (:attr:`cta_ids`), not only a contiguous range."""
        lo, hi = (0, self.ncta) if ctas is None else (max(0, int(ctas[0])), min(self.ncta, int(ctas[1])))
        self.cta_end = hi
        import time

        if only is None:
            groups = [np.arange(s, min(s + self.batch, hi), dtype=np.int64) for s in range(lo, hi, self.batch)]
        else:
            ids = distinct(np.asarray(list(only), np.int64))
            ids = ids[(ids >= lo) & (ids < hi)]
            groups = [ids[i:i + self.batch] for i in range(0, len(ids), self.batch)]
        self.batches = len(groups)
        self._t_next = time.perf_counter() + 2.0
        with np.errstate(all="ignore"):
            for i, g in enumerate(groups):
                self.batch_index = i
                self._run_batch(g)
                if self.aborted:
                    break

    aborted = False

    def _reset_batch(self, ids: np.ndarray) -> None:
        """Start a batch for the launch CTAs ``ids`` (ascending, at most :attr:`batch`); slots past
        them get ids from ``ncta`` on and start exited."""
        n = len(ids)
        self.cta_ids = np.concatenate([ids, self.ncta + np.arange(self.batch - n, dtype=np.int64)]) \
            if n < self.batch else np.array(ids, np.int64)
        self.cta_ids.setflags(write=False)
        self.batch_serial += 1
        self.cta_base = int(self.cta_ids[0])
        lin = self.cta_ids[self.cta_local]
        self.cta_linear[:] = lin
        gx, gy, _ = self.grid
        self.ctaid[0][:] = lin % gx
        self.ctaid[1][:] = (lin // gx) % gy
        self.ctaid[2][:] = lin // (gx * gy)
        self.exited[:] = self.padding | (lin >= self.ncta)
        for arr in self.regs.values():
            arr.fill(0)
        self.shared.reset()
        if self.tags is not None:
            self.tags.fill(0)
            self.epoch.fill(1)
            self.epoch_stores.fill(False)
        self.localmem.data.fill(0)
        self.callparams.data.fill(0)
        self.frames = []
        if getattr(self, "carry_flag", None) is not None:
            self.carry_flag.fill(False)
        self.bar_pending = {}        # barrier id -> threads that arrived and wait (split arrivals)
        self.bar_parked = {}         # barrier id -> [(stack entry, its bar.sync pc)]
        self.parked_ids = set()      # id() of parked stack entries (not runnable siblings)
        self.commit_groups = 0
        self.warp_seq = np.zeros(self.T // WARP, np.int64)   # per warp: events emitted so far
        self.back_counts = [0] * len(self.prog)   # backward branches taken per pc (spin-loop check)
        self._spin_seen = {}
        if self.asyncs is not None:
            self.asyncs.reset()

    def _run_batch(self, ids: np.ndarray) -> None:
        self._reset_batch(ids)
        live = ~self.exited
        stack = [self.entry(0, -1, live)]
        prog = self.prog
        n = len(prog)
        pcw = self.pc_warps
        pct = self.pc_threads
        max_steps = self.max_steps
        listen = bool(self.all_listeners)
        try:
            self._loop(stack, prog, n, pcw, pct, max_steps, listen)
        except KeyboardInterrupt:           # Ctrl-C: stop cleanly, keep what was computed
            self._stop(stack, "interrupted", f"interrupted (Ctrl-C) after {self.steps:,} steps")
        finally:
            if self.asyncs is not None:
                self.asyncs.finish()

    def _tick(self) -> None:
        import time

        now = time.perf_counter()
        if now >= self._t_next:
            self._t_next = now + 2.0
            if self.progress is not None:
                self.progress(self.steps, self.batch_index + 1, self.batches)

    def _stop(self, stack, kind: str, why: str) -> None:
        """Stop the launch (a step limit or Ctrl-C): one problem per place where warps are,
        saying where they loop, how often, and what the exit test reads."""
        self.aborted = True
        live = [e for e in stack if e.threads and 0 <= e.pc < len(self.prog)]
        if not live:
            ins = self.instructions[0]
            self.problems.add(0, Problem(kind, self.kernel, str(ins).strip(), ins.span.line, None, None, None,
                                         None, None, why))
            return
        top = live[-1]                      # the path that runs; the others wait below it
        pc = top.pc
        ins = self.instructions[pc]
        lane = int(np.flatnonzero(top.mask)[0]) if np.any(top.mask) else 0
        cta, thr = self.thread_coords(lane)
        others = [f"line {self.instructions[e.pc].span.line} ({e.warps} warp(s)"
                  + (", waiting to reconverge)" if e.pc == top.rpc or any(e.pc == x.rpc for x in live) else ")")
                  for e in live[-2::-1][:4]]
        msg = (f"{why}: {top.warps} warp(s) here ({top.threads} threads); " + self.where_looping(pc, lane, top.threads)
               + (f"; other paths at {', '.join(others)}" if others else ""))
        self.problems.add(pc, Problem(kind, self.kernel, str(ins).strip(), ins.span.line, self.source_of(ins),
                                      cta, thr, None, None, msg))

    def where_looping(self, pc: int, lane: int, threads: int = 1) -> str:
        """``in the loop at lines 48-53 (12,000,000 header executions per thread so far); its
        exit test at line 52 reads %r5 = 7, %r6 = 5 (first thread here)``."""
        from isa.cfg import Cfg
        from isa.semantics import registers

        info = max((f for f in self.funcs if f.base <= pc), key=lambda f: f.base)
        cache = self.__dict__.setdefault("_cfgs", {})
        cfg = cache.get(info.fid) or cache.setdefault(info.fid, Cfg(info.fn, self.branch_table(info)))
        k = pc - info.base
        loop = cfg.innermost_loop(cfg.block_of_index.get(k, 0))
        if loop is None:
            return "not in a loop"
        ins = info.fn.instructions
        blocks = [cfg.blocks[b] for b in loop.blocks]
        lines = [ins[i].span.line for b in blocks for i in range(b.start, b.end)]
        head = cfg.blocks[loop.header].start + info.base
        runs = self.pc_threads[head] / max(1, threads)
        text = f"in the loop at lines {min(lines)}-{max(lines)} (about {runs:,.0f} iterations so far)"
        exits = [b for b in loop.blocks if any(s not in loop.blocks for s in cfg.succ[b])]
        for b in sorted(exits, key=lambda b: b not in loop.latches):
            br = ins[cfg.blocks[b].end - 1]
            if br.guard is None:
                continue
            test = next((i for i in range(cfg.blocks[b].end - 2, cfg.blocks[b].start - 1, -1)
                         if br.guard.register in registers(ins[i]).writes), None)
            if test is None:
                return text + f"; its exit branch at line {br.span.line} tests {br.guard.register}"
            t = ins[test]
            vals = []
            for r in registers(t).reads:
                v = self.register_value(info, r, lane, t)
                vals.append(f"{r} = {v}" if v is not None else r)
            return text + (f"; its exit test at line {t.span.line} ({' '.join(str(t).split())}) reads "
                           + ", ".join(vals) + " (first thread here)")
        return text + "; no conditional exit"

    def register_value(self, info, name: str, lane: int, ins):
        """The value of register ``name`` for thread ``lane``, typed as ``ins`` reads it, or None."""
        from .dtypes import compute_dtype

        prefix = f"{info.fid}:" if info.fid else ""
        arr = self.regs.get(prefix + name)
        if arr is None:
            arr = self.regs.get(name)
        if arr is None:
            return None
        t = next((m for m in reversed(ins.modifiers) if m[:1] in "subf" and m[1:].isdigit()), None)
        try:
            cd = compute_dtype(t) if t else arr.dtype
            if np.dtype(cd).itemsize == arr.dtype.itemsize:
                return arr.view(cd)[lane].item()
        except (KeyError, ValueError, TypeError):
            pass
        return arr[lane].item()

    def _loop(self, stack, prog, n, pcw, pct, max_steps, listen) -> None:
        while stack:
            top = stack[-1]
            pc = top.pc
            if pc == top.rpc or top.threads == 0 or pc >= n or pc < 0:
                stack.pop()
                if self.frames and len(stack) == self.frames[-1].base:
                    self.end_call(stack)
                continue
            kind, fn = prog[pc]
            pcw[pc] += top.warps
            pct[pc] += top.threads
            self.steps += 1
            if listen:
                lanes = self.lanes_of(top.arg)
                self._parts = []
            if kind == 0:
                fn(top.arg)
                top.pc = pc + 1
            else:
                fn(self, stack, top)
            if listen:
                self._emit_instruction(pc, lanes)
            if not self.steps & 0xFFFF:
                self._tick()
            if max_steps is not None and self.steps > max_steps:
                self._stop(stack, "max_steps", f"stopped after {self.steps:,} steps (max_steps={max_steps:,})")
                return

    _spin = None
    SPIN_CHECK = 4096            # a backward branch is checked every this many times it is taken

    def _state_digest(self, mask: np.ndarray) -> tuple:
        """What the threads of ``mask`` can see: their registers, and every memory of the batch."""
        import hashlib

        h = hashlib.blake2b(digest_size=16)
        for arr in self.regs.values():
            h.update(np.ascontiguousarray(arr[mask]).tobytes())
        regs = h.digest()
        h = hashlib.blake2b(digest_size=16)
        h.update(self.gmem.data.tobytes())
        h.update(self.shared.data.tobytes())
        if self.asyncs is not None:
            h.update(np.int64(self.asyncs.mbar.progress).tobytes())
            h.update(np.int64(len(self.asyncs.ops) + len(self.asyncs.wg)).tobytes())
        return regs, h.digest()

    def spin_check(self, stack: list, top: StackEntry, pc: int) -> None:
        """``top`` has taken the backward branch at ``pc`` another SPIN_CHECK times. If its registers
        and all memory are what they were at the last check, the loop cannot end by itself (the
        machine is deterministic): let a sibling path run (it may set what is waited for); when
        none can, or they change nothing, it is a ``deadlock``: reported at the branch with the
        loop and the values its exit test reads, the spinning threads stop, the rest runs on."""
        order = self.order
        if order is not None and order.relaxed and order.log and order.log[-1][5] > self.steps - order.horizon:
            return                     # a store buffered lately may still become visible to the loop
        key = (pc, top.mask.tobytes())
        regs, mem = self._state_digest(top.mask)
        old = self._spin_seen.get(key)
        self._spin_seen[key] = (regs, mem)
        if old is None or old[0] != regs or old[1] != mem:
            if old is not None and old[1] != mem:
                self.spin_reset()
            return
        if self.spin(stack, top, hash(mem)):
            return
        self.spin_reset()
        lane = int(np.flatnonzero(top.mask)[0])
        ins = self.instructions[pc]
        ctas = distinct(self.cta_local[top.mask])
        text = self.where_looping(pc, lane, top.threads)
        later = " or a CTA that runs after it" if self.ncta > self.batch else ""
        for c in ctas[:8]:
            first = int(np.flatnonzero(top.mask & (self.cta_local == c))[0])
            self.report_cta("deadlock", pc, int(c),
                            f"spin loop never ends: {int(np.count_nonzero(top.mask & (self.cta_local == c)))} "
                            f"thread(s) of this CTA loop {text}, and neither their registers nor any memory changed "
                            f"over the last {self.SPIN_CHECK} iterations with no other thread left to change them "
                            f"(a flag that is never set, one that another CTA of this batch{later} sets: CTAs "
                            f"of a launch need not run at the same time); these threads stop here", lane=first)
        self.retire(stack, top.mask.copy())

    def spin_reset(self) -> None:
        self._spin = None

    def spin(self, stack: list, top: StackEntry, progress: int, patience: int = 0) -> bool:
        """A wait (``mbarrier.try_wait``) failed for every thread of ``top``. If another path of
        the divergence stack can run (disjoint threads, not parked at a barrier), the top path and
        everything pushed after that sibling move below it, so the sibling runs next; True. False
        when nothing can change what is waited for (no sibling, or paths took turns failing with
        no progress): a deadlock."""
        mark, count = self._spin or (None, 0)
        count = count + 1 if mark == progress else 1
        self._spin = (progress, count)
        if count > 2 * len(stack) + 4 + patience:
            return False
        for j in range(len(stack) - 2, -1, -1):
            e = stack[j]
            if e.threads and id(e) not in self.parked_ids and not (e.mask & top.mask).any():
                stack[j:] = stack[j + 1:] + [e]
                return True
        return count <= patience

    def entry(self, pc: int, rpc: int, mask: np.ndarray) -> StackEntry:
        """A new divergence-stack entry (its counts filled in from ``mask``)."""
        e = StackEntry(pc, rpc, mask)
        self.refresh(e)
        return e

    def refresh(self, e: StackEntry) -> None:
        mask = e.mask
        nt = int(np.count_nonzero(mask))
        e.threads = nt
        if nt == self.T:
            e.warps, e.arg = self.T // WARP, None
        else:
            e.warps = int(np.count_nonzero(mask.reshape(-1, WARP).any(axis=1))) if nt else 0
            e.arg = mask

    # ------------------------------------------------------------------ calls
    def begin_call(self, stack: list, info, mask: np.ndarray, arg_slots, ret_slots, reg_rets=()) -> None:
        """Threads ``mask`` enter function ``info``: copy arguments, push a frame and its entry."""
        from .calls import Frame

        lanes = np.flatnonzero(mask)
        cp = self.callparams.data[:self.T * self.callparams.stride].reshape(self.T, self.callparams.stride)
        saved = None
        if info.recursive and any(f.info is info for f in self.frames):
            keys = [k for k in self.regs if k.startswith(f"{info.fid}:")]
            (l0, l1), (p0, p1) = info.local_range, info.param_range
            lm = self.localmem.data[:self.T * self.localmem.stride].reshape(self.T, self.localmem.stride)
            saved = ({k: self.regs[k].copy() for k in keys}, lm[:, l0:l1].copy(), cp[:, p0:p1].copy())
        if len(arg_slots) > len(info.params):
            raise SimulationError(f"call passes {len(arg_slots)} arguments to {info.fn.name}, which takes "
                                  f"{len(info.params)}")
        for (src, ssize), (dst, dsize) in zip(arg_slots, info.params):
            n = min(ssize, dsize)
            cp[lanes, dst:dst + n] = cp[lanes, src:src + n]
        copies = tuple((r[0], c[0], min(r[1], c[1])) for r, c in zip(info.returns, ret_slots))
        self.frames.append(Frame(len(stack), lanes, copies, saved, info, reg_rets))
        stack.append(self.entry(info.base, -1, mask))

    def end_call(self, stack: list) -> None:
        """The frame on top finished (all its threads returned or exited): hand back results."""
        frame = self.frames.pop()
        cp = self.callparams.data[:self.T * self.callparams.stride].reshape(self.T, self.callparams.stride)
        lanes = frame.lanes
        results = [cp[lanes, src:src + n].copy() for src, _, n in frame.copies]
        reg_results = [np.broadcast_to(np.asarray(rd()), (self.T,))[lanes].copy() for rd, _ in frame.reg_copies]
        if frame.saved is not None:
            regs, loc, par = frame.saved
            for k, v in regs.items():
                self.regs[k][...] = v
            (l0, l1), (p0, p1) = frame.info.local_range, frame.info.param_range
            lm = self.localmem.data[:self.T * self.localmem.stride].reshape(self.T, self.localmem.stride)
            lm[:, l0:l1] = loc
            cp[:, p0:p1] = par
        for (_, dst, n), v in zip(frame.copies, results):
            cp[lanes, dst:dst + n] = v
        for (_, w), v in zip(frame.reg_copies, reg_results):
            w.at(v, lanes)

    def leave_function(self, stack: list, mask: np.ndarray) -> None:
        """``ret`` in a device function: threads ``mask`` leave the innermost frame."""
        keep = ~mask
        for e in stack[self.frames[-1].base:]:
            e.mask = e.mask & keep
            self.refresh(e)

    def retire(self, stack: list, mask: np.ndarray) -> None:
        """Threads in ``mask`` exit: remove them from every stack entry."""
        self.exited |= mask
        keep = ~mask
        for e in stack:
            e.mask = e.mask & keep
            self.refresh(e)


_COMPONENTS = ("x", "y", "z", "w", "e4", "e5", "e6", "e7")


SPECIAL = frozenset({"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
                     "%gridid", "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo",
                     "%globaltimer_hi", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge",
                     "%lanemask_gt", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
                     "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster", "%dynamic_smem_size",
                     "%total_smem_size", "%aggr_smem_size"}) | frozenset(f"%envreg{i}" for i in range(32)) \
    | frozenset(f"%pm{i}" for i in range(8))


def _scoped_declarations(body, sid: int):
    """(scope id, variable) for every variable declared in a body, nested scopes included."""
    for s in body:
        if isinstance(s, ir.Variable):
            yield sid, s
        elif isinstance(s, ir.Scope):
            yield from _scoped_declarations(s.body, s.id)


def to_generic(space: str, addr: int) -> int:
    return addr if space == "global" else WINDOWS[space] + addr


__all__ = ["LaunchState", "StackEntry", "Writer", "SINK", "GLOBAL_BASE", "to_generic", "imm_value"]
