"""Warp-collective instructions, vectorised over every warp of the batch::

    shfl.sync.down.b32 %r49|%p3, %r46, %r34, %r47, %r48;   shfl.sync.bfly.b32 %r27, %r26, 16, 31, -1;
    vote.sync.ballot.b32 %r97, %p9, %r48;                  redux.sync.add.u32 %r20, %r9, %r19;
    activemask.b32 %r1;                                    elect.sync _|%p1, -1;

``shfl.sync`` follows the ISA pseudo-code verified on H200 (``ptx.md`` 10.6), including the
``c`` operand's clamp and segment mask and the predicate output.
"""

from __future__ import annotations

import numpy as np

from isa import ir

from ..dtypes import compute_dtype, types_of
from . import limit, not_implemented, op

WARP = 32


def _active(M, m):
    return np.ones(M.T, bool) if m is None else m


def ballot(M, bits: np.ndarray) -> np.ndarray:
    """[T] bool -> per-warp uint32 ballot, repeated for every lane."""
    words = np.packbits(bits.reshape(-1, WARP), axis=1, bitorder="little").view(np.uint32).reshape(-1)
    return np.repeat(words, WARP)


@op("shfl.sync", "shfl")
def _shfl(M, pc, ins, canon, ms, mods):
    mode = next(m for m in mods if m in ("up", "down", "bfly", "idx"))
    t = types_of(mods)[-1] if types_of(mods) else "b32"
    dst = ins.operands[0]
    if isinstance(dst, ir.Pair):
        d = M.dst(dst.first, t, ins)
        p = M.dst(dst.second, "pred", ins)
    else:
        d, p = M.dst(dst, t, ins), None
    a = M.src(ins.operands[1], t, ins)
    b = M.src(ins.operands[2], "u32", ins)
    c = M.src(ins.operands[3], "u32", ins)
    lane = M.lane.astype(np.int64)
    base = M.all_lanes - lane

    def f(m):
        bv = np.asarray(b()).astype(np.int64) & 31
        cv = np.asarray(c()).astype(np.int64)
        seg = (cv >> 8) & 31
        clamp = cv & 31
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - bv
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bv
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bv
            ok = j <= max_lane
        else:
            j = min_lane | (bv & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        av = np.asarray(a())
        if av.ndim == 0:
            vals = np.broadcast_to(av, (M.T,))
        else:
            vals = av[base + j]
        d.m(vals, m)
        if p is not None:
            p.m(np.broadcast_to(ok, (M.T,)), m)
    return f


@op("vote", "vote.sync")
def _vote(M, pc, ins, canon, ms, mods):
    mode = next(m for m in mods if m in ("all", "any", "uni", "ballot"))
    d = M.dst(ins.operands[0], "b32" if mode == "ballot" else "pred", ins)
    pred = M.src(ins.operands[1], "pred", ins)

    def f(m):
        act = _active(M, m)
        pv = np.broadcast_to(np.asarray(pred()), (M.T,))
        if mode == "ballot":
            d.m(ballot(M, pv & act), m)
            return
        a2 = act.reshape(-1, WARP)
        p2 = pv.reshape(-1, WARP)
        if mode == "all":
            r = ~(a2 & ~p2).any(axis=1)
        elif mode == "any":
            r = (a2 & p2).any(axis=1)
        else:
            r = ~((a2 & p2).any(axis=1) & (a2 & ~p2).any(axis=1))
        d.m(np.repeat(r, WARP), m)
    return f


@op("activemask")
def _activemask(M, pc, ins, canon, ms, mods):
    d = M.dst(ins.operands[0], "b32", ins)
    return lambda m: d.m(ballot(M, _active(M, m)), m)


@op("redux.sync", "redux")
def _redux(M, pc, ins, canon, ms, mods):
    opn = next(m for m in mods if m in ("add", "min", "max", "and", "or", "xor"))
    t = types_of(mods)[-1]
    cd = compute_dtype(t)
    if cd.kind == "f":
        return _redux_float(M, ins, opn, ms, t)
    d = M.dst(ins.operands[0], t, ins)
    a = M.src(ins.operands[1], t, ins)
    ident = {"add": 0, "and": -1, "or": 0, "xor": 0,
             "min": np.iinfo(cd).max, "max": np.iinfo(cd).min}[opn]
    red = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
           "min": np.minimum, "max": np.maximum}[opn]

    def f(m):
        act = _active(M, m)
        v = np.broadcast_to(np.asarray(a()), (M.T,)).astype(cd)
        v = np.where(act, v, cd.type(ident) if opn != "and" else np.array(-1).astype(cd))
        r = red.reduce(v.reshape(-1, WARP), axis=1, dtype=cd)
        d.m(np.repeat(r, WARP), m)
    return f


def _redux_float(M, ins, opn, ms, t):
    """``redux.sync.min{.abs}{.NaN}.f32 d, a, membermask;`` (sm_100a): the minimum (maximum) of
    the active lanes' ``a`` (of |a| with ``.abs``); a NaN input gives the canonical NaN with
    ``.NaN`` and is ignored otherwise; -0.0 is less than +0.0 (ISA 9.7.13.12)."""
    if opn not in ("min", "max") or t != "f32":
        return not_implemented(M, ins, ins.full_opcode)
    d = M.dst(ins.operands[0], "f32", ins)
    a = M.src(ins.operands[1], "f32", ins)
    absolute = "abs" in ms
    keep_nan = "NaN" in ms

    def f(m):
        act = _active(M, m).reshape(-1, WARP)
        v = np.broadcast_to(np.asarray(a()), (M.T,)).astype(np.float32).reshape(-1, WARP)
        if absolute:
            v = np.abs(v)
        bits = v.view(np.int32)
        key = np.where(bits < 0, -(bits & np.int32(0x7FFFFFFF)) - 1, bits)
        nan = np.isnan(v)
        big = np.iinfo(np.int32).max if opn == "min" else np.iinfo(np.int32).min
        k = np.where(act & ~nan, key, big)
        pick = k.argmin(axis=1) if opn == "min" else k.argmax(axis=1)
        r = v[np.arange(len(v)), pick]
        none = ~(act & ~nan).any(axis=1)
        anynan = (act & nan).any(axis=1)
        qnan = np.uint32(0x7FFFFFFF).view(np.float32)
        r = np.where((keep_nan & anynan) | none, qnan, r).astype(np.float32)
        d.m(np.repeat(r, WARP), m)
    return f


@op("elect.sync", "elect")
def _elect(M, pc, ins, canon, ms, mods):
    dst = ins.operands[0]
    if isinstance(dst, ir.Pair):
        d = M.dst(dst.first, "u32", ins)
        p = M.dst(dst.second, "pred", ins)
    else:
        d, p = M.dst(dst, "u32", ins), None

    def f(m):
        act = _active(M, m).reshape(-1, WARP)
        first = np.argmax(act, axis=1)
        leader = np.repeat(first.astype(np.uint32), WARP)
        d.m(leader, m)
        if p is not None:
            p.m(M.lane == leader, m)
    return f


@op("match.sync", "match")
def _match(M, pc, ins, canon, ms, mods):
    """``match.any.sync.b32 d, a, membermask;``: d = the lanes of membermask (and active) whose
    ``a`` equals this lane's; ``match.all.sync.b32 d|p, a, membermask;``: d = membermask and p =
    true when every such lane has the same ``a``, else d = 0 and p = false (ISA 9.7.13.10)."""
    t = types_of(mods)[-1]
    mode = "all" if "all" in ms else "any"
    dop = ins.operands[0]
    pdst = None
    if isinstance(dop, ir.Pair):
        dop, pop = dop.first, dop.second
        pdst = M.dst(pop, "pred", ins)
    d = M.dst(dop, "b32", ins)
    a = M.src(ins.operands[1], t, ins)
    member = M.src(ins.operands[2], "b32", ins)
    bit = (np.uint32(1) << np.arange(WARP, dtype=np.uint32))

    def f(m):
        act = _active(M, m).reshape(-1, WARP)
        mm = np.broadcast_to(np.asarray(member()).astype(np.uint32), (M.T,)).reshape(-1, WARP)
        part = ((mm[:, :1] & bit) != 0) & act          # lane j takes part (membermask is warp-uniform)
        v = np.broadcast_to(np.asarray(a()), (M.T,)).reshape(-1, WARP)
        same = (v[:, :, None] == v[:, None, :]) & part[:, None, :]          # [W, lane, other]
        if mode == "any":
            r = (same.astype(np.uint32) * bit).sum(axis=2, dtype=np.uint32)
            d.m(r.reshape(-1), m)
            return
        alls = (same == part[:, None, :]).all(axis=2)
        r = np.where(alls, mm, np.uint32(0))
        d.m(r.reshape(-1), m)
        if pdst is not None:
            pdst.m(alls.reshape(-1), m)
    return f


limit("redux.sync", "float forms other than min/max .f32")
