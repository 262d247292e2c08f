"""``kernlens inspect``: a Textual app to browse kernels, their instruction mix, loops and runs.

Files are parsed and analysed once, in a worker thread, while a loading indicator shows; each file
appears in the kernel list as soon as it is ready. Keys: ``j``/``k`` and arrows move, ``/``
searches instructions and opcodes (``n``/``N`` next/previous), ``g`` goes to a PTX line, ``[``/``]``
switch kernels, ``1``–``5`` switch tabs, ``r`` runs the kernel on the simulator, ``ctrl+p`` opens the
command palette. docs/inspector.md describes every view.
"""

from __future__ import annotations

import gc
from functools import partial
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Footer, Header, Input, OptionList, Static, TabbedContent, TabPane, Tree
from textual.widgets.option_list import Option

from isa.errors import KernlensError

from . import backends
from .model import KernelDoc, LoadedFile, load_file
from .widgets.asm_view import AsmView
from .widgets.dialogs import GotoLine
from .widgets.jump_list import JumpList
from .widgets.loops import LoopTree
from .widgets.overview import overview_markup
from .widgets.run_panel import RunPanel
from .widgets.sass_view import SassView
from .widgets.source_view import SourceView
from .widgets.timeline_panel import TimelinePanel

TABS = ("code", "overview", "loops", "run", "timeline")


class InspectorCommands(Provider):
    """Command palette entries: open a kernel, switch tab, search, go to line, toggle source."""

    def _commands(self):
        app: InspectorApp = self.app  # type: ignore[assignment]
        for i, (lf, doc) in enumerate(app.entries):
            if doc is not None:
                yield (f"Kernel: {doc.name} ({lf.name})", partial(app.select_entry, i), "show this kernel")
            else:
                yield (f"File with errors: {lf.name}", partial(app.select_entry, i), "show the error")
        for t in TABS:
            yield (f"Tab: {t.title()}", partial(app.action_tab, t), f"switch to the {t} tab")
        yield ("Search instructions…", app.action_search, "find text or an opcode pattern (/)")
        yield ("Go to line…", app.action_goto, "jump to a PTX line (g)")
        yield ("Toggle source pane", app.action_toggle_source, "show or hide the CUDA/Triton source (s)")
        yield ("Toggle SASS pane", app.action_toggle_sass, "show or hide what ptxas made of the PTX (v; x jumps)")
        yield ("Run on the simulator", app.action_run, "run this kernel with its launch spec (r)")
        yield ("Run with generated inputs", partial(app.action_run, True), "run with freshly drawn inputs")
        if app.doc is not None and app.doc.isa == "ptx":   # the H200 recorded PTX kernels' outputs only
            yield ("Check recorded outputs", app.action_check, "check the H200's outputs for this kernel")

    async def discover(self) -> Hits:
        for name, cb, help_ in self._commands():
            yield Hit(1.0, name, cb, help=help_)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, cb, help_ in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, help=help_)


class StatusLine(Static):
    """One line of status; updating it repaints the line without a layout pass."""

    def update(self, content="") -> None:  # type: ignore[override]
        self._status = content
        self.refresh()

    def render(self):
        return Text(str(getattr(self, "_status", "")))


class InspectorApp(App):
    """Browse the kernels of one or more assembly files."""

    CSS_PATH = "app.tcss"
    TITLE = "kernlens inspect"
    COMMANDS = App.COMMANDS | {InspectorCommands}

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("slash", "search", "Search"),
        Binding("g", "goto", "Go to line"),
        Binding("right_square_bracket", "kernel(1)", "Next kernel"),
        Binding("left_square_bracket", "kernel(-1)", "Prev kernel", show=False),
        Binding("s", "toggle_source", "Source"),
        Binding("v", "toggle_sass", "SASS", show=False),
        Binding("x", "to_sass", "To SASS", show=False),
        Binding("r", "run", "Run"),
        Binding("1", "tab('code')", "Code", show=False),
        Binding("2", "tab('overview')", "Overview", show=False),
        Binding("3", "tab('loops')", "Loops", show=False),
        Binding("4", "tab('run')", "Run", show=False),
        Binding("5", "tab('timeline')", "Timeline", show=False),
        Binding("escape", "close_search", show=False),
    ]

    def __init__(self, paths: list[str], source_dirs=(), kernel: str | None = None, line: int | None = None,
                 params: dict | None = None, launch: str | None = None, machine: str | None = None) -> None:
        super().__init__()
        self.launch = launch
        self.machine = machine
        self.paths = [str(p) for p in paths]
        self.source_dirs = tuple(str(d) for d in source_dirs)
        self.want_kernel = kernel
        self.want_line = line
        self.params = dict(params or {})
        self.entries: list[tuple[LoadedFile, KernelDoc | None]] = []
        self.current: int | None = None
        self.loaded = False
        self.show_source = True
        self.show_sass = False
        #: gc.freeze() each loaded file (the command line sets it: the process ends with the app)
        self.freeze_gc = False

    # -- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield Static("Kernels", id="sidebar-title")
                yield OptionList(id="kernels")
            with Vertical(id="main"):
                with TabbedContent(initial="code", id="tabs"):
                    with TabPane("Code", id="code"):
                        yield Static(id="code-header")
                        with Horizontal(id="code-body"):
                            yield AsmView(id="asm")
                            with Vertical(id="source-pane"):
                                yield Static(id="source-title")
                                yield SourceView(id="source")
                            with Vertical(id="sass-pane"):
                                yield Static(id="sass-title")
                                yield SassView(id="sass")
                    with TabPane("Overview", id="overview"):
                        with VerticalScroll(id="overview-scroll"):
                            yield Static(id="overview-body")
                    with TabPane("Loops", id="loops"):
                        yield LoopTree("loops", id="loop-tree")
                    with TabPane("Run", id="run"):
                        yield RunPanel(self.launch, self.machine, id="run-panel")
                    with TabPane("Timeline", id="timeline"):
                        yield TimelinePanel(self.machine, self.launch, id="timeline-panel")
                with VerticalScroll(id="error-panel"):
                    yield Static(id="error-body")
        yield Input(placeholder="search instructions or opcodes (ld.shared, mma, %r12)…", id="search")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#main").loading = True
        self.query_one("#error-panel").display = False
        self.query_one("#sass-pane").display = False
        self.query_one("#search").display = False
        self.query_one("#status", Static).update(f"loading {len(self.paths)} file(s)…")
        self.run_worker(self._load_all, thread=True, name="load", group="load")

    # -- loading (worker thread) -------------------------------------------------------------

    def _load_all(self) -> None:
        for path in self.paths:
            lf = load_file(path, self.source_dirs, self.params, kernel=self.want_kernel)
            if self.freeze_gc:
                # the files' IR lives as long as the app: out of the cyclic collector's sight, or every
                # collection walks millions of IR objects while the UI draws (seconds on a 30 MB file)
                gc.freeze()
            self.call_from_thread(self._add_file, lf)
        self.call_from_thread(self._done_loading)

    def _add_file(self, lf: LoadedFile) -> None:
        ol = self.query_one("#kernels", OptionList)
        items = [(lf, doc) for doc in lf.kernels] if lf.kernels else [(lf, None)]
        options = []                     # added at once: one layout for thousands of kernels, not one each
        for lf_, doc in items:
            i = len(self.entries)
            self.entries.append((lf_, doc))
            if doc is None:
                prompt = Text.assemble(("✗ ", "bold red"), (lf.name, ""), ("\n  parse error", "dim"))
            else:
                size = f"{len(doc.fn.instructions)} instr" if getattr(doc, "parsed", True) else f"{len(doc.lines)} lines"
                prompt = Text.assemble((doc.name, "bold"), (f"\n  {lf.name} · {size}", "dim"))
            options.append(Option(prompt, id=str(i)))
        ol.add_options(options)
        if self.current is None:
            target = self._initial_entry()
            if target is not None:
                self.select_entry(target)

    def _initial_entry(self) -> int | None:
        if self.want_kernel:
            for i, (_, doc) in enumerate(self.entries):
                if doc is not None and doc.name == self.want_kernel:
                    return i
            return None  # keep waiting for a later file
        return 0 if self.entries else None

    def _done_loading(self) -> None:
        self.loaded = True
        if self.current is None and self.entries:
            self.select_entry(0)
            if self.want_kernel:
                self.notify(f"no kernel named {self.want_kernel}", severity="warning")
        self.query_one("#main").loading = False
        n = sum(1 for _, d in self.entries if d is not None)
        bad = sum(1 for lf, d in self.entries if d is None)
        t = sum(lf.seconds for lf, _ in {id(lf): (lf, None) for lf, _ in self.entries}.values())
        self.sub_title = f"{n} kernel(s) in {len(self.paths)} file(s)" + (f", {bad} with errors" if bad else "")
        if self.current is None:
            self.query_one("#status", Static).update("no input")
        else:
            self._update_status()
        self.log(f"loaded in {t:.2f}s")
        # import the simulators off the UI thread once the app is interactive, so that the Run and
        # Timeline tabs open at once later (asking on the UI thread would block it for ~1 s)
        isas = frozenset(d.isa for _, d in self.entries if d is not None)
        self.set_timer(1.0, lambda: self.run_worker(partial(backends.prewarm, isas), thread=True, group="prewarm"))

    # -- selection ---------------------------------------------------------------------------

    @property
    def doc(self) -> KernelDoc | None:
        if self.current is None:
            return None
        return self.entries[self.current][1]

    def select_entry(self, i: int) -> None:
        if not (0 <= i < len(self.entries)):
            return
        self.current = i
        lf, doc = self.entries[i]
        ol = self.query_one("#kernels", OptionList)
        if ol.highlighted != i:
            ol.highlighted = i
        self.query_one("#main").loading = False
        tabs = self.query_one("#tabs", TabbedContent)
        panel = self.query_one("#error-panel")
        error = lf.error
        if doc is not None and not getattr(doc, "parsed", True):
            try:                                  # a kernel of a big file, parsed now that it is shown
                doc.fn  # noqa: B018
            except KernlensError as exc:
                error = exc
        if doc is None or error is not lf.error:
            tabs.display = False
            panel.display = True
            what = lf.name if doc is None else f"{doc.name} in {lf.name}"
            self.query_one("#error-body", Static).update(
                f"[b $error]Cannot open {escape(what)}[/]\n\n" + escape(error.render() if error else "unknown error"))
            self.query_one("#status", Static).update(f"{lf.name}: error")
            return
        tabs.display = True
        panel.display = False
        self._show_doc(doc)
        if self.want_line is not None:
            line, self.want_line = self.want_line, None
            self.goto(line)

    def _show_doc(self, doc: KernelDoc) -> None:
        asm = self.query_one("#asm", AsmView)
        asm.set_doc(doc, doc.heat)
        a = doc.analysis
        where = "/".join(Path(doc.path).parts[-2:])
        hdr = (f"[b]{escape(doc.name)}[/]  [dim]{escape(where)}  ·  {len(doc.fn.instructions)} instructions  ·  "
               f"facts: {escape(a.provider)}[/]\n"
               f"[dim]{escape(AsmView.header())}[/]")
        self.query_one("#code-header", Static).update(hdr)
        self._show_source(doc)
        self._show_sass(doc)
        self._fresh: set[str] = set()  # tabs showing this kernel; the others update when shown
        self._refresh_tab(self.query_one("#tabs", TabbedContent).active)
        self._update_status()

    def _refresh_tab(self, tab: str) -> None:
        doc = self.doc
        if doc is None or tab in getattr(self, "_fresh", set()):
            return
        self._fresh.add(tab)
        if tab == "overview":
            self.query_one("#overview-body", Static).update(overview_markup(doc))
            if doc.timeline is None:          # a timed run may come later (Timeline tab): show its point then
                self._fresh.discard(tab)
        elif tab == "loops":
            self.query_one("#loop-tree", LoopTree).set_doc(doc)
        elif tab == "run":
            self.query_one("#run-panel", RunPanel).set_doc(doc)
        elif tab == "timeline":
            self.query_one("#timeline-panel", TimelinePanel).set_doc(doc)

    def run_finished(self, doc: KernelDoc) -> None:
        """A simulator run of ``doc`` ended: heat column, status, and the Timeline's unit counts."""
        if doc is not self.doc:
            return
        self.query_one("#asm", AsmView).set_heat(doc.heat)
        self._fresh -= {"timeline", "overview", "loops"}     # counts are now the run's measured ones
        if self.query_one("#tabs", TabbedContent).active == "timeline":
            self._refresh_tab("timeline")
        self._update_status()

    def _show_source(self, doc: KernelDoc) -> None:
        pane = self.query_one("#source-pane")
        src = self.query_one("#source", SourceView)
        hit = doc.main_source
        lines = doc.source_text()
        if not lines:
            where = f"{hit.wanted}: not found" if hit else "no source named in the file"
            self.query_one("#source-title", Static).update(f"[dim]{escape(where)} (use --source-dir)[/]")
            src.set_source((), set())
            pane.display = self.show_source and False
            return
        used = {ins.loc.line for ins in doc.fn.instructions if ins.loc is not None}
        self.query_one("#source-title", Static).update(
            f"[b]{escape(hit.path.name)}[/] [dim]{'(no .loc lines: shown by name)' if not used else ''}[/]")
        src.set_source(lines, used, str(hit.path))
        pane.display = self.show_source and not self.show_sass

    # -- events ------------------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#kernels")
    def _kernel_selected(self, event: OptionList.OptionSelected) -> None:
        self.select_entry(int(event.option.id))

    @on(OptionList.OptionHighlighted, "#kernels")
    def _kernel_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        i = int(event.option.id)
        if i != self.current:
            self.select_entry(i)

    @on(AsmView.CursorMoved)
    def _cursor_moved(self, event: AsmView.CursorMoved) -> None:
        doc = self.doc
        if doc is None:
            return
        loc = doc.loc_of(event.line)
        src = self.query_one("#source", SourceView)
        if loc is not None and doc.main_source and doc.main_source.path and \
                Path(loc[0]).name == doc.main_source.path.name:
            src.show_line(loc[1])
        else:
            src.show_line(None)
        if self.show_sass:
            self.query_one("#sass", SassView).show_ptx_line(event.line)
        self._update_status()

    @on(SassView.Jump)
    def _sass_jump(self, event: SassView.Jump) -> None:
        self.goto(event.line)

    @on(SassView.CursorMoved)
    def _sass_cursor(self, event: SassView.CursorMoved) -> None:
        self._update_status()

    @on(Tree.NodeSelected, "#loop-tree")
    def _loop_selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data is not None:
            self.action_tab("code")
            self.goto(int(event.node.data))

    @on(JumpList.Jump)
    def _jump(self, event: JumpList.Jump) -> None:
        self.goto(event.line)

    @on(TimelinePanel.HeatChanged)
    def _stall_heat(self, event: TimelinePanel.HeatChanged) -> None:
        if event.doc is self.doc:
            self.query_one("#asm", AsmView).set_heat(event.doc.heat)

    @on(Input.Changed, "#search")
    def _search_changed(self, event: Input.Changed) -> None:
        self.query_one("#asm", AsmView).search(event.value)
        self._update_status()

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#search").display = False
        self.query_one("#asm", AsmView).focus()
        self._update_status()

    def _update_status(self) -> None:
        doc = self.doc
        if doc is None:
            return
        asm = self.query_one("#asm", AsmView)
        parts = [doc.name, f"line {asm.line}"]
        idxs = doc.line_instrs.get(asm.line)
        if idxs:
            n = doc.analysis.notes[idxs[0]]
            ins = doc.fn.instructions[idxs[0]]
            parts.append(ins.full_opcode + (f" [{n.label}]" if n.label else ""))
            if n.depth:
                parts.append(f"loop depth {n.depth}")
        loc = doc.loc_of(asm.line)
        if loc:
            parts.append(f"{Path(loc[0]).name}:{loc[1]}")
        site = doc.sim.heat.get(asm.line) if doc.sim is not None else None
        if site is not None:
            if site.shared_wavefronts:
                parts.append(f"shared {site.shared_wavefronts:,} wavefronts (ideal {site.shared_ideal:,})")
            if site.global_sectors:
                parts.append(f"global {site.global_sectors:,} sectors (ideal {site.global_ideal_sectors:,})")
        sass = self.query_one("#sass", SassView)
        if self.show_sass and sass.has_focus and sass.rows:
            r = sass.rows[sass.cursor]
            parts = [doc.name, f"SASS {r.text}"] + ([f"from PTX line {r.ptx_line}"] if r.ptx_line else [])
        elif self.show_sass and sass.rows:
            n = len(sass.rows_of(asm.line))
            if idxs:
                parts.append(f"{n} SASS instruction{'s' if n != 1 else ''}")
        if asm.query:
            pos = asm.match_position()
            parts.append(f"/{asm.query}: {len(asm.matches)} match(es)" + (f", at {pos}" if pos else ""))
        self.query_one("#status", Static).update("  ·  ".join(parts))

    # -- actions -----------------------------------------------------------------------------

    def action_search(self) -> None:
        if self.doc is None:
            return
        self.action_tab("code")
        inp = self.query_one("#search", Input)
        inp.display = True
        inp.focus()

    def action_close_search(self) -> None:
        inp = self.query_one("#search", Input)
        if inp.display:
            inp.display = False
            self.query_one("#asm", AsmView).focus()

    def action_goto(self) -> None:
        doc = self.doc
        if doc is None:
            return

        def done(line: int | None) -> None:
            if line is not None:
                self.goto(line)

        self.push_screen(GotoLine(doc.first_line, doc.last_line), done)

    def goto(self, line: int) -> bool:
        """Show PTX line ``line`` of the current file, switching kernel if another one holds it."""
        doc = self.doc
        if doc is None:
            return False
        asm = self.query_one("#asm", AsmView)
        if asm.goto_line(line):
            self.action_tab("code")
            asm.focus()
            return True
        for i, (lf, other) in enumerate(self.entries):
            if other is not None and other.path == doc.path and other.first_line <= line <= other.last_line:
                self.select_entry(i)
                asm.goto_line(line)
                self.action_tab("code")
                asm.focus()
                return True
        self.notify(f"line {line} is not inside a kernel of {Path(doc.path).name}", severity="warning")
        return False

    def action_kernel(self, delta: int) -> None:
        if self.entries:
            cur = self.current if self.current is not None else 0
            self.select_entry((cur + delta) % len(self.entries))

    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab
        self._refresh_tab(tab)
        if tab == "code":
            self.query_one("#asm", AsmView).focus()
        elif tab == "loops":
            self.query_one("#loop-tree").focus()

    def action_toggle_source(self) -> None:
        self.show_source = not self.show_source
        if self.doc is not None:
            self._show_source(self.doc)

    # -- the SASS pane ------------------------------------------------------------------------

    def _show_sass(self, doc: KernelDoc) -> None:
        pane = self.query_one("#sass-pane")
        pane.display = self.show_sass
        if not self.show_sass:
            return
        view = self.query_one("#sass", SassView)
        if doc.sass_rows is None:
            self.query_one("#sass-title", Static).update("[dim]SASS: compiling with ptxas…[/]")
            view.set_rows((), "compiling…")
            self.run_worker(partial(self._load_sass, doc), thread=True, group="sass", exclusive=True)
            return
        self.query_one("#sass-title", Static).update(f"[b]SASS[/] [dim]{escape(doc.sass_note)}[/]")
        view.set_rows(doc.sass_rows, "" if doc.sass_rows else doc.sass_note)
        view.show_ptx_line(self.query_one("#asm", AsmView).line)

    def _load_sass(self, doc: KernelDoc) -> None:
        from .model import load_sass

        rows, note = load_sass(doc)
        doc.sass_rows, doc.sass_note = rows, note
        self.call_from_thread(self._sass_loaded, doc)

    def _sass_loaded(self, doc: KernelDoc) -> None:
        if doc is self.doc:
            self._show_sass(doc)
            self._update_status()

    def action_toggle_sass(self) -> None:
        """Show / hide the SASS pane beside the PTX (it replaces the source pane while shown)."""
        self.show_sass = not self.show_sass
        if self.doc is not None:
            self._show_source(self.doc)
            self._show_sass(self.doc)
            if not self.show_sass:
                self.query_one("#asm", AsmView).focus()

    def action_to_sass(self) -> None:
        """From the PTX cursor to its SASS (``x``): the first instruction ptxas made of the line."""
        doc = self.doc
        if doc is None:
            return
        if not self.show_sass:
            self.action_toggle_sass()
        view = self.query_one("#sass", SassView)
        if doc.sass_rows is None:
            self.notify("SASS is still compiling", severity="information")
            return
        line = self.query_one("#asm", AsmView).line
        if view.focus_ptx_line(line):
            view.focus()
            self.call_after_refresh(self._update_status)      # once the focus has moved
        else:
            self.notify(f"no SASS instruction comes from PTX line {line}" if doc.sass_rows else doc.sass_note,
                        severity="warning")

    def action_run(self, generated: bool = False) -> None:
        if self.doc is None:
            return
        self.action_tab("run")
        self.query_one("#run-panel", RunPanel).run_simulator(generated=generated)

    def action_check(self) -> None:
        self.action_tab("run")
        self.query_one("#run-panel", RunPanel).check_recorded()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._refresh_tab(event.pane.id)
        if event.pane.id == "code":
            self.query_one("#asm", AsmView).focus()
