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
    if tables is None:
        import tomllib

        try:
            tables = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"machine model is not valid TOML: {exc}", Span(str(path))) from None
        if key:
            cache.store("machine", key, tables)
    return tables


def load(name_or_path: str | Path) -> tuple[Path, dict]:
    """(path, parsed tables) of a machine model. The tables are shared between callers: read them,
    never change them."""
    path = path_of(name_or_path)
    return path, _read(path.resolve())
