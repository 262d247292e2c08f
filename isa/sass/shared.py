"""Which shared-memory accesses ptxas really emitted for each PTX ``ld.shared``/``st.shared``.

ptxas merges adjacent scalar shared loads into one wide one and may split a vector access; Nsight
Compute counts the SASS accesses. Through ``-lineinfo`` each SASS ``LDS``/``STS`` names the PTX
line it came from, so a PTX access maps to the SASS accesses it became. In the tiled SGEMM::

    PTX line 101  ld.shared.f32 %f13, [%r8];        ->  LDS.128 R4, [R19]     (the merged access)
    PTX line 104  ld.shared.f32 %f16, [%r8+4];      ->  (none: inside line 101's LDS.128)
    PTX line 107  ld.shared.f32 %f19, [%r8+8];      ->  (none)
    PTX line 110  ld.shared.f32 %f22, [%r8+12];     ->  (none)

    shared_plan(...) == {101: ((0, 16),), 104: (), 107: (), 110: (), ...}

A plan maps a PTX line to the accesses its execution costs, ``(byte offset from the PTX
address, bytes per lane)`` each: one wider access for the lead of a merge (the group's lowest
address, the one the SASS carries), none for a load merged into another, several narrower ones
for a split access. Lines absent from the plan cost what their PTX access says. The rule needs no
knowledge of the kernel: a PTX access with no SASS counterpart counts as merged only when a
wider SASS access of the same direction, from a PTX access through the same base register, covers
its bytes.
"""

from __future__ import annotations

from ..ir import Address, Module, Register, Symbol
from ..ptx.semantics import describe as describe_ptx

Plan = dict[int, tuple[tuple[int, int], ...]]


def _ptx_accesses(ptx: Module):
    """(line, direction, bytes per lane, base key, offset) of every PTX ld/st on shared memory."""
    out = []
    for fn in ptx.functions:
        if fn.body is None:
            continue
        for ins in fn.instructions:
            if ins.opcode not in ("ld", "st"):
                continue
            info = describe_ptx(ins)
            if info.space != "shared" or not info.bytes:
                continue
            addr = next((o for o in ins.operands if isinstance(o, Address)), None)
            base = None
            if addr is not None:
                b = addr.base
                base = (fn.name, b.name) if isinstance(b, (Register, Symbol)) else (fn.name, None)
            out.append((ins.span.line, "ld" if info.is_load else "st", info.bytes, base,
                        addr.offset if addr is not None else 0))
    return out


def _sass_accesses(sass: Module) -> dict[tuple[int, str], list[int]]:
    """(PTX line, direction) -> bytes per lane of each SASS LDS/STS attributed to that line."""
    from .semantics import describe

    out: dict[tuple[int, str], list[int]] = {}
    for fn in sass.functions:
        for ins in fn.instructions:
            if ins.opcode not in ("LDS", "STS") or ins.loc is None or ins.loc.file != 0:
                continue
            info = describe(ins)
            out.setdefault((ins.loc.line, "ld" if info.is_load else "st"), []).append(info.bytes)
    return out


def shared_plan(ptx: Module, sass: Module) -> Plan:
    """The plan for every shared ld/st of ``ptx`` (see the module docstring); ``sass`` must carry
    PTX line info (``nvdisasm -gp``), else the plan is empty (PTX costs)."""
    return _analyse(ptx, sass)[0]


#: PTX line -> (the line that leads its merge, bytes per lane of the SASS access, bytes per lane of
#: the PTX access): every shared load or store ptxas merged into a wider one, its lead included
Merges = dict[int, tuple[int, int, int]]


def shared_merges(ptx: Module, sass: Module) -> Merges:
    """Which PTX shared accesses ptxas merged, and into which PTX line's SASS access (the lead)::

        {101: (101, 16, 4), 104: (101, 16, 4), 107: (101, 16, 4), 110: (101, 16, 4)}

    The timing model's merged loads when SASS is at hand (:func:`sim.timing.vectorize.shared_merges`).
    A merged-away line names the lead that covers its bytes (same direction, same base register,
    same function); where several do (an unrolled loop repeats the same offsets), the nearest
    line before it, else the nearest after it."""
    return _analyse(ptx, sass)[1]


def _analyse(ptx: Module, sass: Module) -> tuple[Plan, Merges]:
    sass_at = _sass_accesses(sass)
    if not sass_at:
        return {}, {}
    plan: Plan = {}
    merges: Merges = {}
    leads = []                      # (direction, base, first byte, end byte, line, PTX bytes) of merged accesses
    missing = []
    for line, d, w, base, off in _ptx_accesses(ptx):
        widths = sass_at.get((line, d))
        if not widths:
            missing.append((line, d, w, base, off))
            continue
        wide = max(widths)
        if wide > w:                # the lead of a merge: one access of the SASS width
            plan[line] = ((0, wide),)
            leads.append((d, base, off, off + wide, line, w))
        elif wide < w and w % wide == 0:
            plan[line] = tuple((k * wide, wide) for k in range(w // wide))
    for line, d, w, base, off in missing:
        if base is None or base[1] is None:
            continue
        cover = [(ln, hi - lo, lw) for ld, lb, lo, hi, ln, lw in leads
                 if d == ld and base == lb and lo <= off and off + w <= hi]
        if cover:
            plan[line] = ()         # inside a wider access that another PTX line leads
            before = [c for c in cover if c[0] < line]
            lead = max(before) if before else min(cover)
            merges[line] = (lead[0], lead[1], w)
            merges.setdefault(lead[0], (lead[0], lead[1], lead[2]))
    return plan, merges
