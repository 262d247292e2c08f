"""Front ends and the ISA-neutral IR.

``isa.load(path_or_text)`` reads a PTX or Ascend-like assembly file (or text) into an
:class:`isa.ir.Module`; ``Module.emit()`` writes it back out.
"""

from __future__ import annotations

import os

from kernlens import paths

from .dataclass_code import install as _install_dataclass_code

_install_dataclass_code()   # before the first class below: its methods' code from the cache (start-up)

from .errors import InputError, KernlensError, ParseError, SemanticError, Span  # noqa: E402
from .ir import Function, Instruction, Module  # noqa: E402

__all__ = ["load", "loads", "Module", "Function", "Instruction", "KernlensError", "ParseError",
           "SemanticError", "InputError", "Span", "detect_isa", "KERNEL_DIRECTIVE"]

_ASCEND_SUFFIXES = (".asm", ".s", ".cce", ".dav")

#: the directive that opens a kernel, per ISA (for messages such as "no kernel (.kernel) in F")
KERNEL_DIRECTIVE = {"ptx": ".entry", "ascend": ".kernel"}


def detect_isa(text: str, path: str | None = None) -> str:
    """``ptx`` or ``ascend``: by suffix, else by the first directive in the text."""
    if path:
        suffix = paths.suffix(path).lower()
        if suffix == ".ptx":
            return "ptx"
        if suffix in _ASCEND_SUFFIXES:
            return "ascend"
    for line in text.splitlines()[:200]:
        s = line.strip()
        if not s or s.startswith(("//", "#", ";")):
            continue
        if s.startswith((".version", ".target")):
            return "ptx"
        if s.startswith((".kernel", ".arch", ".meta", ".core", ".isa ascend")):
            return "ascend"
    return "ptx"


def read_text(path: str | os.PathLike) -> str:
    """Read a source file as text, or raise :class:`InputError` for binary or unreadable files."""
    p = paths.text(path)                  # the file Path(path).read_bytes() opens, and its name
    try:
        with open(p, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise InputError(f"no such file: {p}", Span(p)) from None
    except IsADirectoryError:
        raise InputError(f"is a directory, not a file: {p}", Span(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror}", Span(p)) from None
    if b"\x00" in data[:1 << 20]:
        raise InputError(f"not a text file (binary data): {p}", Span(p))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # PTX is ASCII; say where the first bad byte is.
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"not a text file: byte 0x{data[exc.start]:02x} is not UTF-8", Span(p, line, col)) from None


#: texts up to this size have their parse cached on disk (:mod:`isa.cache`); a bigger file is
#: parsed each time (its pickle, ~6x the text, would be large; ``kernels=`` parses only what is
#: asked for, and the big-file paths parse batch by batch with ``cache=False``)
CACHE_MAX_BYTES = 4 << 20


def loads(text: str, file: str = "<text>", *, isa: str | None = None, lenient: bool = False,
          diagnostics: list | None = None, kernels=None, cache: bool = True) -> Module:
    """Parse assembly ``text``.

    ``kernels`` (names) parses only those PTX kernels' definitions beside every module-level
    declaration and ``.func`` (:mod:`isa.ptx.chunks`; the module's ``source`` stays the whole text,
    lines and columns are the file's): running one kernel of a big file need not parse the rest.
    When none of the names is defined in the file it is parsed whole (its errors say what is there).

    A module parsed before (same text, file name, options, and front-end code) comes from the
    on-disk cache (:mod:`isa.cache`; ~6 ms for a 20 kB kernel instead of ~40 ms with the parser's
    import), with the warnings its parse gave; a text that does not parse is never cached.
    ``cache=False`` neither reads nor writes it (a batch of a big file, parsed once and dropped).
    """
    isa = isa or detect_isa(text, file if file != "<text>" else None)
    kernels = tuple(kernels) if kernels else None
    name = None
    if cache and len(text) <= CACHE_MAX_BYTES:
        from . import cache as disk

        if disk.enabled():
            name = disk.key("module", disk.code_version("isa"), isa, file, lenient,
                            ",".join(sorted(kernels)) if kernels else "", text)
            hit = disk.load("module", name)
            if hit is not None:
                module, warnings = hit
                if diagnostics is not None:
                    diagnostics.extend(warnings)
                return module
    warnings: list = []
    module = _parse(text, file, isa, lenient, warnings, kernels)
    if diagnostics is not None:
        diagnostics.extend(warnings)
    if name is not None:
        from . import cache as disk

        disk.store("module", name, (module, warnings))
    return module


def _parse(text: str, file: str, isa: str, lenient: bool, diagnostics: list, kernels) -> Module:
    if isa == "ascend":
        from .ascend.parser import parse as parse_ascend

        return parse_ascend(text, file)
    from .ptx.parser import parse

    if kernels:
        from dataclasses import replace

        from .ptx import chunks

        found = chunks.entries(text)
        wanted = set(kernels)
        if len(found) > len(wanted) and wanted & {e.name for e in found}:
            module = parse(chunks.select(text, wanted, found), file, lenient=lenient, diagnostics=diagnostics)
            return replace(module, source=text)
    return parse(text, file, lenient=lenient, diagnostics=diagnostics)


def _looks_like_text(s: str) -> bool:
    head = s.lstrip()
    return "\n" in s or head.startswith((".version", ".target", ".kernel", ".arch", ".meta", ".core", "//", "{"))


def load(path_or_text: str | os.PathLike, *, isa: str | None = None, lenient: bool = False,
         diagnostics: list | None = None, kernels=None) -> Module:
    """Read a Module from a file path, or from assembly text when given text.

    Text is recognised by containing a newline or a directive; anything else is a path.
    """
    if isinstance(path_or_text, os.PathLike) or not _looks_like_text(path_or_text):
        path = os.fspath(path_or_text) if isinstance(path_or_text, os.PathLike) else str(path_or_text)
        return load_file(path, isa=isa, lenient=lenient, diagnostics=diagnostics, kernels=kernels)
    return loads(path_or_text, isa=isa, lenient=lenient, diagnostics=diagnostics, kernels=kernels)


def load_file(path: str, *, isa: str | None = None, lenient: bool = False, diagnostics: list | None = None,
              kernels=None) -> Module:
    """:func:`load` of the file ``path`` (the name its spans and errors give), never taken for text."""
    text = read_text(path)
    return loads(text, path, isa=isa or detect_isa(text, path), lenient=lenient, diagnostics=diagnostics,
                 kernels=kernels)
