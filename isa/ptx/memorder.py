"""Memory-consistency semantics of PTX memory instructions (ISA 8, "Memory Consistency Model"),
as a table keyed by canonical opcode and modifiers, shared by the simulator's race detector and its
relaxed memory::

    ld.global.f32 %f1, [%rd4];                  -> Ordering('weak')
    ld.volatile.global.u32 %r1, [%rd4];         -> Ordering('relaxed', 'sys', strong)
    ld.acquire.gpu.global.u32 %r1, [%rd4];      -> Ordering('acquire', 'gpu', strong, acquire)
    atom.global.add.u32 %r1, [%rd4], 1;         -> Ordering('relaxed', 'gpu', strong)   (defaults)
    atom.global.gpu.acq_rel.add.f32 ...         -> acquire and release at gpu scope
    membar.gl;  fence.sc.gpu;                   -> Ordering('sc', 'gpu', fence, acquire, release)
    fence.acq_rel.cta;  membar.cta;             -> the same at cta scope
"""

from __future__ import annotations

from dataclasses import dataclass

SEMS = ("weak", "relaxed", "acquire", "release", "acq_rel", "sc", "volatile", "mmio")
SCOPES = ("cta", "cluster", "gpu", "sys")
#: scope order: a fence or strong access at scope S orders threads within S
SCOPE_RANK = {"cta": 0, "cluster": 1, "gpu": 2, "sys": 3}


@dataclass(frozen=True)
class Ordering:
    """What one memory instruction means for ordering: its semantics (``weak``, ``relaxed``,
    ``acquire``, ``release``, ``acq_rel``, ``sc``), its scope, and whether it is strong (can take
    part in synchronisation), a fence, an acquire and/or a release."""

    sem: str = "weak"
    scope: str = "gpu"
    strong: bool = False
    fence: bool = False
    acquire: bool = False
    release: bool = False

    @property
    def beyond_cta(self) -> bool:
        """Orders threads of different CTAs (scope gpu, sys; cluster counts: clusters are CTAs here)."""
        return SCOPE_RANK[self.scope] >= 1


_MEMBAR = {"cta": "cta", "gl": "gpu", "sys": "sys"}


def ordering(canon: str, mods) -> Ordering:
    """The :class:`Ordering` of an instruction given its canonical opcode and modifiers."""
    ms = set(mods)
    scope = next((s for s in SCOPES if s in ms), None)
    if canon == "membar":
        sc = next((_MEMBAR[m] for m in ms if m in _MEMBAR), "gpu")
        return Ordering("sc", sc, True, True, True, True)
    if canon == "fence" or canon.startswith("fence."):
        if "proxy" in ms or "mbarrier_init" in ms:
            return Ordering("weak", scope or "cta")
        sem = "sc" if "sc" in ms else "acquire" if "acquire" in ms else "release" if "release" in ms else "acq_rel"
        return Ordering(sem, scope or "gpu", True, True, sem in ("sc", "acq_rel", "acquire"),
                        sem in ("sc", "acq_rel", "release"))
    if canon in ("atom", "red"):
        sem = next((s for s in ("acquire", "release", "acq_rel", "relaxed") if s in ms), "relaxed")
        return Ordering(sem, scope or "gpu", True, False, sem in ("acquire", "acq_rel"), sem in ("release", "acq_rel"))
    if canon in ("ld", "st", "ldu"):
        if "volatile" in ms:
            return Ordering("relaxed", "sys", True)
        if "mmio" in ms:
            return Ordering("relaxed", "sys", True)
        for sem in ("relaxed", "acquire", "release"):
            if sem in ms:
                return Ordering(sem, scope or "gpu", True, False, sem == "acquire", sem == "release")
        return Ordering("weak", "cta")
    return Ordering()


__all__ = ["Ordering", "ordering", "SCOPE_RANK"]
