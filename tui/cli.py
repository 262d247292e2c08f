"""``kernlens inspect FILE... [--source-dir DIR] [--kernel NAME] [--line N] [--param K=V] [--launch SPEC]
[--machine NAME]``."""

from __future__ import annotations

import argparse

from isa.errors import InputError


def _param(text: str) -> tuple[str, int]:
    k, sep, v = text.partition("=")
    if not sep or not k:
        raise argparse.ArgumentTypeError(f"expected K=V, got {text!r}")
    try:
        return k, int(v, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{k}: {v!r} is not an integer") from None


def register(subparsers) -> None:
    p = subparsers.add_parser("inspect", help="browse kernels in a terminal UI",
                              description="Browse kernels: annotated assembly, mix, loops, runs.")
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX or Ascend-like assembly files")
    p.add_argument("--source-dir", action="append", default=[], metavar="DIR",
                   help="where to look for CUDA/Triton sources named by .file (repeatable)")
    p.add_argument("--kernel", help="kernel to show first")
    p.add_argument("--line", type=int, help="PTX line to show first")
    p.add_argument("--param", action="append", type=_param, default=[], metavar="K=V",
                   help="kernel parameter value for trip-count estimates (repeatable)")
    p.add_argument("--launch", metavar="SPEC", help="launch spec for the Run tab (spec.json or manifest.json#ENTRY)")
    p.add_argument("--machine", metavar="NAME",
                   help="Ascend machine model for the Timeline and Run tabs (default: the file's .arch, else davinci-a2)")
    p.set_defaults(func=run)


def check_args(args) -> None:
    """Refuse what leaves nothing to show before the terminal UI starts: no readable FILE at all,
    an unreadable --launch spec, an unknown --machine. (A bad file among good ones shows as an
    error panel inside the app.)"""
    from pathlib import Path

    if not any(Path(f).is_file() for f in args.files):
        raise InputError(f"no such file: {args.files[0]}" if len(args.files) == 1 else
                         f"none of the {len(args.files)} files exists: {', '.join(args.files)}")
    if args.launch:
        spec = args.launch.partition("#")[0]
        if not Path(spec).is_file():
            raise InputError(f"cannot read launch spec: no such file: {spec}")
    if args.machine:
        from sim.ascend.machine import load_machine

        load_machine(args.machine)  # an unknown name fails here, with the known ones listed


def run(args) -> int:
    import sys

    check_args(args)
    if not sys.stdout.isatty():
        raise InputError("kernlens inspect needs a terminal (stdout is not a TTY)")
    from .app import InspectorApp

    app = InspectorApp(args.files, args.source_dir, kernel=args.kernel, line=args.line, params=dict(args.param), launch=args.launch,
                       machine=args.machine)
    app.freeze_gc = True
    app.run()
    quit_now(app.return_code or 0)
    return 0


def quit_now(code: int) -> None:
    """Leave the process at once once the terminal is restored: a worker thread still parsing a big
    file, and the interpreter freeing a big file's IR object by object (31 s for a 30 MB module),
    would otherwise hold a blank screen after ``q``."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
