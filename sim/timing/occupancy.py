"""Theoretical occupancy on Hopper: how many CTAs of one launch an SM holds at once, and what limits it.

    >>> occ = occupancy("h200", registers_per_thread=48, shared_bytes_per_cta=4096, threads_per_cta=512)
    >>> occ.ctas_per_sm, occ.warps_per_sm, occ.theoretical, occ.limiter
    (2, 32, 0.5, 'registers')

(``sgemm_regblock1d``: 48 registers as ``ptxas -v`` reports them, ``.shared .align 4 .b8 As[4096]``,
512 threads; Nsight Compute gives the same limits: registers 2, shared memory 6, warps 4, blocks 32.)

The rules are those of ``cuda_occupancy.h`` for sm_90, with every limit read from the ``[occupancy]``
table of ``sim/machines/<name>.toml``:

* registers: per thread rounded so that a warp takes a multiple of ``register_unit_per_warp``
  (256: 21 registers -> 24); the register file is split over ``register_sub_partitions`` (4)
  schedulers, so warps per SM = 4 x floor(65536 / 4 / registers per warp);
* warps: ``max_warps_per_sm`` (64) over the CTA's warps; CTAs: ``max_ctas_per_sm`` (32);
* shared memory: each CTA allocates its static + dynamic bytes plus ``shared_reserved_per_cta``
  (1 KiB), rounded up to ``shared_unit`` (128 B), out of the carve-out the driver configures for the
  launch (one of 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KiB). The driver's choice is not
  documented; :func:`driver_carveout` is the rule fitted on Nsight Compute's limits (the toml says
  how well it fits). Pass ``carveout_bytes`` to use a known carve-out instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from isa.errors import InputError
from sim import machines

MACHINES = machines.MACHINES

#: the order in which ties are named: the fixed hardware limits first, then the kernel's resources
LIMIT_ORDER = ("warps", "blocks", "registers", "shared_memory")


@dataclass(frozen=True)
class OccupancyLimits:
    """The ``[occupancy]`` table of a machine model (numbers only; ``sources`` cites each)."""

    name: str
    registers_per_sm: int
    register_sub_partitions: int
    register_unit_per_warp: int
    max_registers_per_thread: int
    max_warps_per_sm: int
    max_ctas_per_sm: int
    max_threads_per_cta: int
    shared_reserved_per_cta: int
    shared_unit: int
    shared_max_per_cta: int
    shared_carveouts: tuple[int, ...]          # bytes, ascending
    carveout_headroom: int
    warp_size: int = 32
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class Occupancy:
    """What one launch gets on one SM.

    ``limits`` holds the CTAs per SM each resource alone would allow (Nsight Compute's
    ``launch__occupancy_limit_{warps,blocks,registers,shared_mem}``); ``limiter`` is the first of
    ``limiters`` (every resource at the minimum) in :data:`LIMIT_ORDER`.
    """

    ctas_per_sm: int
    warps_per_sm: int
    theoretical: float                          # warps_per_sm / max warps per SM
    limiter: str
    limiters: tuple[str, ...] = ()
    limits: Mapping[str, int] = field(default_factory=dict, hash=False)
    carveout_bytes: int = 0
    shared_bytes_allocated: int = 0             # per CTA, reservation and rounding included
    registers_per_thread: int = 0
    registers_allocated: int = 0                # per thread, after rounding to the allocation unit

    def to_json(self) -> dict:
        return {"ctas_per_sm": self.ctas_per_sm, "warps_per_sm": self.warps_per_sm,
                "theoretical": self.theoretical, "limiter": self.limiter, "limiters": list(self.limiters),
                "limits": dict(self.limits), "carveout_bytes": self.carveout_bytes,
                "shared_bytes_allocated": self.shared_bytes_allocated,
                "registers_per_thread": self.registers_per_thread}


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit if unit > 0 else x


@lru_cache(maxsize=8)
def load_limits(name_or_path: str = "h200") -> OccupancyLimits:
    """The ``[occupancy]`` table of ``sim/machines/NAME.toml`` (or a ``.toml`` path)."""
    path, raw = machines.load(name_or_path)
    table = raw.get("occupancy")
    if table is None:
        raise InputError(f"machine model '{name_or_path}' has no [occupancy] table (it is not a GPU model)")

    def v(key):
        return table[key]["value"]

    try:
        return OccupancyLimits(
            name=raw.get("name", path.stem),
            registers_per_sm=int(v("registers_per_sm")), register_sub_partitions=int(v("register_sub_partitions")),
            register_unit_per_warp=int(v("register_unit_per_warp")),
            max_registers_per_thread=int(v("max_registers_per_thread")),
            max_warps_per_sm=int(v("max_warps_per_sm")), max_ctas_per_sm=int(v("max_ctas_per_sm")),
            max_threads_per_cta=int(v("max_threads_per_cta")),
            shared_reserved_per_cta=int(v("shared_reserved_per_cta")), shared_unit=int(v("shared_unit")),
            shared_max_per_cta=int(v("shared_max_per_cta")),
            shared_carveouts=tuple(sorted(int(k) * 1024 for k in v("shared_carveouts_kib"))),
            carveout_headroom=int(v("carveout_headroom")),
            warp_size=int(raw.get("chip", {}).get("warp_size", {}).get("value", 32)),
            sources={k: e["source"] for k, e in table.items() if isinstance(e, dict) and "source" in e})
    except KeyError as exc:
        raise InputError(f"machine model '{name_or_path}': [occupancy] has no {exc}") from None


def _limits_of(machine) -> OccupancyLimits:
    if isinstance(machine, OccupancyLimits):
        return machine
    if isinstance(machine, (str, Path)):
        return load_limits(str(machine))
    inner = getattr(machine, "occupancy_limits", None) or getattr(machine, "name", None)
    if isinstance(inner, OccupancyLimits):
        return inner
    if isinstance(inner, str):
        return load_limits(inner)
    raise TypeError(f"occupancy() needs a machine name, a .toml path or OccupancyLimits, not {machine!r}")


def shared_allocated(lim: OccupancyLimits, shared_bytes_per_cta: int) -> int:
    """Bytes one CTA takes out of the carve-out: its own plus the 1 KiB reservation, in 128 B units."""
    return _round_up(shared_bytes_per_cta + lim.shared_reserved_per_cta, lim.shared_unit)


def _warp_limit(lim: OccupancyLimits, warps: int) -> int:
    return lim.max_warps_per_sm // warps


def _register_limit(lim: OccupancyLimits, regs_per_thread: int, warps: int) -> tuple[int, int]:
    """(CTAs the register file allows, registers per thread as allocated)."""
    if regs_per_thread <= 0:
        return lim.max_ctas_per_sm, 0
    per_warp = _round_up(regs_per_thread * lim.warp_size, lim.register_unit_per_warp)
    per_sub = lim.registers_per_sm // lim.register_sub_partitions
    warps_per_sm = (per_sub // per_warp) * lim.register_sub_partitions
    return warps_per_sm // warps, per_warp // lim.warp_size


def driver_carveout(lim: OccupancyLimits, allocated_per_cta: int, ctas_by_warps: int, ctas_by_registers: int) -> int:
    """The shared-memory carve-out (bytes) the driver configures for a launch, by the fitted rule.

    The smallest carve-out larger than what the CTAs the warp limit allows need plus
    ``carveout_headroom``; when that exceeds the largest carve-out, the smallest that holds the CTAs
    the registers (and warps) allow; a CTA using no shared memory of its own needs no carve-out.
    """
    if allocated_per_cta <= lim.shared_reserved_per_cta:
        return lim.shared_carveouts[-1]
    biggest = lim.shared_carveouts[-1]
    need = ctas_by_warps * allocated_per_cta + lim.carveout_headroom
    if need > biggest:
        need = min(ctas_by_warps, ctas_by_registers) * allocated_per_cta + lim.carveout_headroom
    for c in lim.shared_carveouts:
        if c > need:
            return c
    return biggest


def occupancy(machine, registers_per_thread: int, shared_bytes_per_cta: int, threads_per_cta: int, *,
              carveout_bytes: int | None = None) -> Occupancy:
    """Theoretical occupancy of a launch: ``shared_bytes_per_cta`` is static + dynamic shared memory.

    ``registers_per_thread`` as ``ptxas -v`` (or ncu's ``launch__registers_per_thread``) reports it;
    ``carveout_bytes`` overrides the driver's carve-out. A launch that cannot run at all (more than
    1024 threads, more registers or shared memory than a CTA may have) gets 0 CTAs and the limiter
    that stops it.
    """
    lim = _limits_of(machine)
    if threads_per_cta <= 0:
        raise InputError(f"a CTA needs at least one thread (got {threads_per_cta})")
    warps = -(-threads_per_cta // lim.warp_size)
    alloc = shared_allocated(lim, max(0, int(shared_bytes_per_cta)))
    by_warps = _warp_limit(lim, warps) if threads_per_cta <= lim.max_threads_per_cta else 0
    by_regs, regs_alloc = _register_limit(lim, int(registers_per_thread), warps)
    if registers_per_thread > lim.max_registers_per_thread or regs_alloc * lim.warp_size * warps > lim.registers_per_sm:
        by_regs = 0
    if carveout_bytes is None:
        carveout_bytes = driver_carveout(lim, alloc, by_warps, by_regs)
    if shared_bytes_per_cta > lim.shared_max_per_cta:
        by_shared = 0
    elif shared_bytes_per_cta <= 0:
        by_shared = lim.max_ctas_per_sm           # ncu reports the block limit for kernels without shared memory
    else:
        by_shared = max(carveout_bytes, alloc) // alloc if alloc <= lim.shared_carveouts[-1] else 0
    limits = {"warps": by_warps, "blocks": lim.max_ctas_per_sm, "registers": by_regs, "shared_memory": by_shared}
    ctas = min(limits.values())
    limiters = tuple(k for k in LIMIT_ORDER if limits[k] == ctas)
    warps_per_sm = ctas * warps
    return Occupancy(ctas_per_sm=ctas, warps_per_sm=warps_per_sm, theoretical=warps_per_sm / lim.max_warps_per_sm,
                     limiter=limiters[0], limiters=limiters, limits=limits, carveout_bytes=carveout_bytes,
                     shared_bytes_allocated=alloc, registers_per_thread=int(registers_per_thread),
                     registers_allocated=regs_alloc)


def kernel_occupancy(module_or_path, kernel: str, threads_per_cta: int, dynamic_shared_bytes: int = 0,
                     machine="h200", **options) -> Occupancy:
    """Occupancy of a PTX kernel as ptxas compiled it: registers as ``isa.sass.resources`` gives
    them (``registers_allocated``, what ncu's ``launch__registers_per_thread`` shows) and its static
    shared memory plus ``dynamic_shared_bytes``. Raises ``isa.sass.Unavailable`` without ptxas."""
    import isa.sass

    r = isa.sass.resources(module_or_path, kernel)
    return occupancy(machine, r.registers_allocated, r.shared_bytes + int(dynamic_shared_bytes), threads_per_cta,
                     **options)
