"""Per-instruction memory cost, accumulated from the simulator's events (the TUI's heat column).

Register a :class:`MemoryHeat` as a listener of ``sim.run_kernel``; afterwards
:meth:`MemoryHeat.by_line` gives, per PTX line, what its executions cost.  For the conflicted
SGEMM's inner-loop load::

    ld.shared.f32 %f5, [%r20];          // As[lane][k]: 32-way conflict

    by_line(fn)[57] == Site(executions=3072, shared_load_wavefronts=98304, shared_ideal=3072, ...)

Shared accesses cost wavefronts (``sim.memory.banks``, the H200 model), global accesses 32-byte
sectors; ``*_ideal`` is the cost of the same bytes without conflicts (one wavefront per lane group,
the minimal number of sectors), so ``wavefronts / ideal`` is the replay factor the heat shows.

The same listener gives the launch totals of ``run_kernel``'s stats (:meth:`MemoryHeat.as_stats`),
counted as Nsight Compute counts them: ``cp.async`` shared-memory writes (``async_store`` events)
are not LSU shared stores and are skipped; global atomics/reductions have their own sector count
(``l1tex__t_sectors_pipe_lsu_mem_global_op_atom/red``), apart from loads and stores, and shared
atomics their own wavefronts (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom``: the bank model
applied once, modelled, not measured), apart from ``op_ld``/``op_st``.

Given a ``shared_plan`` (``isa.sass.shared_plan(module)``: what ptxas emitted for each PTX shared
access, through ``-lineinfo``), shared loads and stores cost the SASS accesses: four
``ld.shared.f32`` that ptxas merged into one ``LDS.128`` cost the LDS.128's wavefronts once, as
Nsight Compute counts them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .banks import SECTOR_BYTES, event_global_sectors, event_shared_costs

_WIDTHS = (1, 2, 4, 8, 16)


@dataclass
class Site:
    """What one instruction's executions cost (all warps, all CTAs)."""

    executions: int = 0                 # warp-instructions with an active lane
    shared_load_wavefronts: int = 0
    shared_store_wavefronts: int = 0
    shared_ideal: int = 0
    global_load_sectors: int = 0
    global_store_sectors: int = 0
    global_atomic_sectors: int = 0      # atom/red on global memory (ncu counts them apart)
    shared_atomic_wavefronts: int = 0   # atom/red on shared memory (ncu's op_atom counter, apart from ld/st)
    global_ideal_sectors: int = 0
    shared_load_requests: int = 0       # warp-level requests (SASS instructions if ptxas kept them)
    shared_store_requests: int = 0
    global_load_requests: int = 0
    global_store_requests: int = 0
    global_atomic_requests: int = 0

    @property
    def shared_wavefronts(self) -> int:
        return self.shared_load_wavefronts + self.shared_store_wavefronts + self.shared_atomic_wavefronts

    @property
    def bank_conflicts(self) -> int:
        return max(0, self.shared_wavefronts - self.shared_ideal)

    @property
    def global_sectors(self) -> int:
        return self.global_load_sectors + self.global_store_sectors + self.global_atomic_sectors

    @property
    def replay(self) -> float:
        """Cost over ideal cost (1.0 = conflict-free / perfectly coalesced)."""
        if self.shared_ideal:
            return self.shared_wavefronts / self.shared_ideal
        if self.global_ideal_sectors:
            return self.global_sectors / self.global_ideal_sectors
        return 1.0

    def add(self, other: Site) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(bank_conflicts=self.bank_conflicts, replay=round(self.replay, 3))
        return d


class MemoryHeat:
    """Listener: memory cost per instruction index (``pc``) of each kernel run through it.

    ``run_kernel`` installs one by default (or uses the one passed in ``listeners``), so the
    per-instruction heat and the launch's ``shared_*_wavefronts`` / ``global_*_sectors`` stats come
    from one computation."""

    memory_only = True

    def __init__(self, shared_plan: dict | None = None) -> None:
        self.sites: dict[int, Site] = {}
        self.lines: dict[int, int] = {}     # pc -> PTX line, from the events
        # PTX line -> ((byte offset, bytes per lane), ...): the shared accesses ptxas emitted for it
        # (isa.sass.shared_plan); a line absent costs its PTX access, () costs nothing (merged away)
        self.shared_plan = shared_plan or {}

    def __call__(self, ev) -> None:
        kind = ev.kind
        if ev.addresses is None or ev.width <= 0 or ev.space not in ("shared", "global") \
                or kind not in ("load", "store", "atomic"):
            return                      # async_store: cp.async writes to shared are not LSU stores
        active = np.asarray(ev.active, dtype=bool)
        if active.ndim == 1:
            active = active[None]
        busy = active.any(axis=-1)
        n = int(busy.sum())
        if n == 0:
            return
        site = self.sites.get(ev.pc)
        if site is None:
            site = self.sites[ev.pc] = Site()
            line = getattr(ev, "line", 0)
            if line:
                self.lines[ev.pc] = line
        site.executions += n
        if ev.space == "shared":
            is_load = kind == "load"
            parts = self.shared_plan.get(getattr(ev, "line", 0)) if kind != "atomic" and self.shared_plan else None
            if parts is None:
                parts = ((0, ev.width if ev.width in _WIDTHS else 4),)
            for delta, width in parts:
                wf, ideal, _ = event_shared_costs(ev, width, is_load, active, delta)
                w = int(wf.sum())
                site.shared_ideal += int(ideal.sum())
                if kind == "atomic":     # ATOMS: its own counter, neither ld nor st (ncu op_atom)
                    site.shared_atomic_wavefronts += w
                elif is_load:
                    site.shared_load_wavefronts += w
                    site.shared_load_requests += n
                else:
                    site.shared_store_wavefronts += w
                    site.shared_store_requests += n
        else:
            s = int(np.sum(event_global_sectors(ev, ev.width, active)))
            lanes = active.sum(axis=-1)
            site.global_ideal_sectors += int(np.sum(-(-(lanes * int(ev.width)) // SECTOR_BYTES)))
            if kind == "load":
                site.global_load_sectors += s
                site.global_load_requests += n
            elif kind == "store":
                site.global_store_sectors += s
                site.global_store_requests += n
            else:
                site.global_atomic_sectors += s
                site.global_atomic_requests += n

    def totals(self) -> Site:
        out = Site()
        for s in self.sites.values():
            out.add(s)
        return out

    def as_stats(self) -> dict:
        """Launch totals under the names of ``run_kernel``'s stats."""
        t = self.totals()
        return {
            "shared_load_wavefronts": t.shared_load_wavefronts,
            "shared_store_wavefronts": t.shared_store_wavefronts,
            "shared_atomic_wavefronts": t.shared_atomic_wavefronts,
            "shared_load_requests": t.shared_load_requests,
            "shared_store_requests": t.shared_store_requests,
            "global_load_sectors": t.global_load_sectors,
            "global_store_sectors": t.global_store_sectors,
            "global_atomic_sectors": t.global_atomic_sectors,
            "global_sectors": t.global_sectors,
            "global_load_requests": t.global_load_requests,
            "global_store_requests": t.global_store_requests,
            "global_atomic_requests": t.global_atomic_requests,
        }

    def by_pc(self) -> dict[int, dict[str, int]]:
        """pc -> wavefronts, sectors and requests of that instruction (``stats['memory_by_pc']``)."""
        return {pc: {"wavefronts": s.shared_wavefronts, "sectors": s.global_sectors,
                     "requests": s.shared_load_requests + s.shared_store_requests + s.global_load_requests
                     + s.global_store_requests + s.global_atomic_requests}
                for pc, s in sorted(self.sites.items())}

    def by_line(self, function) -> dict[int, Site]:
        """PTX source line -> summed :class:`Site` (``function`` is the IR kernel that ran;
        ``pc`` indexes ``function.instructions``; lines carried by the events come first, so
        device functions the kernel called land on their own lines)."""
        instrs = function.instructions
        out: dict[int, Site] = {}
        for pc, site in self.sites.items():
            line = self.lines.get(pc) or (instrs[pc].span.line if 0 <= pc < len(instrs) else 0)
            out.setdefault(line, Site()).add(site)
        return out
