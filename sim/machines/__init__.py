"""Machine models as data (``*.toml``): every number carries the source it came from.

The one loader of these files: :func:`load` gives ``(path, table)`` for a model name
(``h200``, ``davinci-a2``) or a ``.toml`` path; the roofline (:mod:`analyzer.machine`), the
H200 timing model (:mod:`sim.timing.sm`, :mod:`sim.timing.occupancy`) and the Ascend-like model
(:mod:`sim.ascend.machine`) each read the tables they need from it.
"""

from __future__ import annotations

import os
from functools import lru_cache

from isa.errors import InputError, Span
from kernlens import paths

#: the folder of the models, as text (:data:`MACHINES` is it as a ``pathlib.Path``)
HERE = os.path.dirname(os.path.realpath(__file__))
#: Where the first process that parses a model file also keeps a copy of its cache entry (named
#: ``STEM.toml-KEY.pickle``, the key a hash of the file's text), as Python keeps bytecode beside the
#: sources and :mod:`isa.ptx.parser` its Lark tables: a process whose user cache is empty reads it
#: instead of importing tomllib and parsing (~4 ms CPU of every cold command with an empty cache).
INSTALLED = os.path.join(HERE, "__pycache__")


def __getattr__(name: str):
    """``MACHINES``, the folder of the models as a ``pathlib.Path``, made when first asked for: a
    command that only reads a model does not import pathlib (:mod:`kernlens.paths`)."""
    if name == "MACHINES":
        from pathlib import Path

        return Path(HERE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def names() -> list[str]:
    """The models that ship (``sim/machines/*.toml``)."""
    from pathlib import Path

    return sorted(p.stem for p in Path(HERE).glob("*.toml"))


def path_of(name_or_path: str | os.PathLike) -> "Path":
    """``sim/machines/NAME.toml`` for a name, or the given ``.toml`` path; ``InputError`` naming
    the known models when it does not exist."""
    from pathlib import Path

    return Path(_path_text(name_or_path))


def _path_text(name_or_path: str | os.PathLike) -> str:
    """:func:`path_of` as text."""
    if paths.suffix(name_or_path):
        path = paths.text(name_or_path)
    else:
        path = paths.joined(HERE, f"{os.fspath(name_or_path)}.toml")
    if not paths.is_file(path):
        raise InputError(f"no machine model '{name_or_path}'", expected=names())
    return path


@lru_cache(maxsize=16)
def _read(path: str) -> dict:
    """The parsed tables of a model file; from the on-disk cache (:mod:`isa.cache`, keyed by the
    file's text) when this text was parsed before: tomllib's import and parse cost each start-up
    ~5 ms."""
    from isa import cache

    try:
        with open(path) as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read machine model: {exc}", Span(path)) from None
    key = cache.key("machine-toml", text) if cache.enabled() else None     # tomllib: same text, same tables
    name = os.path.basename(path)
    installed = os.path.join(INSTALLED, f"{name}-{key}.pickle")
    # the user cache, else the copy beside the models (a damaged copy is removed there, and replaced below)
    tables = cache.load_or_copy("machine", key, installed) if key else None
    if tables is None:
        import tomllib

        try:
            tables = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"machine model is not valid TOML: {exc}", Span(path)) from None
        if key and cache.store("machine", key, tables) and os.path.dirname(path) == HERE:
            # a copy beside the models that ship (other texts' copies of this file removed)
            if cache.copy_over(os.path.join(cache.folder_text("machine"), f"{key}.pickle"), installed):
                for other in os.listdir(INSTALLED):
                    if other.startswith(f"{name}-") and other.endswith(".pickle") and \
                            other != os.path.basename(installed):
                        try:
                            os.unlink(os.path.join(INSTALLED, other))
                        except OSError:
                            pass
    return tables


def load(name_or_path: str | os.PathLike) -> tuple["Path", dict]:
    """(path, parsed tables) of a machine model. The tables are shared between callers: read them,
    never change them."""
    path, tables = read(name_or_path)
    from pathlib import Path

    return Path(path), tables


def read(name_or_path: str | os.PathLike) -> tuple[str, dict]:
    """:func:`load` with the path as text (no pathlib: the roofline of every run and validation)."""
    path = _path_text(name_or_path)
    return path, _read(os.path.realpath(path))
