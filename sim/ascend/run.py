"""Run a kernel: functional engine, then the timing model on its events.

    res = run_module(isa.load("examples/ascend/vadd_f16.asm"), load_machine("davinci-a2"),
                     inputs={"x": x, "y": y})
    res.timing.cycles, res.outputs["z"], res.reports
"""

from __future__ import annotations

from dataclasses import dataclass

from isa import ir

from .engine import LaunchResult, launch_kernel
from .machine import AscendModel
from .timing import TimingResult, gm_traffic, simulate


@dataclass
class RunResult:
    launch: LaunchResult
    timing: TimingResult

    @property
    def outputs(self):
        return self.launch.outputs

    @property
    def reports(self):
        return self.launch.reports


def run_module(module: ir.Module, machine: AscendModel, *, kernel: str | None = None, inputs: dict | None = None,
               cores: int | None = None, functional: bool = True, trace: bool = False,
               max_steps: int | None = None, progress=None) -> RunResult:
    launch = launch_kernel(module, machine, kernel=kernel, inputs=inputs, cores=cores, functional=functional,
                           max_steps=max_steps, progress=progress)
    total = gm_traffic(launch.events)
    timing = simulate(launch.events, machine, gm_bytes=total, gm_unique=launch.gm.footprint(), trace=trace,
                      core_types=launch.core_types)
    return RunResult(launch, timing)
