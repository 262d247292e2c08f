"""Launch specs: grid, block, shared memory and the kernel's arguments, as the corpus writes them.

A spec (a JSON file, or an entry of a manifest: ``manifest.json#sgemm_naive``)::

    {"grid": [3, 7, 1], "block": [32, 8, 1], "dynamic_shared_bytes": 0,
     "args": [{"buffer": "A", "dtype": "f32", "shape": [67, 45], "init": "randn", "role": "in"},
              {"buffer": "C", "dtype": "f32", "shape": [67, 53], "init": "zeros", "role": "out"},
              {"scalar": "M", "dtype": "s32", "value": 67}]}

for a kernel ``.entry sgemm_naive(.param .u64 A, .param .u64 C, .param .u32 M)``.  Arguments are in
parameter order.  Buffers are drawn from ``numpy.random.default_rng(seed)`` in argument order,
with the seed ``crc32(entry name)`` (the corpus's rule, so the inputs equal the ones the GPU saw);
their values are rounded to the buffer dtype (RNE; e4m3 saturates at 448).  Values exist twice:
*decoded* (what a reference sees: bf16 and e4m3 as float32 holding exact values) and in
*device storage* (what the kernel reads: bf16 as uint16 bit patterns, e4m3 as uint8 codes).
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from isa.errors import InputError, Span
from kernlens import paths

from sim.numerics import codec

#: how a buffer is stored in device memory
DEVICE_NP = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "e4m3": np.uint8,
             "s8": np.int8, "u8": np.uint8, "s32": np.int32, "u32": np.uint32,
             "f64": np.float64, "s16": np.int16, "u16": np.uint16, "s64": np.int64, "u64": np.uint64}
#: how its decoded values are held
DECODED_NP = dict(DEVICE_NP, bf16=np.float32, e4m3=np.float32)
EXACT_DTYPES = frozenset({"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"})
SCALAR_NP = {"s32": np.int32, "u32": np.uint32, "s64": np.int64, "u64": np.uint64,
             "f32": np.float32, "f64": np.float64, "s16": np.int16, "u16": np.uint16}
ROLES = ("in", "out", "inout")
INIT_KINDS = ("randn", "uniform", "zeros", "full", "randint", "logrand")


# ----------------------------------------------------------------------------------------------
# encodings: sim.numerics.codec (the corpus's reference.py does the same arithmetic; its e4m3
# encoder differs only for NaN, which it saturates to 416; -0 is stored as +0 as it does)
# ----------------------------------------------------------------------------------------------

def round_bf16(x) -> np.ndarray:
    """Round (through float32, as the corpus's inputs were) to bf16; float32 values that bf16
    holds exactly."""
    bits = codec.encode(np.asarray(x, dtype=np.float64).astype(np.float32), "bf16")
    return codec.decode(bits, "bf16").astype(np.float32)


def encode(values, dtype: str) -> np.ndarray:
    """Decoded values -> device storage (bf16 bits as uint16, e4m3 codes as uint8)."""
    _check_dtype(dtype, DEVICE_NP)
    if dtype == "bf16":
        return codec.encode(np.ascontiguousarray(values, dtype=np.float32), "bf16")
    if dtype == "e4m3":
        bits = codec.encode(np.asarray(values, dtype=np.float64), "e4m3", "rn", saturate=True)
        return np.where(bits == 0x80, np.uint8(0), bits)   # -0 stored as +0, as the corpus's inputs were
    return np.ascontiguousarray(values, dtype=DEVICE_NP[dtype])


def decode(raw, dtype: str) -> np.ndarray:
    """Device storage -> decoded values."""
    _check_dtype(dtype, DEVICE_NP)
    if dtype in ("bf16", "e4m3"):
        return codec.decode(np.asarray(raw, dtype=DEVICE_NP[dtype]), dtype).astype(np.float32)
    return np.asarray(raw, dtype=DEVICE_NP[dtype])


def entry_seed(name: str, perf: bool = False) -> int:
    """The corpus's seed rule: crc32 of the entry name (+7919 for perf launches), 31 bits."""
    return (zlib.crc32(name.encode()) + (7919 if perf else 0)) & 0x7FFFFFFF


def _check_dtype(dtype, table, span=None):
    if dtype not in table:
        raise InputError(f"unknown dtype {dtype!r}", span, expected=sorted(table))


# ----------------------------------------------------------------------------------------------
# the spec
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BufferArg:
    """A device buffer argument (the kernel receives its address)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    init: str = "zeros"
    role: str = "in"

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(DEVICE_NP[self.dtype]).itemsize

    @property
    def is_output(self) -> bool:
        return self.role in ("out", "inout")


@dataclass(frozen=True)
class ScalarArg:
    """A by-value argument: ``np.int32``, ``np.float32``, ``np.uint64(0)`` (a null pointer)..."""

    name: str
    dtype: str
    value: float | int

    def numpy(self):
        v = self.value
        if isinstance(v, str):
            v = float(v)
        if self.dtype.startswith(("s", "u")) and isinstance(v, float):
            if not v.is_integer():
                raise InputError(f"scalar {self.name}: {v} is not an integer ({self.dtype})")
            v = int(v)
        return SCALAR_NP[self.dtype](v)


@dataclass(frozen=True)
class TensorMapArg:
    """A ``CUtensorMap`` argument (``.param .align 64 .b8 p[128]``) over buffer ``of``, described by the
    fields of ``cuTensorMapEncodeTiled`` (:mod:`sim.ptx.tensormap`)::

        {"tensor_map": "a_desc", "of": "A", "box": [32, 64], "swizzle": "64B"}

    ``dims`` default to the buffer's shape reversed (dimension 0 is the contiguous one, as CUDA
    orders them), ``dtype`` to the buffer's, ``strides`` (bytes, dimensions 1..rank-1) to a dense
    tensor, ``element_strides`` to ones, ``interleave``/``swizzle`` to ``none``, ``oob_fill`` to
    ``zero`` (or ``nan``). An im2col map (``cuTensorMapEncodeIm2col``) gives, instead of ``box``,
    ``"im2col": {"lower": [...], "upper": [...], "channels_per_pixel": C, "pixels_per_column": P}`` (corners
    W first). ``of`` names a buffer argument or one of the launch's ``buffers`` (buffers
    no parameter points to, as with Triton's host TensorDescriptors)."""

    name: str
    of: str
    box: tuple[int, ...]
    dims: tuple[int, ...] | None = None
    dtype: str | None = None
    strides: tuple[int, ...] | None = None
    element_strides: tuple[int, ...] | None = None
    interleave: str = "none"
    swizzle: str = "none"
    oob_fill: str = "zero"
    im2col: Mapping | None = None      # {"lower": [...], "upper": [...], "channels_per_pixel", "pixels_per_column"}

    def tensor_map(self, buf: "BufferArg"):
        from sim.ptx.tensormap import TensorMap

        if self.im2col is not None:
            if self.interleave != "none":
                raise InputError(f"tensor map {self.name}: interleaved im2col maps are not simulated")
            g = self.im2col
            return TensorMap.im2col(self.dtype or buf.dtype, self.dims or tuple(reversed(buf.shape)),
                                    lower=g["lower"], upper=g["upper"], channels_per_pixel=g["channels_per_pixel"],
                                    pixels_per_column=g["pixels_per_column"], strides=self.strides,
                                    element_strides=self.element_strides, swizzle=self.swizzle,
                                    oob_fill=self.oob_fill, where=f"tensor map {self.name}")
        return TensorMap.tiled(self.dtype or buf.dtype, self.dims or tuple(reversed(buf.shape)), self.box,
                               strides=self.strides, element_strides=self.element_strides,
                               interleave=self.interleave, swizzle=self.swizzle, oob_fill=self.oob_fill,
                               where=f"tensor map {self.name}")


Arg = BufferArg | ScalarArg | TensorMapArg


@dataclass(frozen=True)
class LaunchSpec:
    """Grid, block, dynamic shared memory and arguments of one launch.

    ``dynamic_shared_bytes`` is an int, or ``{target: int}`` (Triton kernels, whose shared memory
    is all dynamic).  ``name`` is the manifest entry (it fixes the input seed), ``kernel`` the
    entry point it launches; ``reference``,
    ``rtol``/``atol`` and ``per_output`` come from a manifest entry when there is one.
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[Arg, ...]
    dynamic_shared_bytes: int | Mapping[str, int] = 0
    name: str | None = None
    seed: int | None = None
    source: str = "<launch>"
    kernel: str | None = None
    reference: str | None = None
    rtol: float | None = None
    atol: float | None = None
    per_output: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    extra: tuple[BufferArg, ...] = ()       # the spec's "buffers": no parameter points to them (tensor maps do)

    @property
    def buffers(self) -> tuple[BufferArg, ...]:
        return tuple(a for a in self.args if isinstance(a, BufferArg)) + tuple(self.extra)

    @property
    def outputs(self) -> tuple[BufferArg, ...]:
        return tuple(a for a in self.buffers if a.is_output)

    @property
    def threads(self) -> int:
        return int(np.prod(self.grid)) * int(np.prod(self.block))

    def shared_bytes(self, target: str | None = None) -> int:
        """Dynamic shared memory for ``target`` (``'sm_80'``, ``'sm_90'``; ``'sm_90a'`` reads
        ``'sm_90'``)."""
        d = self.dynamic_shared_bytes
        if isinstance(d, Mapping):
            key = target_key(target) if target else None
            if key in d:
                return int(d[key])
            if len(d) == 1 and key is None:
                return int(next(iter(d.values())))
            raise InputError(f"dynamic_shared_bytes has no value for target {target!r}",
                             Span(self.source), expected=sorted(d))
        return int(d)

    def seed_for(self, kernel: str | None = None) -> int:
        if self.seed is not None:
            return int(self.seed)
        name = self.name or kernel
        if not name:
            raise InputError("no seed: give the spec a 'seed' or a name", Span(self.source))
        return entry_seed(name)


def target_key(target: str | None) -> str | None:
    """``'sm_90a'`` -> ``'sm_90'``: the key a manifest uses for a PTX ``.target``."""
    if target is None:
        return None
    m = re.fullmatch(r"(sm_\d+)[a-z]?", target.strip())
    return m.group(1) if m else target


def _locate(text: str | None, source: str, needle: str) -> Span:
    """The span of the first occurrence of ``needle`` in the spec's text (line/col 1-based)."""
    if text and needle:
        k = text.find(needle)
        if k >= 0:
            line = text.count("\n", 0, k) + 1
            col = k - (text.rfind("\n", 0, k) + 1) + 1
            return Span(source, line, col, line, col + len(needle))
    return Span(source)


def _dim3(v, what, span) -> tuple[int, int, int]:
    if isinstance(v, int):
        v = [v]
    if not isinstance(v, (list, tuple)) or not 1 <= len(v) <= 3 or \
            not all(isinstance(x, int) and x >= 1 for x in v):
        raise InputError(f"{what} must be 1 to 3 positive integers, got {v!r}", span)
    return tuple(list(v) + [1] * (3 - len(v)))


_INIT_RE = re.compile(r"\s*([a-z]+)\s*(?:\((.*)\))?\s*")


def parse_init(init: str, span: Span | None = None) -> tuple[str, tuple[float, ...]]:
    """``'randn(2)'`` -> ``('randn', (2.0,))``; checks the kind and the parameter count."""
    m = _INIT_RE.fullmatch(init) if isinstance(init, str) else None
    if not m or m.group(1) not in INIT_KINDS:
        raise InputError(f"bad init {init!r}", span, expected=[
            "randn", "randn(scale)", "uniform", "uniform(a,b)", "zeros", "full(v)",
            "randint(a,b)", "logrand(a,b)"])
    kind, par = m.group(1), m.group(2)
    try:
        params = tuple(float(p) for p in par.split(",")) if par and par.strip() else ()
    except ValueError:
        raise InputError(f"bad parameters in init {init!r}", span) from None
    counts = {"randn": (0, 1), "uniform": (0, 2), "zeros": (0,), "full": (1,), "randint": (2,),
              "logrand": (2,)}
    if len(params) not in counts[kind]:
        raise InputError(f"init {kind} takes {' or '.join(map(str, counts[kind]))} parameters, "
                         f"got {len(params)} in {init!r}", span)
    return kind, params


def parse_launch(obj: Mapping, *, source: str = "<launch>", text: str | None = None,
                 name: str | None = None) -> LaunchSpec:
    """A :class:`LaunchSpec` from the manifest's ``launch`` object (errors point into ``text``)."""
    if not isinstance(obj, Mapping):
        raise InputError("a launch spec is a JSON object with grid, block and args", Span(source))
    for key in ("grid", "block", "args"):
        if key not in obj:
            raise InputError(f"launch spec has no {key!r}", Span(source))
    grid = _dim3(obj["grid"], "grid", _locate(text, source, '"grid"'))
    block = _dim3(obj["block"], "block", _locate(text, source, '"block"'))
    if int(np.prod(block)) > 1024:
        raise InputError(f"block {list(block)} has more than 1024 threads", _locate(text, source, '"block"'))
    dyn = obj.get("dynamic_shared_bytes", 0)
    if isinstance(dyn, Mapping):
        dyn = {str(k): int(v) for k, v in dyn.items()}
    elif not isinstance(dyn, int) or dyn < 0:
        raise InputError(f"dynamic_shared_bytes must be an int or {{target: int}}, got {dyn!r}",
                         _locate(text, source, '"dynamic_shared_bytes"'))
    args = []
    seen = set()
    extra = []
    items = list(obj["args"]) + list(obj.get("buffers") or [])
    nargs = len(obj["args"])
    for i, a in enumerate(items):
        if not isinstance(a, Mapping):
            raise InputError(f"argument {i} is not an object", Span(source))
        if i >= nargs and "buffer" not in a:
            raise InputError(f"'buffers' entry {i - nargs} is not a buffer", Span(source))
        if "tensor_map" in a:
            nm = str(a["tensor_map"])
            span = _locate(text, source, f'"{nm}"')
            known = ("tensor_map", "of", "box", "dims", "dtype", "strides", "element_strides", "interleave",
                     "swizzle", "oob_fill", "im2col")
            bad = sorted(set(a) - set(known))
            if bad:
                raise InputError(f"tensor map {nm}: unknown field(s) {', '.join(bad)}", span, expected=list(known))
            g = a.get("im2col")
            if g is not None:
                gk = ("lower", "upper", "channels_per_pixel", "pixels_per_column")
                if not isinstance(g, Mapping) or set(g) != set(gk) or "box" in a:
                    raise InputError(f"tensor map {nm}: 'im2col' takes exactly {', '.join(gk)} (cuTensorMapEncodeIm2col; "
                                     "no 'box')", span, expected=list(gk))
                g = {"lower": tuple(int(x) for x in g["lower"]), "upper": tuple(int(x) for x in g["upper"]),
                     "channels_per_pixel": int(g["channels_per_pixel"]), "pixels_per_column": int(g["pixels_per_column"])}
            if "of" not in a or ("box" not in a and g is None):
                raise InputError(f"tensor map {nm} needs 'of' (its buffer) and 'box' (or 'im2col')", span)
            tup = lambda k: None if a.get(k) is None else tuple(int(x) for x in a[k])
            arg = TensorMapArg(nm, str(a["of"]), tup("box") or (), tup("dims"), a.get("dtype"), tup("strides"),
                               tup("element_strides"), a.get("interleave", "none"), a.get("swizzle", "none"),
                               a.get("oob_fill", "zero"), g)
        elif "buffer" in a:
            nm = str(a["buffer"])
            span = _locate(text, source, f'"{nm}"')
            _check_dtype(a.get("dtype"), DEVICE_NP, span)
            shape = a.get("shape")
            if isinstance(shape, int):
                shape = [shape]
            if not isinstance(shape, (list, tuple)) or not all(isinstance(s, int) and s >= 0 for s in shape):
                raise InputError(f"buffer {nm}: shape must be a list of non-negative ints", span)
            init = a.get("init", "zeros")
            parse_init(init, _locate(text, source, f'"{init}"') if isinstance(init, str) else span)
            role = a.get("role", "in")
            if role not in ROLES:
                raise InputError(f"buffer {nm}: bad role {role!r}", span, expected=list(ROLES))
            arg = BufferArg(nm, a["dtype"], tuple(shape), init, role)
        elif "scalar" in a:
            nm = str(a["scalar"])
            span = _locate(text, source, f'"{nm}"')
            _check_dtype(a.get("dtype"), SCALAR_NP, span)
            if "value" not in a:
                raise InputError(f"scalar {nm} has no value", span)
            arg = ScalarArg(nm, a["dtype"], a["value"])
            arg.numpy()
        else:
            raise InputError(f"argument {i} is neither a buffer nor a scalar", Span(source),
                             expected=["buffer", "scalar"])
        if arg.name in seen:
            raise InputError(f"argument name {arg.name!r} is used twice", Span(source))
        seen.add(arg.name)
        (args if i < nargs else extra).append(arg)
    bufs = {b.name: b for b in args + extra if isinstance(b, BufferArg)}
    for t in args:
        if isinstance(t, TensorMapArg):
            if t.of not in bufs:
                raise InputError(f"tensor map {t.name}: no buffer {t.of!r} (an argument or one of 'buffers')",
                                 _locate(text, source, f'"{t.name}"'), expected=sorted(bufs))
            t.tensor_map(bufs[t.of])          # checks the fields against the buffer now
    return LaunchSpec(grid=grid, block=block, args=tuple(args), dynamic_shared_bytes=dyn,
                      name=name or obj.get("name"), seed=obj.get("seed"), source=source,
                      kernel=obj.get("kernel"), extra=tuple(extra))


def load_launch(ref: str | os.PathLike, kernel: str | None = None) -> LaunchSpec:
    """Read a launch spec: ``spec.json`` (the launch object itself, or a manifest entry with a
    ``launch`` key) or ``manifest.json#entry``.  A manifest without ``#entry`` is searched for
    the entry whose kernel is ``kernel``."""
    ref = str(ref)
    path, _, entry = ref.partition("#")
    p = paths.text(path)                 # the file Path(path).read_text() opens
    try:
        with open(p) as f:
            text = f.read()
    except OSError as exc:
        raise InputError(f"cannot read launch spec: {exc.strerror or exc}", Span(path)) from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"launch spec is not JSON: {exc.msg}", Span(path, exc.lineno, exc.colno)) from None
    if isinstance(obj, Mapping) and "entries" in obj:
        entries = obj["entries"]
        want = entry or kernel
        if not want:
            raise InputError("a manifest needs an entry: manifest.json#NAME", Span(path),
                             expected=[e.get("name") for e in entries])
        found = [e for e in entries if e.get("name") == want] or \
                ([e for e in entries if e.get("entry") == want] if not entry else [])
        if not found:
            raise InputError(f"manifest has no entry {want!r}", _locate(text, path, '"entries"'),
                             expected=[e.get("name") for e in entries])
        return spec_from_entry(found[0], source=path, text=text, base=paths.parent(p))
    if entry:
        raise InputError(f"{path} is not a manifest (no 'entries'); drop '#{entry}'", Span(path))
    if isinstance(obj, Mapping) and "launch" in obj:
        return spec_from_entry(obj, source=path, text=text, base=paths.parent(p))
    return parse_launch(obj, source=path, text=text)


def spec_from_entry(entry: Mapping, *, source: str = "<manifest>", text: str | None = None,
                    base: str | os.PathLike | None = None) -> LaunchSpec:
    """The launch of a manifest entry, with its reference (``reference.py:ref_x`` beside the
    manifest) and tolerances."""
    spec = parse_launch(entry["launch"], source=source, text=text, name=entry.get("name"))
    ref = entry.get("reference")
    if ref and ":" not in ref and base is not None and paths.exists(paths.joined(base, "reference.py")):
        ref = f"{paths.joined(base, 'reference.py')}:{ref}"
    tol = entry.get("tolerance") or {}
    per = entry.get("per_output") or tol.get("per_output") or {}
    return LaunchSpec(grid=spec.grid, block=spec.block, args=spec.args,
                      dynamic_shared_bytes=spec.dynamic_shared_bytes, name=spec.name,
                      seed=spec.seed, source=source, kernel=entry.get("entry"), reference=ref, rtol=tol.get("rtol"),
                      atol=tol.get("atol"), per_output=dict(per), extra=spec.extra)


# ----------------------------------------------------------------------------------------------
# building inputs
# ----------------------------------------------------------------------------------------------

def make_buffer(rng: np.random.Generator, arg: BufferArg) -> np.ndarray:
    """The decoded values of one buffer (draws from ``rng`` as the corpus does)."""
    shape = arg.shape
    kind, par = parse_init(arg.init)
    if kind == "zeros":
        x = np.zeros(shape, dtype=np.float64)
    elif kind == "full":
        x = np.full(shape, par[0], dtype=np.float64)
    elif kind == "randn":
        x = rng.standard_normal(shape, dtype=np.float32).astype(np.float64) * (par[0] if par else 1.0)
    elif kind == "uniform":
        lo, hi = par if par else (-1.0, 1.0)
        x = rng.uniform(lo, hi, size=shape)
    elif kind == "logrand":
        sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        x = sign * 10.0 ** rng.uniform(par[0], par[1], size=shape)
    else:  # randint, inclusive bounds
        x = rng.integers(int(par[0]), int(par[1]) + 1, size=shape, dtype=np.int64)
    return round_to_dtype(x, arg.dtype)


def round_to_dtype(x, dtype: str) -> np.ndarray:
    """Values -> decoded values of ``dtype`` (RNE; integers clipped; e4m3 saturates)."""
    if dtype in EXACT_DTYPES:
        info = np.iinfo(DEVICE_NP[dtype])
        return np.clip(np.asarray(x), info.min, info.max).astype(DEVICE_NP[dtype])
    if dtype in ("f32", "f64"):
        return np.asarray(x, dtype=DEVICE_NP[dtype])
    if dtype == "f16":
        return np.asarray(x, dtype=np.float64).astype(np.float16)
    if dtype == "bf16":
        return round_bf16(x)
    if dtype == "e4m3":
        return decode(encode(x, "e4m3"), "e4m3")
    raise InputError(f"unknown dtype {dtype!r}", expected=sorted(DEVICE_NP))


#: inputs up to this many bytes are kept in the on-disk cache (:mod:`isa.cache`); larger ones take
#: longer to draw than numpy.random's import, which is what the cache saves (~12 ms CPU)
CACHED_INPUT_BYTES = 16 << 20


def build_inputs(spec: LaunchSpec, seed: int | None = None) -> dict:
    """name -> decoded array or numpy scalar, in argument order (``reference.build_inputs``).

    The draws depend only on the arguments, the seed, numpy's version and this code, so the
    result is kept in the on-disk cache under those: a process that finds it there does not
    import ``numpy.random``."""
    from isa import cache

    seed = spec.seed_for() if seed is None else seed
    args = tuple(a for a in tuple(spec.args) + tuple(spec.extra) if not isinstance(a, TensorMapArg))
    name = cache.key("inputs", repr(args), str(int(seed)), np.__version__, cache.code_version("sim")) \
        if cache.enabled() else None
    out = cache.load("inputs", name) if name else None
    if out is not None:
        return out
    rng = np.random.default_rng(seed)
    out = {a.name: make_buffer(rng, a) if isinstance(a, BufferArg) else a.numpy() for a in args}
    if name and sum(np.asarray(v).nbytes for v in out.values()) <= CACHED_INPUT_BYTES:
        cache.store("inputs", name, out)
    return out


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file; a missing, empty, pickled or non-``.npz`` file is an
    :class:`InputError` (``in.npz: error: ...``), never a traceback."""
    import zipfile

    path = str(path)
    try:
        z = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(f"no such file: {path}", Span(path)) from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read inputs: {exc or type(exc).__name__}", Span(path)) from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise InputError("inputs must be an .npz with one array per name (np.savez), not a single .npy array",
                         Span(path))
    try:
        with z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise InputError(f"cannot read inputs: {exc or type(exc).__name__}", Span(path)) from None


def load_inputs(spec: LaunchSpec, path: str | os.PathLike) -> dict:
    """Decoded inputs from an ``.npz`` (keys ``NAME`` or ``in_NAME``, decoded values or device
    storage); scalars missing from the file take the spec's values."""
    z = read_npz(path)
    keys = set(z)
    out = {}
    for a in tuple(spec.args) + tuple(spec.extra):
        if isinstance(a, TensorMapArg):
            continue
        key = a.name if a.name in keys else f"in_{a.name}" if f"in_{a.name}" in keys else None
        if isinstance(a, ScalarArg):
            if key and np.asarray(z[key]).size != 1:
                raise InputError(f"{path}: {key} holds {np.asarray(z[key]).size} values; scalar {a.name} takes one",
                                 Span(str(path)))
            if key:
                _check_fits(path, key, np.asarray(z[key]).reshape(-1), a.dtype, f"scalar {a.name}")
            out[a.name] = SCALAR_NP[a.dtype](np.asarray(z[key]).reshape(-1)[0]) if key else a.numpy()
            continue
        if key is None:
            raise InputError(f"{path} has no array for buffer {a.name!r}", Span(str(path)),
                             expected=sorted(keys))
        arr = np.asarray(z[key])
        if arr.size != a.size:
            raise InputError(f"{path}: {key} has {arr.size} elements, buffer {a.name} needs "
                             f"{a.size} {list(a.shape)}", Span(str(path)))
        arr = arr.reshape(a.shape)
        _check_fits(path, key, arr, a.dtype, f"buffer {a.name}")
        if a.dtype in ("bf16", "e4m3") and arr.dtype == DEVICE_NP[a.dtype]:
            arr = decode(arr, a.dtype)
        out[a.name] = round_to_dtype(arr, a.dtype) if a.dtype not in ("bf16", "e4m3") \
            else np.asarray(arr, dtype=np.float32)
    return out


def _check_fits(path, key: str, arr: np.ndarray, dtype: str, what: str) -> None:
    """An input whose values the spec's dtype cannot hold is an error, never a silent conversion:
    floats with a fraction, or values out of range, for an integer dtype; an unsigned array of the
    width of an f16/f32/f64 buffer (bit patterns or values? say which)."""
    where = f"{key} ({arr.dtype}) for {what} ({dtype})"
    if dtype in EXACT_DTYPES and arr.size:
        info = np.iinfo(DEVICE_NP[dtype])
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
            if bad.any():
                raise InputError(f"{where}: {arr.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]].item()!r} is not an "
                                 f"integer; pass integer values", Span(str(path)))
        if arr.dtype.kind in "biuf":
            lo, hi = arr.min().item(), arr.max().item()
            if lo < info.min or hi > info.max:
                raise InputError(f"{where}: values from {lo} to {hi} do not fit {dtype} "
                                 f"[{info.min}, {info.max}]; they are not clipped", Span(str(path)))
    elif dtype in ("f16", "f32", "f64") and arr.dtype.kind == "u" \
            and arr.dtype.itemsize == np.dtype(DEVICE_NP[dtype]).itemsize:
        raise InputError(f"{where}: an unsigned array of the {dtype} width could be values or bit patterns; pass "
                         f"values as floats, or the bit patterns viewed as np.{np.dtype(DEVICE_NP[dtype]).name} "
                         f"(arr.view(np.{np.dtype(DEVICE_NP[dtype]).name}))", Span(str(path)))


def device_buffers(spec: LaunchSpec, decoded: Mapping) -> dict[str, np.ndarray]:
    """Fresh device-storage copies of every buffer (what ``run_kernel`` writes into)."""
    return {a.name: np.array(encode(decoded[a.name], a.dtype), copy=True).reshape(a.shape)
            for a in spec.buffers}


def kernel_args(spec: LaunchSpec, device: Mapping, decoded: Mapping | None = None) -> list:
    """The argument list for ``sim.run_kernel``: device buffers and numpy scalars, in order."""
    out = []
    bufs = {b.name: b for b in spec.buffers}
    for a in spec.args:
        if isinstance(a, BufferArg):
            out.append(device[a.name])
        elif isinstance(a, TensorMapArg):
            from sim.ptx.tensormap import TensorMapArg as Bound   # (imported by launches with a tensor map only)

            out.append(Bound(device[a.of], a.tensor_map(bufs[a.of]), a.of))
        else:
            out.append(decoded[a.name] if decoded is not None and a.name in decoded else a.numpy())
    return out


def decode_outputs(spec: LaunchSpec, device: Mapping) -> dict[str, np.ndarray]:
    """Decoded values of the out/inout buffers."""
    return {a.name: decode(device[a.name], a.dtype).reshape(a.shape) for a in spec.outputs}


# ----------------------------------------------------------------------------------------------
# running a spec
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Execution:
    """One simulated launch: its inputs, its outputs (decoded), and what the simulator saw."""

    kernel: str
    spec: LaunchSpec
    inputs: dict            # decoded inputs and scalars, as a reference takes them
    device: dict            # device storage of every buffer after the run
    outputs: dict           # decoded out/inout buffers
    stats: dict
    problems: tuple
    seconds: float
    timing: dict | None = None      # run with timing="h200": the modelled figures (result.timing)
    complete: bool = True           # every CTA ran (False under timing sampling: outputs partial)


def kernel_function(module, spec: LaunchSpec, kernel: str | None = None):
    """The IR function a spec launches (``kernel``, else the spec's, else the only kernel),
    checked against the spec's argument count."""
    name = kernel or spec.kernel
    if name is None:
        if len(module.kernels) != 1:
            raise InputError("the module has several kernels: name one",
                             expected=[k.name for k in module.kernels])
        name = module.kernels[0].name
    fn = module.function(name)
    if len(fn.params) != len(spec.args):
        names = ", ".join(p.name for p in fn.params)
        raise InputError(f"kernel {fn.name} takes {len(fn.params)} parameters ({names}); the launch "
                         f"spec {spec.source} gives {len(spec.args)}", fn.span,
                         source_line=module.source_line(fn.span.line))
    return fn


def execute(module, spec: LaunchSpec, kernel: str | None = None, *, inputs: Mapping | None = None,
            seed: int | None = None, listeners=(), memory_model: str = "sc", memory_seed: int = 0,
            jobs: int = 1, max_steps="auto", progress=None, timing: str | None = None, sample: str = "auto",
            trace: bool = False) -> Execution:
    """Build the inputs (``inputs`` = decoded arrays, else drawn by the seed rule), run the kernel
    on ``sim.run_kernel`` and decode its outputs. ``memory_model``/``memory_seed``: as
    ``run_kernel``'s ``memory_model``/``seed`` (:mod:`sim.ptx.order`)."""
    import time

    from sim.ptx.run import run_kernel

    fn = kernel_function(module, spec, kernel)
    decoded = dict(inputs) if inputs is not None else build_inputs(
        spec, seed if seed is not None else spec.seed_for(fn.name))
    device = device_buffers(spec, decoded)
    t0 = time.perf_counter()
    result = run_kernel(module, fn.name, spec.grid, spec.block, kernel_args(spec, device, decoded),
                        spec.shared_bytes(module.target), listeners=tuple(listeners),
                        buffer_names=[a.name for a in spec.args], memory_model=memory_model, seed=memory_seed,
                        jobs=jobs, max_steps=max_steps, progress=progress,
                        **({"timing": timing, "sample": sample, "trace": trace} if timing else {}))
    seconds = time.perf_counter() - t0
    return Execution(fn.name, spec, decoded, device, decode_outputs(spec, device),
                     dict(result.stats), tuple(result.problems), seconds, getattr(result, "timing", None),
                     getattr(result, "complete", True))
