"""Events the functional simulators emit per executed instruction, for listeners.

One :class:`InstructionEvent` covers one instruction executed by a group of warps at the same
time (the simulator runs many warps in lock step); :meth:`InstructionEvent.per_warp` splits it
into :class:`WarpEvent` records, one per warp-instruction. A shared load of an SGEMM::

    ld.shared.f32 %f10, [%r8];

    InstructionEvent(kernel='sgemm_smem_tiled32', pc=57, opcode='ld.shared.f32', unit='lsu',
                     ctas=array([0, 0, ...]), warps=array([0, 1, ...]), active=<[W, 32] bool>,
                     space='shared', kind='load', width=4, addresses=<[W, 32] uint64>)

Listeners of every instruction get exactly one event per executed instruction and warp group,
after the instruction ran: ``seq`` numbers it in each warp's own stream (0, 1, ...), so a warp's
instructions can be replayed in order although the simulator runs CTAs in lock-step batches and
the paths of a divergent branch one after the other. ``warps`` are the warps with a lane in the
running path's mask; for a memory instruction ``accesses`` holds every access the op made (one per
state space touched, or per element for ``wmma.load``; ``cp.async`` has its global load and its
shared store) and ``space``/``kind``/``width``/``active``/``addresses`` describe the first access
(lanes whose guard predicate is false are inactive; a warp with no accessing lane has an all-False
row). ``memory_only`` listeners instead get each access as its own event, as it happens.

Events are built only when a listener is registered (the run loop tests one flag per step). :class:`sim.memory.heat.MemoryHeat` is the
listener the simulator installs by default (unless one is passed in): it turns shared-memory events
into wavefronts and global events into 32-byte sectors (``sim.memory.banks``, the H200 model), per
instruction and in total, and is called only for memory instructions. ``kind`` is ``'load'``,
``'store'``, ``'atomic'`` or ``'async_store'`` (the shared-memory side of ``cp.async``).
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
    kind: str | None = None       # 'load', 'store', 'atomic', 'async_store' or None
    width: int = 0                # bytes per lane
    addresses: np.ndarray | None = None  # [32] uint64, space-local addresses
    seq: int = -1                 # position in the warp's stream


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
    line: int = 0                 # PTX source line (pc indexes the linked program: kernel + callees)
    seq: np.ndarray | None = None  # [W] position of this instruction in each warp's stream (0, 1, ...)
    accesses: tuple = ()          # memory instructions: every access the op made (InstructionEvents)

    @property
    def is_memory(self) -> bool:
        return self.kind is not None

    def per_warp(self) -> Iterator[WarpEvent]:
        for i in range(len(self.warps)):
            yield WarpEvent(self.kernel, self.pc, self.opcode, self.unit, int(self.ctas[i]),
                            int(self.warps[i]), self.active[i], self.space, self.kind, self.width,
                            None if self.addresses is None else self.addresses[i],
                            -1 if self.seq is None else int(self.seq[i]))


class Listener(Protocol):
    """Anything callable with an :class:`InstructionEvent`. Set ``memory_only = True`` on it to
    receive only memory instructions (the simulator then builds no event for the others)."""

    def __call__(self, event: InstructionEvent) -> None: ...


ListenerFn = Callable[[InstructionEvent], None]


def MemoryStats():
    """The default memory listener of ``run_kernel``: a :class:`sim.memory.heat.MemoryHeat`, whose
    per-instruction sites give both the heat and the launch totals (``as_stats()``)."""
    from sim.memory.heat import MemoryHeat

    return MemoryHeat()
