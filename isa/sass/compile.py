"""PTX -> cubin -> SASS listing, through the CUDA tools, cached on disk by content hash.

``ptxas -v -lineinfo -arch=<the file's .target>`` compiles (the ``-v`` report gives registers,
spills, shared memory and barriers per kernel); ``nvdisasm -c -gp`` disassembles with the PTX line
of every instruction (``cuobjdump -sass`` is the fallback, without line info). Both tools are
optional: :func:`tools` says which are there, :class:`Unavailable` carries a clear note when
they are not, and the rest of kernlens never needs them. ``nvdisasm`` comes with the CUDA toolkit
or from PyPI (``pip install 'kernlens[sass]'`` installs ``nvidia-cuda-nvdisasm``).

A ``ptxas -v`` report and what :func:`resources_from_log` makes of it::

    ptxas info    : Compiling entry function 'sgemm_smem_tiled32' for 'sm_90'
    ptxas info    : Function properties for sgemm_smem_tiled32
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 32 registers, used 1 barriers, 8192 bytes smem

    Resources(registers=32, registers_allocated=32, spill_stores=0, spill_loads=0,
              shared_bytes=8192, stack_bytes=0, barriers=1)

Results are cached in ``sass/<sha256>.json`` of the kernlens cache (:mod:`isa.cache`: ``$KERNLENS_CACHE``,
else the user cache folder; off with ``KERNLENS_NO_CACHE=1``), keyed by the PTX text, the target and the
tools' versions, so a second analysis of the same file runs no tool at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import KernlensError, SemanticError, Span

#: bump when the cached record's shape or the tool options change
CACHE_FORMAT = 1
#: registers the H200 allocates at least per thread (ncu ``launch__registers_per_thread`` shows 16
#: for kernels ptxas gave 12-15: dequantize_s8, reduce_sum_atomic, ... in ../shared/corpus/h200)
MIN_REGISTERS = 16


class Unavailable(KernlensError):
    """The CUDA tools that SASS needs are not installed (the message says what to install)."""

    kind = "note"


@dataclass(frozen=True)
class Resources:
    """What ptxas allocated for one kernel (``ptxas -v``), and what the hardware allocates.

    ``registers`` is ptxas's count; ``registers_allocated`` what a launch reserves per thread, as
    Nsight Compute's ``launch__registers_per_thread`` shows it on the H200: ptxas's count, and
    :data:`MIN_REGISTERS` where ptxas used fewer (checked against every corpus kernel).
    """

    registers: int
    registers_allocated: int
    spill_stores: int = 0
    spill_loads: int = 0
    shared_bytes: int = 0
    stack_bytes: int = 0
    barriers: int = 0
    const_bytes: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def registers_allocated(registers: int) -> int:
    """Registers per thread a launch reserves for a kernel ptxas gave ``registers``."""
    return max(MIN_REGISTERS, int(registers))


@dataclass
class Compiled:
    """One PTX file through ptxas and the disassembler."""

    target: str
    listing: str                           # SASS listing text ('' when no disassembler)
    log: str                               # ptxas -v output
    resources: dict[str, Resources] = field(default_factory=dict)
    disassembler: str | None = None        # 'nvdisasm', 'cuobjdump' or None
    line_info: bool = False                # the listing names the PTX line of each instruction
    seconds: dict[str, float] = field(default_factory=dict)
    cached: bool = False


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------


def _wheel_bin(name: str) -> str | None:
    """A CUDA tool installed from PyPI (``nvidia-cuda-nvdisasm`` puts it in nvidia/cu13/bin)."""
    try:
        import nvidia  # namespace package of NVIDIA's wheels
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        for sub in ("cu13/bin", "cu12/bin", "cuda_nvdisasm/bin", "cuda_cuobjdump/bin", "cuda_nvcc/bin"):
            p = Path(root) / sub / name
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    return None


@lru_cache(maxsize=None)
def _which(name: str) -> str | None:
    env = os.environ.get(f"KERNLENS_{name.upper()}")
    if env:
        return env if Path(env).is_file() else None
    return shutil.which(name) or _wheel_bin(name)


def tools() -> dict[str, str | None]:
    """Paths of ``ptxas``, ``nvdisasm`` and ``cuobjdump`` (None where absent)."""
    return {n: _which(n) for n in ("ptxas", "nvdisasm", "cuobjdump")}


def unavailable_note() -> str | None:
    """None when SASS can be produced here, else what is missing and how to get it."""
    t = tools()
    if t["ptxas"] is None:
        return ("SASS needs ptxas (CUDA toolkit) on PATH; it is not installed here, so the SASS view, "
                "registers and spills are not available (everything else works)")
    if t["nvdisasm"] is None and t["cuobjdump"] is None:
        return ("SASS needs nvdisasm or cuobjdump: install the CUDA toolkit, or `pip install 'kernlens[sass]'` "
                "(nvidia-cuda-nvdisasm); registers and spills from ptxas -v are still reported")
    return None


@lru_cache(maxsize=None)
def _version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    m = re.findall(r"V\d+\.\d+\.\d+", out)
    return m[-1] if m else out.strip().splitlines()[-1] if out.strip() else "?"


# --------------------------------------------------------------------------------------------
# ptxas -v
# --------------------------------------------------------------------------------------------

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(.*)")
_ERROR = re.compile(r"ptxas (.+?), line (\d+); (error|warning)\s*:\s*(.*)")


def resources_from_log(log: str) -> dict[str, Resources]:
    """Kernel name -> :class:`Resources`, from ``ptxas -v`` output."""
    out: dict[str, Resources] = {}
    entry = None
    frames: dict[str, tuple[int, int, int]] = {}
    props = None
    for line in log.splitlines():
        m = _ENTRY.search(line)
        if m:
            entry = m.group(1)
            continue
        m = _PROPS.search(line)
        if m:
            props = m.group(1)
            continue
        m = _FRAME.search(line)
        if m and props is not None:
            frames[props] = tuple(int(x) for x in m.groups())
            continue
        m = _USED.search(line)
        if m and entry is not None:
            regs = int(m.group(1))
            rest = m.group(2)
            smem = re.search(r"(\d+) bytes smem", rest)
            bars = re.search(r"used (\d+) barriers", rest)
            cmem = re.search(r"(\d+) bytes cmem\[0\]", rest)
            stack, st, ld = frames.get(entry, (0, 0, 0))
            out[entry] = Resources(regs, registers_allocated(regs), st, ld, int(smem.group(1)) if smem else 0,
                                   stack, int(bars.group(1)) if bars else 0, int(cmem.group(1)) if cmem else 0)
            entry = None
    return out


def _ptxas_error(log: str, text: str, file: str) -> KernlensError:
    from ..lark_errors import source_line

    for line in log.splitlines():
        m = _ERROR.search(line)
        if m and m.group(3) == "error":
            n = int(m.group(2))
            return SemanticError(f"ptxas: {m.group(4).strip()}", Span(file, n, 1), source_line=source_line(text, n))
    return SemanticError("ptxas failed: " + (log.strip().splitlines() or ["(no output)"])[-1], Span(file))


# --------------------------------------------------------------------------------------------
# Compile and disassemble, with the cache
# --------------------------------------------------------------------------------------------


def cache_dir() -> Path | None:
    """``sass/`` of the kernlens cache (:mod:`isa.cache`), or None with ``KERNLENS_NO_CACHE=1``."""
    from isa import cache

    root = cache.root()
    return None if root is None else root / "sass"


def cache_key(text: str, target: str) -> str:
    t = tools()
    parts = [str(CACHE_FORMAT), target, _version(t["ptxas"]) if t["ptxas"] else "-",
             _version(t["nvdisasm"]) if t["nvdisasm"] else ("cuobjdump " + _version(t["cuobjdump"])
                                                              if t["cuobjdump"] else "-"), text]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _load_cached(key: str) -> Compiled | None:
    d = cache_dir()
    if d is None:
        return None
    p = d / f"{key}.json"
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    res = {k: Resources(**v) for k, v in d.pop("resources", {}).items()}
    return Compiled(resources=res, cached=True, **{k: v for k, v in d.items() if k != "cached"})


def _store(key: str, c: Compiled) -> None:
    d = cache_dir()
    if d is None:
        return
    try:
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{key}.{os.getpid()}.tmp"
        rec = {"target": c.target, "listing": c.listing, "log": c.log, "disassembler": c.disassembler,
               "line_info": c.line_info, "seconds": c.seconds,
               "resources": {k: v.to_json() for k, v in c.resources.items()}}
        tmp.write_text(json.dumps(rec))
        tmp.replace(d / f"{key}.json")
    except OSError:
        pass  # a read-only home: no cache, same results


def _disassemble(cubin: Path) -> tuple[str, str | None, bool]:
    t = tools()
    if t["nvdisasm"]:
        # -ndf: no branch-stack dataflow pass (a third of nvdisasm's time; the listing is the same)
        proc = subprocess.run([t["nvdisasm"], "-c", "-gp", "-ndf", str(cubin)], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout, "nvdisasm", True
    if t["cuobjdump"]:
        proc = subprocess.run([t["cuobjdump"], "-sass", str(cubin)], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout, "cuobjdump", False
    return "", None, False


def compile_ptx(text: str, target: str, file: str = "<ptx>", *, use_cache: bool = True) -> Compiled:
    """Compile one PTX text for ``target`` and disassemble it (cached)."""
    return compile_many([(text, target, file)], use_cache=use_cache)[0]


def compile_many(items: list[tuple[str, str, str]], *, use_cache: bool = True, then=None,
                 jobs: int | None = None) -> list[Compiled]:
    """Compile and disassemble several PTX texts ``(text, target, file)``.

    Cache misses of one target go through one ``ptxas`` call and one ``nvdisasm`` call where
    they can (ptxas takes several files; nvdisasm's start-up, 0.3 s, is most of its time on small
    kernels): files whose kernels have distinct function names (their source debug info is
    dropped for the batch, :func:`strip_debug`). Any batch that ptxas refuses is redone file by
    file, so the results are those of compiling each file alone. ``then(i, compiled)`` runs for
    each result as soon as its batch is done (in the batch's thread: the caller's parsing
    overlaps the other batches' tools). ``jobs`` is how many batches run at once (default: one per
    batch, at most 4 and the number of cores); ``jobs=1`` runs the tools one after the other, and
    ``then`` in one thread beside them (a batch's listing read while the next batch's tools run).
    """
    t = tools()
    if t["ptxas"] is None:
        raise Unavailable(unavailable_note() or "ptxas is not installed")
    out: list[Compiled | None] = [None] * len(items)
    keys = [cache_key(text, target) for text, target, _ in items]
    todo: dict[str, list[int]] = {}
    batches: list[tuple[str, list[int]]] = []
    hits = []
    for i, (text, target, _) in enumerate(items):
        hit = _load_cached(keys[i]) if use_cache else None
        if hit is not None:
            out[i] = hit
            hits.append(i)
        else:
            todo.setdefault(target, []).append(i)
    for target, idx in todo.items():
        batch, alone, names = [], [], set()
        for i in idx:
            kernels = _function_names(items[i][0])
            if kernels & names:
                alone.append([i])
            else:
                names |= kernels
                batch.append(i)
        groups = ([batch] if len(batch) > 1 else [[i] for i in batch]) + alone
        batches.extend((target, g) for g in groups)

    def run(job):
        target, group = job
        results = _run_group([items[i] for i in group], target)
        if results is None:              # ptxas refused the batch: one by one
            results = [_run_group([items[i]], target)[0] for i in group]
        if then is not None:
            for i, c in zip(group, results):
                then(i, c)
        return group, results

    if then is not None:
        for i in hits:
            then(i, out[i])
    # the tools run as processes: one thread per group keeps them (and the cores) busy together
    workers = min(len(batches), max(1, os.cpu_count() or 1), 4) if jobs is None else min(len(batches), jobs)
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            done = list(pool.map(run, batches))
    elif then is not None and len(batches) > 1:
        # the tools one after the other, and ``then`` (the caller's parsing) in a thread of its own:
        # the listing of one batch is read while the next batch's tools run
        from concurrent.futures import ThreadPoolExecutor

        hand = then
        then = None
        done, pending = [], []
        with ThreadPoolExecutor(1) as reader:
            for j in batches:
                group, results = run(j)
                done.append((group, results))
                pending.extend(reader.submit(hand, i, c) for i, c in zip(group, results))
            for f in pending:
                f.result()
    else:
        done = [run(j) for j in batches]
    for group, results in done:
        for i, c in zip(group, results):
            out[i] = c
            if use_cache:
                _store(keys[i], c)
    return out  # type: ignore[return-value]


def _function_names(text: str) -> set[str]:
    return set(re.findall(r"\.entry\s+([\w$]+)", text)) | set(re.findall(r"\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", text))


def strip_debug(text: str) -> str:
    """``text`` without its source-level debug info (``.file``, ``.loc``, ``.section .debug_*``), each
    removed line kept as a comment so that line numbers stay. Files of a batch would clash on their
    ``.file`` indices and debug labels; the SASS and its PTX line table (``-lineinfo``, ``-gp``) do not
    depend on them (the same listing, byte for byte, on every Triton file of the corpus)."""
    if ".file" not in text and ".loc" not in text and ".debug" not in text:
        return text
    out = []
    in_section = False
    for line in text.split("\n"):
        s = line.lstrip()
        if in_section:
            out.append("//" + line)
            if s.startswith("}"):
                in_section = False
            continue
        if s.startswith(".section") and ".debug" in s:
            in_section = not s.rstrip().endswith("}")
            out.append("//" + line)
        elif s.startswith((".file", ".loc")):
            out.append("//" + line)
        else:
            out.append(line)
    return "\n".join(out)


def _run_group(group: list[tuple[str, str, str]], target: str) -> list[Compiled] | None:
    """ptxas + disassembler over the files of ``group`` together; None when a batch fails."""
    t = tools()
    with tempfile.TemporaryDirectory(prefix="kernlens-sass-") as tmp:
        paths = []
        for k, (text, _, _) in enumerate(group):
            p = Path(tmp) / f"k{k}.ptx"
            p.write_text(strip_debug(text) if len(group) > 1 else text)
            paths.append(str(p))
        cubin = Path(tmp) / "k.cubin"
        t0 = time.perf_counter()
        proc = subprocess.run([t["ptxas"], "-v", "-lineinfo", f"-arch={target}", *paths, "-o", str(cubin)],
                              capture_output=True, text=True)
        t1 = time.perf_counter()
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            if len(group) > 1:
                return None
            text, _, file = group[0]
            raise _ptxas_error(log.replace(paths[0], file), text, file)
        listing, dis, line_info = _disassemble(cubin)
        t2 = time.perf_counter()
    share = 1.0 / len(group)
    seconds = {"ptxas": (t1 - t0) * share, "disassemble": (t2 - t1) * share}
    if len(group) == 1:
        return [Compiled(target, listing, log, resources_from_log(log), dis, line_info, seconds)]
    return _split(group, target, listing, log, dis, line_info, seconds)


def _split(group, target, listing, log, dis, line_info, seconds) -> list[Compiled]:
    """One batched listing and log cut back into per-file records (by the files' function names)."""
    res = resources_from_log(log)
    sections = re.split(r"(?m)^(?=\s*\.section\s+\.text\.)", listing)
    head, body = sections[0], sections[1:]
    blocks = re.split(r"(?m)^(?=ptxas info\s*: Compiling entry function)", log)
    out = []
    for text, _, _ in group:
        names = _function_names(text)
        mine = [s for s in body if re.match(r"\s*\.section\s+\.text\.([\w$]+)", s).group(1) in names]
        own_log = "".join(b for b in blocks[1:] if _ENTRY.search(b) and _ENTRY.search(b).group(1) in names)
        out.append(Compiled(target, head + "".join(mine), own_log, {k: v for k, v in res.items() if k in names},
                            dis, line_info, dict(seconds)))
    return out
