"""The on-disk cache: what one process built (parsed modules, Lark's parser tables, a launch's
drawn inputs) for the next.

Where: ``$KERNLENS_CACHE`` if set, else the user cache folder (``platformdirs.user_cache_dir``:
``~/.cache/kernlens`` on Linux, ``~/Library/Caches/kernlens`` on macOS). ``KERNLENS_NO_CACHE=1``
(or ``kernlens --no-cache``) turns it off: nothing is read or written.

Keys are content hashes: an entry's name is the BLAKE2b digest of what it was built from (the
source text, the options) and of :func:`code_version`, the kernlens version together with the
size and modification time of every source file of the packages that build it, so that editing
the text *or* the code that reads it makes a new key (old entries are never read again, and age
out). Each file holds a header (magic, the payload's length and its CRC-32) and a pickle; a file
whose header or checksum does not match, or that does not unpickle, is a miss and is removed.
Writers write a temporary file beside the entry and rename it into place (atomic on POSIX and
Windows), so concurrent writers and readers see a whole entry or none. The folder is kept under
``$KERNLENS_CACHE_MB`` (default 512 MB): after each write the least recently used entries go.

The pickles are trusted like the user's own files: the folder is the user's.
"""

from __future__ import annotations

import gc
import os
import pickle
from contextlib import contextmanager
from functools import cache
from zlib import crc32

from kernlens import paths

try:  # BLAKE2 without hashlib's OpenSSL start-up (~3 ms); hashlib's own blake2b is this one
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

_MAGIC = b"kernlens-cache 2\n"
#: bytes of the payload's checksum in the header: its CRC-32, which finds a torn or damaged file
#: as a digest would (the keys, not this, tell entries apart), in a fifth of BLAKE2b's CPU (every
#: entry a cached ``kernlens run`` reads, ~1.2 MB, is checked: ~1.1 -> ~0.2 ms, measured)
_DIGEST = 4
_LIMIT_MB = 512


@contextmanager
def gc_paused():
    """The cyclic garbage collector off for a block that allocates many long-lived, acyclic
    objects (an IR tree, parsed or unpickled): left on, it scans them again and again while they
    are being built (unpickling a 20 kB kernel's module: 5.3 -> 2.8 ms)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def enabled() -> bool:
    return not os.environ.get("KERNLENS_NO_CACHE")


def root() -> "Path | None":
    """The cache folder (not made here), or None when the cache is off."""
    where = _root()
    if where is None:
        return None
    from pathlib import Path

    return Path(where)


def _root() -> str | None:
    """:func:`root` as text (the cache's own reads and writes use it: no pathlib at start-up)."""
    if not enabled():
        return None
    where = os.environ.get("KERNLENS_CACHE")
    if where:
        return paths.text(where)
    return paths.text(user_cache_dir())


def user_cache_dir() -> str:
    """``platformdirs.user_cache_dir("kernlens", appauthor=False)``, without importing platformdirs
    (and the pathlib it imports: ~8 ms of CPU at every start) where the answer is plain: on Linux,
    ``$XDG_CACHE_HOME/kernlens`` when that variable is an absolute path, else
    ``~/.cache/kernlens`` when ``$HOME`` is an absolute path, which is what platformdirs' Unix
    rules give (tests/isa/test_cache.py compares the two). Anything else (another system,
    Android, a relative or missing ``HOME``) asks platformdirs."""
    import sys

    if sys.platform.startswith("linux") and not hasattr(sys, "getandroidapilevel") and \
            (os.environ.get("ANDROID_DATA") != "/data" or os.environ.get("ANDROID_ROOT") != "/system"):
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        if os.path.isabs(xdg):
            return os.path.join(xdg, "kernlens")
        home = os.environ.get("HOME")
        if home is not None and os.path.isabs(home):
            return os.path.join(os.path.expanduser("~/.cache"), "kernlens")
    from platformdirs import user_cache_dir as platform_cache_dir

    return platform_cache_dir("kernlens", appauthor=False)


def folder(kind: str) -> "Path | None":
    """``root()/kind``, made if missing; None when the cache is off or the folder cannot be made."""
    where = folder_text(kind)
    if where is None:
        return None
    from pathlib import Path

    return Path(where)


def folder_text(kind: str) -> str | None:
    """:func:`folder` as text."""
    base = _root()
    if base is None:
        return None
    path = paths.joined(base, kind)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path


@cache
def code_version(*packages: str) -> str:
    """The kernlens version and a digest of the (path, size, mtime) of every source file of the
    top-level ``packages`` (``'isa'``, ``'sim'``...): changes when any of that code changes."""
    from kernlens import __version__

    return f"{__version__}-{tree_digest(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), packages)}"


def tree_digest(top, packages) -> str:
    """A digest of the relative path, size and modification time of every file under
    ``top/package`` for each of ``packages`` (``__pycache__`` and bytecode left out), in the
    order of a sorted top-down walk: a folder's files, then its sub-folders'. (``os.scandir``, not
    ``os.walk``: the same walk in about half the CPU, ~1 ms for isa/ and sim/ of every run.)"""
    h = blake2b(digest_size=16)

    def walk(path: str, rel: str) -> None:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        folders = []
        for e in entries:
            try:
                if e.is_dir():
                    if e.name != "__pycache__":
                        folders.append(e)
                    continue
                if e.name.endswith((".pyc", ".pyo")):
                    continue
                st = e.stat()
            except OSError:
                continue
            h.update(f"{rel}/{e.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        for d in folders:
            if not d.is_symlink():                  # (os.walk lists a linked folder, never enters it)
                walk(d.path, f"{rel}/{d.name}")

    for pkg in packages:
        walk(os.path.join(top, pkg), pkg)
    return h.hexdigest()


def key(*parts: str | bytes) -> str:
    """A file-name-safe digest of ``parts`` (text, options, :func:`code_version`)."""
    h = blake2b(digest_size=20)
    for p in parts:
        b = p if isinstance(p, bytes) else str(p).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _checksum(body) -> bytes:
    """The header's checksum of a payload (bytes-like): its CRC-32, :data:`_DIGEST` bytes."""
    return crc32(body).to_bytes(_DIGEST, "little")


def load(kind: str, name: str):
    """The object stored under ``kind/name``, or None (missing, off, or damaged: then removed)."""
    base = _root()
    if base is None:
        return None
    path = os.path.join(base, kind, f"{name}.pickle")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(_MAGIC) + 8 + _DIGEST
    try:
        if data[:len(_MAGIC)] != _MAGIC:
            raise ValueError("bad magic")
        size = int.from_bytes(data[len(_MAGIC):len(_MAGIC) + 8], "little")
        body = memoryview(data)[head:]                  # (not a copy of the payload)
        if len(body) != size or _checksum(body) != data[head - _DIGEST:head]:
            raise ValueError("bad checksum")
        with gc_paused():
            obj = pickle.loads(body)
    except Exception:  # noqa: BLE001 - any damaged entry is a miss
        try:
            os.unlink(path)
        except OSError:
            pass
        return None
    try:
        os.utime(path)           # recently used: kept by the size limit
    except OSError:
        pass
    return obj


def store(kind: str, name: str, obj) -> bool:
    """Store ``obj`` under ``kind/name`` (atomically); False when the cache is off or unwritable."""
    path = folder_text(kind)
    if path is None:
        return False
    try:
        body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an object that does not pickle is simply not cached
        return False
    data = b"".join((_MAGIC, len(body).to_bytes(8, "little"), _checksum(body), body))
    tmp = os.path.join(path, f".tmp-{os.getpid()}-{id(data):x}-{name}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(path, f"{name}.pickle"))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        return False
    _trim(os.path.dirname(path))
    return True


def load_or_copy(kind: str, name: str, installed):
    """:func:`load` of ``kind/name``, else the copy ``installed`` (a path: an entry kept beside the code
    that reads it, as Python keeps bytecode) copied into the user cache and loaded from there; None
    when neither is there or the copy is damaged (:func:`load` then removes it from the user cache)."""
    got = load(kind, name)
    if got is None:
        user = folder_text(kind)
        if copy_if_missing(installed, user and os.path.join(user, f"{name}.pickle")):
            got = load(kind, name)
    return got


def copy_if_missing(src, dst) -> bool:
    """Copy the file ``src`` to ``dst`` (paths or None) unless ``dst`` exists (:func:`copy_over`
    otherwise); False when nothing was copied."""
    if dst is None or os.path.exists(dst):
        return False
    return copy_over(src, dst)


def copy_over(src, dst) -> bool:
    """Copy the file ``src`` to ``dst`` (paths or None: an entry to or from its copy beside the code
    that reads it, ``isa/ptx/__pycache__``...) through a temporary file renamed into place:
    concurrent processes see a whole file or none; False when nothing was copied (either side
    missing, unreadable or unwritable, as in a read-only install)."""
    if src is None or dst is None or not os.path.exists(src):
        return False
    dst = paths.text(dst)
    tmp = paths.joined(paths.parent(dst), f".tmp-{os.getpid()}-{os.path.basename(dst)}")
    try:
        try:
            os.mkdir(paths.parent(dst))
        except FileExistsError:
            pass
        with open(src, "rb") as f:
            data = f.read()
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, dst)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def _trim(base) -> None:
    """Remove the least recently used entries until the folder holds at most the size limit."""
    try:
        limit = float(os.environ.get("KERNLENS_CACHE_MB", _LIMIT_MB)) * 1e6
    except ValueError:
        limit = _LIMIT_MB * 1e6
    entries = []
    total = 0
    for dirpath, _, filenames in os.walk(base):
        for n in filenames:
            p = os.path.join(dirpath, n)
            try:
                st = os.stat(p)
            except OSError:
                continue
            total += st.st_size
            entries.append((st.st_mtime, st.st_size, p))
    if total <= limit:
        return
    for _, size, p in sorted(entries):
        try:
            os.unlink(p)
        except OSError:
            continue
        total -= size
        if total <= limit:
            break


def clear() -> int:
    """Remove every entry; the number removed."""
    base = root()
    n = 0
    if base is None or not base.exists():
        return 0
    for dirpath, _, filenames in os.walk(base):
        for name in filenames:
            try:
                os.unlink(os.path.join(dirpath, name))
                n += 1
            except OSError:
                pass
    return n
