"""Shared-memory wavefronts and global-memory sectors of one warp-instruction (H200 model).

A shared load such as::

    ld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%r9];      // LDS.128, lane l at 16*l

costs 4 wavefronts on an H200: 128-bit accesses are served a quarter-warp at a time, and each
quarter reads 32 distinct 32-bit words, one per bank.  The model (``../shared/facts/h200.md``,
``ptx.md`` section 11, matches all measured Nsight Compute cases):

* ``bank = (byte_address // 4) % 32``; lanes that touch the same 32-bit word share it;
* lanes are grouped by access width: the whole warp (<= 32 bit), half-warps (64 bit),
  quarter-warps (128 bit);
* ``wavefronts = sum over groups of max over banks of |distinct words of the group in the bank|``;
* loads only, width >= 64 bit (the pair rule): when every active lane ``n`` reads the address of
  lane ``n^1``, or every active lane the address of lane ``n^2``, groups are served two at a time
  (half-warps for 128 bit, the whole warp for 64 bit); on a full warp that halves the total.

Predicated-off lanes take no part, and a lane whose partner is inactive does not break the pair
rule: measured on an H200 with one LDS per warp under 16 lane masks (``bench/device/bank_probe.cu``,
``tests/sim/data/bank_probe_h200.json``). Lanes 0, 8, 16, 24 reading ``16*l`` cost 4 wavefronts,
not 2: the merged half-warps (lanes 0 and 8 in one) conflict in banks 0-3, which is why the rule
merges groups rather than halving the count.

Everything is vectorised: pass ``addresses`` of shape ``(32,)`` for one warp or ``(W, 32)`` for
W warps at once (the result is then an array of W counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WARP = 32
BANKS = 32
BANK_BYTES = 4
SECTOR_BYTES = 32

#: lanes served together, by access width in bytes
GROUP_LANES = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


@dataclass(frozen=True)
class SharedAccess:
    """One warp's shared-memory access: what it costs and why."""

    wavefronts: int
    ideal: int
    pair_rule: bool

    @property
    def conflicts(self) -> int:
        """Nsight Compute's ``bank_conflicts`` counter: wavefronts beyond the ideal."""
        return max(0, self.wavefronts - self.ideal)


def _prepare(addresses, active):
    a = addresses if isinstance(addresses, np.ndarray) and addresses.dtype == np.int64 else \
        np.asarray(addresses).astype(np.int64)
    single = a.ndim == 1
    a2 = a.reshape(1, -1) if single else a.reshape(-1, a.shape[-1])
    if a2.shape[-1] != WARP:
        raise ValueError(f"expected {WARP} lane addresses per warp, got {a2.shape[-1]}")
    if active is None:
        return a2, np.ones(a2.shape, dtype=bool), single
    m = np.asarray(active)
    if m.dtype != bool:  # 32-bit lane masks, one per warp
        m = ((m.astype(np.int64)[..., None] >> np.arange(WARP)) & 1).astype(bool)
    if m.shape == a2.shape:
        return a2, m, single
    return a2, np.broadcast_to(m.reshape(-1, WARP), a2.shape), single


def _check_width(width_bytes: int) -> int:
    w = int(width_bytes)
    if w not in GROUP_LANES:
        raise ValueError(f"shared access width must be 1, 2, 4, 8 or 16 bytes, got {width_bytes}")
    return w


def _lane_layout(width: int, glanes: int):
    """(group index per element, lane per element, word offset per element) for one warp."""
    n_words = max(1, width // BANK_BYTES)
    lane = np.repeat(np.arange(WARP, dtype=np.int64), n_words)
    offs = np.tile(np.arange(n_words, dtype=np.int64), WARP)
    return (lane // glanes) * BANKS, lane, offs


#: (width, lanes per group) -> layout; groups of twice the lanes serve pair-rule loads
_LAYOUT = {(w, g): _lane_layout(w, g) for w, lanes in GROUP_LANES.items() for g in {lanes, min(WARP, 2 * lanes)}}


def _group_wavefronts(a: np.ndarray, m: np.ndarray, width: int, glanes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per warp: (sum over lane groups of the worst bank's distinct words, non-empty groups)."""
    n_warps = a.shape[0]
    n_groups = WARP // glanes
    gbase, lane, offs = _LAYOUT[width, glanes]
    words = a >> 2
    if offs.size != WARP:
        words = words[:, lane] + offs
    # one key per touched word: (group, bank) in the high bits, the word's row in the low bits
    key = ((gbase + (words & (BANKS - 1))) << 40) | (words >> 5)
    key = np.where(m[:, lane] if offs.size != WARP else m, key, -1)
    key.sort(axis=1)
    first = np.empty(key.shape, dtype=bool)
    first[:, 0] = True
    np.not_equal(key[:, 1:], key[:, :-1], out=first[:, 1:])
    first &= key >= 0
    rows = np.nonzero(first)
    idx = rows[0] * (n_groups * BANKS) + (key[rows] >> 40)
    per_bank = np.bincount(idx, minlength=n_warps * n_groups * BANKS)
    per_group = per_bank.reshape(n_warps, n_groups, BANKS).max(axis=2)
    nonempty = m.reshape(n_warps, n_groups, glanes).any(axis=2)
    return per_group.sum(axis=1), nonempty.sum(axis=1)


_PARTNERS = np.stack([np.arange(WARP) ^ 1, np.arange(WARP) ^ 2])     # (2, 32)


def _pair_rule(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Per warp: every active lane n shares its address with lane n^1, or every one with n^2."""
    pm = m[:, _PARTNERS]
    ok = (a[:, None, :] == a[:, _PARTNERS]) | ~(m[:, None, :] & pm)
    return ok.all(axis=2).any(axis=1) & m.any(axis=1)


def shared_costs(addresses, width_bytes: int, is_load: bool, active=None):
    """(wavefronts, ideal, pair_rule) arrays, one entry per warp of ``addresses`` (W, 32)."""
    width = _check_width(width_bytes)
    a, m, _ = _prepare(addresses, active)
    glanes = GROUP_LANES[width]
    wf, groups = _group_wavefronts(a, m, width, glanes)
    pair = _pair_rule(a, m) if (is_load and width >= 8) else np.zeros(a.shape[0], dtype=bool)
    if pair.any():  # pair-rule loads: groups served two at a time
        wf[pair], groups[pair] = _group_wavefronts(a[pair], m[pair], width, 2 * glanes)
    return wf, groups, pair


def shared_access(addresses, width_bytes: int, is_load: bool, active=None):
    """The :class:`SharedAccess` of one warp (``addresses`` shape (32,)), or a list for (W, 32).

    >>> shared_access([4 * l for l in range(32)], 4, True).wavefronts
    1
    """
    single = np.ndim(addresses) == 1
    wf, ideal, pair = shared_costs(addresses, width_bytes, is_load, active)
    res = [SharedAccess(int(w), int(i), bool(p)) for w, i, p in zip(wf, ideal, pair)]
    return res[0] if single else res


def shared_wavefronts(addresses, width_bytes: int, is_load: bool, active=None):
    """Wavefronts of a shared-memory access: an int for one warp, an int64 array for (W, 32).

    ``addresses`` are byte addresses (any common base: bank = (addr // 4) % 32), ``width_bytes``
    the bytes each lane moves (1, 2, 4, 8 or 16: ``ld.shared.v2.f32`` is 8), ``active`` a boolean
    lane mask (or a 32-bit integer mask); None means all 32 lanes.
    """
    wf, _, _ = shared_costs(addresses, width_bytes, is_load, active)
    return int(wf[0]) if np.ndim(addresses) == 1 else wf


def bank_conflicts(addresses, width_bytes: int, is_load: bool, active=None):
    """Nsight Compute's bank-conflict count: wavefronts minus the ideal, the number of lane groups
    with an active lane (1 for <= 32 bit, up to 2 for 64 bit and 4 for 128 bit; groups merged
    pairwise under the pair rule)."""
    res = shared_access(addresses, width_bytes, is_load, active)
    if isinstance(res, SharedAccess):
        return res.conflicts
    return np.array([r.conflicts for r in res], dtype=np.int64)


def global_sectors(addresses, width_bytes: int, active=None):
    """Distinct 32-byte sectors that the active lanes' ``[addr, addr + width)`` ranges touch.

    >>> global_sectors([4 * l for l in range(32)], 4)
    4
    """
    a, m, single = _prepare(addresses, active)
    w = max(1, int(width_bytes))
    first = a >> 5  # // SECTOR_BYTES
    last = (a + (w - 1)) >> 5
    span = int((last - first).max()) if a.size else 0
    if span == 0:  # no lane crosses a sector boundary (every aligned access of <= 32 bytes)
        return _distinct_per_row(np.where(m, first, -1), single)
    secs = first[:, :, None] + np.arange(span + 1, dtype=np.int64)              # (W, 32, s)
    valid = (secs <= last[:, :, None]) & m[:, :, None]
    return _distinct_per_row(np.where(valid, secs, -1).reshape(a.shape[0], -1), single)


def _distinct_per_row(keys: np.ndarray, single: bool):
    """Distinct non-negative values in each row (negative = no value)."""
    s = np.sort(keys, axis=1)
    new = np.ones(s.shape, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    counts = (new & (s >= 0)).sum(axis=1)
    return int(counts[0]) if single else counts


# ---------------------------------------------------------------------------------------------
# one computation per access event, whoever asks
# ---------------------------------------------------------------------------------------------
class _RecentCosts:
    """The costs of the last few access events (``sim.events.InstructionEvent``), so that every
    listener of one access (the heat column's :class:`sim.memory.heat.MemoryHeat` and the timing
    model's :class:`sim.timing.streams.WarpStreams`) computes its wavefronts and sectors once.
    Keyed by the event object (held, so that its ``id`` is not reused) and the cost's arguments."""

    def __init__(self, keep: int = 64):
        self.keep = keep
        self.memo: dict = {}

    def get(self, ev, key, compute):
        entry = self.memo.get(id(ev))
        if entry is None or entry[0] is not ev:
            if len(self.memo) >= self.keep:
                self.memo.pop(next(iter(self.memo)))
            entry = self.memo[id(ev)] = (ev, {})
        got = entry[1].get(key)
        if got is None:
            got = entry[1][key] = compute()
        return got


_RECENT = _RecentCosts()


def event_shared_costs(ev, width: int, is_load: bool, active=None, delta: int = 0):
    """:func:`shared_costs` of access event ``ev`` (its ``addresses`` + ``delta``, ``width`` bytes per
    lane, ``active`` lanes, default the event's), computed once per event and arguments."""
    act = ev.active if active is None else active

    def compute():
        addr = ev.addresses if not delta else ev.addresses + np.uint64(delta)
        return shared_costs(addr, width, is_load, act)

    return _RECENT.get(ev, ("s", width, bool(is_load), int(delta)), compute)


def event_global_sectors(ev, width: int | None = None, active=None):
    """:func:`global_sectors` per warp (an int64 array) of access event ``ev``, computed once."""
    w = ev.width if width is None else width
    act = ev.active if active is None else active

    def compute():
        return np.atleast_1d(global_sectors(ev.addresses, w, act))

    return _RECENT.get(ev, ("g", int(w)), compute)
