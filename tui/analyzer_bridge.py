"""Fill a :class:`tui.analysis.KernelAnalysis` from the analyzer (``analyzer.report``).

The analyzer gives per-instruction execution estimates (per thread, each exact or not), loops
from the CFG with trip counts and the reason when one is unknown, FLOPs/int ops by dtype, bytes by
state space, intensity and the roofline on the H200 machine model, and the manifest's
expectations checked with its own family patterns::

    loop at line 488: trip count unknown (bound %r47 ... give --param); assumed 16
"""

from __future__ import annotations

from collections import Counter

from .analysis import Expectation, KernelAnalysis


def _si(x: float | None, unit: str) -> str:
    if x is None:
        return "?"
    for div, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.1f} {p}{unit}"
    return f"{x:.1f} {unit}"


def apply(ka: KernelAnalysis, module, fn, corpus, params) -> bool:
    try:
        from analyzer.report import analyze_function
    except ImportError:
        return False
    given = dict(params or {})
    if given:
        try:
            from analyzer.params import resolve

            given = resolve(module, fn, given, strict=False)
        except Exception:  # noqa: BLE001 - names the analyzer cannot map are simply not used
            pass
    try:
        r = analyze_function(module, fn, params=given)
        counts = r.instruction_counts()
        exact = r.instruction_exact()
        dyn = r.dynamic()
    except Exception as exc:  # noqa: BLE001 - show what failed, keep the static facts
        ka.missing.append(f"the analyzer failed on this kernel ({type(exc).__name__}: {exc}); static facts only")
        return True
    ka.provider = "analyzer"
    for k, n in enumerate(ka.notes):
        n.dyn, n.exact = counts[k], exact[k]
        n.depth = r.loop_depth(k)
    mix: Counter = Counter()
    for n in ka.notes:
        mix[n.label or "other"] += n.dyn or 0.0
    static = {c: s for c, s, _ in ka.class_mix}
    ka.class_mix = [(c, static.get(c, 0), d) for c, d in mix.most_common()]
    ka.dynamic_exact = bool(dyn.get("exact"))
    how = "exact" if ka.dynamic_exact else "estimate"
    per = dyn.get("per", "thread")
    ka.flops = {k: float(v) for k, v in dyn["flops"]["by_dtype"].items()}
    ka.flops.update({f"{k} int": float(v) for k, v in dyn["int_ops"]["by_dtype"].items()})
    ka.bytes = {k: float(v["value"]) for k, v in dyn["bytes"].items()}
    ka.work_note = f"dynamic, per {per} ({how})"
    ka.intensity = dyn["intensity"]["value"]
    roof = dyn.get("roofline")
    if roof:
        ka.roofline = (f"on {roof['machine']}: {roof.get('bound') or '?'}-bound; attainable "
                       f"{_si(roof.get('attainable_ops_per_s'), 'op/s')} of peak {_si(roof.get('peak_ops_per_s'), 'op/s')}"
                       f", ridge {roof['ridge']:.0f} op/B" if roof.get("ridge") else f"on {roof['machine']}")
    by_header = {li.header: li for li in r.loops}
    for lp in ka.loops_flat():          # the same CFG (isa.cfg) the analyzer estimated on
        li = by_header.get(lp.header)
        if li is not None:
            lp.trip = (f"{li.iterations} iterations" if li.iterations is not None
                       else f"? (assumed {dyn.get('assumed_iterations')} iterations)")
            lp.exact = li.exact
    ka.missing = [m for m in ka.missing if "semantics table" in m]
    ka.missing += [f"analyzer: {n}" for n in dyn.get("notes", [])]
    if dyn.get("missing_params"):
        ka.missing.append("give --param NAME=VALUE for: " + ", ".join(dyn["missing_params"]))
    if corpus is not None:
        try:
            from analyzer.manifest import expectations_for

            outs = r.check(expectations_for(corpus.entry, corpus.target))
            ka.expectations = [Expectation(str(o.expectation), bool(o.holds), int(o.found)) for o in outs]
            ka.expectations_source = "corpus manifest, checked by the analyzer"
        except Exception:  # noqa: BLE001 - keep the static pattern check
            pass
    return True
