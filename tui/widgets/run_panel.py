"""The Run tab: launch spec, a simulator run in a worker with progress, the numerical check with
its error histogram, undefined behaviour and the hottest memory lines (both jump to their line).

After a PTX run the heat column beside the code shows shared-memory wavefronts per line (global
sectors where the kernel touches no shared memory); the status line gives the numbers under the
cursor. Ascend-like kernels run on ``sim.ascend`` with inputs from their ``.meta`` header.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.widgets import Button, ProgressBar, Static

from .. import backends, runs
from ..model import KernelDoc
from .jump_list import JumpList
from .overview import bar

STAT_KEYS = ("warp_instructions", "thread_instructions", "shared_load_wavefronts", "shared_store_wavefronts",
             "global_load_sectors", "global_store_sectors")


def histogram_markup(report) -> str:
    """The check report's ULP histogram as bars (``0  ████████ 6144``)."""
    rows = [(k, v) for k, v in report.histogram]
    top = max((v for _, v in rows), default=0)
    return "\n".join(f"  {escape(k):>10} [$primary]{bar(v, top, 30):<30}[/] {v}" for k, v in rows)


def _histograms(report) -> str:
    return "\n\n".join(f"[b]{escape(r.name)}[/]\n" + histogram_markup(r) for r in report.reports)


def result_markup(r: runs.SimResult) -> str:
    """What a finished run shows above the lists: counters, then the check and its histogram."""
    inputs = "generated" if r.generated else ("manifest" if r.isa == "ptx" else ".meta")
    head = f"[b]Simulated[/] in {r.seconds:.2f} s, seed {r.seed} ({inputs} inputs)"
    lines = []
    if r.isa == "ptx":
        lines.append("  counts of this run (exact: counted by the functional simulator):")
        for key in STAT_KEYS:
            if key in r.stats:
                lines.append(f"  {key:<24} {r.stats[key]:,}")
        ti = r.stats.get("thread_instructions", 0)
        if ti and r.seconds:
            lines.append(f"  {ti / r.seconds / 1e6:.2f} M thread-instructions/s (the simulator's speed here, measured)")
    else:
        s = r.stats
        lines.append(f"  {s['instructions']:,} instructions on {s['cores']} {s['core_type']} core(s) of {s['machine']}, "
                     f"{s['cycles']:,.0f} cycles in the timing model (modelled)")
    text = head + "\n" + escape("\n".join(lines))
    if r.isa == "ascend":
        if r.verdict is not None:
            v = r.verdict
            text += (f"\n\n[b]Check[/] ({escape(v['tolerance'])}): "
                     + ("[$success]PASSED[/]" if v["passed"] else "[$error]FAILED[/]")
                     + f"  max abs err {v['max_abs_err']:.3g}  max rel err {v['max_rel_err']:.3g}")
            if r.report is not None:
                text += ("\n\n[b]Error histogram (ULP)[/] [dim](distance per element; the verdict above is "
                         "the normwise rule of kernlens run --check)[/]\n" + _histograms(r.report))
        else:
            text += f"\n\n[dim]{escape(r.note)}[/]"
        return text
    if r.report is not None:
        text += "\n\n" + escape(r.report.render()) + "\n\n[b]Error histogram (ULP)[/]\n" + _histograms(r.report)
    else:
        text += "\n\n[dim]no reference for this launch: outputs not checked[/]"
    return text


def problem_items(rows: list[runs.ProblemRow]) -> list[tuple[int, Text]]:
    """One option per grouped finding: ``line 54  out_of_bounds  message  (where)``."""
    items = []
    for row in rows:
        t = Text.assemble((f"line {row.line:>5}  ", "bold"), (f"{row.kind} ", "bold red"),
                          (f"×{row.count}  " if row.count > 1 else "", "dim"), row.text,
                          (f"  ({row.where})" if row.where else "", "dim"))
        items.append((row.line, t))
    return items


def heat_items(r: runs.SimResult, limit: int = 8) -> list[tuple[int, Text]]:
    """The hottest lines with their ideal costs: up to ``limit`` by shared-memory wavefronts, then
    up to ``limit`` by global sectors (the two are different units, so they are not mixed)."""
    shared = sorted((kv for kv in r.heat.items() if kv[1].shared_wavefronts),
                    key=lambda kv: (-kv[1].shared_wavefronts, kv[0]))[:limit]
    glob = sorted((kv for kv in r.heat.items() if kv[1].global_sectors and not kv[1].shared_wavefronts),
                  key=lambda kv: (-kv[1].global_sectors, kv[0]))[:limit]
    top = shared + glob
    items = []
    for ln, s in top:
        parts = []
        if s.shared_wavefronts:
            parts.append(f"shared {s.shared_wavefronts:>8,} wavefronts (ideal {s.shared_ideal:,}, "
                         f"replay {s.shared_wavefronts / max(1, s.shared_ideal):.2f})")
        if s.global_sectors:
            parts.append(f"global {s.global_sectors:>7,} sectors (ideal {s.global_ideal_sectors:,})")
        items.append((ln, Text.assemble((f"line {ln:>5}  ", "bold"), "; ".join(parts))))
    return items


class RunPanel(VerticalScroll):
    """Shows what can be run for the selected kernel and the results."""

    def __init__(self, spec_path: str | None = None, machine: str | None = None, **kw) -> None:
        super().__init__(**kw)
        self.doc: KernelDoc | None = None
        self.spec_path = spec_path
        self.machine = machine

    def compose(self) -> ComposeResult:
        yield Static(id="run-sim")
        yield Static(id="run-spec")
        with Horizontal(id="run-buttons"):
            yield Button("Run (manifest inputs)", id="run-sim-button", variant="primary")
            yield Button("Run (generated inputs)", id="run-gen-button")
            yield Button("Check recorded H200 outputs", id="run-check-button")
        yield ProgressBar(id="run-progress", show_eta=False)
        yield Static(id="run-count")
        yield Static(id="run-problems-title")
        yield JumpList(id="run-problems")
        yield Static(id="run-report")
        yield Static(id="run-heat")
        yield JumpList(id="run-heat-list")

    def set_doc(self, doc: KernelDoc) -> None:
        self.doc = doc
        sim = backends.simulator(doc.module.isa)
        self.query_one("#run-sim", Static).update(
            ("[$success]simulator: " + escape(sim.message) + "[/]") if sim.ok else "[$warning]" + escape(sim.message) + "[/]")
        if doc.module.isa == "ascend":
            from sim.ascend.check import read_meta

            meta = read_meta(doc.module)
            spec_text = ([".meta " + " ".join(f"{k}={v}" for k, v in meta.items())] if meta else
                         ["no .meta header: GM parameters start as zeros; only undefined behaviour is checked"])
            can_launch, can_generate = sim.ok, sim.ok and meta is not None
            self.query_one("#run-sim-button", Button).label = "Run (.meta inputs, seed 0)" if meta else "Run"
        else:
            spec = doc.corpus.launch if doc.corpus else None
            spec_text = runs.launch_summary(spec) if spec or not self.spec_path else [f"launch spec: {self.spec_path}"]
            if doc.corpus is not None and spec:
                spec_text[0] += f"   (from {doc.corpus.root.name}/manifest.json)"
            can_launch = can_generate = sim.ok and (spec is not None or bool(self.spec_path))
            self.query_one("#run-sim-button", Button).label = "Run (manifest inputs)"
        self.query_one("#run-spec", Static).update("[b]Launch[/]\n" + escape("\n".join(spec_text)))
        self.query_one("#run-sim-button", Button).disabled = not can_launch
        self.query_one("#run-gen-button", Button).disabled = not can_generate
        check = self.query_one("#run-check-button", Button)
        check.display = doc.module.isa == "ptx"          # the H200 recorded PTX kernels' outputs only
        check.disabled = not check.display or runs.recorded_io(doc) is None
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#run-count", Static).display = False
        self._show_result(doc)

    def _show_result(self, doc: KernelDoc) -> None:
        r = doc.sim
        problems = problem_items(r.rows) if r is not None else []
        title = ""
        if r is not None:
            extra = r.stats.get("problems_suppressed", 0) if r.isa == "ptx" else 0
            title = (f"[b $error]Undefined behaviour[/]: {len(r.problems)} finding(s) at {len(problems)} place(s)"
                     + (f", {extra:,} more of the same suppressed" if extra else "")
                     + " [dim](enter: show the line)[/]") if problems else "[b]Undefined behaviour[/]: none found"
        self.query_one("#run-problems-title", Static).update(title)
        self.query_one("#run-problems-title").display = bool(title)
        self.query_one("#run-problems", JumpList).set_items(problems)
        self.query_one("#run-report", Static).update(doc.run_text)
        heat = heat_items(r) if r is not None and r.heat else []
        if heat:
            heat_title = ("[b]Memory heat[/] [dim](the ░▒▓█ column beside the code: shared-memory wavefronts, "
                          "or global sectors where no line touches shared memory; enter: show the line)[/]")
        elif r is not None and r.isa == "ascend":
            heat_title = "[dim]No per-line memory heat for Ascend-like kernels (UB bank cycles are in the timing model).[/]"
        elif r is not None:
            heat_title = "[dim]This run touched no shared or global memory per line.[/]"
        else:
            heat_title = ("[dim]Shared-memory wavefronts per line come from a simulator run; the heat column beside "
                          "the code stays empty until then.[/]")
        self.query_one("#run-heat", Static).update(heat_title)
        self.query_one("#run-heat-list", JumpList).set_items(heat)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run-check-button":
            self.check_recorded()
        elif event.button.id == "run-sim-button":
            self.run_simulator(generated=False)
        elif event.button.id == "run-gen-button":
            self.run_simulator(generated=True)

    def _busy(self, text: str) -> None:
        bar_ = self.query_one("#run-progress", ProgressBar)
        bar_.display = True
        bar_.update(total=None)
        self.query_one("#run-count", Static).update(text)
        self.query_one("#run-count", Static).display = True
        self.query_one("#run-report", Static).update("")

    def check_recorded(self) -> None:
        if self.doc is None or runs.recorded_io(self.doc) is None:
            self.query_one("#run-report", Static).update("[$warning]no recorded outputs for this kernel[/]")
            return
        self._busy("checking…")
        self._check(self.doc)

    @work(thread=True, exclusive=True, group="run")
    def _check(self, doc: KernelDoc) -> None:
        from isa.errors import KernlensError

        try:
            report = runs.check_recorded(doc)
            text = ("[b]Check of the outputs the H200 recorded[/] [dim](corpus h200/io_sm90; not a simulation)[/]\n"
                    + escape(report.render()) + "\n\n[b]Error histogram (ULP)[/]\n" + _histograms(report))
        except KernlensError as exc:
            text = "[$error]" + escape(exc.render()) + "[/]"
        self.app.call_from_thread(self._finish, doc, text, None)

    def _finish(self, doc: KernelDoc, text: str, result: runs.SimResult | None, failed_run: bool = False) -> None:
        doc.run_text = text
        if result is not None or failed_run:  # a failed run clears the previous run's lists and heat
            doc.sim = result
            doc.heat = runs.heat_values(result.heat) if result is not None else {}
            if result is not None and result.analysis is not None:
                doc._analysis = result.analysis      # the views now show the run's measured counts
            self.app.run_finished(doc)
        if doc is not self.doc:
            return
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#run-count", Static).display = False
        self._show_result(doc)

    def run_simulator(self, generated: bool = False) -> None:
        if self.doc is None:
            return
        sim = backends.simulator(self.doc.module.isa)
        if not sim.ok:
            self.query_one("#run-report", Static).update("[$warning]" + escape(sim.message) + "[/]")
            return
        self._busy("running on the simulator…")
        self._simulate(self.doc, generated)

    @work(thread=True, exclusive=True, group="run")
    def _simulate(self, doc: KernelDoc, generated: bool) -> None:
        from textual.worker import get_current_worker

        from isa.errors import KernlensError

        worker = get_current_worker()

        def progress(n: int) -> None:
            self.app.call_from_thread(self.query_one("#run-count", Static).update,
                                      f"running… {n:,} warp-instructions executed")

        try:
            r = runs.simulate(doc, generated=generated, spec_path=self.spec_path, machine=self.machine,
                              progress=progress, cancelled=lambda: worker.is_cancelled)
        except runs.Cancelled:
            return
        except KernlensError as exc:
            self.app.call_from_thread(self._finish, doc, "[$error]" + escape(exc.render()) + "[/]", None, True)
            return
        except Exception as exc:  # a simulator bug must not take the inspector down
            self.app.call_from_thread(self._finish, doc, "[$error]the simulator failed: "
                                      + escape(f"{type(exc).__name__}: {exc}") + "[/]", None, True)
            return
        self.app.call_from_thread(self._finish, doc, result_markup(r), r)
