"""The Run tab's work, without Textual: describe a launch spec, check recorded outputs, run the
simulator when the checkout has one.

The corpus keeps what the H200 produced for each entry (``h200/io_sm90/<name>.sm_90.npz`` with
``got_*`` and ``ref_*`` arrays). :func:`check_recorded` checks those with ``sim.check`` under the
manifest's tolerances, which gives a real check report (and its error histogram) before the
functional simulator exists; the view labels it as the GPU's result, not a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from isa.errors import InputError, KernlensError

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


class Cancelled(Exception):
    """Raised from the progress listener to stop a run the user abandoned."""


class _Progress:
    """Listener counting executed instructions and reporting every ~0.2 s."""

    memory_only = False

    def __init__(self, report, cancelled) -> None:
        import time

        self.n = 0
        self.report, self.cancelled = report, cancelled
        self._clock = time.perf_counter
        self._last = self._clock()

    def __call__(self, ev) -> None:
        self.n += len(getattr(ev, "warps", ())) or 1
        now = self._clock()
        if now - self._last > 0.2:
            self._last = now
            if self.cancelled():
                raise Cancelled()
            self.report(self.n)


def launch_spec(doc: KernelDoc, spec_path: str | None = None):
    """The launch spec: ``spec_path`` (``--launch``) if given, else the corpus manifest entry."""
    from sim import launch as L

    if spec_path:
        return L.load_launch(spec_path, doc.name)
    if doc.corpus is None:
        raise InputError("no launch spec for this kernel: it is not in a corpus manifest (give --launch SPEC.json)")
    return L.spec_from_entry(doc.corpus.entry, source=str(doc.corpus.root / "manifest.json"), base=doc.corpus.root)


@dataclass(frozen=True)
class ProblemRow:
    """Undefined-behaviour findings of one kind at one line, grouped (a race reported for 512
    threads is one row with ``count=512``); ``text`` is the first finding's message."""

    line: int
    kind: str
    text: str
    count: int
    where: str = ""


def problem_rows(problems) -> list[ProblemRow]:
    """Group ``sim.Problem`` (PTX) or ``sim.ascend.engine.Report`` findings by (line, kind)."""
    rows: dict[tuple[int, str], list] = {}
    for p in problems:
        if hasattr(p, "ptx_line"):
            line, kind = int(p.ptx_line), p.kind
            where = ", ".join(x for x in (p.source,
                                          f"cta {p.cta} thread {p.thread}" if p.cta and p.thread else None) if x)
            text = p.message + (f" [{p.buffer}]" if p.buffer else "")
        else:  # Ascend Report
            line, kind = int(p.span.line or 0), "undefined behaviour"
            where = f"core {p.core}" + (f" and {len(p.other_cores)} other(s)" if p.other_cores else "")
            text = p.message.split(": ", 1)[1] if p.message.startswith("kernel ") and ": " in p.message else p.message
        rows.setdefault((line, kind), []).append((text, where))
    return [ProblemRow(line, kind, v[0][0], len(v), v[0][1]) for (line, kind), v in sorted(rows.items())]


@dataclass
class SimResult:
    """A finished functional run, kept on the :class:`KernelDoc` so its views survive kernel
    switches. ``heat`` (PTX only) maps PTX line -> ``sim.memory.heat.Site``."""

    isa: str
    seconds: float
    stats: dict
    problems: tuple
    report: object | None     # sim.check.OutputsReport (PTX), or the ULP view of an Ascend check
    heat: dict[int, object]
    seed: int
    generated: bool = False
    verdict: dict | None = None   # Ascend: sim.ascend.check.compare(...) (the --check verdict)
    note: str = ""
    analysis: object | None = None   # the kernel's analysis with this run's measured counts (PTX)

    @property
    def rows(self) -> list[ProblemRow]:
        return problem_rows(self.problems)


def simulate(doc: KernelDoc, *, generated: bool = False, spec_path: str | None = None, machine: str | None = None,
             progress=lambda n: None, cancelled=lambda: False) -> SimResult:
    """Run the kernel on the functional simulator with the manifest inputs (the corpus seed) or
    freshly generated ones, check against the spec's reference, and collect memory heat.
    Ascend-like kernels go to :func:`simulate_ascend` (``machine`` picks the model)."""
    if doc.module.isa == "ascend":
        return simulate_ascend(doc, generated=generated, machine=machine)
    import random

    from sim import launch as L
    from sim.check import check_outputs
    from sim.memory.heat import MemoryHeat

    spec = launch_spec(doc, spec_path)
    seed = random.randrange(1, 2**31) if generated else spec.seed_for(doc.name)
    heat = MemoryHeat()
    ex = L.execute(doc.module, spec, doc.name, seed=seed, listeners=[heat, _Progress(progress, cancelled)])
    report = None
    if spec.reference:
        from sim.cli import load_reference

        ref_in = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in ex.inputs.items()}
        try:
            expected = load_reference(spec.reference)(ref_in)
        except KernlensError:
            raise
        except Exception as exc:
            raise InputError(f"reference {spec.reference} raised {type(exc).__name__}: {exc}") from None
        report = check_outputs(ex.outputs, expected, {a.name: a.dtype for a in spec.buffers},
                               rtol=spec.rtol, atol=spec.atol, per_output=spec.per_output)
    measured = None
    if ex.complete and not any(p.kind in ("max_steps", "interrupted") for p in ex.problems):
        from .analysis import analyse

        measured = analyse(doc.module, doc.fn, doc.corpus, doc.params,
                           measured=ex.stats.get("threads_by_instruction"), launch=(spec.grid, spec.block),
                           taken=ex.stats.get("taken_by_instruction"))
    return SimResult("ptx", ex.seconds, dict(ex.stats), tuple(ex.problems), report, heat.by_line(doc.fn), seed,
                     generated, analysis=measured)


def simulate_ascend(doc: KernelDoc, *, generated: bool = False, machine: str | None = None) -> SimResult:
    """Run an Ascend-like kernel with numerics: inputs from its ``.meta`` header (seed 0, as
    ``kernlens run --check``; a random seed when ``generated``), checked against the numpy
    reference; without ``.meta`` every GM parameter starts as zeros and only undefined
    behaviour is checked."""
    import random
    import time

    from sim.ascend.check import compare, make_inputs, read_meta, reference
    from sim.ascend.machine import load_machine
    from sim.ascend.run import run_module
    from sim.check import check_outputs

    from .timeline import machine_name

    meta = read_meta(doc.module)
    seed = random.randrange(1, 2**31) if generated else 0
    inputs = make_inputs(meta, seed=seed) if meta else {}
    m = load_machine(machine or machine_name(doc))
    t0 = time.perf_counter()
    res = run_module(doc.module, m, kernel=doc.name, inputs=inputs, functional=True)
    seconds = time.perf_counter() - t0
    stats = {"instructions": res.launch.instructions_executed, "cores": res.launch.blocks,
             "core_type": res.launch.core_type, "cycles": res.timing.cycles, "machine": m.name}
    verdict = report = None
    note = ""
    if meta:
        ref = reference(meta, inputs)
        verdict = compare(res.outputs, ref, meta)
        out_dt = str(meta.get("out", meta.get("dtype")))
        report = check_outputs({k: res.outputs[k] for k in ref}, ref, {k: out_dt for k in ref})
    else:
        note = "no .meta header: GM parameters started as zeros and the outputs were not checked"
    return SimResult("ascend", seconds, stats, tuple(res.reports), report, {}, seed, generated, verdict, note)


def heat_values(sites: dict[int, object]) -> dict[int, float]:
    """PTX line -> 0..1 by shared-memory wavefronts (global sectors where no line touches shared)."""
    key = "shared_wavefronts" if any(getattr(s, "shared_wavefronts", 0) for s in sites.values()) else "global_sectors"
    vals = {ln: float(getattr(s, key)) for ln, s in sites.items() if getattr(s, key)}
    top = max(vals.values(), default=0.0)
    return {ln: v / top for ln, v in vals.items()} if top else {}
