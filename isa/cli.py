"""``kernlens fmt FILE``: parse a kernel file and print it back in canonical form.

A big PTX file (more than :data:`STREAM_CHARS`) is parsed batch by batch of its kernels
(:func:`isa.ptx.chunks.batches`) and written as each batch is done: the same output as the
whole-file parse, in the memory of one batch.
"""

from __future__ import annotations

import sys
from pathlib import Path

from . import load
from .errors import InputError

#: PTX files longer than this are formatted batch by batch of kernels
STREAM_CHARS = 4 << 20
#: about how much kernel text one batch parses at a time
BATCH_CHARS = 1 << 20


def register(sub) -> None:
    p = sub.add_parser("fmt", help="parse assembly and print it back (canonical layout)",
                       description="Parse a PTX or Ascend-like assembly file and print it in canonical form.")
    p.add_argument("file", help="assembly file (.ptx, or .asm for the Ascend-like ISA)")
    p.add_argument("--lenient", action="store_true", help="unknown opcodes/modifiers are warnings, not errors")
    p.add_argument("-o", "--output", help="write here instead of standard output")
    p.set_defaults(func=run)


def _report(module, diagnostics: list, seen: set) -> None:
    for d in diagnostics:
        key = (d.span, str(d))
        if key in seen:        # a module-level item's warning comes once, not once per batch
            continue
        seen.add(key)
        line = module.source_line(d.span.line) if d.span else None
        sys.stderr.write(d.render(line) + "\n")


def _pieces(args):
    """The output's text, piece by piece (one piece for a small file)."""
    import isa
    from isa.ptx import chunks

    from .emit import emit_header, emit_item

    text = isa.read_text(Path(args.file))
    seen: set = set()
    if len(text) <= STREAM_CHARS or isa.detect_isa(text, args.file) != "ptx":
        diagnostics: list = []
        module = isa.loads(text, args.file, lenient=args.lenient, diagnostics=diagnostics)
        _report(module, diagnostics, seen)
        yield module.emit()
        return
    found = chunks.entries(text)
    done_to = 0                      # module-level items up to this line were written
    batches = list(chunks.batches(text, max_chars=BATCH_CHARS, found=found))
    by_name = {e.name: e for e in found}
    for k, (names, piece) in enumerate(batches):
        diagnostics = []
        module = isa.loads(piece, args.file, lenient=args.lenient, diagnostics=diagnostics)
        _report(module, diagnostics, seen)
        last = len(text) if k == len(batches) - 1 else by_name[names[-1]].start
        upto = text.count("\n", 0, last) + 1 if k < len(batches) - 1 else float("inf")
        lines = emit_header(module) if k == 0 else []
        keep = set(names)
        for item in module.items:
            line = item.span.line if getattr(item, "span", None) else 0
            is_kernel = getattr(item, "is_kernel", False) and getattr(item, "body", None) is not None
            if (is_kernel and item.name in keep) or (not (is_kernel and item.name in by_name) and done_to < line <= upto)\
                    or (k == 0 and not line and not is_kernel):
                lines += emit_item(item)
        done_to = upto
        yield "".join(x + "\n" for x in lines)


def run(args) -> int:
    fh = None
    try:
        for piece in _pieces(args):
            if fh is None:
                if args.output:
                    try:
                        fh = open(args.output, "w")
                    except OSError as exc:
                        raise InputError(f"cannot write {args.output}: {exc.strerror}") from None
                else:
                    fh = sys.stdout
            fh.write(piece)
    except BaseException:
        if fh is not None and fh is not sys.stdout:
            fh.close()
            Path(args.output).unlink(missing_ok=True)   # no half-written file
        raise
    if fh is not None and fh is not sys.stdout:
        fh.close()
    return 0
