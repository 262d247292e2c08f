"""Calibration: choose quantisation parameters from data (arrays or a stream of batches).

Methods:

* ``minmax``: the observed range (per tensor or per channel);
* ``percentile``: clip at a percentile of |x| (symmetric) or at the lower/upper percentiles;
* ``mse``: the clipping threshold that minimises the quantise-dequantise squared error;
* ``kl``: TensorRT-style entropy calibration (symmetric only): the threshold whose quantised
  histogram has the smallest KL divergence from the clipped reference histogram.

Batches feed a :class:`Calibrator` (``collect`` then ``compute``); its histogram doubles its range
by merging bin pairs when a batch exceeds it, so no data is revisited::

    cal = Calibrator("s8", "kl")
    for batch in activations: cal.collect(batch)
    params = cal.compute()                      # QuantParams(scale=..., zero_point=0)
"""

from __future__ import annotations

import numpy as np

from isa.errors import InputError

from .formats import get_format
from .quant import QuantParams, qrange

METHODS = ("minmax", "percentile", "mse", "kl")


def params_from_range(lo, hi, qtype, symmetric: bool = True, axis=None, method="minmax") -> QuantParams:
    """Scale and zero point that map ``[lo, hi]`` (arrays for per-channel) onto ``qtype``.

    Symmetric: ``scale = max(|lo|, |hi|) / qmax``; zero point 0 for signed and float types,
    ``(qmax + 1) / 2`` for unsigned (128 for u8, as the corpus's asymmetric kernel uses).
    Asymmetric (ints only): the range is widened to include 0, ``scale = (hi - lo) / (qmax - qmin)``,
    ``zero_point = qmin - round(lo / scale)``.  A zero-width range gets scale 1.
    """
    f = get_format(qtype)
    if not symmetric and f.kind == "float":
        raise InputError(f"{f.name} is quantised with a scale only: asymmetric ranges need an integer type")
    qmin, qmax = qrange(f)
    lo = np.minimum(np.asarray(lo, dtype=np.float64), 0.0)
    hi = np.maximum(np.asarray(hi, dtype=np.float64), 0.0)
    if symmetric:
        amax = np.maximum(-lo, hi)
        if f.kind == "float":
            scale, zp = amax / f.max, np.zeros_like(amax)
        elif f.signed:
            scale, zp = amax / qmax, np.zeros_like(amax)
        else:
            half = (qmax + 1) // 2
            scale, zp = amax / (half - 1), np.full_like(amax, half)
    else:
        scale = (hi - lo) / (qmax - qmin)
        safe = np.where(scale > 0, scale, 1.0)
        zp = np.clip(qmin - np.rint(lo / safe), qmin, qmax)
    scale = np.where(scale > 0, scale, 1.0)
    scale32 = scale.astype(np.float32)
    scale32 = np.where(scale32 > 0, scale32, np.float32(np.finfo(np.float32).tiny))
    return QuantParams.make(f, scale32, zp.astype(np.int32), axis=axis if scale32.ndim else None,
                            symmetric=symmetric, method=method)


class Calibrator:
    """Collects statistics over batches and turns them into :class:`QuantParams`."""

    def __init__(self, qtype="s8", method="minmax", *, symmetric=True, axis=None,
                 percentile=99.99, bins=4096):
        if method not in METHODS:
            raise InputError(f"unknown calibration method {method!r}", expected=list(METHODS))
        if not symmetric and get_format(qtype).kind == "float":
            raise InputError(f"{get_format(qtype).name} is quantised with a scale only: asymmetric "
                             "calibration needs an integer type")
        if method == "kl" and not symmetric:
            raise InputError("KL (entropy) calibration is symmetric only")
        if axis is not None and method != "minmax":
            raise InputError("per-channel calibration over batches supports method 'minmax' only; "
                             "pass the whole array to calibrate() for per-channel percentiles")
        if bins % 2:
            raise InputError("bins must be even")
        self.qtype, self.method, self.symmetric, self.axis = get_format(qtype).name, method, symmetric, axis
        self.percentile, self.bins = float(percentile), int(bins)
        self.lo = self.hi = None
        self.hist = None            # signed histogram over [-R, R), `bins` bins
        self.R = 0.0
        self.count = 0

    def collect(self, batch) -> "Calibrator":
        x = np.asarray(batch, dtype=np.float64)
        x_f = np.where(np.isfinite(x), x, 0.0)
        if self.axis is not None:
            red = tuple(i for i in range(x.ndim) if i != self.axis % x.ndim)
            lo, hi = x_f.min(axis=red), x_f.max(axis=red)
        else:
            lo, hi = x_f.min(), x_f.max()
        self.lo = lo if self.lo is None else np.minimum(self.lo, lo)
        self.hi = hi if self.hi is None else np.maximum(self.hi, hi)
        self.count += x.size
        if self.method != "minmax":
            self._add_hist(x_f.ravel())
        return self

    def _add_hist(self, v):
        amax = float(np.max(np.abs(v))) if v.size else 0.0
        if self.hist is None:
            self.R = amax * (1 + 2 ** -20) if amax > 0 else 1.0
            self.hist = np.zeros(self.bins, dtype=np.float64)
        while amax >= self.R:                       # double the range: merge neighbouring bins
            pairs = self.hist.reshape(-1, 2).sum(axis=1)
            self.hist = np.zeros(self.bins)
            self.hist[self.bins // 4: self.bins // 4 + self.bins // 2] = pairs
            self.R *= 2
        h, _ = np.histogram(v, bins=self.bins, range=(-self.R, self.R))
        self.hist += h

    # ------------------------------------------------------------------ thresholds
    def _abs_hist(self):
        half = self.bins // 2
        return self.hist[half:] + self.hist[:half][::-1], self.R / half

    def compute(self) -> QuantParams:
        if self.count == 0:
            raise InputError("calibration saw no data")
        if self.method == "minmax":
            return params_from_range(self.lo, self.hi, self.qtype, self.symmetric, self.axis, "minmax")
        if self.method == "percentile":
            lo, hi = self._percentile_range()
        elif self.method == "mse":
            lo, hi = self._mse_range()
        else:
            t = self._kl_threshold()
            lo, hi = -t, t
        return params_from_range(lo, hi, self.qtype, self.symmetric, None, self.method)

    def _percentile_range(self):
        p = self.percentile / 100.0
        if self.symmetric:
            h, w = self._abs_hist()
            c = np.cumsum(h) / h.sum()
            t = (np.searchsorted(c, p) + 1) * w
            return -t, t
        c = np.cumsum(self.hist) / self.hist.sum()
        w = 2 * self.R / self.bins
        lo = -self.R + np.searchsorted(c, 1 - p) * w
        hi = -self.R + (np.searchsorted(c, p) + 1) * w
        return min(lo, float(self.lo)), hi if hi <= float(self.hi) else float(self.hi)

    def _mse_range(self, candidates=128):
        w = 2 * self.R / self.bins
        centers = -self.R + (np.arange(self.bins) + 0.5) * w
        centers = np.clip(centers, float(self.lo), float(self.hi))
        weights = self.hist
        fracs = np.linspace(1.0 / candidates, 1.0, candidates)
        best, best_err = None, np.inf
        for fr in fracs:
            lo, hi = float(self.lo) * fr, float(self.hi) * fr
            p = params_from_range(lo, hi, self.qtype, self.symmetric)
            err = np.sum(weights * (_fake(centers, p) - centers) ** 2)
            if err < best_err:
                best, best_err = (lo, hi), err
        return best

    def _kl_threshold(self):
        h, w = self._abs_hist()
        qmin, qmax = qrange(self.qtype)
        f = get_format(self.qtype)
        levels = int(qmax) + 1 if f.kind == "int" and f.signed else 128
        n = len(h)
        nz_last = int(np.flatnonzero(h)[-1]) + 1 if np.any(h) else n
        best_i, best_kl = n, np.inf
        for i in range(levels, n + 1, max(1, (n - levels) // 240)):
            if i > nz_last + levels:
                break
            ref = h[:i].copy()
            ref[i - 1] += h[i:].sum()
            # quantise the first i bins into `levels` groups; spread each group's mass over the
            # bins that are non-empty in the reference (after folding), as TensorRT does
            edges = np.floor(np.linspace(0, i, levels + 1)).astype(int)   # strictly increasing: i >= levels
            sl = h[:i]
            nonzero = ref > 0
            sums = np.add.reduceat(sl, edges[:-1])
            cnts = np.add.reduceat(nonzero.astype(np.float64), edges[:-1])
            group = np.searchsorted(edges, np.arange(i), side="right") - 1
            q = np.where(nonzero, (sums / np.maximum(cnts, 1))[group], 0.0)
            if np.any(nonzero & (q == 0)) or q.sum() == 0:
                continue                                   # infinite divergence
            pm, qm = ref[nonzero] / ref.sum(), q[nonzero] / q.sum()
            kl = float(np.sum(pm * np.log(pm / qm)))
            if kl < best_kl:
                best_i, best_kl = i, kl
        return best_i * w


def _fake(x, p: QuantParams):
    from .quant import fake_quantize
    return fake_quantize(x, p).astype(np.float64)


def calibrate(data, qtype="s8", method="minmax", *, symmetric=True, axis=None, percentile=99.99,
              bins=4096) -> QuantParams:
    """Calibrate on one array, or on an iterable of batches (a list/tuple/generator of arrays).

    For a single array, ``percentile`` is exact (``np.percentile``, per channel when ``axis`` is
    set); the histogram methods use ``bins`` bins.
    """
    if isinstance(data, np.ndarray) or np.isscalar(data):
        x = np.asarray(data, dtype=np.float64)
        if method == "percentile":
            x_f = x[np.isfinite(x)] if axis is None else np.where(np.isfinite(x), x, 0.0)
            if symmetric:
                red = None if axis is None else tuple(i for i in range(x.ndim) if i != axis % x.ndim)
                t = np.percentile(np.abs(x_f), percentile, axis=red)
                return params_from_range(-t, t, qtype, True, axis, "percentile")
            if axis is not None:
                raise InputError("asymmetric per-channel percentile is not supported")
            lo, hi = np.percentile(x_f, [100 - percentile, percentile])
            return params_from_range(lo, hi, qtype, False, None, "percentile")
        batches = [x]
    else:
        batches = list(data)
    cal = Calibrator(qtype, method, symmetric=symmetric, axis=axis, percentile=percentile, bins=bins)
    for b in batches:
        cal.collect(b)
    return cal.compute()
