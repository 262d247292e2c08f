"""The Run tab's work, without Textual: describe a launch spec, check recorded outputs, run the
simulator when the checkout has one.

The corpus keeps what the H200 produced for each entry (``h200/io_sm90/<name>.sm_90.npz`` with
``got_*`` and ``ref_*`` arrays). :func:`check_recorded` checks those with ``sim.check`` under the
manifest's tolerances, which gives a real check report (and its error histogram) before the
functional simulator exists; the view labels it as the GPU's result, not a simulation.
"""

from __future__ import annotations

from pathlib import Path

from isa.errors import InputError

from . import backends
from .model import KernelDoc


def launch_summary(spec: dict | None) -> list[str]:
    """``grid [3, 7, 1] block [32, 8, 1]`` and one line per argument."""
    if not spec:
        return ["no launch spec (the kernel is not in a corpus manifest)"]
    out = [f"grid {spec.get('grid')}  block {spec.get('block')}  dynamic shared {spec.get('dynamic_shared_bytes', 0)}"]
    for a in spec.get("args", []):
        if "buffer" in a:
            shape = "x".join(str(s) for s in a.get("shape", []))
            out.append(f"  {a['buffer']}: {a.get('dtype')}[{shape}] {a.get('init', '')} ({a.get('role')})")
        else:
            out.append(f"  {a.get('scalar')}: {a.get('dtype')} = {a.get('value')}")
    return out


def recorded_io(doc: KernelDoc) -> Path | None:
    c = doc.corpus
    if c is None:
        return None
    p = c.root / "h200" / "io_sm90" / f"{c.entry['name']}.sm_90.npz"
    return p if p.is_file() else None


def check_recorded(doc: KernelDoc):
    """``sim.check.OutputsReport`` for the outputs the H200 recorded for this kernel's entry."""
    avail = backends.checker()
    if not avail.ok:
        raise InputError(avail.message)
    path = recorded_io(doc)
    if path is None:
        raise InputError("no recorded H200 outputs for this kernel")
    import numpy as np
    from sim.check import check_outputs

    entry = doc.corpus.entry
    dtypes = {a["buffer"]: a["dtype"] for a in (entry.get("launch") or {}).get("args", []) if "buffer" in a}
    with np.load(path) as z:
        got = {k[4:]: z[k] for k in z.files if k.startswith("got_")}
        ref = {k[4:]: z[k] for k in z.files if k.startswith("ref_")}
    tol = entry.get("tolerance") or {}
    return check_outputs(got, ref, dtypes, rtol=tol.get("rtol"), atol=tol.get("atol"),
                         per_output=entry.get("per_output"))
