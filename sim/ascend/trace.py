"""Chrome trace JSON (Perfetto / chrome://tracing): one process per core, one lane per pipe,
flow arrows from each ``set_flag`` to the ``wait_flag`` that consumed it (as msprof's simulator
draws them)::

    {"ph": "X", "pid": 0, "tid": 2, "name": "mad", "ts": 1.23, "dur": 0.28, "args": {"line": 41}}
    {"ph": "s", "id": 7, "pid": 0, "tid": 4, "ts": 0.9, "name": "MTE2->MTE1 EVENT_ID0", "cat": "flag"}
"""

from __future__ import annotations

import json

from isa.ascend.opcodes import PIPES

LANES = {"S": "SCALAR", "V": "VECTOR", "M": "CUBE", "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3", "FIX": "FIXP"}


def chrome_trace(result, timing, launch_result, module, hz: float) -> dict:
    us = 1e6 / hz
    kernels = launch_result.core_kernels
    if kernels:
        by_kernel = {k: launch_result_instrs(module, k) for k in set(kernels)}
        core_instrs = [by_kernel[k] for k in kernels]
    else:
        one = launch_result_instrs(module, launch_result.kernel)
        core_instrs = [one] * len(timing.core_cycles)
    out = []
    cores = sorted({s.core for s in timing.slices}) or list(range(len(timing.core_cycles)))
    for c in cores:
        label = launch_result.core_label(c) if kernels else f"{launch_result.core_type} core {c}"
        out.append({"ph": "M", "name": "process_name", "pid": c, "args": {"name": label}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": c, "args": {"sort_index": c}})
        for i, p in enumerate(PIPES):
            out.append({"ph": "M", "name": "thread_name", "pid": c, "tid": i, "args": {"name": LANES[p]}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": c, "tid": i, "args": {"sort_index": i}})
    tid = {p: i for i, p in enumerate(PIPES)}
    for s in timing.slices:
        ins = core_instrs[s.core][s.idx]
        name = s.name
        if s.kind in ("set", "wait", "xset", "xwait"):
            name = f"{s.name}({', '.join(str(o.name) if hasattr(o, 'name') else str(o.value) for o in ins.operands)})"
        out.append({"ph": "X", "pid": s.core, "tid": tid[s.pipe], "name": name, "ts": s.start * us,
                    "dur": (s.shown_end - s.start) * us, "cat": s.kind,
                    "args": {"line": ins.span.line, "cycles": s.cycles, "start_cycle": s.start,
                             "source": (module.source_line(ins.span.line) or "").strip()}})
    for i, (a, b) in enumerate(timing.flows):
        ia = core_instrs[a.core][a.idx]
        label = ", ".join(getattr(o, "name", None) or str(getattr(o, "value", "")) for o in ia.operands)
        common = {"name": label, "cat": "flag", "id": i + 1}
        out.append({"ph": "s", "pid": a.core, "tid": tid[a.pipe], "ts": a.start * us, **common})
        out.append({"ph": "f", "bp": "e", "pid": b.core, "tid": tid[b.pipe], "ts": b.start * us, **common})
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"cycles": timing.cycles, "clock_hz": hz, "kernel": launch_result.kernel}}


def launch_result_instrs(module, kernel_name):
    return module.function(kernel_name).instructions


def write_trace(path: str, *args) -> None:
    with open(path, "w") as fh:
        json.dump(chrome_trace(*args), fh)
