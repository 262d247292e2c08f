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
    p.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                   help="worker processes for the kernel batches of a big PTX file (more than 4 MB; default 0: "
                        "one per CPU; 1: none); the output is the same")
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
    split = chunks.Split.make(text, args.file, found, lenient=args.lenient, diagnostics=(outside := []))
    if split is not None:
        yield from _split_pieces(args, split, outside, seen)
        return
    done_to = 0                      # module-level items up to this line were written
    batches = list(chunks.batches(text, max_chars=BATCH_CHARS, found=found))
    by_name = {e.name: e for e in found}
    for k, (names, piece) in enumerate(batches):
        diagnostics = []
        module = isa.loads(piece, args.file, lenient=args.lenient, diagnostics=diagnostics, cache=False)
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


def _split_pieces(args, split, outside_diagnostics: list, seen: set):
    """The output of a big file whose module-level part :class:`isa.ptx.chunks.Split` parsed once:
    the header, then the module-level items and each batch's kernels in file order (the same text
    as :meth:`Module.emit` of the whole file), the batches formatted in ``--jobs`` processes."""
    from .emit import emit_header, emit_item

    _report(split.outside, outside_diagnostics, seen)
    items, keys, a = split.outside.items, split.keys, 0
    yield "".join(x + "\n" for x in emit_header(split.outside))
    ranges = split.batches(BATCH_CHARS)
    for (i, j), (texts, diagnostics) in zip(ranges, _formatted(args, split, ranges)):
        _report(split.outside, diagnostics, seen)
        lines = []
        for k, kernel in zip(range(i, j), texts):
            while a < len(items) and keys[a] < split.starts[k]:
                lines += emit_item(items[a])
                a += 1
            lines.append(kernel)
        yield "".join(x + "\n" for x in lines)
    yield "".join(x + "\n" for item in items[a:] for x in emit_item(item))


def _formatted(args, split, ranges):
    """Per batch: (the text of each of its kernels, the warnings of its parse), in order."""
    from .ptx.chunks import jobs_wanted

    jobs = min(jobs_wanted(getattr(args, "jobs", None)), len(ranges))
    if jobs <= 1:
        for rng in ranges:
            yield _format_batch(split, rng)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs, _worker_init, (split,)) as pool:
        for rng, got in zip(ranges, pool.imap(_worker_batch, ranges)):
            yield got if got is not None else _format_batch(split, rng)   # again here, to raise its error


def _format_batch(split, rng: tuple[int, int]) -> tuple[list[str], list]:
    from .emit import emit_item
    from .ir import Function

    diagnostics: list = []
    module = split.module(*rng, diagnostics=diagnostics)
    names = {e.name for e in split.found[rng[0]:rng[1]]}
    texts = ["\n".join(emit_item(f)) for f in module.items
             if type(f) is Function and f.is_kernel and f.body is not None and f.name in names]
    return texts, diagnostics


_WORKER: list = []


def _worker_init(split) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the parent's: it ends the pool
    _WORKER[:] = [split]


def _worker_batch(rng):
    from .errors import KernlensError

    try:
        return _format_batch(_WORKER[0], rng)
    except KernlensError:
        return None


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
