"""The Timeline tab: per-pipe timeline, busy/utilisation table and stall breakdown.

For Ascend-like kernels the tab runs the timing model (``sim.ascend``, timing-only) in a worker
the first time it is shown for a kernel and draws one row per pipe per group of identical cores::

    cores 0-15    MTE2 ▄██████████████████░░░░░░░░░░░░░░░░░░░░░░░░░░
                  V         ░░░░░░░░░░░░░░░░░▄███▄
                  MTE3 ╵          ░░░░░░░░░░░░░░░░░▄███████████▄

For PTX the tab runs the launch (its manifest entry or ``--launch``) on the H200 timing model
(``sim.run_kernel(..., timing="h200", trace=True)``) and draws the traced SM: one row per unit per
sub-partition (``█`` the unit issued in at least half of the cell's cycles, ``▄`` at all), the
model's speed-of-light / occupancy / warp-state report, and the PTX lines whose instructions waited
longest to issue; the heat column beside the code then shows those stall cycles. Without a timing
model, or without a launch spec, the tab says so and shows what a simulator run measured: executed
warp-instructions per unit.
"""

from __future__ import annotations

import re

from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.widgets import Static

from .. import backends, timeline
from ..model import KernelDoc
from .jump_list import JumpList
from .overview import bar

#: theme colour of each pipe's busy cells
PIPE_STYLE = {"S": "$text", "V": "$secondary", "M": "$primary", "MTE1": "$accent", "MTE2": "$success",
              "MTE3": "$accent", "FIX": "$error"}
LABEL_W = 14   # "cores 16-47   "
PIPE_W = 5


def lanes_markup(run: timeline.TimelineRun, width: int) -> str:
    """The drawn timeline (axis, lanes, legend) as markup, ``width`` cells for the bars."""
    marks, labels = timeline.axis(run.cycles, width)
    pad = " " * (LABEL_W + PIPE_W)
    out = [f"[dim]{pad}{marks}[/]", f"[dim]{pad}{escape(labels)}[/] [dim]cycles[/]"]
    last = None
    for lane in timeline.lanes(run, width):
        label = timeline.core_label(lane.cores) if lane.cores != last else ""
        last = lane.cores
        colour = PIPE_STYLE.get(lane.pipe, "$text")
        cells = []
        for ch, group in _runs(lane.cells):
            style = {timeline.BUSY: colour, timeline.PART: colour, timeline.WAIT: "$warning",
                     timeline.SET: "$text-muted"}.get(ch)
            cells.append(f"[{style}]{group}[/]" if style else group)
        out.append(f"[b]{label:<{LABEL_W}}[/]{lane.pipe:<{PIPE_W}}" + "".join(cells))
    out.append("")
    out.append(f"{timeline.BUSY} busy  {timeline.PART} busy part of a cell  [$warning]{timeline.WAIT}[/] held by "
               f"wait_flag  [$text-muted]{timeline.SET}[/] set_flag  [dim]1 cell = {run.cycles / max(8, width):.1f} "
               "cycles; cores that draw alike share rows[/]")
    return "\n".join(out)


def _runs(cells: str):
    """``'██░ '`` -> ``[('█', '██'), ('░', '░'), (' ', ' ')]``."""
    i = 0
    while i < len(cells):
        j = i
        while j < len(cells) and cells[j] == cells[i]:
            j += 1
        yield cells[i], cells[i:j]
        i = j


def tables_markup(run: timeline.TimelineRun) -> str:
    """Per-pipe busy/utilisation/wait table and the stall breakdown by flag and by waiting pipe."""
    b = timeline.breakdown(run)
    n = max(1, run.cores)
    out = [f"[b]Pipes[/] [dim](cycles summed over {run.cores} cores; utilisation = busy / (cycles x cores))[/]",
           f"  {'pipe':<5} {'ops':>6} {'busy':>10} {'util':>7}  {'':<24} {'waiting':>10}"]
    for p in b.pipes:
        if not (p.busy or p.wait or p.ops):
            continue
        out.append(f"  {p.pipe:<5} {p.ops:>6} {p.busy:>10,.0f} {p.utilization * 100:>6.1f}%  "
                   f"[{PIPE_STYLE.get(p.pipe, '$text')}]{bar(p.utilization, 1.0, 24):<24}[/] {p.wait:>10,.0f}")
    idle = [p.pipe for p in b.pipes if not (p.busy or p.wait or p.ops)]
    if idle:
        out.append(f"  [dim]unused: {' '.join(idle)}[/]")
    total = sum(r.cycles for r in b.flags)
    out += ["", f"[b]Stalls by flag[/] [dim]({total:,.0f} cycles held by wait_flag over all cores, "
                f"{total / n:,.0f} per core)[/]"]
    if not b.flags:
        out.append("  [dim](no wait_flag in this run)[/]")
    top = max((r.cycles for r in b.flags), default=0.0)
    for r in b.flags:
        out.append(f"  {escape(r.name):<22} {r.waits:>5} waits {r.cycles:>10,.0f} cycles {r.share * 100:>5.1f}%  "
                   f"[$warning]{bar(r.cycles, top, 24)}[/]")
    if b.by_pipe:
        out += ["", "[b]Stalls by waiting pipe[/]"]
        top = max(r.cycles for r in b.by_pipe)
        for r in b.by_pipe:
            out.append(f"  {r.name:<22} {r.waits:>5} waits {r.cycles:>10,.0f} cycles {r.share * 100:>5.1f}%  "
                       f"[$warning]{bar(r.cycles, top, 24)}[/]")
    return "\n".join(out)


def header_markup(run: timeline.TimelineRun) -> str:
    t = run.timing
    return (f"[b]{escape(run.kernel)}[/] on [b]{escape(run.machine)}[/]: {run.cores} {run.core_type} core(s), "
            f"[b]{run.cycles:,.0f} cycles[/] ({t.seconds * 1e6:.2f} µs at {run.hz / 1e9:.2f} GHz; modelled)\n"
            f"{run.instructions:,} instructions, GM {t.gm_bytes:,} bytes moved ({t.gm_unique_bytes:,} distinct) "
            "[dim](exact: counted in this run)[/]\n"
            "[dim]timing-only run: control flow, addresses, bounds and flags evaluated, no data computed "
            f"(the model took {run.seconds:.2f} s)[/]")


def ptx_markup(doc: KernelDoc, message: str) -> str:
    text = "[$warning]" + escape(message) + "[/]"
    r = doc.sim
    if r is None or r.isa != "ptx":
        return text + ("\n\n[dim]What a functional run measures (executed warp-instructions per unit) shows here "
                       "after a run in the Run tab (4).[/]")
    units = timeline.ptx_units(doc, r.stats)
    total = sum(v for _, v in units)
    top = max((v for _, v in units), default=0)
    rows = [f"  {escape(u):<10} [$primary]{bar(v, top, 36):<36}[/] {v:>10,} {v / total * 100:>6.1f}%" for u, v in units]
    return (text + "\n\n[b]Executed warp-instructions by unit[/] [dim](from the last simulator run, "
            f"{'generated' if r.generated else 'manifest'} inputs; counts, not cycles)[/]\n" + "\n".join(rows)
            + f"\n  {'total':<10} {'':<36} {total:>10,}")


def ptx_header_markup(run: timeline.PtxTimelineRun) -> str:
    t = run.timing
    sampled = (f", sampled {t.get('simulated_ctas')} of {t.get('ctas')} CTAs" if t.get("sampled") else "")
    return (f"[b]{escape(run.kernel)}[/] on [b]{escape(run.machine)}[/]: [b]{run.cycles:,.0f} cycles[/] "
            f"({run.cycles / run.hz * 1e6:.2f} µs at {run.hz / 1e9:.2f} GHz), {escape(str(t.get('bound', '?')))}-bound"
            f"{escape(sampled)}\n[dim]modelled, not measured: the functional simulator's events on the H200 timing "
            f"model (run and model took {run.seconds:.2f} s); lanes show SM {t.get('slowest_sm', 0)}'s sub-partitions, "
            "the SM that sets the time[/]")


def ptx_lanes_markup(run: timeline.PtxTimelineRun, doc: KernelDoc, width: int) -> str:
    lanes = timeline.ptx_lanes(run, doc, width)
    if not lanes:
        return "[dim](the model kept no trace of this run)[/]"
    marks, labels = timeline.axis(run.cycles, width)
    pad = " " * (LABEL_W + PIPE_W + 2)
    out = [f"[dim]{pad}{marks}[/]", f"[dim]{pad}{escape(labels)}[/] [dim]cycles[/]"]
    last = None
    for lane in lanes:
        label = re.sub(r"^SM (\d+) sub-partition ", r"SM \1 · SMSP ", lane.track) if lane.track != last else ""
        last = lane.track
        style = PTX_STYLE.get(lane.unit, "$text")
        out.append(f"[b]{escape(label):<{LABEL_W}}[/]{escape(lane.unit):<{PIPE_W + 2}}[{style}]{lane.cells}[/]")
    out.append("")
    out.append(f"{timeline.BUSY} issued in at least half of the cell  {timeline.PART} issued at all  "
               f"[dim]1 cell = {run.cycles / max(8, width):.1f} cycles; one issue per sub-partition per cycle[/]")
    return "\n".join(out)


def stall_items(run: timeline.PtxTimelineRun, limit: int = 10):
    from rich.text import Text

    vals = timeline.stalls_by_line(run)
    total = sum(vals.values())
    rows = sorted(vals.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [(line, Text.assemble((f"line {line:>5}  ", "bold"), f"{v:>12,.0f} stall cycles  ",
                                 (f"{v / total * 100:5.1f}%", "dim"))) for line, v in rows]


def ptx_tables_markup(run: timeline.PtxTimelineRun) -> str:
    from sim.timing.report import render

    try:
        return "[dim]" + escape(render(run.timing)) + "[/]"
    except (KeyError, TypeError):
        return ""


PTX_STYLE = {"fp32": "$primary", "fp16": "$secondary", "int": "$text", "tensor": "$accent", "lsu": "$success",
             "sfu": "$warning", "fp64": "$error", "control": "$text-muted", "sync": "$warning"}


class TimelinePanel(VerticalScroll):
    """The Timeline tab's content."""

    class HeatChanged(Message):
        """The heat column of ``doc`` now shows stall cycles per line."""

        def __init__(self, doc: KernelDoc) -> None:
            super().__init__()
            self.doc = doc

    def __init__(self, machine: str | None = None, launch: str | None = None, **kw) -> None:
        super().__init__(**kw)
        self.doc: KernelDoc | None = None
        self.machine = machine
        self.launch = launch

    def compose(self) -> ComposeResult:
        yield Static(id="timeline-body")
        yield Static(id="timeline-lanes")
        yield Static(id="timeline-problems-title")
        yield JumpList(id="timeline-problems")
        yield Static(id="timeline-tables")

    def _clear(self) -> None:
        for i in ("timeline-lanes", "timeline-problems-title", "timeline-tables"):
            self.query_one(f"#{i}", Static).update("")
        self.query_one("#timeline-problems", JumpList).set_items([])

    def set_doc(self, doc: KernelDoc) -> None:
        self.doc = doc
        self._clear()
        tm = backends.timing(doc.module.isa)
        body = self.query_one("#timeline-body", Static)
        if doc.module.isa != "ascend":
            if not tm.ok:
                body.update(ptx_markup(doc, tm.message))
                return
            if isinstance(doc.timeline, timeline.PtxTimelineRun):
                self._show_ptx(doc)
                return
            from isa.errors import InputError

            from ..runs import launch_spec

            try:
                spec = launch_spec(doc, self.launch)
            except InputError as exc:
                body.update(ptx_markup(doc, f"The H200 timing model needs a launch: {exc.message}"))
                return
            body.update("running the H200 timing model on the launch…")
            self.query_one("#timeline-lanes").loading = True
            self._run_ptx(doc, spec)
            return
        if not tm.ok:
            body.update("[$warning]" + escape(tm.message) + "[/]")
            return
        if doc.timeline is not None:
            self._show(doc)
            return
        body.update("running the timing model…")
        self.query_one("#timeline-lanes").loading = True
        self._run(doc)

    @work(thread=True, exclusive=True, group="timeline")
    def _run(self, doc: KernelDoc) -> None:
        from isa.errors import KernlensError

        try:
            run = timeline.run_timing(doc, self.machine)
            err = None
        except KernlensError as exc:
            run, err = None, exc.render()
        except Exception as exc:  # a model bug must not take the inspector down
            run, err = None, f"the timing model failed: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._done, doc, run, err)

    @work(thread=True, exclusive=True, group="timeline")
    def _run_ptx(self, doc: KernelDoc, spec) -> None:
        from isa.errors import KernlensError

        try:
            run = timeline.run_ptx_timing(doc, spec)
            err = None
        except KernlensError as exc:
            run, err = None, exc.render()
        except Exception as exc:  # a model bug must not take the inspector down
            run, err = None, f"the timing model failed: {type(exc).__name__}: {exc}"
        self.app.call_from_thread(self._done, doc, run, err)

    def _done(self, doc: KernelDoc, run, err: str | None) -> None:
        if run is not None:
            doc.timeline = run
        if doc is not self.doc:
            return
        self.query_one("#timeline-lanes").loading = False
        if err is not None:
            self.query_one("#timeline-body", Static).update("[$error]" + escape(err) + "[/]")
            return
        if isinstance(run, timeline.PtxTimelineRun):
            self._show_ptx(doc)
            return
        self._show(doc)

    def _show_ptx(self, doc: KernelDoc) -> None:
        run: timeline.PtxTimelineRun = doc.timeline
        self.query_one("#timeline-body", Static).update(ptx_header_markup(run))
        self.query_one("#timeline-lanes", Static).update(ptx_lanes_markup(run, doc, self._bar_width() - 2))
        items = stall_items(run)
        self.query_one("#timeline-problems-title", Static).update(
            "[b]Stall cycles by PTX line[/] [dim](traced warps; enter: show the line; the heat column beside the "
            "code shows them)[/]" if items else "[dim]No instruction waited to issue in the traced warps.[/]")
        self.query_one("#timeline-problems-title").display = True
        self.query_one("#timeline-problems", JumpList).set_items(items)
        self.query_one("#timeline-tables", Static).update(ptx_tables_markup(run))
        heat = timeline.stall_heat(run)
        if heat:
            doc.heat = heat
            self.post_message(self.HeatChanged(doc))

    def _bar_width(self) -> int:
        w = self.scrollable_content_region.width or self.app.size.width
        return max(20, w - LABEL_W - PIPE_W - 8)  # room for " cycles" after the last tick label

    def _show(self, doc: KernelDoc) -> None:
        from ..runs import problem_rows
        from .run_panel import problem_items

        run: timeline.TimelineRun = doc.timeline
        self.query_one("#timeline-body", Static).update(header_markup(run))
        self.query_one("#timeline-lanes", Static).update(lanes_markup(run, self._bar_width()))
        probs = problem_items(problem_rows(run.reports))
        self.query_one("#timeline-problems-title", Static).update(
            f"[b $error]Undefined behaviour met on the way[/]: {len(probs)} [dim](enter: show the line)[/]" if probs else "")
        self.query_one("#timeline-problems", JumpList).set_items(probs)
        self.query_one("#timeline-problems-title").display = bool(probs)
        self.query_one("#timeline-tables", Static).update(tables_markup(run))

    def on_resize(self) -> None:
        if self.doc is None or self.doc.timeline is None:
            return
        if isinstance(self.doc.timeline, timeline.PtxTimelineRun):
            self.query_one("#timeline-lanes", Static).update(ptx_lanes_markup(self.doc.timeline, self.doc,
                                                                              self._bar_width() - 2))
        else:
            self.query_one("#timeline-lanes", Static).update(lanes_markup(self.doc.timeline, self._bar_width()))
