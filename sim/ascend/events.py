"""Events: what the functional engine tells the timing model about each pipe instruction.

The engine executes semantics once and records, per core, one :class:`Event` per dispatched
pipe instruction (plus set/wait/barrier); the timing model only prices and schedules them::

    copy_gm_to_cbuf_multi_nd2nz_b16 l1[0], gm[%a], 0, 1, 128, 256, 0, 1024, 128, 1, 0
    Event(pipe='MTE2', kind='op', name='copy_gm_to_cbuf_multi_nd2nz_b16',
          work=Move('gm->l1', 65536, (0x10000000, 0x10080000, (128, 512, 512))), scal=14)

``Event.work`` is what the timing model prices: a :class:`Mad`, :class:`Move`, :class:`Vec` or
:class:`ScalarLoad` (``None`` for set/wait/barrier events); each has a ``kind`` word.
"""

from __future__ import annotations

from typing import NamedTuple


class Mad(NamedTuple):
    """A cube ``mad``: ``fractals`` 16x16x16 (f16) fractal products in ``dtype``."""
    fractals: int
    dtype: str
    kind = "mad"


class Move(NamedTuple):
    """A data move on ``path`` (``'gm->l1'``, ``'l0c->gm'``, ``'l1->l0a'``...) of ``nbytes``; ``span``
    is the GM side's ``(lo, hi, pattern)`` for GM transfers (the L2 model and race checks read
    it), else None."""
    path: str
    nbytes: int
    span: tuple | None
    kind = "move"


class Vec(NamedTuple):
    """A vector instruction ``name`` of ``reps`` repeats; ``rblocks``/``wblocks`` are the UB blocks
    each repeat reads/writes (bank-group model); ``counter`` for counter-mode instructions."""
    name: str
    reps: int
    rblocks: object
    wblocks: object
    counter: bool
    kind = "vec"


class ScalarLoad(NamedTuple):
    """A scalar load from GM or a buffer."""
    kind = "scalar_ld"


class Event:
    __slots__ = ("eid", "idx", "pipe", "kind", "name", "work", "key", "pair", "scal", "unit_dep", "unit_flag", "hbm", "hbm_share")

    def __init__(self, eid, idx, pipe, kind, name, work=None, key=None, pair=None, scal=0):
        self.eid = eid          # position in the core's event list
        self.idx = idx          # instruction index in the kernel (for spans and trace names)
        self.pipe = pipe        # S V M MTE1 MTE2 MTE3 FIX (or ALL for pipe_barrier PIPE_ALL)
        self.kind = kind        # op | set | wait | barrier
        self.name = name        # opcode as spelled
        self.work = work        # Mad | Move | Vec | ScalarLoad | None
        self.key = key          # (src, dst, event id) for set/wait
        self.pair = pair        # for a wait: eid of the set_flag it consumes
        self.scal = scal        # scalar instructions issued since the previous event (incl. this one)
        self.unit_dep = None    # for a FixPipe with unit flag: eid of the mad it streams from
        self.unit_flag = 0      # mad unitFlag / FixPipe unitFlagMode
        self.hbm = 0            # for a GM transfer: bytes that go to or come from HBM (set by the L2 model)
        self.hbm_share = 0.0    # HBM bytes/cycle this transfer gets (set by the timing model)

    def __repr__(self) -> str:
        return f"Event({self.eid}, {self.pipe}, {self.kind}, {self.name})"
