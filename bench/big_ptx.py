"""Write a big PTX module (~30 MB, ~7,000 kernels) by concatenating the corpus and example kernels,
renamed, for ``bench/big_file.py``. The output is a bench input, never committed.

Each source file contributes its module-level items (kernels, functions, globals) with every
module-level name suffixed ``__cN`` so copies do not collide; ``.file`` indices are renumbered so
each copy's ``.loc`` lines still name its own source; DWARF ``.section`` blocks are dropped. The
result uses the newest ``.version`` and the ``sm_90a`` target, which accept every source here.

Run: .venv/bin/python bench/big_ptx.py OUT.ptx [--mb 30]
"""

from __future__ import annotations

import argparse
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
        cut = _SECTION.search(text)
        body = _HEADER.sub("", text[: cut.start()] if cut else text)
        out.append((body, sorted(set(names), key=len, reverse=True)))
    return out


def build(target_mb: float = 30.0, files: list[Path] | None = None) -> tuple[str, int]:
    """The big module's text and its number of kernels (from ``files``, default :func:`sources`)."""
    parts = pieces(files)
    out = [".version 8.7\n.target sm_90a\n.address_size 64\n\n"]
    size, copy, kernels, file_base = 0, 0, 0, 0
    while size < target_mb * 1e6:
        for body, names in parts:
            sfx = f"__c{copy}"
            pat = re.compile(r"(?<![%\w$.])(" + "|".join(map(re.escape, names)) + r")(?![\w$])")
            text = pat.sub(lambda mo: mo.group(1) + sfx, body)
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
    return "".join(out), kernels


def statements(text: str) -> tuple[int, int]:
    """(statement lines, distinct ones): the non-blank, non-comment lines, compared after their
    leading and trailing blanks. How repetitive a file is: what the parser's statement memo
    (``isa.ptx.parser.StatementMemo``, a big file's later batches) exploits."""
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
