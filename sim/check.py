"""Numerical checks: compare a kernel's outputs with a float64 (or exact-integer) reference.

A kernel that ends in::

    cvt.rn.bf16.f32 %rs1, %f4;
    st.global.b16 [%rd9], %rs1;

writes bf16 bit patterns; :func:`check` decodes them (``dtype='bf16'`` on a uint16 array), and
measures the error against the reference: pass/fail under ``|got - ref| <= atol + rtol * |ref|``
(the corpus's rule), max absolute and relative error, mean absolute error, the 99th percentile
of the relative error, PSNR, the distance in units in the last place of the output format, an
error histogram (by ULP), and the worst elements with their indices and values.  NaN and Inf
never pass silently: a non-finite output passes only where the reference holds the same special
value, and every non-finite value is counted in the report.

:func:`compare_variants` runs several implementations of one computation (fp32, fp16, bf16,
int8 variants...) over a list of shapes and checks each against the float64 reference.

Reports are frozen dataclasses with ``render()`` (text) and ``to_dict()`` / ``to_json()``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from isa.errors import InputError
from sim.arrays import percentile
from sim.numerics.codec import ulp_distance

#: default (rtol, atol) per output format
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-12, 1e-12),
    "f32": (1e-4, 1e-5),
    "tf32": (2e-3, 1e-3),
    "f16": (1e-2, 1e-2),
    "bf16": (2e-2, 2e-2),
    "e4m3": (1.25e-1, 2.0 ** -9),
    "e5m2": (2.5e-1, 2.0 ** -16),
}
INT_DTYPES = ("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64")

#: numpy dtype -> format name, for outputs given without a dtype; :data:`_ML_TO_FORMAT` for
#: ml_dtypes' types, by name (an array of one exists only where ml_dtypes was imported, which this
#: module need not do: it costs ~0.5 s of CPU)
_NP_TO_FORMAT = {
    np.dtype(np.float64): "f64", np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
    np.dtype(np.int8): "s8", np.dtype(np.uint8): "u8", np.dtype(np.int16): "s16",
    np.dtype(np.uint16): "u16", np.dtype(np.int32): "s32", np.dtype(np.uint32): "u32",
    np.dtype(np.int64): "s64", np.dtype(np.uint64): "u64", np.dtype(bool): "u8",
}
_STORAGE = {"f64": np.uint64, "f32": np.uint32, "tf32": np.uint32, "f16": np.uint16,
            "bf16": np.uint16, "e4m3": np.uint8, "e5m2": np.uint8}

#: upper edges of the ULP histogram buckets (the last bucket is "more")
HIST_EDGES = (0, 1, 2, 4, 16, 256, 65536)


def _fmt_name(dtype) -> str:
    if dtype is None:
        raise InputError("no dtype")
    if isinstance(dtype, str):
        from sim.numerics.formats import get_format
        return get_format(dtype).name
    return _format_of(np.dtype(dtype))


_ML_TO_FORMAT = {"bfloat16": "bf16", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def _format_of(dt: np.dtype) -> str:
    return _ML_TO_FORMAT[dt.name] if dt.kind == "V" else _NP_TO_FORMAT[dt]


def is_float_format(name: str) -> bool:
    return name not in INT_DTYPES


def infer_format(arr) -> str:
    """The output format of a numpy array (``float16`` -> ``'f16'``, ``bfloat16`` -> ``'bf16'``)."""
    try:
        return _format_of(np.asarray(arr).dtype)
    except KeyError:
        raise InputError(f"cannot tell the number format of dtype {np.asarray(arr).dtype}; "
                         "give dtype=") from None


def decode_values(arr, dtype: str | None = None) -> tuple[np.ndarray, str]:
    """(float64 or int64 values, format name) of an output array.

    Raw storage is decoded: a uint16 array with ``dtype='bf16'`` holds bf16 bit patterns, a uint8
    array with ``dtype='e4m3'`` e4m3 bytes.  Already decoded values (float32 holding bf16-exact
    values, as the corpus's npz files store them) are taken as they are.
    """
    a = np.asarray(arr)
    name = _fmt_name(dtype) if dtype is not None else infer_format(a)
    if is_float_format(name):
        if a.dtype.kind in "ui" and name in _STORAGE and a.dtype.itemsize == np.dtype(_STORAGE[name]).itemsize:
            from sim.numerics.codec import decode
            return np.asarray(decode(a, name), dtype=np.float64), name
        return a.astype(np.float64), name
    if a.dtype.kind == "f":
        return a.astype(np.float64), name
    return a.astype(np.int64), name


def bit_exact(a, b, dtype: str | None = None) -> np.ndarray:
    """Elementwise: the two outputs hold the same value of ``dtype`` (NaN equals NaN; +0 and -0
    differ, as their bits do)."""
    va, name = decode_values(a, dtype)
    vb, _ = decode_values(b, name)
    if not is_float_format(name):
        return va == vb
    both_nan = np.isnan(va) & np.isnan(vb)
    same = (va == vb) & (np.signbit(va) == np.signbit(vb))
    return same | both_nan


@dataclass(frozen=True)
class Worst:
    """One of the worst elements: where, the two values, and how far apart."""

    index: tuple[int, ...]
    got: float
    ref: float
    abs_err: float
    rel_err: float
    ulp: int


@dataclass(frozen=True)
class CheckReport:
    """How one output compares with its reference."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    passed: bool
    rtol: float
    atol: float
    n: int
    n_bad: int
    max_abs: float
    max_rel: float
    mean_abs: float
    p99_rel: float
    psnr_db: float
    max_ulp: int
    exact_fraction: float
    histogram: tuple[tuple[str, int], ...]
    nan_got: int = 0
    inf_got: int = 0
    nan_ref: int = 0
    inf_ref: int = 0
    special_mismatch: int = 0
    worst: tuple[Worst, ...] = ()
    note: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        d["shape"] = list(self.shape)
        d["histogram"] = {k: v for k, v in self.histogram}
        d["worst"] = [dict(asdict(w), index=list(w.index)) for w in self.worst]
        return _json_safe(d)

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def render(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        shape = "x".join(str(s) for s in self.shape) or "scalar"
        lines = [f"{status} {self.name} ({self.dtype}, {shape}): "
                 f"{self.n_bad}/{self.n} outside atol={self.atol:g} rtol={self.rtol:g}"]
        lines.append(f"  max abs {self.max_abs:.3g}  max rel {self.max_rel:.3g}  mean abs "
                     f"{self.mean_abs:.3g}  p99 rel {self.p99_rel:.3g}  PSNR {_db(self.psnr_db)}")
        lines.append(f"  max ULP ({self.dtype}) {self.max_ulp}  exact {100 * self.exact_fraction:.2f}%")
        lines.append("  ULP histogram: " + "  ".join(f"{k}:{v}" for k, v in self.histogram if v))
        nonfinite = self.nan_got + self.inf_got + self.nan_ref + self.inf_ref
        if nonfinite:
            lines.append(f"  non-finite: got {self.nan_got} NaN, {self.inf_got} Inf; reference "
                         f"{self.nan_ref} NaN, {self.inf_ref} Inf; {self.special_mismatch} mismatched")
        if self.worst and (not self.passed or self.max_abs > 0):
            lines.append("  worst elements:")
            for w in self.worst:
                idx = ",".join(str(i) for i in w.index)
                lines.append(f"    [{idx}] got {w.got:.9g} ref {w.ref:.9g} abs {w.abs_err:.3g} "
                             f"rel {w.rel_err:.3g} ulp {w.ulp}")
        if self.note:
            lines.append("  note: " + self.note)
        return "\n".join(lines)


def _db(x: float) -> str:
    return "inf dB" if math.isinf(x) else f"{x:.1f} dB"


def _json_safe(obj):
    if isinstance(obj, float):
        if math.isnan(obj):
            return "nan"
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def default_tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for an output format: 0, 0 for integers."""
    name = _fmt_name(dtype)
    if not is_float_format(name):
        return 0.0, 0.0
    return DEFAULT_TOLERANCES.get(name, DEFAULT_TOLERANCES["f32"])


def check(got, ref, dtype: str | None = None, *, rtol: float | None = None,
          atol: float | None = None, name: str = "out", worst: int = 5) -> CheckReport:
    """Compare one output ``got`` (decoded values or raw storage of ``dtype``) with ``ref``.

    ``ref`` is exact or float64 (its values are taken as they are, not rounded); ``rtol``/``atol``
    default by dtype (:data:`DEFAULT_TOLERANCES`; integers must match exactly).
    """
    g, fmt = decode_values(got, dtype)
    r = np.asarray(ref)
    r = r.astype(np.float64) if (r.dtype.kind != "u" or fmt not in _STORAGE) else decode_values(r, fmt)[0]
    d_rtol, d_atol = default_tolerance(fmt)
    rtol = d_rtol if rtol is None else float(rtol)
    atol = d_atol if atol is None else float(atol)
    if g.shape != r.shape:
        if g.size == r.size:
            r = r.reshape(g.shape)
        else:
            raise InputError(f"{name}: output shape {g.shape} differs from reference shape {r.shape}")
    shape = tuple(int(s) for s in g.shape)
    g = g.astype(np.float64).ravel()
    r = r.ravel()
    n = int(g.size)

    nan_g, nan_r = np.isnan(g), np.isnan(r)
    inf_g, inf_r = np.isinf(g), np.isinf(r)
    both_nan = nan_g & nan_r
    same_inf = inf_g & inf_r & (np.sign(g) == np.sign(r))
    special = both_nan | same_inf
    mismatch = (nan_g | inf_g | nan_r | inf_r) & ~special
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(special, 0.0, np.abs(g - r))
        diff = np.where(np.isnan(diff), np.inf, diff)
        mag = np.abs(np.where(special, 0.0, r))
        mag = np.where(np.isfinite(mag), mag, np.inf)
        rel = diff / np.maximum(np.where(special, 1.0, np.abs(r)), 1e-30)
        rel = np.where(np.isnan(rel), np.inf, rel)
        bad = (diff > atol + rtol * mag) | mismatch
        limit = atol + rtol * mag
        score = np.where(mismatch, np.inf, diff / np.where(limit > 0, limit, 1e-300))
    ulps = ulp_distance(g, r, fmt) if n else np.zeros(0, dtype=np.int64)
    ulps = np.where(both_nan, 0, ulps)
    ulps_h = np.where(ulps < 0, np.iinfo(np.int64).max, ulps)
    exact = (ulps == 0) if n else np.zeros(0, bool)

    finite = ~(nan_g | inf_g | nan_r | inf_r)
    if finite.any():
        mse = float(np.mean((g[finite] - r[finite]) ** 2))
        peak = float(np.max(np.abs(r[finite])))
        psnr = math.inf if mse == 0 else (10 * math.log10(peak * peak / mse) if peak > 0 else -math.inf)
        mean_abs = float(np.mean(np.abs(g[finite] - r[finite])))
    else:
        psnr, mean_abs = (math.inf if n and bool(special.all()) else -math.inf), 0.0
    hist = []
    lo = -1
    for edge in HIST_EDGES:
        label = str(edge) if edge - lo == 1 else f"{lo + 1}-{edge}"
        hist.append((label, int(((ulps_h > lo) & (ulps_h <= edge)).sum())))
        lo = edge
    hist.append((f">{lo}", int(((ulps_h > lo) & (ulps >= 0)).sum())))
    hist.append(("NaN", int((ulps < 0).sum())))

    with np.errstate(invalid="ignore"):
        p99 = percentile(rel, 99, method="lower" if np.isinf(rel).any() else "linear") if n else 0.0
    order = np.argsort(-score, kind="stable")[:worst] if n else []
    worst_list = tuple(
        Worst(tuple(int(i) for i in np.unravel_index(int(k), shape)) if shape else (),
              float(g[k]), float(r[k]), float(diff[k]), float(rel[k]), int(ulps[k]))
        for k in order if score[k] > 0 or not n)
    return CheckReport(
        name=name, dtype=fmt, shape=shape, passed=not bool(bad.any()), rtol=rtol, atol=atol, n=n,
        n_bad=int(bad.sum()), max_abs=float(diff.max()) if n else 0.0,
        max_rel=float(rel.max()) if n else 0.0, mean_abs=mean_abs,
        p99_rel=p99, psnr_db=psnr,
        max_ulp=int(ulps_h.max()) if n else 0, exact_fraction=float(exact.mean()) if n else 1.0,
        histogram=tuple(hist), nan_got=int(nan_g.sum()), inf_got=int(inf_g.sum()),
        nan_ref=int(nan_r.sum()), inf_ref=int(inf_r.sum()), special_mismatch=int(mismatch.sum()),
        worst=worst_list)


@dataclass(frozen=True)
class OutputsReport:
    """The checks of all outputs of one run."""

    reports: tuple[CheckReport, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.reports)

    def __getitem__(self, name: str) -> CheckReport:
        for r in self.reports:
            if r.name == name:
                return r
        raise KeyError(name)

    def render(self) -> str:
        head = f"check: {'PASS' if self.passed else 'FAIL'} ({sum(r.passed for r in self.reports)}" \
               f"/{len(self.reports)} outputs)"
        return "\n".join([head] + [r.render() for r in self.reports])

    def to_dict(self) -> dict:
        return {"passed": self.passed, "outputs": [r.to_dict() for r in self.reports]}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)


def check_outputs(got: Mapping[str, np.ndarray], ref: Mapping[str, np.ndarray],
                  dtypes: Mapping[str, str] | None = None, *, rtol: float | None = None,
                  atol: float | None = None,
                  per_output: Mapping[str, Mapping[str, float]] | None = None) -> OutputsReport:
    """Check every output named in ``ref``; ``per_output`` = {name: {rtol, atol}} overrides."""
    reports = []
    for name, r in ref.items():
        if name not in got:
            raise InputError(f"the run produced no output named {name!r} (have: {', '.join(got)})")
        tol = dict(per_output.get(name, {})) if per_output else {}
        reports.append(check(got[name], r, (dtypes or {}).get(name), name=name,
                             rtol=tol.get("rtol", rtol), atol=tol.get("atol", atol)))
    return OutputsReport(tuple(reports))


# ----------------------------------------------------------------------------------------------
# consistency of several implementations
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VariantResult:
    """One implementation at one shape: its check against the reference and its distance from
    the baseline implementation (the first variant)."""

    variant: str
    shape: tuple[int, ...]
    report: CheckReport
    max_abs_vs_baseline: float


@dataclass(frozen=True)
class ConsistencyReport:
    """Several implementations of one computation over a list of shapes."""

    variants: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    results: tuple[VariantResult, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return all(r.report.passed for r in self.results)

    def result(self, variant: str, shape) -> VariantResult:
        shape = tuple(shape)
        for r in self.results:
            if r.variant == variant and r.shape == shape:
                return r
        raise KeyError((variant, shape))

    def render(self) -> str:
        head = ["shape", "variant", "dtype", "ok", "max abs", "max rel", "p99 rel", "max ULP",
                "PSNR", "vs " + self.variants[0]]
        rows = []
        for r in self.results:
            c = r.report
            rows.append(["x".join(map(str, r.shape)), r.variant, c.dtype, "PASS" if c.passed else "FAIL",
                         f"{c.max_abs:.3g}", f"{c.max_rel:.3g}", f"{c.p99_rel:.3g}", str(c.max_ulp),
                         _db(c.psnr_db), f"{r.max_abs_vs_baseline:.3g}"])
        widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
                  for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        out = [f"consistency: {'PASS' if self.passed else 'FAIL'} ({len(self.variants)} variants x "
               f"{len(self.shapes)} shapes)", fmt.format(*head)]
        out += [fmt.format(*row) for row in rows]
        return "\n".join(out)

    def to_dict(self) -> dict:
        return _json_safe({
            "passed": self.passed, "variants": list(self.variants),
            "shapes": [list(s) for s in self.shapes],
            "results": [{"variant": r.variant, "shape": list(r.shape),
                         "max_abs_vs_baseline": r.max_abs_vs_baseline, "check": r.report.to_dict()}
                        for r in self.results]})

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)


def compare_variants(variants: Mapping[str, Callable], reference: Callable, shapes: Iterable,
                     *, dtypes: Mapping[str, str] | None = None,
                     tolerances: Mapping[str, Mapping[str, float]] | None = None) -> ConsistencyReport:
    """Run each ``variants[name](shape)`` and ``reference(shape)`` (float64) for every shape.

    A variant returns its output array (decoded values, or raw storage when ``dtypes[name]``
    names a format such as ``'bf16'``); its format is ``dtypes[name]`` or inferred from the array.
    ``tolerances[name] = {'rtol': .., 'atol': ..}`` overrides the per-dtype defaults (an int8
    variant that returns dequantised floats usually needs its own).
    """
    names = tuple(variants)
    if not names:
        raise InputError("compare_variants needs at least one variant")
    shapes = tuple(tuple(int(v) for v in (s if isinstance(s, Iterable) else (s,))) for s in shapes)
    results = []
    for shape in shapes:
        ref = np.asarray(reference(shape), dtype=np.float64)
        base = None
        for name in names:
            out = variants[name](shape)
            tol = (tolerances or {}).get(name, {})
            rep = check(out, ref, (dtypes or {}).get(name), name=name,
                        rtol=tol.get("rtol"), atol=tol.get("atol"))
            vals, _ = decode_values(out, rep.dtype)
            vals = vals.astype(np.float64).reshape(ref.shape)
            if base is None:
                base = vals
            with np.errstate(invalid="ignore"):
                d = np.abs(vals - base)
            vs = float(np.nanmax(d)) if d.size and not np.isnan(d).all() else 0.0
            if np.isnan(d).any() and not np.array_equal(np.isnan(vals), np.isnan(base)):
                vs = math.inf
            results.append(VariantResult(name, shape, rep, vs))
    return ConsistencyReport(names, shapes, tuple(results))
