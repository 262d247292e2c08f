"""Machine models as data (``*.toml``): every number carries the source it came from.

The one loader of these files: :func:`load` gives ``(path, table)`` for a model name
(``h200``, ``davinci-a2``) or a ``.toml`` path; the roofline (:mod:`analyzer.machine`), the
H200 timing model (:mod:`sim.timing.sm`, :mod:`sim.timing.occupancy`) and the Ascend-like model
(:mod:`sim.ascend.machine`) each read the tables they need from it.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from isa.errors import InputError, Span

MACHINES = Path(__file__).resolve().parent
#: Where the first process that parses a model file also keeps a copy of its cache entry (named
#: ``STEM.toml-KEY.pickle``, the key a hash of the file's text), as Python keeps bytecode beside the
#: sources and :mod:`isa.ptx.parser` its Lark tables: a process whose user cache is empty reads it
#: instead of importing tomllib and parsing (~4 ms CPU of every cold command with an empty cache).
INSTALLED = MACHINES / "__pycache__"


def names() -> list[str]:
    """The models that ship (``sim/machines/*.toml``)."""
    return sorted(p.stem for p in MACHINES.glob("*.toml"))


def path_of(name_or_path: str | Path) -> Path:
    """``sim/machines/NAME.toml`` for a name, or the given ``.toml`` path; ``InputError`` naming
    the known models when it does not exist."""
    path = Path(name_or_path)
    if not path.suffix:
        path = MACHINES / f"{name_or_path}.toml"
    if not path.is_file():
        raise InputError(f"no machine model '{name_or_path}'", expected=names())
    return path


@lru_cache(maxsize=16)
def _read(path: Path) -> dict:
    """The parsed tables of a model file; from the on-disk cache (:mod:`isa.cache`, keyed by the
    file's text) when this text was parsed before: tomllib's import and parse cost each start-up
    ~5 ms."""
    from isa import cache

    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read machine model: {exc}", Span(str(path))) from None
    key = cache.key("machine-toml", text) if cache.enabled() else None     # tomllib: same text, same tables
    tables = cache.load("machine", key) if key else None
    installed = INSTALLED / f"{path.name}-{key}.pickle"
    if tables is None and key:                       # the copy beside the models, into the user cache
        user = cache.folder("machine")
        if cache.copy_if_missing(installed, user and user / f"{key}.pickle"):
            tables = cache.load("machine", key)      # (a damaged copy is removed there, and replaced below)
    if tables is None:
        import tomllib

        try:
            tables = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"machine model is not valid TOML: {exc}", Span(str(path))) from None
        if key and cache.store("machine", key, tables) and path.parent == MACHINES:
            # a copy beside the models that ship (other texts' copies of this file removed)
            if cache.copy_over(cache.folder("machine") / f"{key}.pickle", installed):
                for other in INSTALLED.glob(f"{path.name}-*.pickle"):
                    if other != installed:
                        other.unlink(missing_ok=True)
    return tables


def load(name_or_path: str | Path) -> tuple[Path, dict]:
    """(path, parsed tables) of a machine model. The tables are shared between callers: read them,
    never change them."""
    path = path_of(name_or_path)
    return path, _read(path.resolve())
