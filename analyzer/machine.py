"""Machine models for the roofline: ``sim/machines/<name>.toml`` (every number cites its source).

    >>> m = load_machine("h200")
    >>> round(m.peak("fp32") / 1e12, 1)      # 256 FLOP/clk/SM x 132 SMs x 1.98 GHz
    66.9
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from isa.errors import InputError
from sim import machines


def __getattr__(name: str):
    """``MACHINES``: :data:`sim.machines.MACHINES` (a ``pathlib.Path``, made when first asked for)."""
    if name == "MACHINES":
        return machines.MACHINES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class RooflineModel:
    """The ceilings of a chip for the roofline: clock, SM count, DRAM bandwidth and peak work per SM
    per clock by kind (``sim/machines/h200.toml``), with the source of each number."""

    name: str
    description: str
    clock_hz: float
    sms: int
    dram_bw: float
    per_sm_clk: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    #: further bandwidth ceilings in bytes/s (``dram_measured``, ``l2_measured``, ``shared``), where the model has them
    bandwidths: dict[str, float] = field(default_factory=dict)

    def peak(self, kind: str) -> float:
        """Chip-wide peak operations per second for a kind of work (``tensor_f16``, ``fp32``...)."""
        return self.per_sm_clk[kind] * self.sms * self.clock_hz


def _v(node: dict, key: str):
    item = node[key]
    return item["value"] if isinstance(item, dict) else item


def machine_path(name_or_path: str) -> "Path":
    """``sim/machines/NAME.toml``, or the given ``.toml`` path; ``InputError`` when it does not exist."""
    return machines.path_of(name_or_path)


@lru_cache(maxsize=8)
def load_machine(name_or_path: str = "h200") -> RooflineModel:
    path, data = machines.read(name_or_path)
    try:
        peaks = {k: float(_v(data["peak_per_sm_clk"], k)) for k in data["peak_per_sm_clk"]}
        sources = {f"peak_per_sm_clk.{k}": v["source"] for k, v in data["peak_per_sm_clk"].items()}
        mem = data["memory"]
        clock, sms = float(_v(data["clock"], "hz")), int(_v(data["chip"], "sms"))
        bw = {"dram": float(_v(mem, "dram_bw"))}
        for key, name in (("dram_bw_measured", "dram_measured"), ("l2_bw_measured", "l2_measured")):
            if key in mem:
                bw[name] = float(_v(mem, key))
        if "shared_bw_per_sm_clk" in mem:
            bw["shared"] = float(_v(mem, "shared_bw_per_sm_clk")) * sms * clock
        sources.update({f"memory.{k}": v["source"] for k, v in mem.items() if isinstance(v, dict) and "source" in v})
        return RooflineModel(name=data["name"], description=data.get("description", ""), clock_hz=clock, sms=sms,
                             dram_bw=bw["dram"], per_sm_clk=peaks, sources=sources, bandwidths=bw)
    except KeyError as exc:
        raise InputError(f"machine model {path} has no roofline entry {exc} (it is not a GPU model)") from None


def work_kind(family: str, unit: str, dtype: str | None) -> str:
    """Which peak a unit of work runs at: ``mma`` f16 -> ``mma_sync_f16``, ``wgmma`` e4m3 -> ``tensor_fp8``."""
    if unit == "tensor":
        if dtype in ("s8", "u8", "s4", "u4", "b1"):
            return "mma_sync_int8" if not family.startswith("wgmma") else "tensor_int8"
        if dtype in ("e4m3", "e5m2", "e2m1", "e3m2", "e2m3"):
            return "tensor_fp8"
        if dtype == "tf32":
            return "tensor_tf32"
        if family.startswith("wgmma"):
            return "tensor_bf16" if dtype == "bf16" else "tensor_f16"
        return "mma_sync_f16"
    if unit == "fp16":
        return "fp16"
    if unit == "fp64":
        return "fp64"
    if unit == "int":
        return "int8_dp4a"
    return "fp32"
