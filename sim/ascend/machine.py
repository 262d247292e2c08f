"""The ``davinci-a2`` machine model, read from ``sim/machines/<name>.toml``.

Every number in the TOML is a table ``{ value = ..., source = "[TAG] ..." }``; :func:`load_machine`
keeps the values and :attr:`AscendModel.sources` the citations::

    m = load_machine("davinci-a2")
    m.buffers["l0a"].size, m.buffers["l0a"].align   # 65536, 512
    m.mover_bw["l1->l0b"]                             # 128 bytes/cycle
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from isa.errors import InputError, Span
from sim import machines

MACHINES = machines.MACHINES

# data path -> mover key in the TOML
_PATHS = {"gm->l1": "gm_to_l1", "gm->ub": "gm_to_ub", "ub->gm": "ub_to_gm", "l1->l0a": "l1_to_l0a",
          "l1->l0b": "l1_to_l0b", "l0c->gm": "l0c_to_gm", "l1->fb": "l1_to_fb", "ub->ub": "ub_to_ub"}


@dataclass(frozen=True)
class Buffer:
    size: int
    align: int


@dataclass(frozen=True)
class AscendModel:
    """The numbers of an Ascend-like chip (``sim/machines/davinci-a2.toml``): cores, buffer sizes and
    alignment, pipe and mover costs, UB banks, GM bandwidth, with the source of each in ``sources``."""

    name: str
    hz: float
    cube_cores: int
    vector_cores: int
    buffers: dict[str, Buffer]
    mad_head: int
    f32_factor: int
    vec_head: int
    vec_slope: dict[str, int]
    counter_floor: int
    bank_groups: int
    group_shift: int
    bank_shift: int
    rw_conflict_cycles: int
    mover_bw: dict[str, float]
    mover_head: int
    onchip_head: int
    hbm_bytes_per_cycle: float
    l2_bytes: int
    gm_line: int
    issue_cycles: int
    queue_depth: int
    flag_latency: int
    peak_f16_flops: float
    peak_s8_ops: float
    cross_core_latency: int = 100
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def cores(self, core_type: str) -> int:
        return self.cube_cores if core_type == "cube" else self.vector_cores


#: the tables an Ascend-like machine model has (h200.toml, the PTX model, has none of the movers)
_TABLES = ("clock", "cores", "buffers", "cube", "vector", "ub_banks", "movers", "gm", "scalar", "peak")


def _is_ascend_model(path: Path) -> bool:
    try:
        raw = machines.load(path)[1]
    except InputError:
        return False
    return all(t in raw for t in _TABLES)


def _values(tree: dict, prefix: str, sources: dict) -> dict:
    out = {}
    for k, v in tree.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict) and "source" in v:
            sources[key] = v["source"]
            out[k] = v["value"] if "value" in v else {kk: vv for kk, vv in v.items() if kk != "source"}
        elif isinstance(v, dict):
            out[k] = _values(v, key, sources)
        else:
            out[k] = v
    return out


def load_machine(name_or_path: str) -> AscendModel:
    """Load a machine model by name (``davinci-a2``) or TOML path."""
    known = sorted(x.stem for x in MACHINES.glob("*.toml") if _is_ascend_model(x))
    try:
        p, raw = machines.load(name_or_path)
    except InputError as exc:
        if exc.span is not None and exc.span.file:     # the file exists but does not read
            raise
        raise InputError(f"unknown machine '{name_or_path}'", expected=known) from None
    missing = [t for t in _TABLES if t not in raw]
    if missing:
        raise InputError(f"'{name_or_path}' is not an Ascend-like machine model (no {', '.join('[' + t + ']' for t in missing)})",
                         Span(str(p)), expected=known)
    src: dict[str, str] = {}
    d = _values(raw, "", src)
    mv = d["movers"]
    return AscendModel(
        name=d["name"], hz=float(d["clock"]["hz"]), cube_cores=d["cores"]["cube"], vector_cores=d["cores"]["vector"],
        buffers={k: Buffer(int(v["size"]), int(v["align"])) for k, v in d["buffers"].items()},
        mad_head=d["cube"]["mad_head"], f32_factor=d["cube"]["f32_factor"], vec_head=d["vector"]["head"],
        vec_slope=dict(d["vector"]["slope"]), counter_floor=d["vector"]["counter_floor"],
        bank_groups=d["ub_banks"]["groups"], group_shift=d["ub_banks"]["group_shift"],
        bank_shift=d["ub_banks"]["bank_shift"], rw_conflict_cycles=d["ub_banks"]["rw_conflict_cycles"],
        mover_bw={path: float(mv[key]) for path, key in _PATHS.items()}, mover_head=mv["head"], onchip_head=mv["onchip_head"],
        hbm_bytes_per_cycle=float(d["gm"]["hbm_bytes_per_s"]) / float(d["clock"]["hz"]),
        l2_bytes=int(d["gm"]["l2_bytes"]), gm_line=int(d["gm"]["line_bytes"]),
        issue_cycles=d["scalar"]["issue_cycles"], queue_depth=d["scalar"]["queue_depth"],
        flag_latency=d["scalar"]["flag_latency"],
        cross_core_latency=d["scalar"].get("cross_core_latency", 100), peak_f16_flops=float(d["peak"]["cube_f16_flops"]),
        peak_s8_ops=float(d["peak"]["cube_s8_ops"]), sources=src)
