"""Which scalar shared-memory loads ptxas merges into one vector load (LDS.64 / LDS.128).

One interface, :func:`shared_merges`, two sources, and ``result.timing["shared_merges"]`` says
which one a prediction used:

* ``"sass"`` (*measured from the compiler*): where ptxas and nvdisasm are on the PATH, what ptxas
  really emitted (:func:`isa.sass.shared_merges`: ``-lineinfo`` ties each ``LDS.128`` to the PTX
  line it came from, and the PTX loads it covers are merged into it);
* ``"modelled"``: elsewhere, the static pass below, which guesses what ptxas does.

Both give the same :class:`Merge` per pc, priced the same way by :class:`sim.timing.streams.WarpStreams`.
On the corpus's 29 perf launches the two agree on every load but those of ``sgemm_smem_padded``,
whose rows of 33 words ptxas cannot prove 16-byte aligned: it keeps the loads scalar, where the
model's run-time check merges them for the warps whose rows happen to be aligned.

The timing model prices PTX, but the H200 runs what ptxas emits, and ptxas merges scalar loads from
one base register at adjacent offsets (``ld.shared.f32 [%r6]; ... [%r6+4]; ... [%r6+8]; ...
[%r6+12]``) into one 128-bit load when it can prove the address 16-byte aligned. That changes the
shared-memory cost four-fold for a column read of a 32 x 32 tile: four 32-way conflicted LDS.32 are
128 wavefronts, one LDS.128 is 32 (a quarter-warp of 8 lanes per group, 8 rows in the same banks).
Measured (``../shared/corpus/h200/ncu_deep.json``, ``l1tex__data_pipe_lsu_wavefronts_mem_shared.sum``):

* ``sgemm_smem_conflict`` small launch: 112,152 wavefronts; PTX priced scalar: 406,272; merged: 112,896.
* ``sgemm_smem_tiled32`` perf: 3,227 per warp, merged model 3,200 (As[ty][k] broadcast as LDS.128:
  2 wavefronts per 4 k, Bs[k][tx] stays LDS.32), scalar 4,224.
* ``sgemm_smem_padded`` (rows of 33 words, not 16-byte aligned) stays scalar: 4,257 per warp.

What is modelled (a static pass over the kernel plus a run-time check):

* candidates are non-volatile ``ld.shared`` of 4- or 8-byte scalars (``.f32/.b32/.u32/.s32``,
  ``.f64/.b64/.u64/.s64``) in one basic block (:class:`isa.cfg.Cfg`), addressed ``[%base+offset]``
  or ``[symbol+offset]`` (a ``__shared__`` array read at constant indices), same base, type and guard;
* a group ends at a write to the base register, a shared store or atomic, a barrier or fence, a call;
* within a group, offsets ``o, o+w, o+2w, o+3w`` with ``o`` a multiple of ``4w`` (16 bytes at most,
  so only for 4-byte loads) become one 16-byte load, else pairs ``o, o+w`` with ``o`` a multiple of
  ``2w`` one ``2w``-byte load;
* ptxas must prove alignment statically; the model checks it on the warp's run-time addresses
  (all active lanes aligned to the vector width) and keeps the loads scalar otherwise.

The first load of a group in program order (the *leader*) carries the vector access; the others
(*followers*) cost no issue slot and no wavefronts and complete with the leader. This is an
approximation of ptxas (it may also reorder, or decline when registers are short): *modelled*.
"""

from __future__ import annotations

from dataclasses import dataclass

_WIDTH = {"f32": 4, "b32": 4, "u32": 4, "s32": 4, "f64": 8, "b64": 8, "u64": 8, "s64": 8}
_BREAK_OPCODES = {"bar", "barrier", "membar", "fence", "call", "ret", "exit", "bra", "brx", "atom", "red",
                  "st", "cp", "wgmma", "mbarrier", "stmatrix"}


@dataclass(frozen=True)
class Merge:
    """One pc of a merged group: ``leader`` pc, vector ``width`` bytes, ``lane_bytes`` of the scalar."""

    leader: int
    width: int
    lane_bytes: int


def _scalar_shared_load(ins):
    from isa import ir

    if ins.opcode != "ld" or "shared" not in ins.modifiers or "volatile" in ins.modifiers:
        return None
    if any(m in ("v2", "v4", "v8") for m in ins.modifiers):
        return None
    w = next((_WIDTH[m] for m in ins.modifiers if m in _WIDTH), None)
    if w is None or len(ins.operands) != 2:
        return None
    adr = ins.operands[1]
    if not isinstance(adr, ir.Address) or not isinstance(adr.base, (ir.Register, ir.Symbol)) or adr.index is not None:
        return None         # [%base+offset], or [sym+offset] (a __shared__ array at constant indices)
    g = ins.guard
    return adr.base.name, w, (g.register, g.negated) if g else None, int(adr.offset or 0)


def merged_loads(state) -> dict[int, Merge]:
    """pc -> :class:`Merge` for every shared load ptxas would merge, over the launch's functions
    (``sim.ptx`` launch state: ``funcs`` with ``fn`` and ``base``)."""
    from isa.semantics import registers

    out: dict[int, Merge] = {}
    for info in getattr(state, "funcs", ()):
        fn, base = info.fn, info.base
        ins = fn.instructions
        from .schedule import block_bounds

        starts = {a for a, _ in block_bounds(fn)}
        groups: dict[tuple, list] = {}

        def close(keys):
            for key in keys:
                lst = groups.pop(key, [])
                _merge(lst, key[1], out)

        for k, i in enumerate(ins):
            if k in starts:
                close(list(groups))
            c = _scalar_shared_load(i)
            if c is not None:
                reg, w, guard, off = c
                groups.setdefault((reg, w, guard), []).append((base + k, off))
                dst = registers(i).writes
                hit = [key for key in groups if key[0] in dst]
                close(hit)
                continue
            if i.opcode in _BREAK_OPCODES:
                close(list(groups))
                continue
            try:
                writes = set(registers(i).writes)
            except Exception:  # noqa: BLE001 - an instruction without tables ends every group
                close(list(groups))
                continue
            close([key for key in groups if key[0] in writes])
        close(list(groups))
    return out


def _merge(lst, w: int, out: dict) -> None:
    if len(lst) < 2:
        return
    by_off: dict[int, int] = {}
    for pc, off in lst:
        by_off.setdefault(off, pc)          # a repeated offset: the first load only
    taken: set[int] = set()
    for o in sorted(by_off):
        if o in taken:
            continue
        for n in (4, 2):
            if n * w > 16 or o % (n * w):
                continue
            offs = [o + j * w for j in range(n)]
            if all(x in by_off and x not in taken for x in offs):
                pcs = [by_off[x] for x in offs]
                lead = min(pcs)
                for pc in pcs:
                    out[pc] = Merge(lead, n * w, w)
                taken.update(offs)
                break


SOURCES = {"sass": "measured from the compiler: the LDS/STS ptxas emitted for each PTX line (isa.sass, -lineinfo)",
           "modelled": "modelled: a static pass guessing which loads ptxas merges (sim.timing.vectorize)"}


@dataclass(frozen=True)
class SharedMerges:
    """The merged shared loads of a launch: pc -> :class:`Merge`, and where they come from
    (``source``: ``"sass"`` or ``"modelled"``, :data:`SOURCES`; ``why``: why not SASS, if not)."""

    by_pc: dict
    source: str
    why: str = ""

    def summary(self) -> dict:
        """What ``result.timing["shared_merges"]`` shows."""
        out = {"source": self.source, "basis": SOURCES[self.source],
               "vector_loads": len({m.leader for m in self.by_pc.values()}), "merged_loads": len(self.by_pc)}
        if self.why:
            out["why_not_sass"] = self.why
        return out


def shared_merges(module, state, use_sass: bool = True) -> SharedMerges:
    """The merged shared loads of a launch (``state``: the ``sim.ptx`` launch state, ``module``
    its module): ptxas's own (``"sass"``) where SASS can be produced for the module, else the
    model's (:func:`merged_loads`, ``"modelled"``)."""
    why = "not asked for"
    if use_sass:
        why = _sass_unavailable(module)
        if not why:
            try:
                import isa.sass

                lines = isa.sass.shared_merges(module)
            except Exception as e:  # noqa: BLE001 - a module ptxas rejects: the model's guess
                why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            else:
                return SharedMerges(_by_pc(state, lines), "sass")
    return SharedMerges(merged_loads(state), "modelled", why)


def _sass_unavailable(module) -> str:
    import isa.sass

    note = isa.sass.note()
    if note is not None:
        return note
    if not (module.target or "").startswith("sm_"):
        return f"no sm_XX target ({module.target})"
    return ""


def _by_pc(state, lines: dict) -> dict[int, Merge]:
    """pc -> :class:`Merge` of the launch's shared loads that ptxas merged (``lines``:
    :func:`isa.sass.shared_merges`, PTX line -> (lead line, SASS bytes, PTX bytes))."""
    if not lines:
        return {}
    out: dict[int, Merge] = {}
    for info in getattr(state, "funcs", ()):
        pc_of: dict[int, int] = {}
        loads = []
        for k, ins in enumerate(info.fn.instructions):
            line = ins.span.line if ins.span is not None else 0
            if line in lines and _scalar_shared_load(ins) is not None:
                pc_of.setdefault(line, info.base + k)
                loads.append((info.base + k, line))
        for pc, line in loads:
            lead, wide, lane = lines[line]
            if lead in pc_of:
                out[pc] = Merge(pc_of[lead], wide, lane)
    # a lead none of whose loads merged into it here stays a plain load
    leaders = {m.leader for pc, m in out.items() if m.leader != pc}
    return {pc: m for pc, m in out.items() if m.leader in leaders}


__all__ = ["Merge", "merged_loads", "SharedMerges", "shared_merges", "SOURCES"]
