"""Write a big PTX module (~30 MB, ~7,000 kernels) by concatenating the corpus and example kernels,
renamed, for ``bench/big_file.py``. The output is a bench input, never committed.

Each source file contributes its module-level items (kernels, functions, globals) with every
module-level name, parameter and function-scope variable suffixed ``__cN`` so copies do not collide
(and are named as a real module's many kernels are: after their kernel); ``.file`` indices are renumbered so
each copy's ``.loc`` lines still name its own source; DWARF ``.section`` blocks are dropped. The
result uses the newest ``.version`` and the ``sm_90a`` target, which accept every source here.

Copies are not verbatim (:func:`vary`): the n-th copy of a source allocates its registers in
another order (a permutation of each declared range) and numbers its labels on as nvcc does in
one module (it computes what its source computes), so that the file repeats its lines about as much as real PTX does: one copy
of the corpus has ~44 % distinct statement lines, and this file ~45 % (``statements``; printed
by ``bench/big_file.py``): whatever a parse keeps by a line's text gains no more here than on real
code.

Run: .venv/bin/python bench/big_ptx.py OUT.ptx [--mb 30]
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_HEADER = re.compile(r"^\s*\.(version|target|address_size)\b.*$", re.M)
_FILE = re.compile(r"^(\s*\.file\s+)(\d+)", re.M)
_LOC = re.compile(r"(\.loc\s+)(\d+)")
_SECTION = re.compile(r"^\s*\.section\b", re.M)


def sources() -> list[Path]:
    files = sorted((ROOT.parent / "shared" / "corpus" / "ptx").glob("*.ptx"))
    files += sorted((ROOT / "examples" / "ptx").rglob("*.ptx"))
    return files


def pieces(files: list[Path] | None = None) -> list[tuple[str, list[str]]]:
    """(body text without header or DWARF, module-level names) of every source that parses and
    declares no external function (``vprintf`` would be declared once per copy)."""
    import isa

    out = []
    for p in sources() if files is None else files:
        text = p.read_text()
        if ".extern .func" in text:
            continue
        try:
            m = isa.load(p)
        except isa.KernlensError:
            continue
        if m.isa != "ptx" or not m.kernels:
            continue
        names = [f.name for f in m.functions] + [v.name for v in getattr(m, "variables", ())]
        for f in m.functions:     # parameters and a body's own variables: named after their kernel
            names += [v.name for v in f.params + f.returns] + _body_variables(f.body or ())
        names = [x for x in names if not _CALL_NAMES(x)]
        cut = _SECTION.search(text)
        body = _HEADER.sub("", text[: cut.start()] if cut else text)
        out.append((body, sorted(set(names), key=len, reverse=True)))
    return out


_RANGE = re.compile(r"(%[A-Za-z_]+)<(\d+)>")
# nvcc's labels, numbered across a module: ``$L__BB<function>_<block>``, ``$L__func_begin<f>``, ``$L__tmp<n>``
_LABEL = re.compile(r"(\$L__(?:BB|func_begin|func_end|tmp))(\d+)")


def vary(body: str, n: int) -> str:
    """The ``n``-th copy of a source's ``body`` (0: the body itself): the registers of every prefix
    declared as a range (``.reg .b32 %r<45>``: ``%r0``..``%r44``) renumbered by a permutation of
    that range (seeded by ``n``: another register allocation, the declarations unchanged; where
    functions declare several ranges, every one is mapped onto itself); nvcc's labels numbered
    ``1000 n`` on (as nvcc numbers them in a module of many functions). Each copy computes what
    its source computes (``kernlens run`` of a copy checks against the source's reference): the
    same instructions, types, addresses and control flow on other registers and labels."""
    if n == 0:
        return body
    rng = random.Random(n)
    sizes: dict[str, set[int]] = {}       # prefix -> every N of a `%prefix<N>` in the file
    for m in _RANGE.finditer(body):
        sizes.setdefault(m.group(1), set()).add(int(m.group(2)))
    if sizes:
        # each function declares its own N: the permutation keeps every [0, N) to itself
        perm = {}
        for p in sorted(sizes):
            order, lo = [], 0
            for hi in sorted(sizes[p]):
                block = list(range(lo, hi))
                rng.shuffle(block)
                order += block
                lo = hi
            perm[p] = order
        use = re.compile(r"(" + "|".join(map(re.escape, sorted(sizes, key=len, reverse=True))) + r")(\d+)(?![\w$])")

        def renumber(m):
            k, order = int(m.group(2)), perm[m.group(1)]
            return m.group(1) + str(order[k] if k < len(order) else k)

        body = use.sub(renumber, body)
    return _LABEL.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + 1000 * n}", body)


# a call sequence's own names (``.param .b64 param0;``, ``retval0``), the same in every call of a
# real module, are not renamed; every other function-scope variable is (``__local_depot3``, smem)
_CALL_NAMES = re.compile(r"(param|retval)\d+$").match


def _body_variables(body) -> list[str]:
    import isa.ir as ir

    out = []
    for s in body:
        if type(s) is ir.Variable:
            out.append(s.name)
        elif type(s) is ir.Scope:
            out += _body_variables(s.body)
    return out


def build(target_mb: float = 30.0, files: list[Path] | None = None) -> tuple[str, int]:
    """The big module's text and its number of kernels (from ``files``, default :func:`sources`)."""
    parts = pieces(files)
    out = [".version 8.7\n.target sm_90a\n.address_size 64\n\n"]
    size, copy, kernels, file_base = 0, 0, 0, 0
    n = 0                                   # the copy of each source being written
    while size < target_mb * 1e6:
        for body, names in parts:
            sfx = f"__c{copy}"
            # (strings are kept: a .file path is not a name)
            pat = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<![%\w$.])(' + "|".join(map(re.escape, names)) + r")(?![\w$])")
            text = vary(pat.sub(lambda mo: mo.group(0) if mo.group(1) is None else mo.group(1) + sfx, body), n)
            files = [int(n) for n in _FILE.findall(text) for n in [n[1]]]
            if files:
                base = file_base
                text = _FILE.sub(lambda mo: mo.group(1) + str(int(mo.group(2)) + base), text)
                text = _LOC.sub(lambda mo: mo.group(1) + str(int(mo.group(2)) + base), text)
                file_base += max(files)
            kernels += len(re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s", text, re.M))
            out.append(text)
            size += len(text)
            copy += 1
        n += 1
    return "".join(out), kernels


def one_copy(files: list[Path] | None = None) -> str:
    """Every source's body once, as written: how repetitive real kernels are."""
    return "".join(body for body, _ in pieces(files))


def statements(text: str) -> tuple[int, int]:
    """(statement lines, distinct ones): the non-blank, non-comment lines, compared after their
    leading and trailing blanks. How repetitive a file is."""
    seen: set[str] = set()
    n = 0
    for line in text.split("\n"):
        s = line.strip()
        if s and not s.startswith("//"):
            n += 1
            seen.add(s)
    return n, len(seen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=30.0)
    args = ap.parse_args()
    text, kernels = build(args.mb)
    Path(args.out).write_text(text)
    n, distinct = statements(text)
    print(f"{args.out}: {len(text) / 1e6:.1f} MB, {kernels} kernels, {text.count(chr(10)):,} lines, "
          f"{n:,} statement lines of which {distinct:,} distinct ({distinct / n:.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
