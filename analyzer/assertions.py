"""Instruction assertions for tests (the pytest plugin's fixtures return a :class:`KernelCheck`).

Each check reads like the intent and raises :class:`KernelAssertionError` (an ``AssertionError``)
naming the kernel, the expectation, what was found and the closest candidates with source lines::

    k = KernelCheck.load("gemm.sm_90.ptx", kernel="gemm")
    k.uses("TENSOR_CORE", at_least=1)          # a class or an opcode pattern
    k.uses("ld.shared.v4", exactly=8)
    k.never_uses("FP32_FMA")
    k.sequence("ld.shared", "mma", "bar.sync")                      # in order, gaps allowed
    k.sequence("ld.global", "NEXT: ld.global", "NOT: bar.sync", "st.global")   # FileCheck style
    k.in_innermost_loop("mma.sync")
    k.intensity_at_least(4.0)
    k.no_spills()
    k.sass.uses("HGMMA").uses("LDS.128", at_least=2).no_spills().registers_at_most(128)   # what ptxas made
"""

from __future__ import annotations

from pathlib import Path

from isa.errors import InputError

from .dataflow import Launch
from .params import parse_dims, resolve
from .patterns import Expectation
from .report import KernelReport, analyze_function


class KernelAssertionError(AssertionError):
    """A failed instruction assertion; ``str()`` is the full explanation."""


class KernelCheck:
    """Assertions over one analysed kernel."""

    def __init__(self, report: KernelReport):
        self.report = report

    @classmethod
    def load(cls, path_or_text, kernel: str | None = None, *, params: dict | None = None,
             grid=None, block=None, machine: str = "h200", sass: bool = False) -> "KernelCheck":
        import isa

        module = isa.load(path_or_text)
        if kernel is None:
            if len(module.kernels) != 1:
                names = ", ".join(k.name for k in module.kernels) or "none"
                raise InputError(f"give kernel= to choose one of the kernels: {names}")
            fn = module.kernels[0]
        else:
            fn = module.function(kernel)
        g = parse_dims(",".join(map(str, grid)) if isinstance(grid, (tuple, list)) else grid, "grid")
        b = parse_dims(",".join(map(str, block)) if isinstance(block, (tuple, list)) else block, "block")
        p = resolve(module, fn, dict(params or {}))
        return cls(analyze_function(module, fn, params=p, launch=Launch(g, b), machine=machine, sass=sass))

    # ---- helpers ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.report.name

    def count(self, name: str) -> int:
        return self.report.count(name)

    def _fail(self, expectation: str, found: str, candidates: list[int], what: str = "closest candidates"):
        __tracebackhide__ = True
        lines = [f"kernel '{self.name}' ({self.report.path}): expected {expectation}, found {found}"]
        if candidates:
            lines.append(f"  {what}:")
            lines += ["    " + self.report.where(k) for k in candidates[:5]]
        raise KernelAssertionError("\n".join(lines))

    def _expect(self, name: str, op: str, n: int) -> "KernelCheck":
        __tracebackhide__ = True
        outcome = self.report.check([Expectation(name, op, n, f"{name}{op}{n}")])[0]
        if not outcome.holds:
            shown = outcome.nearest if not outcome.matches else outcome.matches
            self._fail(f"{name} {op} {n}", str(outcome.found), shown,
                       "closest candidates" if not outcome.matches else "matching instructions")
        return self

    # ---- checks -----------------------------------------------------------------------------

    def uses(self, name: str, *, at_least: int | None = None, at_most: int | None = None,
             exactly: int | None = None) -> "KernelCheck":
        """``name`` (class or opcode pattern) occurs at least / at most / exactly N times (static)."""
        __tracebackhide__ = True
        if exactly is not None:
            return self._expect(name, "==", exactly)
        if at_least is None and at_most is None:
            at_least = 1
        if at_least is not None:
            self._expect(name, ">=", at_least)
        if at_most is not None:
            self._expect(name, "<=", at_most)
        return self

    def never_uses(self, name: str) -> "KernelCheck":
        __tracebackhide__ = True
        return self._expect(name, "==", 0)

    def sequence(self, *steps: str) -> "KernelCheck":
        """Instructions in program order, FileCheck style: a plain step is found after the previous
        match with any gap (CHECK), ``NEXT: x`` must be the very next instruction (CHECK-NEXT), and
        ``NOT: x`` must not occur between the surrounding matches (CHECK-NOT)."""
        __tracebackhide__ = True
        ins = self.report.instructions
        pos = -1
        pending_not: list[str] = []
        matched: list[int] = []
        for step in steps:
            kind, _, pat = step.partition(":") if step.split(":")[0] in ("NEXT", "NOT") else ("", "", step)
            pat = pat.strip()
            if kind == "NOT":
                pending_not.append(pat)
                continue
            hits = set(self.report.matching(pat))
            if kind == "NEXT":
                k = pos + 1
                if k not in hits:
                    self._fail(f"'{pat}' right after line {ins[pos].span.line if pos >= 0 else 0} "
                               f"(sequence {' ; '.join(steps)})",
                               f"'{ins[k].full_opcode}'" if k < len(ins) else "the end of the kernel",
                               [k] if k < len(ins) else [], "instruction found there")
            else:
                later = [k for k in sorted(hits) if k > pos]
                if not later:
                    earlier = sorted(hits)
                    self._fail(f"'{pat}' after line {ins[pos].span.line if pos >= 0 else 0} "
                               f"(sequence {' ; '.join(steps)})",
                               f"{len(earlier)} before that point and none after" if earlier else "none",
                               earlier[-3:] if earlier else self.report.nearest(pat),
                               "earlier matches" if earlier else "closest candidates")
                k = later[0]
            for npat in pending_not:
                bad = [j for j in self.report.matching(npat) if pos < j < k]
                if bad:
                    self._fail(f"no '{npat}' between lines {ins[pos].span.line if pos >= 0 else 0} and "
                               f"{ins[k].span.line} (sequence {' ; '.join(steps)})", f"{len(bad)}", bad,
                               "offending instructions")
            pending_not = []
            pos = k
            matched.append(k)
        for npat in pending_not:
            bad = [j for j in self.report.matching(npat) if j > pos]
            if bad:
                self._fail(f"no '{npat}' after line {ins[pos].span.line if pos >= 0 else 0}", f"{len(bad)}", bad,
                           "offending instructions")
        return self

    def in_innermost_loop(self, name: str) -> "KernelCheck":
        """Some instruction matching ``name`` sits in a loop of the kernel's greatest nesting depth."""
        __tracebackhide__ = True
        hits = self.report.matching(name)
        depth = self.report.cfg.max_depth
        inner = [k for k in hits if depth > 0 and self.report.loop_depth(k) == depth]
        if not inner:
            where = ", ".join(f"line {self.report.instructions[k].span.line} at depth {self.report.loop_depth(k)}"
                              for k in hits[:5]) or "no matching instruction"
            self._fail(f"{name} inside the innermost loop (depth {depth})", where,
                       hits or self.report.nearest(name), "matching instructions" if hits else "closest candidates")
        return self

    def intensity_at_least(self, x: float) -> "KernelCheck":
        __tracebackhide__ = True
        dyn = self.report.dynamic()
        v = dyn["intensity"]["value"]
        if v is None or v < x:
            exact = "" if dyn["intensity"]["exact"] else " (estimate)"
            top = sorted(((k, i) for k, i in enumerate(self.report.infos) if i.space == "global" and i.bytes),
                         key=lambda t: -t[1].bytes)
            self._fail(f"arithmetic intensity >= {x} FLOP/B", f"{'none' if v is None else f'{v:.3g}'}{exact}",
                       [k for k, _ in top], "global-memory instructions")
        return self

    def no_spills(self) -> "KernelCheck":
        __tracebackhide__ = True
        hits = self.report.matching("SPILL")
        if hits:
            self._fail("no local-memory spills", f"{len(hits)} local-memory instructions", hits,
                       "spilling instructions")
        return self

    @property
    def sass(self) -> "SassCheck":
        """The same checks on the SASS ptxas makes of the kernel (needs ptxas and nvdisasm: under
        pytest the test is skipped, with the reason, where they are not installed)."""
        if self.report.sass is None:
            from .report import attach_sass

            attach_sass(self.report)
            if self.report.sass is None:
                from isa.sass import Unavailable

                try:
                    import pytest
                except ImportError:  # pragma: no cover - assertions used outside pytest
                    raise Unavailable(self.report.sass_note) from None
                pytest.skip(self.report.sass_note)
        return SassCheck(self)


class SassCheck:
    """Assertions over a kernel's SASS: ``k.sass.uses("HGMMA")``, ``k.sass.never_uses("LDL")``."""

    def __init__(self, parent: KernelCheck):
        self.parent = parent
        self.kernel = parent.report.sass

    def _fail(self, expectation: str, found: str, hits: list[int], what: str):
        __tracebackhide__ = True
        lines = [f"kernel '{self.parent.name}' ({self.parent.report.path}) SASS: expected {expectation}, found {found}"]
        if hits:
            lines.append(f"  {what}:")
            lines += ["    " + self.kernel.where(k) for k in hits[:5]]
        raise KernelAssertionError("\n".join(lines))

    def count(self, name: str) -> int:
        return self.kernel.count(name)

    def uses(self, name: str, *, at_least: int | None = None, at_most: int | None = None,
             exactly: int | None = None) -> "SassCheck":
        """A SASS class (``TENSOR_CORE``, ``LOAD_SHARED_128``) or opcode pattern (``HGMMA``,
        ``LDS.128``) occurs at least / at most / exactly N times in the listing."""
        __tracebackhide__ = True
        hits = self.kernel.matching(name)
        n = len(hits)
        if exactly is not None and n != exactly:
            self._fail(f"{name} == {exactly}", str(n), hits, "matching instructions")
        if exactly is None and at_least is None and at_most is None:
            at_least = 1
        if at_least is not None and n < at_least:
            if not hits:
                from .report import sass_nearest

                self._fail(f"{name} >= {at_least}", str(n), sass_nearest(self.kernel, name), "nearest instructions")
            self._fail(f"{name} >= {at_least}", str(n), hits, "matching instructions")
        if at_most is not None and n > at_most:
            self._fail(f"{name} <= {at_most}", str(n), hits, "matching instructions")
        return self

    def never_uses(self, name: str) -> "SassCheck":
        __tracebackhide__ = True
        return self.uses(name, exactly=0)

    def no_spills(self) -> "SassCheck":
        __tracebackhide__ = True
        r = self.kernel.resources
        if r is not None and (r.spill_stores or r.spill_loads):
            self._fail("no register spills", f"{r.spill_stores} B spill stores, {r.spill_loads} B spill loads",
                       self.kernel.matching("SPILL"), "local-memory instructions")
        return self

    def registers_at_most(self, n: int) -> "SassCheck":
        __tracebackhide__ = True
        r = self.kernel.resources
        if r is not None and r.registers > n:
            self._fail(f"at most {n} registers per thread", f"{r.registers} (ptxas -v)", [], "")
        return self


def load(path_or_text, kernel: str | None = None, **options) -> KernelCheck:
    return KernelCheck.load(Path(path_or_text) if isinstance(path_or_text, Path) else path_or_text, kernel, **options)
