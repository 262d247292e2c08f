"""The inspector's data: files, their kernels, and each kernel's lines with annotations.

Nothing here imports Textual; the app builds views from these objects, and tests read them
directly. :func:`load_file` never raises for bad input: a file that does not parse becomes a
:class:`LoadedFile` whose ``error`` is the :class:`isa.errors.KernlensError` to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import isa
from isa.errors import InputError, KernlensError, Span
from isa.ir import Function, Module

from . import corpus as corpus_mod
from .analysis import KernelAnalysis, analyse
from .sources import SourceHit, find_source, guess_source, read_lines

_COMMENT = re.compile(r"//.*$")


def kernel_range(lines: list[str], start: int) -> tuple[int, int]:
    """1-based first and last line of the function whose header is on line ``start``: from the
    header to the brace that closes its body (block comments are not special-cased)."""
    depth, opened = 0, False
    for i in range(start - 1, len(lines)):
        text = _COMMENT.sub("", lines[i])
        for ch in text:
            if ch == "{":
                depth += 1
                opened = True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return start, i + 1
    return start, len(lines)


@dataclass
class KernelDoc:
    """One kernel as the views show it."""

    path: str
    module: Module
    fn: Function
    first_line: int
    lines: list[str]
    corpus: corpus_mod.CorpusInfo | None
    source_dirs: tuple[str, ...] = ()
    params: dict = field(default_factory=dict)
    _analysis: KernelAnalysis | None = None
    # results of the Run and Timeline tabs, kept so that switching kernels does not lose them
    heat: dict[int, float] = field(default_factory=dict)   # PTX line -> 0..1 for the heat column
    run_text: str = ""
    sim: object | None = None        # tui.runs.SimResult of the last simulator run
    timeline: object | None = None   # tui.timeline.TimelineRun (Ascend-like kernels)
    # the SASS pane: rows (listing text, PTX line) and a note (why there is none, or a summary)
    sass_rows: tuple | None = None
    sass_note: str = ""

    @property
    def name(self) -> str:
        return self.fn.name

    @property
    def isa(self) -> str:
        return self.module.isa

    @property
    def key(self) -> str:
        return f"{self.path}::{self.fn.name}"

    @property
    def last_line(self) -> int:
        return self.first_line + len(self.lines) - 1

    @property
    def analysis(self) -> KernelAnalysis:
        if self._analysis is None:
            self._analysis = analyse(self.module, self.fn, self.corpus, self.params)
        return self._analysis

    @cached_property
    def instr_line(self) -> list[int]:
        """Instruction index -> its PTX line number."""
        return [ins.span.line for ins in self.fn.instructions]

    @cached_property
    def line_instrs(self) -> dict[int, list[int]]:
        """PTX line number -> indices of the instructions on it."""
        out: dict[int, list[int]] = {}
        for i, ln in enumerate(self.instr_line):
            out.setdefault(ln, []).append(i)
        return out

    def index_of_line(self, line_no: int) -> int:
        """Row index in :attr:`lines` of PTX line ``line_no`` (clamped into the kernel)."""
        return min(max(line_no - self.first_line, 0), len(self.lines) - 1)

    # -- high-level source ----------------------------------------------------------------

    @cached_property
    def source_files(self) -> dict[int, SourceHit]:
        """``.file`` index -> where that file was found (or where we looked)."""
        return {idx: find_source(fe.name, self.path, self.source_dirs) for idx, fe in self.module.files.items()}

    @cached_property
    def main_source(self) -> SourceHit | None:
        """The source to show beside the code: the file most ``.loc`` lines point at, else a file
        named like the assembly's stem."""
        counts: dict[int, int] = {}
        for ins in self.fn.instructions:
            if ins.loc is not None:
                counts[ins.loc.file] = counts.get(ins.loc.file, 0) + 1
        if counts:
            best = max(counts, key=counts.get)
            hit = self.source_files.get(best)
            if hit is not None:
                return hit
        return guess_source(self.path, self.source_dirs)

    def loc_of(self, line_no: int) -> tuple[str, int] | None:
        """``(file name, line)`` of the CUDA/Triton line that PTX line ``line_no`` came from."""
        for i in self.line_instrs.get(line_no, ()):
            loc = self.fn.instructions[i].loc
            if loc is not None:
                fe = self.module.files.get(loc.file)
                return (fe.name if fe else f"file {loc.file}", loc.line)
        return None

    def source_text(self) -> tuple[str, ...]:
        hit = self.main_source
        return read_lines(str(hit.path)) if hit and hit.path else ()

    def search(self, query: str) -> list[int]:
        """Row indices whose text contains ``query`` (case-insensitive), or whose instruction
        matches it as an opcode pattern of the analyzer (:mod:`analyzer.patterns`: modifiers in
        any order, type words in order, ``ld.shared`` finds ``ld.shared::cta.u32``, and
        ``cvt.f16.f32`` does not find ``cvt.f32.f16``), or whose class label contains it."""
        q = query.strip().lower()
        if not q:
            return []
        from analyzer.patterns import compile_pattern
        from isa.errors import KernlensError

        try:
            pattern = compile_pattern(q, self.module.isa)
        except KernlensError:       # not an opcode pattern ('%r12', '[%rd4]'): text only
            pattern = None
        isa = self.module.isa
        hits = []
        fn_instrs = self.fn.instructions
        notes = self.analysis.notes
        for row, text in enumerate(self.lines):
            if q in text.lower():
                hits.append(row)
                continue
            for i in self.line_instrs.get(self.first_line + row, ()):
                if (pattern is not None and pattern.matches(fn_instrs[i], isa)) \
                        or (i < len(notes) and q in notes[i].label):
                    hits.append(row)
                    break
        return hits


class LazyKernelDoc(KernelDoc):
    """A kernel of a big PTX file, parsed (alone, beside the module-level items: :mod:`isa.ptx.chunks`)
    the first time its IR is asked for; its name, lines and place in the file come from the scan."""

    def __init__(self, path: str, name: str, text: str, found, first: int, lines: list[str], corpus, source_dirs,
                 params):
        self._name, self._text, self._found = name, text, found
        self._module = self._fn = None
        super().__init__(path, None, None, first, lines, corpus, source_dirs, params)

    __eq__ = object.__eq__               # not the dataclass's field comparison: that would parse
    __hash__ = object.__hash__

    @property
    def parsed(self) -> bool:
        return self._fn is not None

    def _parse(self) -> None:
        from dataclasses import replace

        from isa.ptx import chunks
        from isa.ptx.parser import parse

        module = parse(chunks.select(self._text, {self._name}, self._found), self.path)
        self._module = replace(module, source=self._text)
        self._fn = next(f for f in self._module.kernels if f.name == self._name)

    @property  # type: ignore[override]
    def module(self) -> Module:
        if self._fn is None:
            self._parse()
        return self._module

    @module.setter
    def module(self, value) -> None:
        if value is not None:
            self._module = value

    @property  # type: ignore[override]
    def fn(self) -> Function:
        if self._fn is None:
            self._parse()
        return self._fn

    @fn.setter
    def fn(self, value) -> None:
        if value is not None:
            self._fn = value

    @property
    def name(self) -> str:
        return self._name

    @property
    def isa(self) -> str:
        return "ptx"


@dataclass
class LoadedFile:
    path: str
    module: Module | None = None
    error: KernlensError | None = None
    kernels: list[KernelDoc] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return Path(self.path).name


#: Files with more kernels than this are analysed kernel by kernel as each is opened, not at load.
EAGER_KERNELS = 64


def load_file(path: str, source_dirs=(), params: dict | None = None, analyse_now: bool = True,
              kernel: str | None = None) -> LoadedFile:
    """Parse ``path`` and prepare its kernels (analysis included unless ``analyse_now`` is False,
    or the file has more than :data:`EAGER_KERNELS` kernels). With ``kernel``, a PTX file's other
    kernel definitions are not parsed at all (:mod:`isa.ptx.chunks`): one kernel of a big file
    opens at once."""
    import time

    t0 = time.perf_counter()
    if kernel is None and Path(path).suffix.lower() == ".ptx":
        lazy = _load_lazily(path, source_dirs, params, t0)
        if lazy is not None:
            return lazy
    try:
        module = isa.load(Path(path), kernels=[kernel] if kernel else None)
    except KernlensError as exc:
        if exc.source_line is None and exc.span is not None and exc.span.line:
            try:
                exc.source_line = Path(path).read_text(errors="replace").splitlines()[exc.span.line - 1]
            except (OSError, IndexError):
                pass
        return LoadedFile(path, error=exc, seconds=time.perf_counter() - t0)
    except RecursionError:
        return LoadedFile(path, error=InputError("input nests too deeply to parse", Span(path)))
    text_lines = (module.source or "").splitlines()
    lf = LoadedFile(path, module)
    analyse_now = analyse_now and len(module.kernels) <= EAGER_KERNELS
    for fn in module.kernels:
        first, last = kernel_range(text_lines, fn.span.line) if fn.span.line else (1, len(text_lines))
        doc = KernelDoc(path, module, fn, first, text_lines[first - 1:last],
                        corpus_mod.lookup(path, fn.name), tuple(str(d) for d in source_dirs), dict(params or {}))
        if analyse_now:
            doc.analysis  # noqa: B018 - compute once, here, in the loading worker
        lf.kernels.append(doc)
    if not lf.kernels:
        from isa import KERNEL_DIRECTIVE

        lf.error = InputError(f"no kernel ({KERNEL_DIRECTIVE.get(module.isa, '.entry')}) in {Path(path).name}",
                              Span(path))
    lf.seconds = time.perf_counter() - t0
    return lf


#: PTX files longer than this open lazily: each kernel is parsed when first shown
LAZY_CHARS = 4 << 20


def _load_lazily(path: str, source_dirs, params, t0: float) -> LoadedFile | None:
    """A big PTX file's kernels from the brace scan, each parsed when first shown (the first one
    now, so that a file whose module-level text does not parse shows its error at once); None
    for a small file (parsed whole, as before) or one that cannot be read."""
    import time

    from isa.ptx import chunks

    try:
        text = isa.read_text(path)
    except KernlensError:
        return None
    if len(text) <= LAZY_CHARS or isa.detect_isa(text, path) != "ptx":
        return None
    found = chunks.entries(text)
    if not found:
        return None
    text_lines = text.splitlines()
    lf = LoadedFile(path)
    dirs = tuple(str(d) for d in source_dirs)
    for e in found:
        last = e.line + text.count("\n", e.start, e.end)
        lf.kernels.append(LazyKernelDoc(path, e.name, text, found, e.line, text_lines[e.line - 1:last],
                                        corpus_mod.lookup(path, e.name), dirs, dict(params or {})))
    try:
        lf.module = lf.kernels[0].module
    except KernlensError as exc:
        return LoadedFile(path, error=exc, seconds=time.perf_counter() - t0)
    lf.seconds = time.perf_counter() - t0
    return lf


def load_sass(doc: KernelDoc) -> tuple[tuple, str]:
    """(rows, note) of the SASS pane: each row ``(text, PTX line)`` (labels have no line), and a
    one-line summary, or the note saying why there is no SASS (no ptxas/nvdisasm, a non-PTX file,
    ptxas refusing the file). Compiles through ``isa.sass`` (cached on disk); never raises."""
    if doc.module.isa != "ptx":
        return (), "SASS exists for PTX kernels only"
    import isa.sass
    from isa.ir import Label
    from isa.sass.parser import offset

    note = isa.sass.note()
    if note:
        return (), note
    try:
        k = isa.sass.kernel(doc.module, doc.name)
    except KernlensError as exc:
        return (), exc.render().splitlines()[0]
    if k.function is None:
        return (), f"no SASS function named {doc.name} in the listing"
    rows = []
    for s in k.function.body or ():
        if isinstance(s, Label):
            rows.append((f"{s.name}:", None))
            continue
        off = offset(k.module, s)
        line = s.loc.line if s.loc is not None and s.loc.file == 0 else None
        rows.append((f"/*{off:04x}*/ {s}" if off is not None else str(s), line))
    r = k.resources
    summary = (f"{len(k.instructions)} SASS instructions · {r.registers} registers (allocated "
               f"{r.registers_allocated}) · spills {r.spill_stores}/{r.spill_loads} B" if r else
               f"{len(k.instructions)} SASS instructions")
    return tuple(rows), summary
