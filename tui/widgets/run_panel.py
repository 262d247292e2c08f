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

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.doc: KernelDoc | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="run-sim")
        yield Static(id="run-spec")
        with Horizontal(id="run-buttons"):
            yield Button("Run in simulator", id="run-sim-button", variant="primary")
            yield Button("Check recorded H200 outputs", id="run-check-button")
        yield ProgressBar(id="run-progress", show_eta=False)
        yield Static(id="run-report")
        yield Static(id="run-heat")

    def set_doc(self, doc: KernelDoc) -> None:
        self.doc = doc
        sim = backends.simulator(doc.module.isa)
        self.query_one("#run-sim", Static).update(
            ("[$success]simulator: " + escape(sim.message) + "[/]") if sim.ok else "[$warning]" + escape(sim.message) + "[/]")
        spec = doc.corpus.launch if doc.corpus else None
        self.query_one("#run-spec", Static).update(
            "[b]Launch (manifest)[/]\n" + escape("\n".join(runs.launch_summary(spec))))
        self.query_one("#run-sim-button", Button).disabled = not sim.ok
        self.query_one("#run-check-button", Button).disabled = runs.recorded_io(doc) is None
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#run-report", Static).update("")
        self.query_one("#run-heat", Static).update(
            "[dim]Shared-memory wavefronts per line need a simulator run; the heat column beside the code "
            "stays empty until then.[/]")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run-check-button":
            self.check_recorded()
        elif event.button.id == "run-sim-button":
            self.run_simulator()

    def check_recorded(self) -> None:
        if self.doc is None or runs.recorded_io(self.doc) is None:
            self.query_one("#run-report", Static).update("[$warning]no recorded outputs for this kernel[/]")
            return
        bar_ = self.query_one("#run-progress", ProgressBar)
        bar_.display = True
        bar_.update(total=None)
        self.query_one("#run-report", Static).update("checking…")
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
        self.app.call_from_thread(self._show, doc, text)

    def _show(self, doc: KernelDoc, text: str) -> None:
        if doc is not self.doc:
            return
        self.query_one("#run-progress", ProgressBar).display = False
        self.query_one("#run-report", Static).update(text)

    def run_simulator(self) -> None:
        if self.doc is None:
            return
        sim = backends.simulator(self.doc.module.isa)
        if not sim.ok:
            self.query_one("#run-report", Static).update("[$warning]" + escape(sim.message) + "[/]")
            return
        self.query_one("#run-report", Static).update(
            "[$warning]The simulator is present but the inspector does not drive it yet.[/]")
