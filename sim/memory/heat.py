"""Per-instruction memory cost, accumulated from the simulator's events (the TUI's heat column).

Register a :class:`MemoryHeat` as a listener of ``sim.run_kernel``; afterwards
:meth:`MemoryHeat.by_line` gives, per PTX line, what its executions cost.  For the conflicted
SGEMM's inner-loop load::

    ld.shared.f32 %f5, [%r20];          // As[lane][k]: 32-way conflict

    by_line(fn)[57] == Site(executions=3072, shared_load_wavefronts=98304, shared_ideal=3072, ...)

Shared accesses cost wavefronts (``sim.memory.banks``, the H200 model), global accesses 32-byte
sectors; ``*_ideal`` is the cost of the same bytes without conflicts (one wavefront per lane group,
the minimal number of sectors), so ``wavefronts / ideal`` is the replay factor the heat shows.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .banks import SECTOR_BYTES, global_sectors, shared_costs

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
    global_ideal_sectors: int = 0

    @property
    def shared_wavefronts(self) -> int:
        return self.shared_load_wavefronts + self.shared_store_wavefronts

    @property
    def bank_conflicts(self) -> int:
        return max(0, self.shared_wavefronts - self.shared_ideal)

    @property
    def global_sectors(self) -> int:
        return self.global_load_sectors + self.global_store_sectors

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
    """Listener: memory cost per instruction index (``pc``) of each kernel run through it."""

    memory_only = True

    def __init__(self) -> None:
        self.sites: dict[int, Site] = {}

    def __call__(self, ev) -> None:
        if ev.addresses is None or ev.width <= 0 or ev.space not in ("shared", "global"):
            return
        active = np.asarray(ev.active, dtype=bool)
        if not active.any():
            return
        site = self.sites.setdefault(int(ev.pc), Site())
        n = int(active.any(axis=-1).sum()) if active.ndim > 1 else 1
        site.executions += n
        width = ev.width if ev.width in _WIDTHS else 4
        if ev.space == "shared":
            is_load = ev.kind == "load"
            wf, ideal, _ = shared_costs(ev.addresses, width, is_load, active)
            w = int(np.sum(wf))
            if ev.kind == "atomic":     # read-modify-write: both directions
                site.shared_load_wavefronts += w
                site.shared_store_wavefronts += w
                site.shared_ideal += 2 * int(np.sum(ideal))
            elif is_load:
                site.shared_load_wavefronts += w
                site.shared_ideal += int(np.sum(ideal))
            else:
                site.shared_store_wavefronts += w
                site.shared_ideal += int(np.sum(ideal))
        else:
            s = int(np.sum(global_sectors(ev.addresses, ev.width, active)))
            lanes = active.sum(axis=-1)
            site.global_ideal_sectors += int(np.sum(-(-(lanes * int(ev.width)) // SECTOR_BYTES)))
            if ev.kind == "load":
                site.global_load_sectors += s
            else:
                site.global_store_sectors += s

    def totals(self) -> Site:
        out = Site()
        for s in self.sites.values():
            out.add(s)
        return out

    def by_line(self, function) -> dict[int, Site]:
        """PTX source line -> summed :class:`Site` (``function`` is the IR kernel that ran;
        ``pc`` indexes ``function.instructions``)."""
        instrs = function.instructions
        out: dict[int, Site] = {}
        for pc, site in self.sites.items():
            line = instrs[pc].span.line if 0 <= pc < len(instrs) else 0
            out.setdefault(line, Site()).add(site)
        return out
