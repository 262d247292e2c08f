"""The Run tab: launch spec, simulator availability, a check report with its error histogram."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.widgets import Button, ProgressBar, Static

from .. import backends, runs
from ..model import KernelDoc
from .overview import bar


def histogram_markup(report) -> str:
    """The check report's ULP histogram as bars (``0  ████████ 6144``)."""
    rows = [(k, v) for k, v in report.histogram]
    top = max((v for _, v in rows), default=0)
    return "\n".join(f"  {escape(k):>10} [$primary]{bar(v, top, 30):<30}[/] {v}" for k, v in rows)


class RunPanel(VerticalScroll):
    """Shows what can be run for the selected kernel and the results."""

    def __init__(self, spec_path: str | None = None, **kw) -> None:
        super().__init__(**kw)
        self.doc: KernelDoc | None = None
        self.spec_path = spec_path

    def compose(self) -> ComposeResult:
        yield Static(id="run-sim")
        yield Static(id="run-spec")
        with Horizontal(id="run-buttons"):
            yield Button("Run (manifest inputs)", id="run-sim-button", variant="primary")
            yield Button("Run (generated inputs)", id="run-gen-button")
            yield Button("Check recorded H200 outputs", id="run-check-button")
        yield ProgressBar(id="run-progress", show_eta=False)
        yield Static(id="run-count")
        yield Static(id="run-report")
        yield Static(id="run-heat")

    def set_doc(self, doc: KernelDoc) -> None:
        self.doc = doc
        sim = backends.simulator(doc.module.isa)
        self.query_one("#run-sim", Static).update(
            ("[$success]simulator: " + escape(sim.message) + "[/]") if sim.ok else "[$warning]" + escape(sim.message) + "[/]")
        spec = doc.corpus.launch if doc.corpus else None
        spec_text = runs.launch_summary(spec) if spec or not self.spec_path else [f"launch spec: {self.spec_path}"]
        self.query_one("#run-spec", Static).update("[b]Launch[/]\n" + escape("\n".join(spec_text)))
        can_launch = sim.ok and (spec is not None or bool(self.spec_path))
        self.query_one("#run-sim-button", Button).disabled = not can_launch
        self.query_one("#run-gen-button", Button).disabled = not can_launch
        self.query_one("#run-check-button", Button).disabled = runs.recorded_io(doc) is None
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#run-count", Static).update("")
        self.query_one("#run-report", Static).update(getattr(doc, "run_text", ""))
        self.query_one("#run-heat", Static).update(getattr(doc, "heat_text", "") or
            "[dim]Shared-memory wavefronts per line come from a simulator run; the heat column beside the code "
            "stays empty until then.[/]")

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
                    + escape(report.render()) + "\n\n[b]Error histogram (ULP)[/]\n"
                    + "\n\n".join(f"[b]{escape(r.name)}[/]\n" + histogram_markup(r) for r in report.reports))
        except KernlensError as exc:
            text = "[$error]" + escape(exc.render()) + "[/]"
        self.app.call_from_thread(self._show, doc, text, None, None)

    def _show(self, doc: KernelDoc, text: str, heat: dict | None, heat_text: str | None) -> None:
        doc.run_text = text
        if heat is not None:
            doc.heat = heat
            doc.heat_text = heat_text or ""
            self.app.query_one("#asm").set_heat(heat) if self.app.doc is doc else None
        if doc is not self.doc:
            return
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#run-count", Static).update("")
        self.query_one("#run-report", Static).update(text)
        if heat_text is not None:
            self.query_one("#run-heat", Static).update(heat_text)

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
            r = runs.simulate(doc, generated=generated, spec_path=self.spec_path, progress=progress,
                              cancelled=lambda: worker.is_cancelled)
        except runs.Cancelled:
            return
        except KernlensError as exc:
            self.app.call_from_thread(self._show, doc, "[$error]" + escape(exc.render()) + "[/]", None, None)
            return
        ti = r.stats.get("thread_instructions", 0)
        lines = [f"[b]Simulated[/] in {r.seconds:.2f} s, seed {r.seed} ({'generated' if generated else 'manifest'} inputs)"]
        for key in ("warp_instructions", "thread_instructions", "shared_load_wavefronts", "shared_store_wavefronts",
                    "global_load_sectors", "global_store_sectors"):
            if key in r.stats:
                lines.append(f"  {key:<24} {r.stats[key]}")
        if ti and r.seconds:
            lines.append(f"  {ti / r.seconds / 1e6:.2f} M thread-instructions/s")
        lines.append(f"undefined behaviour: {len(r.problems)} problem(s)" if r.problems else "undefined behaviour: none found")
        lines += ["  " + str(p) for p in r.problems[:10]]
        text = escape("\n".join(lines[1:]))
        text = lines[0] + "\n" + text
        if r.report is not None:
            text += "\n\n" + escape(r.report.render()) + "\n\n[b]Error histogram (ULP)[/]\n" + "\n\n".join(
                f"[b]{escape(x.name)}[/]\n" + histogram_markup(x) for x in r.report.reports)
        else:
            text += "\n\n[dim]no reference for this launch: outputs not checked[/]"
        heat = runs.heat_values(r.heat)
        top = sorted(r.heat.items(), key=lambda kv: -(kv[1].shared_wavefronts + kv[1].global_sectors))[:12]
        heat_text = "[b]Memory heat[/] (PTX line: shared wavefronts / ideal, global sectors / ideal)\n" + "\n".join(
            f"  {ln:>5}: {s.shared_wavefronts:>8} / {s.shared_ideal:<8} {s.global_sectors:>8} / {s.global_ideal_sectors:<8}"
            for ln, s in top)
        self.app.call_from_thread(self._show, doc, text, heat, heat_text)
