"""What the inspector shows about a kernel, gathered from whatever the checkout provides.

Three levels, best first, and the view says which one it got (:attr:`KernelAnalysis.provider`):

1. the analyzer (``analyzer``): classes, CFG loops with trip-count estimates, dynamic counts,
   FLOPs/bytes/intensity and the roofline;
2. the semantics tables (``isa.semantics.describe``): classes, units, static FLOPs and bytes per
   issue; loops from the CFG (:mod:`isa.cfg`), without trip counts;
3. opcodes only, when no semantics table exists for the ISA.

Whatever is missing is listed in :attr:`KernelAnalysis.missing` in words, never invented.
"""

from __future__ import annotations

import importlib
from collections import Counter, defaultdict
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


def _describer(module: Module):
    """``describe(instr)`` for the module's ISA, or ``None`` when no table exists yet."""
    try:
        from isa.semantics import describe

        if module.isa == "ascend":
            importlib.import_module("isa.ascend.semantics")
        else:
            importlib.import_module("isa.ptx.semantics")
    except ImportError:
        return None
    return lambda instr: describe(instr, module.isa)


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


def _dtype_key(info) -> str:
    a, b = info.in_dtype, info.acc_dtype or info.out_dtype
    if a and b and a != b:
        return f"{a}→{b}"
    return a or b or "?"


def match_pattern(pattern: str, instr) -> bool:
    """Opcode pattern with modifiers as a set: ``ld.shared.v4`` matches ``ld.shared.v4.f32``;
    a first word that is a dotted instruction name (``cp.async``) also matches."""
    words = pattern.split(".")
    full = (instr.opcode,) + instr.modifiers
    if words[0] != instr.opcode:
        return False
    return set(words[1:]) <= set(full[1:])


_OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
        ">": lambda a, b: a > b, "<": lambda a, b: a < b}


def _manifest_expectations(fn: Function, corpus: CorpusInfo | None) -> list[Expectation]:
    if corpus is None:
        return []
    out = []
    for name, rule in corpus.expect.items():
        op = next((o for o in (">=", "<=", "==", ">", "<") if rule.startswith(o)), None)
        if op is None:
            continue
        n = int(rule[len(op):])
        found = sum(1 for ins in fn.instructions if match_pattern(name, ins))
        out.append(Expectation(f"{name} {op} {n}", _OPS[op](found, n), found))
    return out


def analyse(module: Module, fn: Function, corpus: CorpusInfo | None = None,
            params: dict | None = None) -> KernelAnalysis:
    """Everything the views need for ``fn``; never raises for a kernel that parsed."""
    instrs = fn.instructions
    missing: list[str] = []
    describe = _describer(module)
    notes: list[InstrNote] = []
    if describe is None:
        provider = "opcodes only"
        missing.append(f"no semantics table for {module.isa}: classes, FLOPs and bytes are not available")
        for ins in instrs:
            notes.append(InstrNote(label=ins.opcode))
    else:
        provider = "semantics tables"
        for ins in instrs:
            try:
                info = describe(ins)
            except Exception as exc:  # a table bug must not take the view down
                notes.append(InstrNote(label=f"? {type(exc).__name__}"))
                continue
            notes.append(InstrNote(info.classes, class_label(info.classes), info.unit.value))
    cfg = Cfg(fn)
    loops = cfg_loops(cfg)
    for k, n in enumerate(notes):
        n.depth = cfg.depth_of_instruction(k)

    # one label per instruction, so the bars add up to the instruction count
    mix: Counter = Counter(n.label or "other" for n in notes)
    class_mix = [(c, k, None) for c, k in mix.most_common()]

    flops: dict[str, float] = defaultdict(float)
    nbytes: dict[str, float] = defaultdict(float)
    if describe is not None:
        for ins in instrs:
            try:
                info = describe(ins)
            except Exception:
                continue
            if info.flops:
                flops[f"{_dtype_key(info)} /{info.scope.value}"] += info.flops
            if info.int_ops:
                flops[f"{_dtype_key(info)} int /{info.scope.value}"] += info.int_ops
            if info.bytes and info.space:
                nbytes[f"{info.space} /{info.scope.value}"] += info.bytes
    shared, shared_note = shared_footprint(module, fn)
    ka = KernelAnalysis(
        provider=provider, notes=notes, loops=loops, class_mix=class_mix, flops=dict(flops),
        bytes=dict(nbytes),
        work_note="static: each instruction counted once per issue (per lane, warp or warpgroup as marked)",
        registers=declared_registers(fn), shared_bytes=shared, shared_note=shared_note,
        expectations=_manifest_expectations(fn, corpus),
        expectations_source="corpus manifest (opcode patterns, static)" if corpus else "",
        missing=missing,
    )
    if not _apply_analyzer(ka, module, fn, corpus, params):
        missing.append("the analyzer is not available: no dynamic counts, trip counts, intensity or roofline")
    return ka


def _apply_analyzer(ka: KernelAnalysis, module: Module, fn: Function, corpus, params) -> bool:
    """Fill dynamic estimates, trip counts, intensity and roofline from the analyzer when present."""
    try:
        from . import analyzer_bridge
    except ImportError:
        return False
    return analyzer_bridge.apply(ka, module, fn, corpus, params)


def register_bits(regs: dict[str, int]) -> int:
    """Total declared register bits (predicates count 1 bit)."""
    total = 0
    for t, n in regs.items():
        try:
            total += type_bits(t) * n
        except KeyError:
            pass
    return total
