"""The corpus manifest's instruction families as analyzer patterns, and the check that the analyzer's
static counts agree with the manifest's ``expect`` and ``static_counts``.

The manifest counts PTX statements by opcode regex (``conventions.static_counts``); each family
here is a union of opcode patterns (see :mod:`analyzer.patterns`) that selects the same statements.
Names that are plain opcode patterns map to themselves; the others are spelled out::

    "wgmma"                    -> wgmma.mma_async            (fence/commit/wait are their own family)
    "div.approx/full"          -> div.approx | div.full
    "fma.f32(any rounding)"    -> fma.f32
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .patterns import compile_pattern, parse_expectation

FAMILY_PATTERNS: dict[str, tuple[str, ...]] = {
    "wgmma": ("wgmma.mma_async",),
    "wgmma.fence/commit/wait": ("wgmma.fence", "wgmma.commit_group", "wgmma.wait_group"),
    "div.approx/full": ("div.approx", "div.full"),
    "fma.f32(any rounding)": ("fma.f32",),
    "mad/mul/add.f16": ("mad.f16", "mul.f16", "add.f16"),
    "_statements": (),
}


def family_patterns(family: str) -> tuple[str, ...]:
    return FAMILY_PATTERNS.get(family, (family,))


def count_family(report, family: str) -> int:
    """Static count of a manifest family in a kernel report."""
    if family == "_statements":
        return len(report.instructions)
    pats = [compile_pattern(p) for p in family_patterns(family)]
    return sum(1 for ins in report.instructions if any(p.matches(ins) for p in pats))


def expectations_for(entry: dict, target: str) -> list:
    """The manifest's ``expect`` for one target as analyzer expectations (``mma.sync>=1``)."""
    out = []
    for family, rule in entry.get("expect", {}).get(target, {}).items():
        pats = family_patterns(family)
        if len(pats) == 1:
            out.append(parse_expectation(f"{pats[0]}{rule}"))
    return out


@dataclass(frozen=True)
class Mismatch:
    entry: str
    target: str
    family: str
    manifest: str
    found: int

    def __str__(self) -> str:
        return f"{self.entry} [{self.target}] {self.family}: manifest {self.manifest}, analyzer found {self.found}"


def check_manifest(corpus: Path, **options) -> tuple[int, list[Mismatch]]:
    """Analyse every manifest entry and target; return (checks made, mismatches)."""
    import isa

    from .report import analyze_function

    data = json.loads((corpus / "manifest.json").read_text())
    checks, bad = 0, []
    for e in data["entries"]:
        for target, rel in e["ptx"].items():
            module = isa.load(corpus / rel)
            report = analyze_function(module, module.function(e["entry"]), **options)
            for family, n in e.get("static_counts", {}).get(target, {}).items():
                checks += 1
                got = count_family(report, family)
                if got != n:
                    bad.append(Mismatch(e["name"], target, family, str(n), got))
            for family, rule in e.get("expect", {}).get(target, {}).items():
                checks += 1
                got = count_family(report, family)
                ok = parse_expectation(f"x{rule}").holds(got)
                if not ok:
                    bad.append(Mismatch(e["name"], target, family, rule, got))
    return checks, bad
