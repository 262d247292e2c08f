"""Compiled code for the methods ``@dataclass`` writes, kept between processes (issue #15, start-up).

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and, for
a frozen class, ``__setattr__`` and ``__delattr__`` as source text and compiles each text with
``exec`` every time the class is defined, that is, at every import. Python keeps a module's own
bytecode in ``__pycache__``; it keeps nothing for these texts. A ``kernlens run`` of the 256^3 fp16
GEMM defines 74 dataclasses (``isa.ir.Instruction``, ``sim.launch.LaunchSpec``...), 396 texts:
0.078 s of CPU in ``dataclasses``, 0.027 s with their code from here (measured on a loaded 2-core
machine, where ``import numpy`` took 0.14 s), most of what its imports cost beyond numpy's.

:func:`install` makes ``dataclasses``' ``exec`` of a text this module has seen before run the code
compiled from that very text instead of compiling it again, for the classes of kernlens's own
packages (a text ``exec``'d with another module's globals is compiled as before). The code is
what ``exec`` itself compiles (filename ``<string>``, no inherited ``__future__`` flags), so a
class is the same class either way: same fields, methods, equality, hashing, ``repr`` and frozen
errors (``tests/test_startup.py`` compares the code objects).

Where: one entry of the on-disk cache (:mod:`isa.cache`, kind ``code``), named by the Python
build (its version, bytecode tag and optimisation level: marshalled code is only good for the
Python that wrote it), holding per module the text of each method and its code (``marshal``),
read at the first class definition. A process that had to compile a text writes the entry again
when it exits (``atexit``): each module it imported with the texts it used (all of that module's
classes, so an edited class's old texts go), other modules' as they were; and refreshes a copy
beside this file (``isa/__pycache__``, as Lark's tables are kept beside the grammar), which a
process whose user cache is empty reads. With the cache off (``KERNLENS_NO_CACHE=1``) every text
is compiled, as without this module.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys

#: the packages whose dataclasses take their code from here
PACKAGES = ("isa", "sim", "analyzer", "kernlens", "tui")
#: the entry kind in :mod:`isa.cache`
KIND = "code"
#: where a copy of the entry is kept for processes whose user cache is empty
INSTALLED = os.path.join(os.path.dirname(os.path.realpath(__file__)), "__pycache__")

_codes: dict[str, dict[str, bytes]] | None = None   # module -> text -> marshalled code, loaded at first use
_used: dict[str, dict[str, bytes]] = {}              # module -> the texts this process exec'd for it
_added = False                                       # a text was compiled this process: saved at exit
#: texts compiled in this process (the rest came from the entry); for tests and bench/startup.py
compiled = 0


def entry_name() -> str:
    """The entry's name: the Python build's (version, bytecode tag, optimisation level)."""
    from . import cache

    return cache.key("dataclass-code 2", sys.version, sys.implementation.cache_tag or "", str(sys.flags.optimize))


def install() -> None:
    """From now on, ``dataclasses`` runs cached code for the texts it ``exec``'s for kernlens's
    classes (idempotent). ``dataclasses`` looks ``exec`` up among its module's globals before the
    builtins: that name is the one thing set."""
    if getattr(dataclasses, "exec", None) is not _exec:
        dataclasses.exec = _exec


def uninstall() -> None:
    """Back to ``dataclasses``' own ``exec`` (the builtin)."""
    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec


def _exec(source, globals=None, locals=None, /):
    """``exec(source, globals, locals)``, with the code of a text seen before taken from the
    cache when ``globals`` are those of a kernlens module."""
    if globals is None:                           # exec's defaults: the caller's namespaces
        caller = sys._getframe(1)
        globals = caller.f_globals
        if locals is None:
            locals = caller.f_locals
    if isinstance(source, str) and isinstance(globals, dict):
        module = str(globals.get("__name__", ""))
        if module.partition(".")[0] in PACKAGES:
            source = code_for(source, module)
    exec(source, globals, locals)


def code_for(text: str, module: str):
    """The code object ``exec(text)`` would compile, for a class of ``module``: from the cache,
    else compiled (and saved at exit)."""
    global _codes, _added, compiled
    if _codes is None:
        _codes = _load()
    blob = _codes.get(module, {}).get(text)
    code = None
    if blob is not None:
        try:
            code = marshal.loads(blob)
        except (EOFError, ValueError, TypeError):   # a damaged value: compiled again
            pass
    if code is None:
        code = compile(text, "<string>", "exec", dont_inherit=True)
        compiled += 1
        blob = marshal.dumps(code)
        _codes.setdefault(module, {})[text] = blob
        if not _added:
            _added = True
            import atexit

            atexit.register(save)
    _used.setdefault(module, {})[text] = blob
    return code


def _load() -> dict[str, dict[str, bytes]]:
    """The entry from the user cache, else from the copy beside this file; {} when the cache is
    off or neither is there."""
    from . import cache

    if not cache.enabled():
        return {}
    name = entry_name()
    got = cache.load_or_copy(KIND, name, os.path.join(INSTALLED, f"{name}.pickle"))
    return {m: t for m, t in got.items() if isinstance(t, dict)} if isinstance(got, dict) else {}


def save() -> None:
    """Write the entry again when this process compiled a text (at exit): for each module whose
    classes this process defined, the texts it exec'd (a module defines its classes when it is
    imported, so these are all of them and texts of edited classes go); other modules' as they
    were (commands that import different modules do not undo each other). Then refresh the copy
    beside this file."""
    global _added
    if not _added:
        return
    _added = False
    from . import cache

    if not cache.enabled():
        return
    name = entry_name()
    entry = _load()                              # as it is now (another process may have written it)
    entry.update(_used)
    if not cache.store(KIND, name, entry):
        return
    src = cache.folder_text(KIND)
    if src is not None:
        cache.copy_over(os.path.join(src, f"{name}.pickle"), os.path.join(INSTALLED, f"{name}.pickle"))


def reset() -> None:
    """Forget what was loaded and compiled (tests): the next class definition reads the entry again."""
    global _codes, _added, compiled
    _codes, _added, compiled = None, False, 0
    _used.clear()
