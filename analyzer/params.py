"""Kernel parameter values from ``--param NAME=VALUE``.

PTX names parameters ``sgemm_naive_param_5``; people know them as ``K``. A NAME may be the PTX
name, its index (``5`` or ``param_5``), or a source name found in, in this order: the corpus
manifest's launch arguments (when the file is a corpus PTX), a Triton ``.json`` beside the PTX
(``arg_names``), or the CUDA source's kernel signature (from ``.file`` or ``../cuda/<stem>.cu``)::

    __global__ void sgemm_naive(const float* A, const float* B, float* C, int M, int N, int K)
    -> K is sgemm_naive_param_5
"""

from __future__ import annotations

import json
import os
import re

from isa.errors import InputError
from isa.ir import Function, Module
from kernlens import paths


def parse_assignments(items: list[str], what: str = "--param") -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"bad {what} '{item}': expected NAME=VALUE (for example K=4096)")
        try:
            out[name.strip()] = int(value.strip(), 0)
        except ValueError:
            raise InputError(f"bad {what} '{item}': '{value}' is not an integer") from None
    return out


def parse_dims(text: str | None, what: str) -> tuple[int, int, int] | None:
    if text is None:
        return None
    parts = [p for p in re.split(r"[,x\s]+", text.strip()) if p]
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        raise InputError(f"bad {what} '{text}': expected up to three integers such as 128,1,1") from None
    if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
        raise InputError(f"bad {what} '{text}': expected up to three positive integers such as 128,1,1")
    return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]


def source_names(module: Module, fn: Function) -> list[str | None]:
    """Source-level names of the kernel's parameters, ``None`` where unknown."""
    n = len(fn.params)
    if module.path:
        path, manifest, meta = _beside(module.path)
        names = _manifest_names(path, fn.name, manifest) or _triton_names(meta) or _cuda_names(module, path, fn.name)
        if names:
            return (list(names) + [None] * n)[:n]
    return [None] * n


def _beside(module_path) -> tuple[str, str, str]:
    """``(the PTX path as str(Path(...)) writes it, the manifest.json that may name its kernels'
    arguments, the Triton .json beside it)``: worked out once per path, not once per kernel (no
    pathlib at start-up)."""
    got = _BESIDE.get(module_path)
    if got is None:
        path = paths.text(module_path)
        got = (path, paths.joined(paths.parent(paths.parent(path)), "manifest.json"), paths.with_suffix(path, ".json"))
        if len(_BESIDE) >= 256:
            _BESIDE.clear()
        _BESIDE[module_path] = got
    return got


_BESIDE: dict = {}
_JSON: dict[str, tuple[tuple[int, int], dict | None]] = {}


def _json_dict(path: str) -> dict | None:
    """The JSON object in ``path`` (a manifest, a Triton kernel's ``.json``), read again only when
    the file's modification time or size changed (analysing a file asks once per kernel; this
    process keeps one parse); ``None`` for a missing file, bad JSON or anything but an object."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _JSON.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        with open(path) as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        data = None
    if len(_JSON) >= 256:
        _JSON.clear()
    _JSON[path] = (stamp, data)
    return data


def _manifest_names(path: str, kernel: str, manifest: str) -> list[str] | None:
    data = _json_dict(manifest)
    if data is None:
        return None
    for e in data.get("entries", ()):
        if e.get("entry") == kernel and any(paths.name(p) == paths.name(path) for p in e.get("ptx", {}).values()):
            return [a.get("scalar") or a.get("buffer") for a in e.get("launch", {}).get("args", ())]
    return None


def _triton_names(meta: str) -> list[str] | None:
    """``arg_names`` of the Triton ``.json`` beside the PTX (read once per file, not per kernel: a
    report written with ``-o X.json`` beside ``X.ptx`` is such a file, and big)."""
    data = _json_dict(meta)
    if data is None:
        return None
    names = data.get("arg_names")
    return list(names) if isinstance(names, list) else None


_SIG = r"__global__\s+(?:__launch_bounds__\([^)]*\)\s*|__cluster_dims__\([^)]*\)\s*)*void\s+(?:__launch_bounds__\([^)]*\)\s*)*{name}\s*\(([^)]*)\)"


def _cuda_sources(module: Module, path: str) -> list[str]:
    """The texts of the CUDA sources that may hold the module's kernel signatures: the ``.cu``
    files its ``.file`` entries name (each distinct name once: a big module repeats them) that
    exist here, then ``../cuda/<stem>.cu`` and ``<stem>.cu`` beside the PTX."""
    names = dict.fromkeys(f.name for f in module._files.values())
    candidates = [paths.text(c) for c in names if paths.suffix(c) == ".cu"]
    stem = paths.name(path).split(".")[0]
    candidates.append(paths.joined(paths.parent(paths.parent(path)), f"cuda/{stem}.cu"))
    candidates.append(paths.with_name(path, stem + ".cu"))
    texts = []
    for c in candidates:
        try:
            with open(c, errors="replace") as f:
                texts.append(f.read())
        except OSError:
            continue
    return texts


# (module, path, the texts of its CUDA sources) of the module analysed last: read once per module,
# not once per kernel (a module is compared by identity: its equality would compare whole IR trees)
_CUDA_TEXTS: list = [None, None, None]


def _cuda_names(module: Module, path: str, kernel: str) -> list[str] | None:
    if _CUDA_TEXTS[0] is module and _CUDA_TEXTS[1] == path:
        texts = _CUDA_TEXTS[2]
    else:
        texts = _cuda_sources(module, path)
        _CUDA_TEXTS[:] = [module, path, texts]
    plain = _IDENT.fullmatch(kernel) is not None and kernel != "__launch_bounds__"
    for text in texts:
        if plain:
            params = _signatures(text).get(kernel)
            if params is None:
                continue
        else:
            m = re.search(_SIG.format(name=re.escape(kernel)), text)
            if not m:
                continue
            params = m.group(1)
        names = []
        for part in params.split(","):
            words = re.findall(r"[A-Za-z_]\w*", part.split("=")[0])
            names.append(words[-1] if words else None)
        return names
    return None


#: a kernel name that :func:`_signatures` finds (but ``__launch_bounds__``, which the pattern may also
#: read as the name): the name in :data:`_SIG` is then a whole word of these
_IDENT = re.compile(r"[\w$]+")
_ANY_SIG = re.compile(_SIG.format(name=r"([\w$]+)"))
# CUDA source text -> {kernel name: its parameter text at its first signature}, for the texts seen last
_SIGNATURES: dict[str, dict[str, str]] = {}


def _signatures(text: str) -> dict[str, str]:
    """Every ``__global__`` signature of a CUDA source by kernel name: what ``re.search`` of
    :data:`_SIG` with that name finds (the first signature that matches), for every name at once,
    so that a module of thousands of kernels reads each source once (one search per kernel, each
    with its own pattern, took 0.8 s CPU of the 5 MB bench slice's 11 s). A signature is tried at
    every ``__global__`` in the text: where the pattern with a given name matches, the pattern
    with any name matches there with that name (the name is a whole word of :data:`_IDENT`
    followed by ``(``; the pattern for any name takes ``__launch_bounds__(...)`` as what it is and
    the name after it), so the first match of each name is the one ``re.search`` finds.

        __global__ void __launch_bounds__(256) sgemm_tiled(const float* A, float* C, int K)
    """
    got = _SIGNATURES.get(text)
    if got is not None:
        return got
    got = {}
    match = _ANY_SIG.match
    at = text.find("__global__")
    while at >= 0:
        m = match(text, at)
        if m is not None:
            got.setdefault(m.group(1), m.group(2))
        at = text.find("__global__", at + 1)
    if len(_SIGNATURES) >= 64:
        _SIGNATURES.clear()
    _SIGNATURES[text] = got
    return got


def resolve(module: Module, fn: Function, given: dict[str, int], *, strict: bool = True) -> dict[str, int]:
    """Map user names to PTX parameter names; unknown names raise :class:`InputError` when ``strict``."""
    if not given:
        return {}
    ptx_names = [p.name for p in fn.params]
    src = source_names(module, fn)
    out: dict[str, int] = {}
    for key, value in given.items():
        idx = None
        if key in ptx_names:
            idx = ptx_names.index(key)
        elif key.isdigit() and int(key) < len(ptx_names):
            idx = int(key)
        elif re.fullmatch(r"param_\d+", key) and int(key[6:]) < len(ptx_names):
            idx = int(key[6:])
        elif key in src:
            idx = src.index(key)
        if idx is None:
            if strict:
                known = [f"{p} ({s})" if s else p for p, s in zip(ptx_names, src)]
                raise InputError(f"kernel '{fn.name}' has no parameter '{key}' (parameters: {', '.join(known) or 'none'})")
            continue
        out[ptx_names[idx]] = value
    return out
