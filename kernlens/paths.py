"""``pathlib``'s text results for the few path operations a command's start-up does, without
importing ``pathlib`` (issue #15, start-up): its import brings ``urllib.parse``, ``ipaddress``,
``fnmatch`` and ``ntpath``, ~3 ms of CPU measured here after numpy's, for a command that only
opens its files. Each function gives what the ``pathlib`` expression in its docstring gives
(``tests/test_paths.py`` compares them on many paths); on a system whose paths are not POSIX
ones they ask ``pathlib`` itself."""

from __future__ import annotations

import errno
import os
import stat

_POSIX = os.name == "posix"


def _parse(path) -> tuple[str, list[str]]:
    """(root, parts) as ``PurePosixPath`` splits ``path``: ``'/'``, ``'//'`` (exactly two leading
    slashes) or ``''``, and the names between slashes, ``''`` and ``'.'`` dropped."""
    s = os.fspath(path)
    if s.startswith("/"):
        root = "//" if s.startswith("//") and not s.startswith("///") else "/"
    else:
        root = ""
    return root, [p for p in s.split("/") if p and p != "."]


def text(path) -> str:
    """``str(Path(path))``: ``path`` as ``pathlib`` writes it (``'./a//b/'`` -> ``'a/b'``, ``''`` -> ``'.'``)."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(path))
    root, parts = _parse(path)
    return (root + "/".join(parts)) or "."


def parent(path) -> str:
    """``str(Path(path).parent)``."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(path).parent)
    root, parts = _parse(path)
    return (root + "/".join(parts[:-1])) or "."


def joined(path, name: str) -> str:
    """``str(Path(path) / name)`` (an absolute ``name`` replaces ``path``, as there)."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(path) / name)
    root, parts = _parse(path)
    name_root, name_parts = _parse(name)
    if name_root:
        root, parts = name_root, []
    return (root + "/".join(parts + name_parts)) or "."


def name(path) -> str:
    """``Path(path).name``: the last name, ``''`` for none (``'/'``, ``'.'``)."""
    if not _POSIX:
        from pathlib import Path

        return Path(path).name
    parts = _parse(path)[1]
    return parts[-1] if parts else ""


def with_name(path, new: str) -> str:
    """``str(Path(path).with_name(new))`` for a plain ``new`` (no separator); ``ValueError`` where
    ``path`` has no name, as there."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(path).with_name(new))
    root, parts = _parse(path)
    if not parts or not new or new == "." or "/" in new:
        raise ValueError(f"{os.fspath(path)!r} has an empty name" if not parts else f"invalid name {new!r}")
    return root + "/".join(parts[:-1] + [new])


def with_suffix(path, new: str) -> str:
    """``str(Path(path).with_suffix(new))`` for a suffix such as ``'.json'``."""
    if not _POSIX:
        from pathlib import Path

        return str(Path(path).with_suffix(new))
    old = suffix(path)
    base = name(path)
    return with_name(path, (base[:-len(old)] if old else base) + new)


def _split_ext(path) -> tuple[str, str]:
    """(stem, suffix) of the last name of a POSIX ``path``, as pathlib splits it."""
    parts = _parse(path)[1]
    name = parts[-1] if parts else ""
    i = name.rfind(".")
    return (name[:i], name[i:]) if 0 < i < len(name) - 1 else (name, "")


def suffix(path) -> str:
    """``Path(path).suffix``: the last ``.ext`` of the last name, ``''`` for none (``'.bashrc'``, ``'a.'``)."""
    if not _POSIX:
        from pathlib import Path

        return Path(path).suffix
    return _split_ext(path)[1]


def stem(path) -> str:
    """``Path(path).stem``: the last name without its :func:`suffix`."""
    if not _POSIX:
        from pathlib import Path

        return Path(path).stem
    return _split_ext(path)[0]


#: the errors ``Path.exists`` reads as "no such file" (others it raises)
_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def exists(path) -> bool:
    """``Path(path).exists()``."""
    if not _POSIX:
        from pathlib import Path

        return Path(path).exists()
    return _stat(path) is not None


def is_file(path) -> bool:
    """``Path(path).is_file()``."""
    if not _POSIX:
        from pathlib import Path

        return Path(path).is_file()
    st = _stat(path)
    return st is not None and stat.S_ISREG(st.st_mode)


def _stat(path):
    """``os.stat`` of :func:`text` ``(path)``, or None where pathlib's tests say False (a missing
    file; other errors are raised, as there)."""
    try:
        return os.stat(text(path))
    except OSError as exc:
        if getattr(exc, "errno", None) not in _MISSING:
            raise
        return None
    except ValueError:
        return None
