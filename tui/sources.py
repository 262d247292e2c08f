"""Finding the CUDA/Triton source a kernel came from, on disk.

A PTX ``.file`` entry names the source as the compiler saw it, which may be a path on another
machine or relative to the compiler's working directory::

    .file 1 "triton/tt_matmul_int8.py"

:func:`find_source` tries, in order: the path as written (absolute, or relative to the current
directory), relative to the PTX file's folder and its parents, then inside each ``--source-dir``
(joined, then by base name). For PTX without ``.file`` (nvcc without ``-lineinfo``) it looks for a
source named like the PTX stem (``sgemm_naive.sm_80.ptx`` -> ``sgemm_naive.cu`` / ``.py``) in the
same places and in ``cuda/`` and ``triton/`` beside the PTX folder, which is the corpus layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

SOURCE_SUFFIXES = (".cu", ".cuh", ".py", ".cpp", ".cc", ".c")


@dataclass(frozen=True)
class SourceHit:
    """Where a source file was found (``path``) or, when it was not, where we looked."""

    wanted: str
    path: Path | None
    searched: tuple[str, ...] = field(default=(), compare=False)


def _candidates(name: str, asm_path: Path | None, source_dirs: tuple[Path, ...]) -> list[Path]:
    p = Path(name)
    out: list[Path] = [p]
    if asm_path is not None:
        base = asm_path.resolve().parent
        for parent in (base, *list(base.parents)[:2]):
            if not p.is_absolute():
                out.append(parent / p)
            out.append(parent / p.name)
        # the corpus layout: sources in cuda/ or triton/ beside the PTX folder (or inside it)
        for parent in (base, base.parent):
            for sub in ("cuda", "triton"):
                out.append(parent / sub / p.name)
    for d in source_dirs:
        if not p.is_absolute():
            out.append(d / p)
        out.append(d / p.name)
    return out


@lru_cache(maxsize=256)
def _find(name: str, asm_path: str | None, source_dirs: tuple[str, ...]) -> SourceHit:
    asm = Path(asm_path) if asm_path else None
    dirs = tuple(Path(d) for d in source_dirs)
    tried: list[str] = []
    for c in _candidates(name, asm, dirs):
        s = str(c)
        if s in tried:
            continue
        tried.append(s)
        try:
            if c.is_file():
                return SourceHit(name, c, tuple(tried))
        except OSError:
            continue
    return SourceHit(name, None, tuple(tried))


def find_source(name: str, asm_path: str | Path | None, source_dirs=()) -> SourceHit:
    """Locate the source file ``name`` (from a ``.file`` entry) for the assembly at ``asm_path``."""
    return _find(name, str(asm_path) if asm_path else None, tuple(str(d) for d in source_dirs))


def guess_source(asm_path: str | Path, source_dirs=()) -> SourceHit:
    """A source named like the assembly's stem, for files without ``.file`` entries."""
    asm = Path(asm_path)
    stem = asm.name.split(".")[0]
    names = [stem + s for s in SOURCE_SUFFIXES]
    tried: list[str] = []
    roots = [asm.resolve().parent, asm.resolve().parent.parent, *(Path(d) for d in source_dirs)]
    for root in roots:
        for sub in ("", "cuda", "triton", "src"):
            for n in names:
                c = root / sub / n if sub else root / n
                tried.append(str(c))
                if c.is_file():
                    return SourceHit(stem, c, tuple(tried))
    return SourceHit(stem, None, tuple(tried))


@lru_cache(maxsize=64)
def read_lines(path: str) -> tuple[str, ...]:
    """The lines of a source file (undecodable bytes replaced), cached."""
    try:
        return tuple(Path(path).read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return ()
