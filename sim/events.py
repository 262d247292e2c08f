"""Events the functional simulators emit per executed instruction, for listeners.

One :class:`InstructionEvent` covers one instruction executed by a group of warps at the same
time (the simulator runs many warps in lock step); :meth:`InstructionEvent.per_warp` splits it
into :class:`WarpEvent` records, one per warp-instruction. A shared load of an SGEMM::

    ld.shared.f32 %f10, [%r8];

    InstructionEvent(kernel='sgemm_smem_tiled32', pc=57, opcode='ld.shared.f32', unit='lsu',
                     ctas=array([0, 0, ...]), warps=array([0, 1, ...]), active=<[W, 32] bool>,
                     space='shared', kind='load', width=4, addresses=<[W, 32] uint64>)

Events are built only when a listener is registered. ``MemoryStats`` is the listener the
simulator installs by default: it turns shared-memory events into wavefronts and global events
into 32-byte sectors (``sim.memory.banks``, the H200 model) and is called only for memory
instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Protocol

import numpy as np


@dataclass(frozen=True, slots=True)
class WarpEvent:
    """One warp-instruction: which warp ran what, with which lanes, touching which addresses."""

    kernel: str
    pc: int
    opcode: str
    unit: str
    cta: int
    warp: int
    active: np.ndarray            # [32] bool
    space: str | None = None
    kind: str | None = None       # 'load', 'store', 'atomic' or None
    width: int = 0                # bytes per lane
    addresses: np.ndarray | None = None  # [32] uint64, space-local addresses


@dataclass(frozen=True, slots=True)
class InstructionEvent:
    """One instruction executed by ``W`` warps together (only warps with an active lane)."""

    kernel: str
    pc: int
    opcode: str
    unit: str
    ctas: np.ndarray              # [W] linear CTA index in the grid
    warps: np.ndarray             # [W] warp index within its CTA
    active: np.ndarray            # [W, 32] bool
    space: str | None = None
    kind: str | None = None
    width: int = 0
    addresses: np.ndarray | None = None  # [W, 32] uint64 (0 where inactive)

    @property
    def is_memory(self) -> bool:
        return self.kind is not None

    def per_warp(self) -> Iterator[WarpEvent]:
        for i in range(len(self.warps)):
            yield WarpEvent(self.kernel, self.pc, self.opcode, self.unit, int(self.ctas[i]),
                            int(self.warps[i]), self.active[i], self.space, self.kind, self.width,
                            None if self.addresses is None else self.addresses[i])


class Listener(Protocol):
    """Anything callable with an :class:`InstructionEvent`. Set ``memory_only = True`` on it to
    receive only memory instructions (the simulator then builds no event for the others)."""

    def __call__(self, event: InstructionEvent) -> None: ...


ListenerFn = Callable[[InstructionEvent], None]


class MemoryStats:
    """Shared-memory wavefronts and global sectors per kernel, from memory events."""

    memory_only = True

    def __init__(self) -> None:
        self.shared_load_wavefronts = 0
        self.shared_store_wavefronts = 0
        self.shared_load_requests = 0
        self.shared_store_requests = 0
        self.global_load_sectors = 0
        self.global_store_sectors = 0
        self.global_load_requests = 0
        self.global_store_requests = 0
        self.by_pc: dict[int, dict[str, int]] = {}

    def __call__(self, ev: InstructionEvent) -> None:
        if ev.addresses is None or ev.width <= 0 or ev.kind not in ("load", "store", "atomic"):
            return
        from sim.memory.banks import global_sectors, shared_wavefronts

        n = len(ev.warps)
        width = ev.width if ev.width in (1, 2, 4, 8, 16) else 4
        if ev.space == "shared":
            load = ev.kind in ("load", "atomic")
            w = int(np.sum(shared_wavefronts(ev.addresses, width, ev.kind == "load", ev.active)))
            if ev.kind == "atomic":
                self.shared_load_wavefronts += w
                self.shared_store_wavefronts += w
            elif load:
                self.shared_load_wavefronts += w
                self.shared_load_requests += n
            else:
                self.shared_store_wavefronts += w
                self.shared_store_requests += n
            d = self.by_pc.setdefault(ev.pc, {"wavefronts": 0, "requests": 0})
            d["wavefronts"] += w
            d["requests"] += n
        elif ev.space == "global":
            s = int(np.sum(global_sectors(ev.addresses, width, ev.active)))
            if ev.kind == "load":
                self.global_load_sectors += s
                self.global_load_requests += n
            else:
                self.global_store_sectors += s
                self.global_store_requests += n
            d = self.by_pc.setdefault(ev.pc, {"sectors": 0, "requests": 0})
            d["sectors"] += s
            d["requests"] += n

    def as_stats(self) -> dict:
        return {
            "shared_load_wavefronts": self.shared_load_wavefronts,
            "shared_store_wavefronts": self.shared_store_wavefronts,
            "shared_load_requests": self.shared_load_requests,
            "shared_store_requests": self.shared_store_requests,
            "global_load_sectors": self.global_load_sectors,
            "global_store_sectors": self.global_store_sectors,
            "global_sectors": self.global_load_sectors + self.global_store_sectors,
            "global_load_requests": self.global_load_requests,
            "global_store_requests": self.global_store_requests,
        }
