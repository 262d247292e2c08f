"""Chrome trace JSON (Perfetto / chrome://tracing) of an Ascend-like run: one process per core
("cube core 0", "vector core 3"), one lane per pipe, flow arrows from each ``set_flag`` to the
``wait_flag`` that consumed it and from each ``ffts_cross_core_sync`` to the ``wait_flag_dev`` it
released (as msprof's simulator draws them). Written by the shared layer's writer
(:func:`sim.timing.trace.chrome_trace`)::

    {"ph": "X", "pid": 0, "tid": 2, "name": "mad", "ts": 1.23, "dur": 0.28, "args": {"line": 41}}
    {"ph": "s", "id": 7, "pid": 0, "tid": 4, "ts": 0.9, "name": "set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0)"}
"""

from __future__ import annotations

import json

from isa.ascend.opcodes import PIPES
from sim.timing import Slice as TraceSlice
from sim.timing import chrome_trace as layer_trace

LANES = {"S": "SCALAR", "V": "VECTOR", "M": "CUBE", "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3", "FIX": "FIXP"}


def _operands(ins) -> str:
    return ", ".join(str(o.name) if hasattr(o, "name") else str(o.value) for o in ins.operands)


def chrome_trace(result, timing, launch_result, module, hz: float) -> dict:
    kernels = launch_result.core_kernels
    if kernels:
        by_kernel = {k: launch_result_instrs(module, k) for k in set(kernels)}
        core_instrs = [by_kernel[k] for k in kernels]
    else:
        one = launch_result_instrs(module, launch_result.kernel)
        core_instrs = [one] * len(timing.core_cycles)

    def process(c: int) -> str:
        return launch_result.core_label(c) if kernels else f"{launch_result.core_type} core {c}"

    made = {}
    out = []
    for s in timing.slices:
        ins = core_instrs[s.core][s.idx]
        name = s.name
        if s.kind in ("set", "wait", "xset", "xwait"):
            name = f"{s.name}({_operands(ins)})"
        t = TraceSlice(process(s.core), LANES[s.pipe], name, s.start, s.end, s.kind,
                       {"line": ins.span.line, "source": (module.source_line(ins.span.line) or "").strip()})
        made[id(s)] = t
        out.append(t)
    flows = [(made[id(a)], made[id(b)]) for a, b in timing.flows if id(a) in made and id(b) in made]
    return layer_trace(out, hz, flows, meta={"cycles": timing.cycles, "kernel": launch_result.kernel},
                       track_order=[LANES[p] for p in PIPES])


def launch_result_instrs(module, kernel_name):
    return module.function(kernel_name).instructions


def write_trace(path: str, *args) -> None:
    with open(path, "w") as fh:
        json.dump(chrome_trace(*args), fh)
