"""``kernlens`` command: a thin front end over the packages.

Each subcommand lives beside what it drives and exposes ``register(subparsers)``, which adds its
parser and sets ``func`` to a callable taking the parsed namespace and returning an exit code.
Errors from kernlens (``isa.errors.KernlensError``) become ``file:line:col: error: ...`` messages
and exit code 2 here, and only here.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":   # ``python -m kernlens.cli``: argparse and the rest imported with the collector
    gc.disable()             # paused too (entry() turns it on once the command's modules are frozen)

import argparse
import importlib
import os
import sys

from kernlens import one_blas_thread

one_blas_thread()    # before anything imports numpy

# subcommand -> module that implements ``register(subparsers)``
SUBCOMMANDS = {
    "fmt": "isa.cli",
    "analyze": "analyzer.cli",
    "run": "sim.cli",
    "generate": "isa.generate.cli",
    "inspect": "tui.cli",
    "verify": "sim.verify",
    "sweep": "sim.sweep",
}


class Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with the usage and one ``PROG: error: ...`` line.

    argparse makes a help formatter for each ``add_argument`` (to check that the metavar fits
    ``nargs``) and for ``add_subparsers`` (the sub-commands' ``prog``), and each one asks for the
    terminal's width through ``shutil``, whose import brings bz2, lzma and zlib (~2 ms of CPU of a
    cold ``kernlens run`` on a loaded machine, measured). Only help and usage text uses the width:
    those formatters get it, the others a fixed one."""

    _text = False          # True while help or usage text is being formatted

    def error(self, message: str) -> None:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)

    def format_usage(self) -> str:
        return self._as_text(super().format_usage)

    def format_help(self) -> str:
        return self._as_text(super().format_help)

    def _as_text(self, fmt) -> str:
        was, self._text = self._text, True
        try:
            return fmt()
        finally:
            self._text = was

    def _get_formatter(self):
        if self._text:
            return super()._get_formatter()
        return self.formatter_class(prog=self.prog, width=80)   # checks only: no text is laid out


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``kernlens`` parser; with ``only`` (a subcommand name), only that subcommand's module
    is imported and registered: a command line pays for the one command it runs (``kernlens run``
    need not import the inspector, the generators or Dask). ``--help`` and unknown commands get
    every subcommand."""
    parser = Parser(prog="kernlens", description=__doc__.splitlines()[0])
    parser.add_argument("--no-cache", action="store_true",
                        help="read and write nothing in the on-disk cache of parsed modules and parser "
                             "tables (as KERNLENS_NO_CACHE=1; the folder is $KERNLENS_CACHE or the user "
                             "cache folder)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name, module in SUBCOMMANDS.items():
        if only is not None and name != only:
            continue
        mod = importlib.import_module(module)
        register = getattr(mod, "register_" + name, None) or getattr(mod, "register")
        register(sub)
    return parser


def run_guarded(func, args, prog: str = "kernlens") -> int:
    """Call ``func(args)`` as a command: the one error guard of every kernlens command line.

    A ``KernlensError`` prints ``file:line:col: error: ...`` (its ``render()``) and gives 2; a
    closed output pipe gives 0, Ctrl-C 130; any other exception is a kernlens bug, reported as
    one ``PROG: internal error: ...`` line with exit 2, never a traceback.
    """
    from isa.errors import KernlensError

    try:
        return int(func(args) or 0)
    except KernlensError as exc:
        sys.stderr.write(exc.render() + "\n")
        return 2
    except BrokenPipeError:
        # the reader went away: point stdout at /dev/null so the interpreter's final flush is quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a kernlens bug: one line, never a traceback
        sys.stderr.write(f"{prog}: internal error: {type(exc).__name__}: {exc}\n")
        return 2


def _command(argv: list[str]) -> str | None:
    """The subcommand named by ``argv`` (its first word that is not an option: ``kernlens``'s own
    options take no value), or None when it is not one of :data:`SUBCOMMANDS`."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in SUBCOMMANDS else None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(_command(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if args.no_cache:
        os.environ["KERNLENS_NO_CACHE"] = "1"      # also for the processes a command starts
    return run_guarded(args.func, args)


def exit_now(rc: int):
    """End the process with exit code ``rc`` once a command line is done: atexit handlers run and
    the output is flushed as at a normal exit, but the interpreter does not tear down its few
    hundred modules and every object one by one (~50 ms of CPU after a small ``kernlens run``).
    For command-line entry points only (:func:`entry`), never for ``main`` called in-process."""
    import atexit

    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if run_exitfuncs is not None:
        run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):   # the reader went away, or the stream is closed
            pass
    os._exit(rc)


def import_paused(module: str) -> None:
    """Import ``module`` (and all it imports: numpy, the IR...) with the cyclic garbage collector
    off, then move every object alive to the permanent generation (``gc.freeze``) and turn the
    collector back on. For a program's start only (:func:`entry`), never for a library call: the
    objects an import makes (classes, functions, tables) live as long as the process, and the
    collector passed over them again and again while they were made and after (measured: 0.010 s
    of CPU in collections while a ``kernlens run`` imports numpy and the ``run`` command on a
    loaded 2-core machine; none with this); later collections never walk them."""
    was = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(module)
    finally:
        gc.freeze()
        if was:
            gc.enable()


#: glibc's malloc settings for the program (:func:`settled_malloc`): the mmap threshold (``M_MMAP_THRESHOLD``,
#: -3) and the trim threshold (``M_TRIM_THRESHOLD``, -1) at the largest values glibc's dynamic rule
#: reaches by itself (``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit systems, and twice that), and the padding
#: (``M_TOP_PAD``, -2) by which the heap grows beyond a request (and which a trim keeps): the stretch
#: :func:`huge_heap` marks for transparent huge pages
MALLOC_SETTINGS = ((-3, 32 << 20), (-1, 64 << 20), (-2, 32 << 20))
#: a transparent huge page (x86-64, arm64 with 4 KiB pages), and ``madvise``'s ``MADV_HUGEPAGE`` (Linux)
HUGE_PAGE = 2 << 20
MADV_HUGEPAGE = 14


def settled_malloc() -> bool:
    """Start the process with glibc's malloc thresholds where its dynamic rule ends up, and the
    heap's first stretch marked for transparent huge pages (:func:`huge_heap`) (True where set:
    glibc only; elsewhere nothing is done).

    glibc serves a block above its mmap threshold (128 KiB at start) with a fresh mmap and unmaps
    it when freed; each such free raises the threshold to that block's size (up to 32 MiB) and the
    trim threshold, below which the top of the heap is kept, to twice that. A process that has
    run a launch has settled there; a new one has not, and until it does the simulator's
    megabyte-sized arrays (register files, tensor-core products, masks) come in fresh pages, and
    the heap is trimmed and grown again, each page faulted and zeroed anew (~1.8 us a page here).
    Measured, a cold ``kernlens run`` of the 256^3 fp16 GEMM (tests/test_startup.py names the
    case): 14,400 -> 10,600 page faults in the command, peak RSS 66 -> 73 MB; the run after it in
    the same process faults as much either way (3,300). For the program only (:func:`entry`):
    a library call leaves the process's allocator alone."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        import ctypes

        libc = ctypes.CDLL(None)
    except (AttributeError, OSError, ValueError):
        return False
    if not all(libc.mallopt(param, value) == 1 for param, value in MALLOC_SETTINGS):
        return False
    huge_heap(libc)
    return True


def huge_heap(libc) -> bool:
    """Grow glibc's heap by its top padding (``M_TOP_PAD``, :data:`MALLOC_SETTINGS`) at once and
    mark that stretch for transparent huge pages (``madvise(MADV_HUGEPAGE)``; True where marked).

    The first launch of a process touches tens of megabytes of fresh heap (numpy arrays under the
    mmap threshold, lists, dicts), which the kernel maps one 4 KiB page per fault; a stretch marked
    so is mapped 2 MiB at a time where the system's ``transparent_hugepage`` setting allows it
    (``madvise`` or ``always``; with ``never`` the mark does nothing). The memory is only reserved
    until touched. Measured, a cold ``kernlens run`` of the 256^3 fp16 GEMM (warm cache, main vs this,
    20 runs each, alternating): page faults 14,930 -> 7,540, CPU median 277 -> 261 ms; of the 512^3
    one unchanged (1.447 -> 1.444 s; a 64 MiB padding made it slower here, 1.40 -> 1.49 s: more
    memory in fresh huge pages, which this VM's host backs lazily), peak RSS +1 MB
    (``tests/test_startup.py`` checks the mark and the faults)."""
    import ctypes

    sbrk = libc.sbrk
    sbrk.restype, sbrk.argtypes = ctypes.c_void_p, [ctypes.c_ssize_t]
    malloc, free, madvise = libc.malloc, libc.free, libc.madvise
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    start = sbrk(0)
    free(malloc(1 << 20))      # taken from the top of the heap, which grows by that and the padding
    end = sbrk(0)
    if not start or not end:
        return False
    lo = -(-start // HUGE_PAGE) * HUGE_PAGE
    return end - lo >= HUGE_PAGE and madvise(lo, end - lo, MADV_HUGEPAGE) == 0


def entry() -> None:
    """The ``kernlens`` program: glibc's malloc settled (:func:`settled_malloc`), the module of the
    command ``sys.argv`` names imported with the collector paused (:func:`import_paused`),
    :func:`main` on ``sys.argv``, then :func:`exit_now`."""
    gc.disable()             # (already off in ``python -m kernlens.cli``): ctypes is imported paused too
    settled_malloc()
    command = _command(sys.argv[1:])
    if command is not None:
        import_paused(SUBCOMMANDS[command])
    gc.enable()              # (off from the start of ``python -m kernlens.cli``)
    exit_now(main())


def validate_entry() -> None:
    """The ``validate-kernel`` program (also ``python -m analyzer.cli``): :mod:`analyzer.cli`
    imported with the collector paused (:func:`import_paused`; measured on a one-file
    validate-kernel: 42 collections while its imports ran, ~10 ms of ~90 ms CPU, one of them
    2.8 ms where a block of imports had run with the collector off and nothing frozen), its
    ``main`` on ``sys.argv``, then :func:`exit_now`."""
    import_paused("analyzer.cli")
    exit_now(sys.modules["analyzer.cli"].main())


if __name__ == "__main__":
    entry()
