"""Registers per thread of a PTX kernel, for occupancy: ``ptxas -v`` when it is on the PATH,
else an estimate from the PTX; the answer says which (``source``)::

    ptxas -v -arch=sm_90 sgemm_vec4.sm_90.ptx  ->  "ptxas info    : Used 54 registers, ..."
    registers_per_thread(module, "sgemm_vec4")  ->  Registers(54, "ptxas")

The estimate (no ptxas): the most 32-bit values live at once when each virtual register lives from
its first to its last appearance in program order (64-bit registers count 2, predicates 0), plus
a few for addresses and the stack pointer; it is labelled ``estimated``.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class Registers:
    per_thread: int
    source: str          # 'ptxas' or 'estimated'


_USED = re.compile(r"Compiling entry function '([^']+)'.*?Used (\d+) registers", re.S)


@lru_cache(maxsize=64)
def _ptxas(text_hash: str, text: str, arch: str) -> dict[str, int]:
    exe = shutil.which("ptxas")
    if exe is None:
        return {}
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "k.ptx"
        src.write_text(text)
        try:
            p = subprocess.run([exe, "-v", f"-arch={arch}", str(src), "-o", str(Path(d) / "k.cubin")],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return {}
    out = p.stdout + p.stderr
    res = {}
    for block in out.split("ptxas info    : Compiling entry function")[1:]:
        m = re.match(r" '([^']+)'", block)
        u = re.search(r"Used (\d+) registers", block)
        if m and u:
            res[m.group(1)] = int(u.group(1))
    return res


def _arch(module) -> str:
    for t in getattr(module, "targets", ()) or ():
        if t.startswith("sm_"):
            return t
    return "sm_90"


def registers_per_thread(module, kernel: str) -> Registers:
    text = getattr(module, "source", None)
    if text:
        got = _ptxas(hashlib.sha1(text.encode()).hexdigest(), text, _arch(module))
        if kernel in got:
            return Registers(max(1, got[kernel]), "ptxas")
    return Registers(estimate(module.function(kernel)), "estimated")


def estimate(fn) -> int:
    from isa.semantics import registers

    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for i, ins in enumerate(fn.instructions):
        u = registers(ins)
        for r in u.reads + u.writes:
            first.setdefault(r, i)
            last[r] = i
    width = {}
    for d in fn.declarations if hasattr(fn, "declarations") else ():
        t = getattr(d, "type", None)
        for n in getattr(d, "names", ()) or ():
            width[n] = t
    n = len(fn.instructions) + 1
    delta = [0] * (n + 1)
    for r, a in first.items():
        w = 2 if r.startswith("%rd") or r.startswith("%fd") else (0 if r.startswith("%p") else 1)
        delta[a] += w
        delta[last[r] + 1] -= w
    live = best = 0
    for d in delta:
        live += d
        best = max(best, live)
    return int(min(255, max(16, best + 6)))


__all__ = ["Registers", "registers_per_thread", "estimate"]
