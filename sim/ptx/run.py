"""``run_kernel``: launch a PTX kernel on the functional simulator, CUDA style.

    >>> import numpy as np, sim
    >>> C = np.zeros((67, 53), np.float32)
    >>> r = sim.run_kernel("sgemm_naive.sm_90.ptx", "sgemm_naive", (3, 7, 1), (32, 8, 1),
    ...                    [A, B, C, np.int32(67), np.int32(53), np.int32(45)])   # doctest: +SKIP
    >>> r.stats["thread_instructions"], r.problems                                # doctest: +SKIP

Numpy arrays are device buffers, read and written in place; scalars are numpy scalars of the
parameter's type; a pointer parameter gets its buffer's device address (``np.uint64(0)`` or
``None`` is a null pointer). A parameter declared as a byte array (a struct passed by value)
takes the raw bytes of its argument.
"""

from __future__ import annotations

import sys
import time
import weakref
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

import numpy as np

from isa import ir
from isa.cache import gc_paused
from isa.errors import InputError

from .dtypes import compute_dtype, nbytes
from .init import flatten_initializer
from .machine import LaunchState
from .memory import GlobalMemory
from .problems import Problem


@dataclass(frozen=True)
class RunResult:
    """What a launch did: ``stats`` (counts, bytes, wavefronts, sectors) and ``problems``
    (undefined behaviour found, as :class:`sim.ptx.problems.Problem`)."""

    kernel: str
    stats: dict = field(compare=False)
    problems: list = field(compare=False)
    timing: dict | None = field(default=None, compare=False)   # timing="h200": modelled figures
    sampled: bool = False        # timing ran on a sample of the CTAs (outputs are partial)
    complete: bool = True        # every CTA ran: the output buffers are the kernel's full result

    @property
    def ok(self) -> bool:
        return not self.problems


def _load(module_or_path) -> ir.Module:
    if isinstance(module_or_path, ir.Module):
        return module_or_path
    import isa

    return isa.load(module_or_path)        # (a path or the text; isa.load tells them apart)


def _dims3(v, what) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        return int(v), 1, 1
    t = tuple(int(x) for x in v)
    if not 1 <= len(t) <= 3 or any(x <= 0 for x in t):
        raise InputError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return t + (1,) * (3 - len(t))


def run_kernel(module_or_path, entry: str, grid, block, args, dynamic_shared_bytes: int = 0, *, listeners=(),
               max_steps: int | str | None = "auto", memory_stats: bool = True, batch_threads: int = 16384,
               check_uninitialized: bool = True, check_races: bool = True,
               buffer_names=None, memory_model: str = "sc", seed: int = 0, jobs: int = 1,
               ctas: tuple[int, int] | None = None, progress=None, timing: str | None = None,
               sample: str = "auto", trace: bool = False) -> RunResult:
    """Run kernel ``entry`` over ``grid`` x ``block`` threads; see the module docstring.

    ``listeners`` receive :class:`sim.events.InstructionEvent` objects; ``memory_stats`` adds the
    default shared-wavefront / global-sector listener (a :class:`sim.memory.heat.MemoryHeat`; an
    empty one among ``listeners`` is used instead of a second); ``max_steps`` bounds the number of
    steps (one instruction for the threads of a batch of CTAs on one path; ``"auto"``, the
    default, allows :data:`sim.ptx.machine.STEPS_PER_BATCH` per batch, ``None`` no limit): at the
    limit, or on Ctrl-C, the launch stops with a ``max_steps`` / ``interrupted`` problem that says
    where each warp loops, and every result computed so far is kept. ``progress(steps, batch,
    batches)`` is called about every 2 s of a long run. ``buffer_names`` names the arguments in
    problem reports (default: the PTX parameter names). ``check_races`` turns on the
    shared-memory, global (``global_race``) race checks; ``memory_model="relaxed"`` buffers global
    stores and drains them in an order drawn from ``seed`` (:mod:`sim.ptx.order`; default ``"sc"``:
    every store visible at once).

    ``jobs`` > 1 splits the grid into that many contiguous CTA ranges run by forked processes
    (:mod:`sim.ptx.parallel`); outputs, statistics and problems are the same as one process gives,
    for kernels whose CTAs do not communicate through global memory (kernels with atomics, or a
    listener that must see every event in this process, run in one process). ``ctas`` = ``(lo, hi)``
    runs only those linear CTA indices.

    ``timing="h200"`` also predicts the launch's time on the H200 model (:mod:`sim.timing.h200`):
    ``result.timing`` holds the modelled figures; with ``sample="auto"`` a big launch runs only a
    deterministic sample of its CTAs (``result.sampled``; ``result.complete`` is False and the
    outputs hold only the sampled CTAs' work), ``sample="all"`` runs every CTA. Without ``timing``
    nothing of this runs.
    """
    t0 = time.perf_counter()
    module = _load(module_or_path)
    fn = module.function(entry)
    # a tensor-map argument is an instance of sim.ptx.tensormap's class: where that module was never
    # imported there is none, and it is not imported for nothing (~0.4 ms CPU of a cold run)
    tensormap = sys.modules.get(f"{__package__}.tensormap")
    TensorMapArg = tensormap.TensorMapArg if tensormap is not None else ()
    if TensorMapArg and any(isinstance(a, TensorMapArg) for a in args):
        jobs = 1                       # the maps hold device addresses of this process's layout
    if jobs and jobs > 1 and ctas is None and timing is None:
        from .parallel import run_parallel

        res = run_parallel(module, entry, grid, block, args, dynamic_shared_bytes, jobs=jobs, listeners=listeners,
                           max_steps=max_steps, memory_stats=memory_stats, batch_threads=batch_threads,
                           check_uninitialized=check_uninitialized, check_races=check_races,
                           buffer_names=buffer_names, memory_model=memory_model, seed=seed)
        if res is not None:
            res.stats["seconds"] = time.perf_counter() - t0
            return res
    grid = _dims3(grid, "grid")
    block = _dims3(block, "block")
    args = list(args)
    if len(args) != len(fn.params):
        raise InputError(f"kernel '{entry}' takes {len(fn.params)} parameters, got {len(args)} arguments")

    # global memory: argument buffers, then module .global variables
    allocations = []
    buf_of_param: dict[int, int] = {}
    for i, (p, a) in enumerate(zip(fn.params, args)):
        if isinstance(a, np.ndarray) and not p.dims:
            buf_of_param[i] = len(allocations)
            label = buffer_names[i] if buffer_names is not None and i < len(buffer_names) else p.name
            allocations.append((label, np.ascontiguousarray(a), i))
    tmap_buf: dict[int, int] = {}      # parameter -> allocation of its tensor map's array
    for i, a in enumerate(args):
        if isinstance(a, TensorMapArg):
            same = next((k for j, k in buf_of_param.items() if args[j] is a.array), None)
            if same is None:
                same = next((tmap_buf[j] for j in tmap_buf if args[j].array is a.array), None)
            if same is None:
                same = len(allocations)
                allocations.append((a.name, np.ascontiguousarray(a.array), None))
            tmap_buf[i] = same
    globals_ = [v for v in module.static_variables if v.space == "global"]
    nfirst = len(allocations)
    for v in globals_:
        size = v.size_bytes or 0
        allocations.append((v.name, flatten_initializer(v, {}, size), None))
    gmem = GlobalMemory(allocations)
    global_symbols = {v.name: gmem.buffers[nfirst + k].base for k, v in enumerate(globals_)}
    if any(v.initializer is not None for v in globals_):    # re-lay initialisers that name other globals
        from .calls import function_addresses

        syms = {n: ("global", a) for n, a in function_addresses(module).items()}
        syms.update({n: ("global", a) for n, a in global_symbols.items()})
        for k, v in enumerate(globals_):
            b = gmem.buffers[nfirst + k]
            raw = flatten_initializer(v, syms, b.size)
            gmem.data[b.base - 0x7F00_0000_0000:b.base - 0x7F00_0000_0000 + b.size] = np.frombuffer(raw, np.uint8)

    # parameter block
    params = bytearray()
    offsets: dict[str, int] = {}
    for i, (p, a) in enumerate(zip(fn.params, args)):
        align = p.align or nbytes(p.type)
        off = -(-len(params) // align) * align
        params += bytes(off - len(params))
        offsets[p.name] = off
        if i in tmap_buf:
            if p.size_bytes != 128:
                raise InputError(f"parameter {i} ({p.name}) is {p.size_bytes} bytes; a CUtensorMap takes "
                                 ".param .align 64 .b8 [128]")
            params += replace(a.map, address=gmem.buffers[tmap_buf[i]].base).encode()
            continue
        params += _param_bytes(p, a, i, gmem, buf_of_param)

    listeners = list(listeners)
    mstats = None
    if memory_stats:                  # one MemoryHeat serves the stats and a caller's heat column
        from sim.memory.heat import MemoryHeat

        mstats = next((l for l in listeners if type(l) is MemoryHeat and not l.sites), None)
        if mstats is None:
            mstats = MemoryHeat()
            listeners.insert(0, mstats)

    def machine(batch_threads: int) -> LaunchState:
        key = (fn.name, grid, block, bytes(params), tuple(sorted(global_symbols.items())), int(dynamic_shared_bytes),
               batch_threads, max_steps, check_uninitialized, check_races, memory_model, int(seed))
        M = _cached(module, key)
        if M is not None:
            M.relaunch(gmem, listeners)
        else:
            M = LaunchState(module, fn, grid, block, bytes(params), offsets, gmem, global_symbols,
                            dynamic_shared_bytes, batch_threads=batch_threads, listeners=listeners,
                            max_steps=max_steps, check_uninitialized=check_uninitialized, check_races=check_races,
                            memory_model=memory_model, seed=seed)
            _remember(module, key, M)
        return M

    M = machine(batch_threads)
    starts = None
    tinfo = None
    if timing is not None:
        from sim.timing import h200 as T
        from sim.timing.streams import WarpStreams

        if timing != "h200":
            raise InputError(f"unknown timing model {timing!r} (known: h200)")
        occ, regs = T.occupancy_of(module, fn.name, M)
        # the sampled CTAs (any set of CTA ids) run together, batch_threads // threads per CTA at a time
        starts, sampled = T.plan(M.ncta, 132, max(1, occ.ctas_per_sm), sample)
        if starts is not None and len(set(starts)) < M.batch:
            # a batch of exactly the sampled CTAs: the slots past them would start exited, yet every
            # instruction's register arrays and events span the whole batch (the 2048^3 hgemm_cp_async
            # perf launch: 16 sampled CTAs of 128 threads in a batch of 128 CTAs, 8 x the lanes)
            M = machine(len(set(starts)) * M.tpc)
        from sim.timing.vectorize import shared_merges

        merges = shared_merges(module, M)       # ptxas's merged shared loads where SASS is at hand, else modelled
        ws = WarpStreams(M.tpc // 32, merges.by_pc)
        if M.asyncs is not None:          # the timing model waits where the functional semantics complete
            from sim.timing.completions import AsyncLog

            ws.async_log = AsyncLog()
            ws.on_async = ws.async_log.on_async      # the streams listener also takes the AsyncEvents
        M._set_listeners(list(listeners) + [ws])
        tinfo = (occ, regs, ws, starts, sampled, merges)
    t1 = time.perf_counter()
    M.progress = progress
    # with timing, the streams listener keeps an Access tuple per warp and memory instruction (1.2 M
    # for the 2048^3 hgemm_cp_async perf launch), all alive until the prediction ends and none in a
    # reference cycle: the cyclic collector is off meanwhile, or its full collections scan them over
    # and over (that launch, measured here: its run and streams 13.8 -> 11.6 s CPU, the whole 34.1 -> 32.7 s)
    try:
        with (gc_paused() if tinfo is not None else nullcontext()):
            M.run(ctas, only=starts)
    except BaseException:
        M.release()
        raise
    t2 = time.perf_counter()

    # copy buffers back in place
    for i, k in buf_of_param.items():
        a = args[i]
        raw = gmem.read(gmem.buffers[k])
        if a.flags.writeable:
            np.copyto(a, raw.view(a.dtype).reshape(a.shape))
    for i, k in tmap_buf.items():
        a = args[i].array
        if k not in buf_of_param.values() and a.flags.writeable:
            np.copyto(a, gmem.read(gmem.buffers[k]).view(a.dtype).reshape(a.shape))
    stats = _stats(M, mstats)
    stats["seconds"] = time.perf_counter() - t0
    stats["setup_seconds"] = t1 - t0        # parse (if a path was given), layout, decoding
    stats["run_seconds"] = t2 - t1
    if tinfo is not None:
        occ, regs, ws, starts, sampled, merges = tinfo
        t3 = time.perf_counter()
        with gc_paused():
            tm = T.predict(M, ws, occ, regs, simulated=starts, sampled=sampled, gmem=gmem, trace=trace)
        tm["predict_seconds"] = time.perf_counter() - t3 + (t2 - t1)
        tm["shared_merges"] = merges.summary()
        from analyzer.plot import work_by_kind

        # operations by kind of peak over the launch: exact counts of the CTAs run, scaled when sampled
        tm["work"] = work_by_kind(M.infos, M.pc_threads, M.ncta / tm["simulated_ctas"] if sampled else 1.0)
        from sim.timing.labels import field_labels

        tm["labels"] = field_labels(tm, shared_limits="shared" in occ.limiters)   # exact / measured / modelled per field
        problems = list(M.problems.items)
        M.release()
        return RunResult(fn.name, stats, problems, tm, sampled, not sampled)
    problems = list(M.problems.items)
    M.release()
    return RunResult(fn.name, stats, problems)


#: decoded machines per module object (by identity; dropped with the module), newest last
_DECODED: dict[int, tuple] = {}
_PER_MODULE = 4


def _cached(module: ir.Module, key) -> LaunchState | None:
    """A machine decoded for the same module, kernel, geometry and parameter bytes, if any.

    Decoding (layout, register files, one closure per instruction) costs 10-30 ms per launch;
    repeated launches of one kernel with equal-shaped inputs reuse it. The key includes the
    parameter bytes (scalars and buffer addresses, which depend only on buffer sizes) and the
    addresses of module globals, which decoded instructions hold as constants."""
    entry = _DECODED.get(id(module))
    if entry is None or entry[0]() is not module:
        return None
    per = entry[1]
    M = per.pop(key, None)
    if M is not None:
        per[key] = M
    return M


def _remember(module: ir.Module, key, M: LaunchState) -> None:
    entry = _DECODED.get(id(module))
    if entry is None or entry[0]() is not module:
        mid = id(module)
        try:
            ref = weakref.ref(module, lambda _r, mid=mid: _DECODED.pop(mid, None))
        except TypeError:
            return
        entry = _DECODED[mid] = (ref, {})
    per = entry[1]
    per[key] = M
    while len(per) > _PER_MODULE:
        per.pop(next(iter(per)))


def _param_bytes(p: ir.Variable, a, i: int, gmem: GlobalMemory, buf_of_param) -> bytes:
    size = p.size_bytes
    if p.dims:                                        # struct / array passed by value
        raw = a.tobytes() if isinstance(a, (np.ndarray, np.generic)) else bytes(a)
        if size is not None and len(raw) != size:
            raise InputError(f"parameter {i} ({p.name}) is {size} bytes, argument has {len(raw)}")
        return raw
    if i in buf_of_param:
        if nbytes(p.type) != 8:
            raise InputError(f"parameter {i} ({p.name}) is .{p.type}; a buffer needs a 64-bit pointer parameter")
        return np.uint64(gmem.buffers[buf_of_param[i]].base).tobytes()
    if a is None:
        a = 0
    return scalar_bytes(p, a, i)


_HALF = {"f16": "float16", "bf16": "bfloat16"}


def scalar_bytes(p: ir.Variable, a, i: int) -> bytes:
    """The bytes of scalar argument ``a`` for by-value parameter ``p`` (index ``i``), or an
    :class:`InputError` that names the parameter, its PTX type and what to pass.

    Integer parameters (``.u16``, ``.s32``, ``.b64``...) take integers whose value fits the width
    (signed or unsigned); a float is refused, never truncated (``np.float16(1.5)`` for a
    ``.param .u16``, as Numba declares fp16 scalars, would become 1): pass its bit pattern or an
    integer. Float parameters take float or integer values (converted with round-to-nearest);
    ``.f16``/``.bf16`` also take their bit pattern as an unsigned integer of the same width."""
    t = p.type
    cd = compute_dtype(t)
    where = f"parameter {i} ({p.name}, .param .{t})"
    got = f"np.{type(a).__name__}({a})" if isinstance(a, np.generic) else repr(a)
    if isinstance(a, np.ndarray) and a.ndim == 0:
        a = a[()]
    if isinstance(a, np.ndarray) or not isinstance(a, (bool, int, float, np.generic)):
        raise InputError(f"argument {i} ({got}) does not fit {where}: pass a scalar "
                         f"({'an integer' if cd.kind in 'iub' else 'a float'})")
    is_int = isinstance(a, (bool, int, np.integer, np.bool_))
    is_float = isinstance(a, (float, np.floating))
    if t == "pred":
        if is_int and int(a) in (0, 1):
            return bytes([int(a)])
        raise InputError(f"argument {i} ({got}) does not fit {where}: pass True/False or 0/1")
    if t in ("f32", "f64"):
        if is_int or is_float:
            return np.asarray(a).astype(cd).tobytes()
    elif t in _HALF:
        import ml_dtypes  # noqa: F401  (registers bfloat16)

        half = np.dtype(_HALF[t])
        if is_float:
            return np.asarray(a).astype(half).view(cd).tobytes()
        if isinstance(a, np.unsignedinteger) and a.dtype.itemsize == cd.itemsize:
            return np.asarray(a).view(cd).tobytes()               # the bit pattern
        if is_int and not isinstance(a, np.integer):
            return np.asarray(float(a)).astype(half).view(cd).tobytes()
        raise InputError(f"argument {i} ({got}) does not fit {where}: pass a float value or the bit pattern "
                         f"as np.uint{8 * cd.itemsize}")
    elif cd.kind in "iu":
        bits = 8 * cd.itemsize
        if is_float:
            hint = ""
            if isinstance(a, np.floating) and a.dtype.itemsize == cd.itemsize:
                u = f"uint{8 * a.dtype.itemsize}"
                hint = f" ({got}.view(np.{u}) = {int(np.asarray(a).view(u))})"
            elif bits in (16, 32, 64) and np.isfinite(float(a)):
                # the bit pattern must have the parameter's width: a 16-bit float's for a .u16
                hint = (f" of a {bits}-bit float (np.float{bits}({float(a)!r}).view(np.uint{bits}) = "
                        f"{int(np.asarray(float(a), dtype=f'float{bits}').view(f'uint{bits}'))})")
            raise InputError(f"argument {i} ({got}) does not fit {where}: a float is not converted to an "
                             f"integer parameter; pass the bit pattern{hint} or an integer")
        if is_int:
            v = int(a)
            if not -(1 << (bits - 1)) <= v < (1 << bits):
                raise InputError(f"argument {i} ({got}) does not fit {where}: {v} is outside the "
                                 f"{bits}-bit range [{-(1 << (bits - 1))}, {(1 << bits) - 1}]")
            return (v & ((1 << bits) - 1)).to_bytes(cd.itemsize, "little")
    raise InputError(f"argument {i} ({got}) does not fit {where}")


def _stats(M: LaunchState, mstats) -> dict:
    opcodes: dict[str, int] = {}
    threads_by_op: dict[str, int] = {}
    lines: dict[int, int] = {}
    names, at = M.opcode_lines()
    pct = M.pc_threads
    for pc, w in enumerate(M.pc_warps):
        if not w:
            continue
        k = names[pc]
        opcodes[k] = opcodes.get(k, 0) + w
        threads_by_op[k] = threads_by_op.get(k, 0) + pct[pc]
        line = at[pc]
        lines[line] = lines.get(line, 0) + w
    spaces = sorted(set(M.bytes_load) | set(M.bytes_store))
    out = {
        "warp_instructions": int(sum(M.pc_warps)),
        "thread_instructions": int(sum(M.pc_threads)),
        "opcodes": opcodes,
        "opcode_threads": threads_by_op,
        # thread executions of each of the kernel's instructions (index into Function.instructions)
        "threads_by_instruction": {pc: pct[pc] for pc in range(len(M.code[0])) if pct[pc]},
        # threads that took each of the kernel's conditional branches (same indices)
        "taken_by_instruction": {pc: M.pc_taken[pc] for pc in range(len(M.code[0])) if M.pc_taken[pc]},
        "warp_instructions_by_line": lines,
        "bytes_by_space": {s: M.bytes_load.get(s, 0) + M.bytes_store.get(s, 0) for s in spaces},
        "load_bytes_by_space": dict(M.bytes_load),
        "store_bytes_by_space": dict(M.bytes_store),
        "barriers": M.barrier_waits,
        "ctas": M.ncta,
        "threads_per_cta": M.nthreads,
        "ctas_per_batch": M.batch,
        "problems_suppressed": M.problems.suppressed,
        "memory_model": M.memory_model,
    }
    if M.memory_model == "relaxed":
        out["memory_seed"] = M.order.seed
    if mstats is not None:
        out.update(mstats.as_stats())
        out["memory_by_pc"] = mstats.by_pc()
    else:
        out.update({"shared_load_wavefronts": None, "shared_store_wavefronts": None, "global_sectors": None})
    return out


__all__ = ["run_kernel", "RunResult", "Problem"]
