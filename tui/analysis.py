"""What the inspector shows about a kernel: the analyzer's report (:mod:`analyzer.report`), the one
analysis of the project, put in the shape the views draw.

The analyzer gives per-instruction classes and execution estimates (per thread, each exact or
not), loops from the CFG (:mod:`isa.cfg`) with iteration counts and the reason when one is
unknown, FLOPs/int ops by dtype, bytes by state space, intensity and the roofline, and the
manifest's expectations checked with its own patterns (:mod:`analyzer.patterns`)::

    loop at line 488: iteration count unknown (bound %r47 ... give --param); assumed 16

When the analyzer fails on a kernel the view keeps the opcodes and the CFG's loops and says why
in :attr:`KernelAnalysis.missing`; nothing is invented.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from isa.cfg import Cfg
from isa.ir import Function, Module, RegisterDecl, Variable
from isa.types import type_bits

from .corpus import CorpusInfo

# Classes that say the most about an instruction, shown first in the class column.
HEADLINE = ("TENSOR_CORE", "FP16_FMA", "BF16_FMA", "FP32_FMA", "FP64_FMA", "INT8_DP4A", "SPILL",
            "LDMATRIX", "STMATRIX", "TMA", "ASYNC_COPY", "WGMMA_SYNC", "SHUFFLE", "ATOMIC_CAS", "ATOMIC",
            "REDUCTION", "BARRIER", "SFU", "CONVERT_NARROW", "CONVERT")


def class_label(classes) -> str:
    """A short label for a set of class names: ``TENSOR_CORE`` -> ``tensor core``,
    ``{LOAD, LOAD_SHARED, LOAD_SHARED_128}`` -> ``load shared 128``."""
    if not classes:
        return ""
    for c in HEADLINE:
        if c in classes:
            return c.lower().replace("_", " ")
    best = max(sorted(classes), key=len)
    return best.lower().replace("_", " ")


@dataclass
class InstrNote:
    """Per-instruction annotation (index into ``Function.instructions``)."""

    classes: frozenset[str] = frozenset()
    label: str = ""
    unit: str | None = None
    depth: int = 0
    dyn: float | None = None
    exact: bool = False


@dataclass
class LoopInfo:
    """A loop of the CFG: instructions ``first``..``last`` (indices), nesting ``depth`` (1 =
    outermost), ``header`` its header block in :class:`isa.cfg.Cfg`."""

    first: int
    last: int
    depth: int
    header: int = -1
    trip: str = "? iterations"
    exact: bool = False
    children: list["LoopInfo"] = field(default_factory=list)


@dataclass
class Expectation:
    expr: str
    ok: bool | None
    found: int | None
    note: str = ""


@dataclass
class KernelAnalysis:
    provider: str
    notes: list[InstrNote]
    loops: list[LoopInfo]
    class_mix: list[tuple[str, int, float | None]]  # class, static count, dynamic estimate
    flops: dict[str, float]
    bytes: dict[str, float]
    work_note: str
    intensity: float | None = None
    roofline: str | None = None
    registers: dict[str, int] = field(default_factory=dict)
    shared_bytes: int | None = 0
    shared_note: str = ""
    expectations: list[Expectation] = field(default_factory=list)
    expectations_source: str = ""
    missing: list[str] = field(default_factory=list)
    dynamic_exact: bool | None = None

    def loops_flat(self) -> list[LoopInfo]:
        out: list[LoopInfo] = []

        def visit(ls):
            for l in ls:
                out.append(l)
                visit(l.children)

        visit(self.loops)
        return out


# --------------------------------------------------------------------------------------------


def cfg_loops(cfg: Cfg) -> list[LoopInfo]:
    """The natural loops of the function's CFG (:mod:`isa.cfg`, the graph the analyzer and the
    simulator use) as instruction ranges, nested as in the CFG. Trip counts come from the analyzer."""
    blocks = cfg.blocks
    made: dict[int, LoopInfo] = {}
    for h, lp in cfg.loops.items():
        body = [blocks[b] for b in lp.blocks if len(blocks[b])]
        if body:
            made[h] = LoopInfo(min(b.start for b in body), max(b.end for b in body) - 1, lp.depth, header=h)
    roots: list[LoopInfo] = []
    for h, info in sorted(made.items(), key=lambda kv: (kv[1].first, -kv[1].last)):
        parent = cfg.loops[h].parent
        (made[parent].children if parent in made else roots).append(info)
    return roots


def declared_registers(fn: Function) -> dict[str, int]:
    """Declared virtual registers by type (``.reg .b32 %r<359>`` counts 359 ``b32``)."""
    out: Counter = Counter()
    for d in fn.declarations:
        if isinstance(d, RegisterDecl):
            out[d.type] += d.count if d.count is not None else len(d.names)
    return dict(out)


def shared_footprint(module: Module, fn: Function) -> tuple[int | None, str]:
    """Static shared memory of the kernel's declarations, and a note on dynamic shared memory."""
    total, dynamic = 0, []
    vars_ = [v for v in module.variables if v.space == "shared"]
    vars_ += [d for d in fn.declarations if isinstance(d, Variable) and d.space == "shared"]
    for v in vars_:
        size = v.size_bytes
        if size is None:
            dynamic.append(v.name)
        else:
            total += size
    note = f"plus dynamic (extern {', '.join(dynamic)})" if dynamic else ""
    return total, note


def _si(x: float | None, unit: str) -> str:
    if x is None:
        return "?"
    for div, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.1f} {p}{unit}"
    return f"{x:.1f} {unit}"


def analyse(module: Module, fn: Function, corpus: CorpusInfo | None = None,
            params: dict | None = None, measured: dict | None = None, launch=None,
            taken: dict | None = None) -> KernelAnalysis:
    """Everything the views need for ``fn``, from the analyzer; never raises for a kernel that parsed.

    After a run (the Run tab), ``measured`` (``stats['threads_by_instruction']``) and ``launch``
    (``(grid, block)``) make every count the run's measured one, per launch, and the views say so."""
    from analyzer.dataflow import Launch
    from analyzer.report import analyze_function

    given = dict(params or {})
    if given:
        try:
            from analyzer.params import resolve

            given = resolve(module, fn, given, strict=False)
        except Exception:  # noqa: BLE001 - names the analyzer cannot map are simply not used
            pass
    shared, shared_note = shared_footprint(module, fn)
    try:
        r = analyze_function(module, fn, params=given,
                             **({"launch": Launch(tuple(launch[0]), tuple(launch[1]))} if measured and launch else {}))
        if measured and launch:
            r.use_measured(measured, "the functional simulator (Run tab)", taken)
        counts, exact, dyn = r.instruction_counts(), r.instruction_exact(), r.dynamic()
    except Exception as exc:  # noqa: BLE001 - show what failed, keep the opcodes and the CFG
        cfg = Cfg(fn)
        notes = [InstrNote(label=ins.opcode, depth=cfg.depth_of_instruction(k)) for k, ins in enumerate(fn.instructions)]
        mix: Counter = Counter(n.label for n in notes)
        return KernelAnalysis(
            provider="opcodes only", notes=notes, loops=cfg_loops(cfg),
            class_mix=[(c, k, None) for c, k in mix.most_common()], flops={}, bytes={},
            work_note="not available", registers=declared_registers(fn), shared_bytes=shared,
            shared_note=shared_note,
            missing=[f"the analyzer failed on this kernel ({type(exc).__name__}: {exc}); opcodes only"])
    notes = [InstrNote(info.classes, class_label(info.classes), info.unit.value, r.loop_depth(k), counts[k], exact[k])
             for k, info in enumerate(r.infos)]
    static: Counter = Counter(n.label or "other" for n in notes)
    mix = Counter()
    for n in notes:
        mix[n.label or "other"] += n.dyn or 0.0
    dynamic_exact = bool(dyn.get("exact"))
    flops = {k: float(v) for k, v in dyn["flops"]["by_dtype"].items()}
    flops.update({f"{k} int": float(v) for k, v in dyn["int_ops"]["by_dtype"].items()})
    roof = dyn.get("roofline")
    roofline = None
    if roof:
        roofline = (f"on {roof['machine']}: {roof.get('bound') or '?'}-bound; attainable "
                    f"{_si(roof.get('attainable_ops_per_s'), 'op/s')} of peak {_si(roof.get('peak_ops_per_s'), 'op/s')}"
                    f", ridge {roof['ridge']:.0f} op/B" if roof.get("ridge") else f"on {roof['machine']}")
    ka = KernelAnalysis(
        provider="analyzer, measured counts of the last run" if r.measured is not None and r.measured_basis == "measured"
        else "analyzer, the scalar program stepped on every core" if r.measured is not None else "analyzer",
        notes=notes, loops=cfg_loops(r.cfg),
        class_mix=[(c, static.get(c, 0), d) for c, d in mix.most_common()], flops=flops,
        bytes={k: float(v["value"]) for k, v in dyn["bytes"].items()},
        work_note=(f"dynamic, per {dyn.get('per', 'thread')} "
                   f"({'measured: the counts of the last run' if r.measured is not None and r.measured_basis == 'measured' else 'exact' if dynamic_exact else 'estimate'})"),
        intensity=dyn["intensity"]["value"], roofline=roofline, registers=declared_registers(fn),
        shared_bytes=shared, shared_note=shared_note, dynamic_exact=dynamic_exact,
        missing=[f"analyzer: {n}" for n in dyn.get("notes", [])])
    if module.isa == "ascend":        # work held in register operands: the .meta shapes say it
        ka.registers, ka.shared_bytes, ka.shared_note = {}, None, ""
        w = r.shape_work()
        if r.stepped_work is not None:    # exact: each instruction with its operands' values, every core
            ka.intensity = r.to_json()["intensity"]     # work / the bytes moved between GM and the cores
            ka.work_note += "; work from each instruction's operands as stepped"
        elif w is None:
            ka.flops, ka.bytes, ka.intensity = {}, {}, None
            ka.work_note = "unknown: no .meta header with the shapes (the Run tab measures the kernel)"
        else:
            ops = w.get("int_ops") if w.get("int_ops") is not None else w.get("flops")
            ka.flops = {f"{w['op']} ({'int ops' if w.get('int_ops') is not None else 'FLOPs'})": float(ops)} \
                if ops is not None else {}
            ka.bytes = {"global (at least)": float(w["global_bytes"])}
            ka.intensity = ops / w["global_bytes"] if ops and w["global_bytes"] else None
            ka.work_note = f"per launch, from the .meta shapes: {w['rule']}; bytes: {w['bytes_rule']}"
    by_header = {li.header: li for li in r.loops}
    for lp in ka.loops_flat():          # the CFG the analyzer estimated on
        li = by_header.get(lp.header)
        if li is not None:
            lp.trip = ("not entered" if not li.entered
                       else f"{li.iterations} iteration{'' if li.iterations == 1 else 's'}"
                       + (" (measured)" if li.measured is not None and li.basis == "measured" else " (stepped)" if li.measured is not None else "")
                       if li.iterations is not None
                       else f"? (assumed {dyn.get('assumed_iterations')} iterations)")
            lp.exact = li.exact
    if dyn.get("missing_params"):
        ka.missing.append("give --param NAME=VALUE for: " + ", ".join(dyn["missing_params"]))
    if corpus is not None:
        try:
            from analyzer.manifest import expectations_for

            outs = r.check(expectations_for(corpus.entry, corpus.target))
            ka.expectations = [Expectation(str(o.expectation), bool(o.holds), int(o.found)) for o in outs]
            ka.expectations_source = "corpus manifest, checked by the analyzer"
        except Exception as exc:  # noqa: BLE001 - say so, the rest of the view stands
            ka.missing.append(f"the manifest's expectations could not be checked ({type(exc).__name__}: {exc})")
    return ka


def register_bits(regs: dict[str, int]) -> int:
    """Total declared register bits (predicates count 1 bit)."""
    total = 0
    for t, n in regs.items():
        try:
            total += type_bits(t) * n
        except KeyError:
            pass
    return total
