"""``kernlens fmt FILE``: parse a kernel file and print it back in canonical form."""

from __future__ import annotations

import sys

from . import load
from .errors import InputError


def register(sub) -> None:
    p = sub.add_parser("fmt", help="parse assembly and print it back (canonical layout)",
                       description="Parse a PTX or Ascend-like assembly file and print it in canonical form.")
    p.add_argument("file", help="assembly file (.ptx, or .asm for the Ascend-like ISA)")
    p.add_argument("--lenient", action="store_true", help="unknown opcodes/modifiers are warnings, not errors")
    p.add_argument("-o", "--output", help="write here instead of standard output")
    p.set_defaults(func=run)


def run(args) -> int:
    diagnostics: list = []
    module = load(args.file, lenient=args.lenient, diagnostics=diagnostics)
    for d in diagnostics:
        line = module.source_line(d.span.line) if d.span else None
        sys.stderr.write(d.render(line) + "\n")
    text = module.emit()
    if args.output:
        try:
            with open(args.output, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(f"cannot write {args.output}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0
