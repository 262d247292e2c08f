"""The SASS level: what ptxas made of a PTX module.

One more front end (``grammar.lark``, :mod:`isa.sass.parser`) reads the listing that
:mod:`isa.sass.compile` gets from ``ptxas -lineinfo`` + ``nvdisasm -gp``; semantics tables
(:mod:`isa.sass.semantics`) describe each instruction as PTX's do. Per kernel::

    >>> import isa, isa.sass
    >>> m = isa.load("../shared/corpus/ptx/sgemm_smem_tiled.sm_90.ptx")          # doctest: +SKIP
    >>> k = isa.sass.kernel(m, "sgemm_smem_tiled32")                             # doctest: +SKIP
    >>> k.resources.registers, k.opcodes["LDS.128"]                              # doctest: +SKIP
    (32, 8)
    >>> [str(k.instructions[i]) for i in k.ptx_lines()[101]]    # what PTX line 101 became  # doctest: +SKIP
    ['LDS.128 R4, [R19] ;']
    >>> isa.sass.resources(m, "sgemm_smem_tiled32").registers_allocated         # doctest: +SKIP
    32

Everything here needs ``ptxas`` and ``nvdisasm`` (or ``cuobjdump``); without them the calls
raise :class:`Unavailable`, whose message says what to install, and :func:`note` gives the same
text for reports. Results are cached on disk by content hash (:func:`isa.sass.compile.cache_dir`).
"""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path

from ..errors import InputError
from ..ir import Function, Instruction, Module
# no cyclic GC while listings' IR is built: its passes over the new objects were a third of the
# Python side of a cold analysis (0.13 of 0.35 s CPU on the corpus, bench/sass.py)
from ..cache import gc_paused as _gc_off   # (not through isa.ptx.parser: that imports Lark)


@contextmanager
def _gc_paused():
    """The cyclic collector off while a listing's IR is built, and on leaving (outermost only) the
    objects made meanwhile moved straight to the oldest generation (``gc.freeze()`` then
    ``gc.unfreeze()``: two list splices), not left young, where the next collections would traverse
    all of them (measured: 0.06-0.2 s CPU of the corpus's cold analysis, a quarter or more of its
    Python). Nothing is kept from collection: the next full collection sees them as it sees any
    old object. Skipped where someone else holds frozen objects (they would be unfrozen too)."""
    outer = gc.isenabled()
    with _gc_off():
        yield
        if outer and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
from ..semantics import OpInfo
from .compile import (Compiled, Resources, Unavailable, compile_many, registers_allocated, tools,
                      unavailable_note)

__all__ = ["Resources", "Unavailable", "SassKernel", "Listing", "kernel", "listing", "listings", "resources",
           "note", "available", "tools", "registers_allocated", "ptx_target", "shared_plan", "shared_merges"]


def note() -> str | None:
    """None when SASS can be produced here; else the note reports print instead of SASS."""
    return unavailable_note()


def available() -> bool:
    return unavailable_note() is None


def ptx_target(module: Module) -> str:
    """The architecture ptxas compiles ``module`` for: its own ``.target`` (``sm_90a`` where the
    file needs it; Triton's sm_90 PTX says sm_90a)."""
    t = module.target
    if not t or not t.startswith("sm_"):
        raise InputError(f"{module.path or 'module'}: no sm_XX target to compile SASS for (.target {t})")
    return t


@dataclass
class SassKernel:
    """One kernel's SASS: the IR function, its facts, ptxas's resources, and the PTX lines."""

    name: str
    function: Function | None
    module: Module | None
    resources: Resources | None
    line_info: bool
    infos: list[OpInfo] = field(default_factory=list)
    ptx: Module | None = None              # the PTX module it was compiled from (for where())

    @property
    def instructions(self) -> list[Instruction]:
        return self.function.instructions if self.function is not None else []

    @cached_property
    def opcodes(self) -> dict[str, int]:
        """SASS opcode with modifiers -> static count (``LDS.128``: 8)."""
        return dict(sorted(Counter(i.full_opcode for i in self.instructions).items()))

    @cached_property
    def classes(self) -> dict[str, int]:
        return dict(sorted(Counter(chain.from_iterable(info.classes for info in self.infos)).items()))

    def matching(self, name: str) -> list[int]:
        """Indices of instructions matching a SASS class (``TENSOR_CORE``, ``LOAD_SHARED_128``)
        or an opcode pattern (``HGMMA``, ``LDS.128``: the opcode and these modifiers, any order)."""
        from .semantics import CLASSES

        if name in CLASSES:
            return [k for k, info in enumerate(self.infos) if name in info.classes]
        words = [w for w in name.split(".") if w]
        if not words:
            return []
        op, mods = words[0].upper(), {w.upper() for w in words[1:]}
        return [k for k, ins in enumerate(self.instructions)
                if ins.opcode.upper() == op and mods <= {m.upper() for m in ins.modifiers}]

    def count(self, name: str) -> int:
        return len(self.matching(name))

    def uses(self, name: str) -> bool:
        return self.count(name) > 0

    def ptx_lines(self) -> dict[int, list[int]]:
        """PTX line -> indices of the SASS instructions ptxas made of it (from ``-lineinfo``)."""
        out: dict[int, list[int]] = {}
        for k, ins in enumerate(self.instructions):
            if ins.loc is not None and ins.loc.file == 0:
                out.setdefault(ins.loc.line, []).append(k)
        return out

    def similar(self, name: str, limit: int = 3) -> list[int]:
        """Indices of the instructions closest to an opcode pattern that matches none (``HGMMA`` ->
        the HMMA; ``LDS.128`` -> the LDS.64 and LDS): the same opcode with fewer of the modifiers
        asked for first, then opcodes spelled alike (difflib ratio >= 0.6), in listing order."""
        import difflib

        words = [w.upper() for w in name.split(".") if w]
        if not words:
            return []
        op, mods = words[0], set(words[1:])
        alike: dict[str, float] = {}
        scored = []
        for k, ins in enumerate(self.instructions):
            o = ins.opcode.upper()
            if o == op:
                score = 2.0 + (len(mods & {m.upper() for m in ins.modifiers}) / len(mods) if mods else 0.0)
            else:
                r = alike.get(o)
                if r is None:
                    r = alike[o] = difflib.SequenceMatcher(None, op, o).ratio()
                if r < 0.6:
                    continue
                score = r
            scored.append((-score, k))
        return [k for _, k in sorted(scored)[:limit]]

    @cached_property
    def _ptx_locs(self) -> dict[int, object]:
        """PTX line -> the source location (``.loc``) of the PTX instruction on it."""
        out = {}
        fn = next((f for f in self.ptx.functions if f.name == self.name and f.body is not None), None) \
            if self.ptx is not None else None
        for ins in fn.instructions if fn is not None else ():
            if ins.loc is not None and ins.span.line not in out:
                out[ins.span.line] = ins.loc
        return out

    def where(self, k: int) -> str:
        """``SASS 12: LDS.128 R4, [R19] ; (PTX line 101: ld.shared.f32 %f2, [%r9]; source sgemm.cu:42)``:
        the instruction, the PTX line ptxas made it of (``-lineinfo``) and that line's CUDA/Triton
        source line where the PTX has ``.loc``."""
        ins = self.instructions[k]
        if ins.loc is None or ins.loc.file != 0:
            return f"SASS {k}: {ins}"
        line = ins.loc.line
        text = " ".join((self.ptx.source_line(line) or "").split()).rstrip(";") if self.ptx is not None else ""
        parts = [f"PTX line {line}" + (f": {text}" if text else "")]
        src = self._ptx_locs.get(line)
        if src is not None and src.line > 0:
            entry = self.ptx.files.get(src.file)
            parts.append(f"source {Path(entry.name).name if entry else f'file {src.file}'}:{src.line}")
        return f"SASS {k}: {ins} ({'; '.join(parts)})"

    def to_json(self) -> dict:
        r = self.resources
        return {
            "available": True,
            "registers": r.registers if r else None,
            "registers_allocated": r.registers_allocated if r else None,
            "spill_stores": r.spill_stores if r else None,
            "spill_loads": r.spill_loads if r else None,
            "shared_bytes": r.shared_bytes if r else None,
            "stack_bytes": r.stack_bytes if r else None,
            "barriers": r.barriers if r else None,
            "instructions": len(self.instructions),
            "opcodes": self.opcodes,
            "classes": self.classes,
            "line_info": self.line_info,
            "exact": "static counts of the listing; registers as ptxas -v reports them",
        }


@dataclass
class Listing:
    """A PTX module's SASS: the compile record, the parsed listing, and a view per kernel."""

    ptx: Module
    compiled: Compiled
    module: Module | None

    @cached_property
    def kernels(self) -> dict[str, SassKernel]:
        from .semantics import describe

        out = {}
        fns = {f.name: f for f in self.module.functions} if self.module is not None else {}
        with _gc_paused():
            for fn in self.ptx.kernels:
                sfn = fns.get(fn.name)
                infos = [describe(i) for i in sfn.instructions] if sfn is not None else []
                out[fn.name] = SassKernel(fn.name, sfn, self.module, self.compiled.resources.get(fn.name),
                                          self.compiled.line_info, infos, self.ptx)
        return out

    @cached_property
    def shared_plan(self) -> dict:
        """PTX line -> the shared accesses ptxas emitted for it (:mod:`isa.sass.shared`)."""
        from .shared import shared_plan

        return shared_plan(self.ptx, self.module) if self.module is not None else {}

    @cached_property
    def shared_merges(self) -> dict:
        """PTX line -> (lead line, SASS bytes per lane, PTX bytes per lane) of every shared access
        ptxas merged into a wider one (:func:`isa.sass.shared.shared_merges`)."""
        from .shared import shared_merges

        return shared_merges(self.ptx, self.module) if self.module is not None else {}

    def kernel(self, name: str) -> SassKernel:
        if name not in self.kernels:
            raise InputError(f"no kernel named '{name}' in the SASS of {self.ptx.path or 'the module'}")
        return self.kernels[name]


_LISTINGS: dict[int, tuple[Module, Listing]] = {}


def _ptx_module(module_or_path) -> Module:
    if isinstance(module_or_path, Module):
        return module_or_path
    import isa

    return isa.load(Path(module_or_path) if not isinstance(module_or_path, Path) else module_or_path)


def _text(module: Module) -> str:
    return module.source if module.source is not None else module.emit()


def parse_listing(listing: str, file: str, target: str | None, *, use_cache: bool = True) -> Module:
    """The IR of a SASS listing: from the on-disk cache (:mod:`isa.cache`, kind ``sass-module``,
    keyed by the listing's text, its file name and target, and the isa code) when this listing was
    parsed before, else parsed (:mod:`isa.sass.parser`, which imports Lark: ~0.05 s of CPU of a
    cold ``kernlens run --timing h200`` on a loaded machine, measured) and stored."""
    from .. import cache

    name = cache.key("sass-module", cache.code_version("isa"), file, target or "", listing) \
        if use_cache and cache.enabled() else None
    hit = cache.load("sass-module", name) if name else None
    if isinstance(hit, Module):
        return hit
    from .parser import parse

    module = parse(listing, file, target)
    if name:
        cache.store("sass-module", name, module)
    return module


def listings(modules, *, use_cache: bool = True, jobs: int | None = None) -> list[Listing]:
    """The SASS of several PTX modules (paths or :class:`isa.ir.Module`), compiled in batches
    (``jobs``: how many batches' tools run at once, :func:`isa.sass.compile.compile_many`)."""
    mods = [_ptx_module(m) for m in modules]
    out: list[Listing | None] = []
    todo = []
    for m in mods:
        hit = _LISTINGS.get(id(m))
        out.append(hit[1] if hit is not None and hit[0] is m else None)
        if out[-1] is None:
            todo.append(len(out) - 1)
    if todo:
        parsed: dict[int, Module | None] = {}

        def then(j: int, c: Compiled) -> None:     # parse while the other batches' tools run
            m = mods[todo[j]]
            parsed[j] = parse_listing(c.listing, (m.path or "<ptx>") + ".sass", c.target, use_cache=use_cache) \
                if c.listing else None

        with _gc_paused():
            compiled = compile_many([(_text(mods[i]), ptx_target(mods[i]), mods[i].path or "<ptx>") for i in todo],
                                    use_cache=use_cache, then=then, jobs=jobs)
        for j, (i, c) in enumerate(zip(todo, compiled)):
            lst = Listing(mods[i], c, parsed.get(j))
            _LISTINGS[id(mods[i])] = (mods[i], lst)
            out[i] = lst
    if len(_LISTINGS) > 256:
        for k in list(_LISTINGS)[:128]:
            _LISTINGS.pop(k, None)
    return out  # type: ignore[return-value]


def listing(module_or_path, *, use_cache: bool = True) -> Listing:
    """The SASS of one PTX module (compiled once per module object; cached on disk)."""
    return listings([module_or_path], use_cache=use_cache)[0]


def kernel(module_or_path, name: str) -> SassKernel:
    return listing(module_or_path).kernel(name)


def resources(module_or_path, kernel: str) -> Resources:
    """What ptxas allocated for ``kernel`` (registers, registers_allocated, spills, shared memory):
    the number the timing model's occupancy needs. Raises :class:`Unavailable` without ptxas."""
    lst = listing(module_or_path)
    r = lst.compiled.resources.get(kernel)
    if r is None:
        raise InputError(f"ptxas reported no kernel named '{kernel}'")
    return r


def shared_plan(module_or_path) -> dict:
    """PTX line -> ``((byte offset, bytes per lane), ...)`` of the shared-memory accesses ptxas
    emitted for it, for the simulator's bank model (``sim.memory.heat.MemoryHeat(shared_plan=...)``);
    lines absent cost their PTX access. Raises :class:`Unavailable` without ptxas."""
    return listing(module_or_path).shared_plan


def shared_merges(module_or_path) -> dict:
    """PTX line -> ``(lead line, SASS bytes per lane, PTX bytes per lane)`` of every shared access
    ptxas merged into a wider one (the timing model's merged loads, :mod:`sim.timing.vectorize`).
    Raises :class:`Unavailable` without ptxas."""
    return listing(module_or_path).shared_merges
