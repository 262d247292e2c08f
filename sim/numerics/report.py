"""Error analysis of an approximation against a reference: MSE, PSNR, max and relative errors.

Used by the quantised GEMM, the overflow strategies and the generators' accuracy checks::

    rep = error_report(reference, approx)
    rep.mse, rep.psnr_db, rep.max_abs_error, rep.p99_rel_error
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class ErrorReport:
    """How far ``approx`` is from ``reference`` (both compared in float64).

    ``psnr_db`` uses the reference's peak magnitude: ``10 log10(peak^2 / mse)`` (inf when exact).
    ``p99_rel_error`` is the 99th percentile of ``|err| / |ref|`` over non-zero reference entries.
    ``n_nonfinite`` counts entries where ``approx`` is Inf/NaN but the reference is finite; they
    are left out of the other figures.
    """

    n: int
    mse: float
    psnr_db: float
    max_abs_error: float
    mean_abs_error: float
    p99_rel_error: float
    max_rel_error: float
    n_nonfinite: int

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (f"n={self.n} mse={self.mse:.3e} psnr={self.psnr_db:.2f} dB "
                f"max_abs={self.max_abs_error:.3e} p99_rel={self.p99_rel_error:.3e}"
                + (f" nonfinite={self.n_nonfinite}" if self.n_nonfinite else ""))


def error_report(reference, approx) -> ErrorReport:
    ref = np.asarray(reference, dtype=np.float64).ravel()
    app = np.broadcast_to(np.asarray(approx, dtype=np.float64), np.shape(reference)).ravel()
    bad = ~np.isfinite(app) & np.isfinite(ref)
    ok = np.isfinite(app) & np.isfinite(ref)
    err = app[ok] - ref[ok]
    r = ref[ok]
    if err.size == 0:
        return ErrorReport(0, 0.0, float("inf"), 0.0, 0.0, 0.0, 0.0, int(bad.sum()))
    mse = float(np.mean(err * err))
    peak = float(np.max(np.abs(r))) if r.size else 0.0
    psnr = float("inf") if mse == 0 else (10.0 * np.log10(peak * peak / mse) if peak > 0 else float("-inf"))
    nz = r != 0
    rel = np.abs(err[nz]) / np.abs(r[nz])
    return ErrorReport(
        n=int(ref.size), mse=mse, psnr_db=float(psnr), max_abs_error=float(np.max(np.abs(err))),
        mean_abs_error=float(np.mean(np.abs(err))),
        p99_rel_error=float(np.percentile(rel, 99)) if rel.size else 0.0,
        max_rel_error=float(np.max(rel)) if rel.size else 0.0, n_nonfinite=int(bad.sum()))
