"""Analysis of one kernel: static counts, classes, loops, footprint, dynamic estimates, roofline,
expectations. :func:`analyze_module` returns one :class:`KernelReport` per kernel.

Works on any ISA the front ends read: instruction facts come through
``isa.semantics.describe(instr, module.isa)``.

    >>> import isa
    >>> m = isa.load("../shared/corpus/ptx/sgemm_naive.sm_90.ptx")          # doctest: +SKIP
    >>> r = analyze_module(m, params={"sgemm_naive_param_5": 2048})[0]    # doctest: +SKIP
    >>> r.classes["FP32_FMA"]                                              # doctest: +SKIP
    5
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from dataclasses import dataclass, field

from isa.errors import InputError
from isa.ir import (Address, Function, Immediate, Instruction, Module, OperandList, Register, RegisterDecl, Symbol,
                    Vector)
from isa.ptx.semantics import describe as describe_ptx
from isa.semantics import OpInfo, Scope
from isa.semantics import describe as describe_any
from isa.types import type_bits

from isa.cfg import Cfg
from .dataflow import Dataflow, Launch
from .dynamic import ASSUMED_TRIPS, Estimate, Estimator, LoopInfo
from .machine import RooflineModel, load_machine, machine_path, work_kind
from .patterns import Expectation, compile_pattern, is_class_name

_SCOPE_DIV = {Scope.LANE: 1, Scope.WARP: 32, Scope.WARPGROUP: 128, Scope.INSTRUCTION: 1}



@dataclass
class WorkSums:
    """The operations of a kernel's instructions, each counted by how many threads executed it:
    FLOPs and integer OPs by input dtype, and both by the kind of peak they run at
    (:func:`analyzer.machine.work_kind`)."""

    flops: Counter
    int_ops: Counter
    by_kind: Counter


def work_sums(infos, counts, scale: float = 1.0) -> WorkSums:
    """The one sum of a kernel's work (the analyzer's dynamic figures, the timing model's
    ``result.timing["work"]``): ``infos`` the instructions' semantics (``isa.semantics.describe``,
    ``None`` for none), ``counts`` how many threads executed each (estimated or measured), times
    ``scale``. FLOPs and integer OPs of an instruction of warp or warpgroup scope count once per
    warp or warpgroup."""
    flops: Counter[str] = Counter()
    int_ops: Counter[str] = Counter()
    by_kind: Counter[str] = Counter()
    facts: dict[int, tuple] = {}    # per distinct description: what the loop needs of it
    for info, c in zip(infos, counts):
        if not c or info is None:
            continue
        f = facts.get(id(info))
        if f is None:
            f = facts[id(info)] = (_SCOPE_DIV[info.scope], info.flops, info.int_ops, info.in_dtype or "?",
                                   work_kind(info.family, info.unit.value, info.in_dtype)
                                   if info.flops or info.int_ops else None)
        div, n_flops, n_int, dtype, kind = f
        share = c / div
        if n_flops:
            v = n_flops * share * scale
            flops[dtype] += v
            by_kind[kind] += v
        if n_int:
            v = n_int * share * scale
            int_ops[dtype] += v
            by_kind[kind] += v
    return WorkSums(flops, int_ops, by_kind)

@dataclass
class Outcome:
    """The result of one expectation on one kernel."""

    expectation: Expectation
    found: int
    holds: bool
    matches: list[int] = field(default_factory=list)     # instruction indices that match
    nearest: list[int] = field(default_factory=list)     # closest candidates when it fails
    level: str = "ptx"                                   # 'sass': indices into the kernel's SASS
    # a mix kernel's outcome (check_mix): its name and, per code segment, the segment's report and
    # outcome (found, matches and nearest there); found is their sum
    mix: str | None = None
    parts: tuple = ()

    def message(self, report: "KernelReport") -> str:
        e = self.expectation
        if self.parts:
            halves = ", ".join(f"{r.name} {o.found}" for r, o in self.parts)
            head = (f"mix kernel '{self.mix}': expected {e.name} {e.op} {e.count}, found {self.found} ({halves})"
                    + (f" (from {e.text})" if e.text.startswith("--") else ""))
            if self.holds:
                return head
            lines = [head]
            for r, o in self.parts:
                shown = o.nearest if not self.found else o.matches
                if shown:
                    lines.append(f"  {'nearest' if not self.found else 'matching'} instructions in {r.name}:")
                    lines += ["    " + r.where(k) for k in shown[:5]]
            if len(lines) == 1:
                lines.append("  no similar instructions in this kernel")
            return "\n".join(lines)
        head = (f"kernel '{report.name}': expected {e.name} {e.op} {e.count}, found {self.found}"
                + (f" (from {e.text})" if e.text.startswith("--") else ""))
        if self.holds:
            return head
        shown = self.nearest if self.nearest else self.matches
        what = "nearest instructions" if self.nearest else "matching instructions"
        lines = [head]
        if shown:
            lines.append(f"  {what}:")
            for k in shown[:5]:
                lines.append("    " + (report.sass.where(k) if self.level == "sass" else report.where(k)))
        else:
            lines.append("  no similar instructions in this kernel")
        return "\n".join(lines)


@dataclass
class KernelReport:
    module: Module
    function: Function
    infos: list[OpInfo]
    cfg: Cfg
    estimate: Estimate
    machine: RooflineModel | None
    launch: Launch
    params: dict[str, int]
    outcomes: list[Outcome] = field(default_factory=list)
    # the SASS ptxas made of the kernel (``analyze_function(..., sass=True)``), or why there is none
    sass: object | None = None
    sass_note: str | None = None
    # the mix kernel (``.mix``) this report is a code segment of, where it is one (check_mix)
    mix_of: str | None = None
    # the bodies of the device functions this function calls, counted at their call sites:
    # (index of the call instruction, the callee's report with its own calls inlined in turn)
    inlined: list[tuple[int, "KernelReport"]] = field(default_factory=list)
    # what the call expansion and the generic-address resolution left out or decided
    call_notes: list[str] = field(default_factory=list)
    # generic memory instructions (own index) -> the state space their address was traced to
    resolved_spaces: dict[int, str] = field(default_factory=dict)
    #: thread executions per instruction index, measured by running the launch (:meth:`use_measured`)
    measured: dict[int, int] | None = None
    measured_by: str = ""
    measured_taken: dict[int, int] | None = None    # threads that took each conditional branch
    #: what the counts of :meth:`use_measured` are: ``measured`` (a run) or ``exact`` (an Ascend-like
    #: kernel's scalar program stepped for every core, :func:`sim.ascend.scalar.step_scalar`)
    measured_basis: str = "measured"
    #: an Ascend-like launch: its cores (one program each; what per-launch totals count) and their type
    cores: int | None = None
    core_type: str | None = None
    #: an Ascend-like kernel stepped exactly: per instruction index, its (flops, int_ops, bytes)
    #: summed over the launch from its operands' values (:attr:`sim.ascend.scalar.ScalarSteps.work`),
    #: and the instructions whose count operands came from loaded data (their work is not known)
    stepped_work: dict[int, tuple] | None = None
    #: which cores were stepped (``block_idx`` values, all of the launch), and each core's instructions
    stepped: dict | None = None
    work_unknown: frozenset[int] = frozenset()

    def __post_init__(self) -> None:
        own = list(self.function.instructions)
        self._own = len(own)
        # extended index -> (call-site index in this function, callee report, index in the callee)
        self._origin: list[tuple[int, "KernelReport", int]] = []
        for site, sub in self.inlined:
            own.extend(sub.instructions)
            self._origin.extend((site, sub, j) for j in range(len(sub.instructions)))
        self._instructions = own

    def use_measured(self, threads_by_instruction: dict[int, int], by: str = "the functional simulator",
                     taken_by_instruction: dict[int, int] | None = None, *, cores: int | None = None,
                     core_type: str | None = None, basis: str = "measured") -> None:
        """Take the execution counts of a run of this launch (``sim.run_kernel``'s
        ``stats['threads_by_instruction']``) instead of the estimates: every dynamic figure becomes
        measured (``basis: 'measured'``), none rests on a guess. Instructions of called functions
        counted at their call sites keep their per-call estimate times the measured site count.

        An Ascend-like launch gives its ``cores`` (counts summed over them: ``LaunchResult.pc_counts``)
        and ``basis='exact'`` for counts stepped rather than run (:meth:`use_stepped`)."""
        if cores is not None:
            self.cores, self.core_type = int(cores), core_type
        if self.threads is None:
            raise InputError("measured counts need the launch's grid and block")
        self.measured = {int(k): int(v) for k, v in threads_by_instruction.items()}
        self.measured_by = by
        self.measured_basis = basis
        if taken_by_instruction is not None:
            self.measured_taken = {int(k): int(v) for k, v in taken_by_instruction.items()}

    def use_stepped(self, machine=None, cores: int | None = None) -> None:
        """An Ascend-like kernel's exact counts: its scalar program stepped on every core of the
        launch (:func:`sim.ascend.scalar.step_scalar`, ``block_idx`` 0 to cores - 1, the
        ``--param`` values). Where that cannot be done (a branch on loaded data, a scalar
        parameter without a value, too many steps) the estimate stays, with a guess that says why
        and what would make it exact."""
        from sim.ascend.machine import load_machine
        from sim.ascend.scalar import STEP_LIMIT, step_scalar

        if self.module.isa != "ascend":
            return
        if machine is None:
            try:
                machine = load_machine(self.module.target or "davinci-a2")
            except InputError:
                machine = load_machine("davinci-a2")
        got = step_scalar(self.module, self.function, machine, params=self.params, cores=cores)
        if got.exact:
            by = (f"the scalar program stepped on the {got.cores} {got.core_type} cores of a {machine.name} launch "
                  f"(block_idx {got.block_idx}, as `kernlens run` launches it; {got.steps:,} steps)")
            self.use_measured(dict(enumerate(got.counts)), by, dict(enumerate(got.taken)), cores=got.cores,
                              core_type=got.core_type, basis="exact")
            self.stepped_work, self.work_unknown = got.work, frozenset(got.work_unknown)
            self.stepped = {"block_idx": got.block_idx, "cores": got.cores, "core_type": got.core_type,
                            "machine": machine.name, "steps": got.steps, "per_core_instructions": list(got.per_core)}
            if got.stopped:
                self.call_notes.append(f"the scalar program stops on {len(got.stopped)} core(s): {got.stopped[0]}")
            return
        est = self.estimate
        est.notes.insert(0, f"counts not stepped exactly: {got.reason}; the loop and branch figures are estimates")
        est.guesses.insert(0, {"line": got.line, "what": "the scalar program", "assumed": "not stepped: " + got.reason,
                               "exact_with": [f"--param {p}" for p in got.needs]
                               or (["a larger step limit"] if str(STEP_LIMIT) in got.reason.replace(",", "") else [])})

    # ---- static -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.function.name

    @property
    def instructions(self) -> list[Instruction]:
        """The function's instructions, then those of the functions it calls (each call site's
        callee body once, in call order; :meth:`call_site` tells where an index came from)."""
        return self._instructions

    def call_site(self, k: int) -> int | None:
        """For an instruction of a called function, the index of the kernel's ``call`` it runs
        under; None for the function's own instructions."""
        return None if k < self._own else self._origin[k - self._own][0]

    @property
    def path(self) -> str:
        return self.module.path or "<text>"

    @property
    def opcodes(self) -> dict[str, int]:
        # counted by (opcode, modifiers), each spelled once, by one of its instructions
        keys = list(map(_OPCODE_WORDS, self.instructions))
        one = dict(zip(keys, self.instructions))
        c: Counter[str] = Counter()
        for key, n in Counter(keys).items():
            c[one[key].full_opcode] += n
        return dict(sorted(c.items()))

    @property
    def classes(self) -> dict[str, int]:
        # descriptions are shared between instructions of the same kind: count each once
        per_info = Counter(map(id, self.infos))
        unique = {id(info): info for info in self.infos}
        c: Counter[str] = Counter()
        for key, n in per_info.items():
            for cls in unique[key].classes:
                c[cls] += n
        return dict(sorted(c.items()))

    def matching(self, name: str) -> list[int]:
        """Indices of instructions matching a class name or an opcode pattern (``sass:NAME``: of
        the SASS instructions, see :meth:`isa.sass.SassKernel.matching`)."""
        if name.startswith("sass:"):
            return self._sass_or_raise(name).matching(name[5:])
        if is_class_name(name):
            return [k for k, info in enumerate(self.infos) if name in info.classes]
        pat = compile_pattern(name, self.module.isa)
        return [k for k, ins in enumerate(self.instructions) if pat.matches(ins, self.module.isa)]

    def count(self, name: str) -> int:
        return len(self.matching(name))

    def _sass_or_raise(self, name: str):
        if self.sass is None:
            from isa.sass import Unavailable

            raise Unavailable(f"'{name}' needs the kernel's SASS: "
                              + (self.sass_note or "analyse with --sass (sass=True)"))
        return self.sass

    def where(self, k: int) -> str:
        ins = self.instructions[k]
        line = ins.span.line
        text = self.module.source_line(line) if line else None
        text = (text or str(ins)).strip()
        chain = []
        rep = self
        while k >= rep._own:
            site, sub, k = rep._origin[k - rep._own]
            chain.append(f"line {rep.function.instructions[site].span.line} calls {sub.name}")
            rep = sub
        if chain:
            text += f"  (in {rep.name}: {', '.join(chain)})"
        return f"{self.path}:{line}: {text}"

    def nearest(self, name: str, limit: int = 3) -> list[int]:
        """Instructions closest to what a failed expectation asked for."""
        ins = self.instructions
        if is_class_name(name):
            return nearest_by_class(name, self.infos, limit)
        pat = compile_pattern(name, self.module.isa)
        scored = sorted(((pat.similarity(i, self.module.isa), k) for k, i in enumerate(ins)), key=lambda t: (-t[0], t[1]))
        return [k for s, k in scored[:limit] if s >= 1.0]

    # ---- loops and footprint ----------------------------------------------------------------

    @property
    def loops(self) -> list[LoopInfo]:
        """The loops with their iteration counts: estimated, or measured after :meth:`use_measured`
        with the branch counts (header executions over entries, the launch's average)."""
        from dataclasses import replace

        est = self.estimate
        # a loop no thread reaches, decided exactly (a remainder loop skipped for these --param
        # values): 0 iterations, exact -- not "unknown (assumed 16)"
        loops = [replace(li, entered=False, exact=True, reason="not entered for these values: the branches before it "
                         "skip it (exactly)")
                 if est.counts.get(h, 1.0) == 0 and est.exact.get(h, False) else li
                 for h in sorted(est.loops) for li in (est.loops[h],)]
        if self.measured is None or self.measured_taken is None:
            return loops

        why = "measured by a run" if self.measured_basis == "measured" else \
            "exact: the scalar program stepped on every core"
        many = " (the launch's average per entry)" if (self.threads or 1) > 1 else ""
        out = []
        for li in loops:
            m = self._measured_iterations(li)
            if m is None:
                out.append(li)
            elif m == 0 and not self.measured.get(self.cfg.blocks[li.header].start, 0):
                out.append(replace(li, entered=False, exact=True, measured=None,
                                   reason=f"not entered ({why.split(':')[0]}: no core or thread reaches it)"))
            else:
                out.append(replace(li, measured=m, exact=True, basis=self.measured_basis,
                                   reason=why + (many if not float(m).is_integer() else "")))
        return out

    def _measured_iterations(self, li: LoopInfo) -> float | None:
        cfg, got, taken = self.cfg, self.measured, self.measured_taken
        blocks = cfg.blocks
        if any(not len(blocks[b]) for b in cfg.pred[li.header]) or not len(blocks[li.header]):
            return None
        entries = 0
        for p in cfg.pred[li.header]:
            if p in cfg.loops[li.header].blocks:
                continue
            last = blocks[p].end - 1
            if len(cfg.succ[p]) == 1:
                entries += got.get(last, 0)
            elif cfg.edge_kind.get((p, li.header)) == "taken":
                entries += taken.get(last, 0)
            else:
                entries += got.get(last, 0) - taken.get(last, 0)
        runs = got.get(blocks[li.header].start, 0)
        if entries <= 0:
            return 0.0 if runs == 0 else None
        # a loop tested at the top runs its header once more per entry than its body
        return (runs if li.exit_at_latch else runs - entries) / entries

    def loop_depth(self, k: int) -> int:
        if k >= self._own:
            site, sub, j = self._origin[k - self._own]
            return self.cfg.depth_of_instruction(site) + sub.loop_depth(j)
        return self.cfg.depth_of_instruction(k)

    @property
    def registers(self) -> dict:
        declared: Counter[str] = Counter()
        for d in self.function.declarations:
            if isinstance(d, RegisterDecl):
                declared[d.type] += d.count if d.count is not None else len(d.names)
        regs32 = sum(max(1, type_bits(t) // 32) * n for t, n in declared.items() if t != "pred")
        return {"declared": dict(sorted(declared.items())), "predicates": declared.get("pred", 0),
                "virtual_32bit": regs32,
                "note": "virtual registers as declared in the assembly; ptxas allocates the physical ones"}

    def _referenced_symbols(self) -> set[str]:
        names: set[str] = set()
        for ins in self.function.instructions:
            for op in ins.operands:
                t = type(op)
                if t is Register or t is Immediate:
                    continue
                _symbols_of(op, names)
        return names

    @property
    def shared(self) -> dict:
        static, dynamic, names = 0, False, []
        local_vars = list(self.function.variables)
        all_vars = self.module._variables
        module_vars = []
        if all_vars:                  # the ones it names, in module order
            where = self.module.variable_positions
            module_vars = [all_vars[k] for k in sorted(k for n in self._referenced_symbols() for k in where.get(n, ()))]
        for v in local_vars + module_vars:
            if v.space != "shared":
                continue
            size = v.size_bytes
            names.append(v.name)
            if size is None:
                dynamic = True
            else:
                static += size
        return {"static_bytes": static, "dynamic": dynamic, "variables": names}

    @property
    def local_bytes(self) -> int:
        return sum(v.size_bytes or 0 for v in self.function.variables if v.space == "local")

    # ---- dynamic ----------------------------------------------------------------------------

    def instruction_counts(self) -> list[float]:
        """Per-thread executions of every instruction (a called function's: its executions per
        call times the executions of the call site; the launch's average when measured)."""
        counts = self.estimate.counts
        if self.measured is not None:
            out = [self.measured.get(k, 0) / self.threads for k in range(self._own)]
        else:
            out = self._per_block(counts, 0.0)
        for site, sub in self.inlined:
            c = out[site]
            out.extend(c * x for x in sub.instruction_counts())
        return out

    def _per_block(self, by_block: dict, default) -> list:
        """``by_block``'s value (``default`` where it has none) for each of the function's own
        instructions: a block's value repeated over its instructions."""
        blocks = self.cfg.blocks
        if sum(len(b) for b in blocks) == self._own and all(a.end == b.start for a, b in zip(blocks, blocks[1:])):
            out: list = []
            for b in blocks:
                out.extend([by_block.get(b.id, default)] * len(b))
            return out
        return [by_block.get(self.cfg.block_of_index[k], default) for k in range(self._own)]  # pragma: no cover

    def instruction_exact(self) -> list[bool]:
        ex = self.estimate.exact
        out = [True] * self._own if self.measured is not None else self._per_block(ex, False)
        for site, sub in self.inlined:
            e = out[site]
            out.extend(e and x for x in sub.instruction_exact())
        return out

    def _work_notes(self) -> list[str]:
        """Say which instructions' work is only known at run time (Ascend-like count operands in
        registers: ``mad.f16 l0c[0], l0a[%a], l0b[%b], %m, %k, %n, ...``)."""
        if self.module.isa != "ascend":
            return []
        if self.stepped_work is not None:
            notes = []
            if self.work_unknown:
                lines = sorted({self.instructions[k].span.line for k in self.work_unknown})
                notes.append(f"work and bytes of {len(lines)} instruction(s) rest on values loaded from UB (lines "
                             f"{', '.join(map(str, lines[:20]))}{' ...' if len(lines) > 20 else ''}): not counted, "
                             "and the figures they touch are not exact; `kernlens run` measures them")
            return notes
        unknown = [self.instructions[k].span.line for k, info in enumerate(self.infos)
                   if info.unit.value in ("cube", "vector", "mte1", "mte2", "mte3", "fixpipe")
                   and not (info.flops or info.int_ops or info.bytes)]
        if not unknown:
            return []
        lines = ", ".join(str(n) for n in unknown[:20]) + (" ..." if len(unknown) > 20 else "")
        return [f"work and bytes of {len(unknown)} instruction(s) depend on register operands (lines {lines}): "
                "they are counted as 0 here; `kernlens run FILE --machine davinci-a2` measures them"]

    def _work_infos(self) -> list[OpInfo]:
        """The instructions' descriptions with, for an Ascend-like kernel stepped exactly, each pipe
        instruction's work and bytes per execution as its operands' values made them (the launch's
        total over its executions): so that counts times work give the exact totals."""
        if self.stepped_work is None:
            return self.infos
        from dataclasses import replace

        out = list(self.infos)
        for k, (f, i, b) in self.stepped_work.items():
            n = self.measured.get(k, 0)
            if n and k not in self.work_unknown:
                out[k] = replace(out[k], flops=f / n, int_ops=i / n, bytes=b / n)
            elif k in self.work_unknown:
                out[k] = replace(out[k], flops=0, int_ops=0, bytes=0)
        return out

    @property
    def threads(self) -> int | None:
        """What per-launch totals count: the launch's threads (PTX) or cores (Ascend-like)."""
        return self.cores if self.cores is not None else self.launch.threads

    def dynamic(self) -> dict:
        """Per-thread and (with a launch shape) whole-launch estimates, each marked exact or not."""
        counts = self.instruction_counts()
        exact = self.instruction_exact()
        loops_exact = self.measured is not None or all(
            li.exact for li in self.estimate.loops.values() if self.estimate.counts.get(li.header, 0) > 0)
        all_exact = all(exact) and loops_exact
        infos = self._work_infos()
        unknown_work = [self.infos[k] for k in self.work_unknown]
        work_exact = all_exact and not unknown_work
        groups = self._count_groups(infos, counts, exact)
        if groups is not None:        # the same sums, each term added once per group: exact either way
            infos, counts, exact = [g[0] for g in groups], [g[1] for g in groups], [g[2] for g in groups]
        work = work_sums(infos, counts)
        flops, int_ops, by_kind = work.flops, work.int_ops, work.by_kind
        nbytes: Counter[str] = Counter()
        mix: Counter[str] = Counter()
        mix_inexact: set[str] = set()
        units: Counter[str] = Counter()
        spill = 0.0
        total = 0.0
        facts: dict[int, tuple] = {}  # per distinct description: what the loop below needs of it
        for k, info in enumerate(infos):
            c = counts[k]
            if not c:
                continue
            f = facts.get(id(info))
            if f is None:
                unit = info.unit.value
                f = facts[id(info)] = (_SCOPE_DIV[info.scope], unit, info.classes,
                                       info.bytes if info.space else 0, info.space)
            div, unit, classes, n_bytes, space = f
            total += c
            share = c / div
            units[unit] += c
            for cls in classes:
                mix[cls] += c
                if not exact[k]:
                    mix_inexact.add(cls)
            if n_bytes:
                nbytes[space] += n_bytes * share
                if space == "local":
                    spill += n_bytes * share
        threads = self.threads
        scale = threads if threads else 1
        # an Ascend-like kernel is one program per core; a PTX one, per thread
        per = "launch" if threads else ("core" if self.module.isa == "ascend" else "thread")

        def val(v: float, ex: bool = all_exact) -> dict:
            return {"value": _num(v * scale), "exact": bool(ex)}

        total_flops = sum(flops.values())
        gbytes = nbytes.get("global", 0.0)
        intensity = (total_flops + sum(int_ops.values())) / gbytes if gbytes else None
        inexact_spaces = {i.space for i in unknown_work}
        out = {
            "per": per,
            "threads": threads if self.cores is None else None,
            **({"cores": self.cores, "core_type": self.core_type} if self.cores is not None else {}),
            **({"stepped": self.stepped} if self.stepped is not None and self.measured_basis == "exact" else {}),
            "exact": all_exact,
            "instructions": val(total),
            "instructions_per_thread": {"value": _num(total), "exact": all_exact},
            "flops": {**val(total_flops, work_exact), "by_dtype": {k: _num(v * scale) for k, v in sorted(flops.items())}},
            "int_ops": {**val(sum(int_ops.values()), work_exact),
                        "by_dtype": {k: _num(v * scale) for k, v in sorted(int_ops.items())}},
            "bytes": {space: val(v, all_exact and space not in inexact_spaces) for space, v in sorted(nbytes.items())},
            "spill_bytes": val(spill),
            "intensity": {"value": intensity, "exact": work_exact},
            "mix": {k: _num(v * scale) for k, v in sorted(mix.items())},
            "mix_exact": {k: k not in mix_inexact for k in sorted(mix)},
            "units": {k: _num(v * scale) for k, v in sorted(units.items())},
            "work_by_kind": {k: _num(v * scale) for k, v in sorted(by_kind.items())},
            "notes": ([f"counts measured: this launch run on {self.measured_by}" if self.measured_basis == "measured"
                       else f"counts exact: {self.measured_by}"] + self.call_notes
                      if self.measured is not None
                      else list(dict.fromkeys(self.estimate.notes + self._work_notes() + self.call_notes))),
            "missing_params": [] if self.measured is not None else sorted(self.estimate.missing_params),
            "assumed_iterations": self.estimate.assumed_iterations,
            # what every inexact figure above rests on, and what would make it exact
            "basis": (self.measured_basis if all_exact else "measured; called functions estimated per call")
            if self.measured is not None else "exact" if all_exact else "estimate",
            "guesses": [] if self.measured is not None else [g for g in self.estimate.guesses],
            "totals": (f"per launch: {threads:,} {self.core_type} cores, one program each" if self.cores is not None
                       else f"per launch: {threads:,} threads (grid {'x'.join(map(str, self.launch.grid))}, block "
                       f"{'x'.join(map(str, self.launch.block))})" if threads else
                       ("per core (one program per core)" if self.module.isa == "ascend" else
                        "per thread (give --grid and --block for whole-launch totals)")),
        }
        out["roofline"] = self.roofline(by_kind, gbytes * scale, scale)
        return out

    def _count_groups(self, infos: list, counts: list, exact: list) -> list | None:
        """The instructions that execute, grouped by description and exactness, in the order each
        group first occurs: ``[info, executions summed over its instructions, exact]``; None where
        the grouped sums might differ from instruction-by-instruction ones in a single bit.

        :meth:`dynamic` sums counts (and counts times an integer work per 1, 32 or 128 threads)
        into float totals. When every count is a multiple of 1/1024 (whole counts, halves of a
        branch, ...) and every such term and total stays below 2**34, each is a multiple of 2**-17
        held exactly (51 bits), so any grouping gives the same bits, and the first key of each total
        comes first as before (JSON key order, and the order the roofline adds its terms in). A block's instructions share one count: a block is counted
        with one ``Counter`` of its descriptions, not instruction by instruction."""
        if self.measured is not None or self.stepped_work is not None:
            return None
        own = self._own
        acc: dict[tuple, list] = {}
        ids_all = list(map(id, infos))
        by_id: dict[int, object] = dict(zip(ids_all, infos))
        at = 0
        for b in self.cfg.blocks:
            if b.start != at:
                return None
            at = b.end
            if b.end == b.start:
                continue
            c = counts[b.start]
            if not c:
                continue
            if c.__class__ is not float or not (c * 1024.0).is_integer():
                return None
            e = exact[b.start]
            for i, m in Counter(ids_all[b.start:b.end]).items():
                got = acc.get((i, e))
                if got is None:
                    acc[(i, e)] = [by_id[i], c * m, e]
                else:
                    got[1] += c * m
        if at != own:
            return None
        for k in range(own, len(infos)):
            c = counts[k]
            if not c:
                continue
            if c.__class__ is not float or not (c * 1024.0).is_integer():
                return None
            info, e = infos[k], exact[k]
            got = acc.get((id(info), e))
            if got is None:
                acc[(id(info), e)] = [info, c, e]
            else:
                got[1] += c
        bound = 0.0
        for info, n, _ in acc.values():
            if info is None:
                continue
            sizes = (info.flops, info.int_ops, info.bytes)
            if any(v.__class__ is not int for v in sizes):
                return None
            bound += n * max(1, *map(abs, sizes))
        return list(acc.values()) if bound < 2.0 ** 34 else None

    def roofline(self, by_kind: Counter, global_bytes: float, scale: float) -> dict | None:
        m = self.machine
        if m is None:
            return None
        compute_s = 0.0
        for kind, work in by_kind.items():
            if kind in m.per_sm_clk:
                compute_s += work * scale / m.peak(kind)
        work = sum(by_kind.values()) * scale
        memory_s = global_bytes / m.dram_bw if global_bytes else 0.0
        peak = work / compute_s if compute_s else None
        intensity = work / global_bytes if global_bytes else None
        attainable = None
        if peak is not None:
            attainable = min(peak, intensity * m.dram_bw) if intensity is not None else peak
        bound = None
        if compute_s or memory_s:
            bound = "compute" if compute_s >= memory_s else "memory"
        out = {"machine": m.name, "peak_ops_per_s": peak, "dram_bytes_per_s": m.dram_bw,
               "intensity": intensity, "ridge": (peak / m.dram_bw) if peak else None,
               "attainable_ops_per_s": attainable, "bound": bound,
               "kinds": {k: m.peak(k) for k in by_kind if k in m.per_sm_clk}}
        if self.threads:
            out["time_lower_bound_s"] = max(compute_s, memory_s)
        return out

    # ---- expectations -----------------------------------------------------------------------

    def check(self, expectations: list[Expectation]) -> list[Outcome]:
        out = []
        for e in expectations:
            if e.name.startswith("sass:"):
                k = self._sass_or_raise(e.name)
                _check_sass_name(e.name[5:])
                matches = k.matching(e.name[5:])
                holds = e.holds(len(matches))
                nearest = [] if holds or matches else sass_nearest(k, e.name[5:])
                out.append(Outcome(e, len(matches), holds, matches, nearest, "sass"))
                continue
            if e.is_class:
                _check_class_name(e.name, self.module.isa)
            matches = self.matching(e.name)
            holds = e.holds(len(matches))
            nearest = [] if holds or matches else self.nearest(e.name)
            out.append(Outcome(e, len(matches), holds, matches, nearest))
        self.outcomes = out
        return out

    def sass_json(self) -> dict | None:
        """The ``sass`` section of the report: None when SASS was not asked for."""
        if self.sass is not None:
            return self.sass.to_json()
        if self.sass_note is not None:
            return {"available": False, "note": self.sass_note}
        return None

    def _expectation_lines(self, o: Outcome, which: list[int] | None = None) -> list[int]:
        """Source lines of an outcome's instructions (``which``: its matches by default); for
        ``sass:`` outcomes the PTX line each SASS instruction came from (0 where none is known)."""
        which = o.matches if which is None else which
        if o.level == "sass":
            ins = self.sass.instructions
            return [ins[k].loc.line if ins[k].loc is not None and ins[k].loc.file == 0 else 0 for k in which][:50]
        return [self.instructions[k].span.line for k in which][:50]

    def shown(self, o: Outcome, limit: int = 5) -> list[tuple["KernelReport", int]]:
        """The instructions a failed outcome points at, as (report, index): its matches, else the
        nearest; of both code segments for a mix kernel's outcome."""
        if o.parts:
            return [(r, k) for r, o2 in o.parts for k in (o2.matches if o.found else o2.nearest)][:limit]
        return [(self, k) for k in (o.matches or o.nearest)][:limit]

    def _expectation_json(self, o: Outcome) -> dict:
        out = {"expectation": str(o.expectation), "name": o.expectation.name, "op": o.expectation.op,
               "count": o.expectation.count, "found": o.found, "result": "pass" if o.holds else "fail",
               "level": o.level, "lines": self._expectation_lines(o), "nearest": self._nearest_json(o)}
        if o.parts:                     # a mix kernel: the lines and nearest of both segments
            out["mix"] = o.mix
            out["segments"] = {r.name: o2.found for r, o2 in o.parts}
            out["lines"] = [ln for r, o2 in o.parts for ln in r._expectation_lines(o2)][:50]
            out["nearest"] = [n | {"kernel": r.name} for r, o2 in o.parts if not o.found for n in r._nearest_json(o2)]
        return out

    def _nearest_json(self, o: Outcome) -> list[dict]:
        if o.level == "sass":
            return [{"line": line, "instruction": self.sass.instructions[k].full_opcode, "sass_index": k,
                     "text": self.sass.where(k)} for k, line in zip(o.nearest, self._expectation_lines(o, o.nearest))]
        return [{"line": self.instructions[k].span.line, "instruction": self.instructions[k].full_opcode}
                for k in o.nearest]

    def shape_work(self) -> dict | None:
        """An Ascend-like kernel's work from the shapes its ``.meta`` header records (as
        ``kernlens generate`` writes it): ``{"op", "flops" | "int_ops", "global_bytes", "per",
        "rule", "bytes_rule"}`` for the whole launch, or None (no ``.meta``, or an op without a
        rule). Its count operands sit in registers, so the per-instruction tables cannot say."""
        if self.module.isa != "ascend":
            return None
        from sim.ascend.check import read_meta

        meta = read_meta(self.module)
        if not meta:
            return None
        size = {"f16": 2, "bf16": 2, "f32": 4, "s8": 1, "s32": 4}
        op = meta.get("op")
        try:
            if op == "gemm":
                m, n, k = int(meta["m"]), int(meta["n"]), int(meta["k"])
                ain, cout = size[meta["dtype"]], size[str(meta.get("out", meta["dtype"]))]
                key = "int_ops" if meta["dtype"] == "s8" else "flops"
                return {"op": op, key: 2 * m * n * k, "rule": "2 x m x n x k (.meta)", "dtype": meta["dtype"],
                        "global_bytes": (m * k + k * n) * ain + m * n * cout,
                        "bytes_rule": "A and B read and C written once each (.meta shapes): a lower bound on the "
                                      "traffic, which `kernlens run` measures", "per": "launch"}
            if op == "reduce":
                rows, cols, s = int(meta["rows"]), int(meta["cols"]), size[meta["dtype"]]
                return {"op": op, "flops": rows * (cols - 1), "rule": "rows x (cols - 1) (.meta)", "dtype": meta["dtype"],
                        "global_bytes": rows * cols * s + rows * s,
                        "bytes_rule": "every input read and every result written once (.meta shapes)", "per": "launch"}
            if op == "softmax":
                rows, cols, s = int(meta["rows"]), int(meta["cols"]), size[meta["dtype"]]
                return {"op": op, "flops": None, "rule": "no FLOP rule for softmax (exp, max, sum, divide differ)",
                        "global_bytes": 2 * rows * cols * s,
                        "bytes_rule": "every input read and every output written once (.meta shapes)", "per": "launch"}
        except (KeyError, ValueError, TypeError):
            return None
        return None

    def to_json(self) -> dict:
        dyn = self.dynamic()
        shared = self.shared
        classes = self.classes
        out = {
            "name": self.name,
            "file": self.path,
            "isa": self.module.isa,
            "target": self.module.target,
            "line": self.function.span.line,
            "opcodes": self.opcodes,
            "classes": classes,
            "dynamic": dyn,
            "flops": {"total": dyn["flops"]["value"], "by_dtype": dyn["flops"]["by_dtype"],
                      "int_ops": dyn["int_ops"]["value"], "per": dyn["per"], "exact": dyn["flops"]["exact"]},
            "bytes": {space: v["value"] for space, v in dyn["bytes"].items()} | {"per": dyn["per"]},
            "intensity": dyn["intensity"]["value"],
            "registers": self.registers,
            "shared_bytes": shared["static_bytes"],
            "shared": shared,
            "local_bytes": self.local_bytes,
            "spills": {"static": classes.get("SPILL", 0), "bytes": dyn["spill_bytes"]["value"]},
            "loops": [li.to_json() for li in self.loops],
            "calls": [{"line": self.function.instructions[site].span.line, "callee": sub.name,
                       "instructions": len(sub.instructions)} for site, sub in self.inlined],
            "generic_resolved": {str(self.function.instructions[k].span.line): sp
                                 for k, sp in sorted(self.resolved_spaces.items())},
            "max_loop_depth": self.cfg.max_depth,
            "expectations": [self._expectation_json(o) for o in self.outcomes],
        }
        if self.mix_of is not None:
            out["mix"] = self.mix_of
        sass = self.sass_json()
        if sass is not None:
            out["sass"] = sass
        if self.module.isa == "ascend":
            # PTX-only facts (virtual registers, shared and local memory, spills) have no meaning here
            for key in ("registers", "shared_bytes", "shared", "local_bytes", "spills"):
                del out[key]
            work = self.shape_work()
            if work is not None:
                out["work_from_meta"] = work
                key = "int_ops" if "int_ops" in work else "flops"
                ops_ = work.get(key)
                out["flops"] = {"total": work.get("flops") or 0, "int_ops": work.get("int_ops", 0),
                                "by_dtype": {work["dtype"]: ops_} if ops_ and work.get("dtype") else {},
                                "per": "launch", "exact": work.get(key) is not None, "basis": ".meta shapes"}
                out["bytes"] = {"global": work["global_bytes"], "per": "launch", "basis": work["bytes_rule"]}
                ops = work.get(key)
                out["intensity"] = ops / work["global_bytes"] if ops and work["global_bytes"] else None
            if self.stepped_work is not None:
                # exact: every pipe instruction described with its operands' values, core by core
                gm = {sp: v for sp, v in dyn["bytes"].items() if "gm" in sp.split("->")}
                ops = dyn["flops"]["value"] + dyn["int_ops"]["value"]
                gbytes = sum(v["value"] for v in gm.values())
                basis = "stepped: each instruction's operands as the scalar program computes them, on every core"
                out["flops"] = {"total": dyn["flops"]["value"], "int_ops": dyn["int_ops"]["value"],
                                "by_dtype": dyn["flops"]["by_dtype"] | dyn["int_ops"]["by_dtype"], "per": "launch",
                                "exact": dyn["flops"]["exact"], "basis": basis}
                out["bytes"] = {"global": gbytes, "by_path": {sp: v["value"] for sp, v in gm.items()}, "per": "launch",
                                "exact": all(v["exact"] for v in gm.values()),
                                "basis": basis + " (GM <-> the cores' buffers, what `kernlens run` counts as gm bytes)"}
                out["intensity"] = ops / gbytes if ops and gbytes else None
        return out


_OPCODE_WORDS = operator.attrgetter("opcode", "modifiers")


def _symbols_of(op, names: set[str]) -> None:
    """Add the symbols operand ``op`` names (``[smem+16]``, ``{a, b}``) to ``names`` (a function,
    not a closure that calls itself: no reference cycle for the cyclic collector to free)."""
    t = type(op)
    if t is Symbol:
        names.add(op.name)
    elif t is Address:
        if type(op.base) is Symbol:
            names.add(op.base.name)
        if op.coords is not None:
            _symbols_of(op.coords, names)
    elif t is Vector:
        for sub in op.elements:
            _symbols_of(sub, names)
    elif t is OperandList:
        for sub in op.items:
            _symbols_of(sub, names)


_RELATED = {
    "TENSOR_CORE": ("FP16_FMA", "BF16_FMA", "FP32_FMA", "INT8_DP4A", "FP64_FMA"),
    "FP16_FMA": ("BF16_FMA", "FP16_ARITH", "FP32_FMA", "TENSOR_CORE"),
    "BF16_FMA": ("FP16_FMA", "FP16_ARITH", "FP32_FMA", "TENSOR_CORE"),
    "FP32_FMA": ("FP32_ARITH", "FP16_FMA", "FP64_FMA", "TENSOR_CORE"),
    "FP64_FMA": ("FP64_ARITH", "FP32_FMA"),
    "INT8_DP4A": ("TENSOR_CORE", "INT_ARITH"),
    "ASYNC_COPY": ("LOAD_GLOBAL", "STORE_SHARED"),
    "LDMATRIX": ("LOAD_SHARED",),
    "SHUFFLE": ("LOAD_SHARED", "STORE_SHARED", "BARRIER"),
    "ATOMIC": ("REDUCTION", "STORE_GLOBAL"),
    "REDUCTION": ("ATOMIC", "STORE_GLOBAL"),
    # SASS's tensor-core classes (isa.sass.semantics)
    "HGMMA": ("HMMA", "TENSOR_CORE", "FP16_FMA", "FP32_FMA"),
    "HMMA": ("HGMMA", "TENSOR_CORE", "FP16_FMA", "FP32_FMA"),
    "QGMMA": ("HGMMA", "HMMA", "TENSOR_CORE"),
    "IGMMA": ("IMMA", "TENSOR_CORE", "INT8_DP4A"),
    "IMMA": ("IGMMA", "TENSOR_CORE", "INT8_DP4A"),
    "DMMA": ("TENSOR_CORE", "FP64_FMA"),
}


def check_mix(name: str, cube: KernelReport, vector: KernelReport, expectations: list[Expectation]) -> list[Outcome]:
    """A mix kernel's expectations, each checked once on its two code segments together (a class or
    opcode counted in either counts for the kernel): the outcomes stand in the cube segment's report,
    the vector segment's report has none (its ``mix_of`` names the kernel they were checked for)."""
    out = []
    for oa, ov in zip(cube.check(expectations), vector.check(expectations)):
        found = oa.found + ov.found
        out.append(Outcome(oa.expectation, found, oa.expectation.holds(found), oa.matches, oa.nearest, oa.level,
                           mix=name, parts=((cube, oa), (vector, ov))))
    cube.outcomes, vector.outcomes = out, []
    vector.mix_of = cube.mix_of = name
    return out


def nearest_by_class(name: str, infos: list[OpInfo], limit: int = 3) -> list[int]:
    """Indices of the instructions (described by ``infos``) nearest to a class none of them has:
    the class without its width (``LOAD_SHARED_128`` -> ``LOAD_SHARED``), then the related classes
    (:data:`_RELATED`), then any class of the same family (``LOAD_*``). PTX and SASS alike."""
    base = re.sub(r"_\d+$", "", name)
    for cls in ((base,) if base != name else ()) + _RELATED.get(base, ()):
        hits = [k for k, info in enumerate(infos) if cls in info.classes]
        if hits:
            return hits[:limit]
    prefix = name.split("_")[0]
    return [k for k, info in enumerate(infos) if any(c.startswith(prefix) for c in info.classes)][:limit]


def sass_nearest(kernel, name: str, limit: int = 3) -> list[int]:
    """The SASS instructions of ``kernel`` (:class:`isa.sass.SassKernel`) nearest to ``sass:NAME``."""
    from isa.sass.semantics import CLASSES

    if name in CLASSES:
        return nearest_by_class(name, kernel.infos, limit)
    return kernel.similar(name, limit)


def _check_class_name(name: str, isa: str) -> None:
    known = known_classes(isa)
    if name not in known:
        import difflib

        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise InputError(f"unknown instruction class '{name}'{hint}")


def _check_sass_name(name: str) -> None:
    """A SASS class must exist (``TENSOR_CORE``); any other name is an opcode pattern (``HGMMA``)."""
    from isa.sass.semantics import CLASSES

    if "_" in name and name.isupper() and name not in CLASSES:
        import difflib

        close = difflib.get_close_matches(name, sorted(CLASSES), n=1)
        raise InputError(f"unknown SASS instruction class '{name}'" + (f" (did you mean {close[0]}?)" if close else ""))


def known_classes(isa: str = "ptx") -> set[str]:
    from isa.ptx.semantics import CLASSES

    names = set(CLASSES)
    if isa == "ascend":
        from isa.ascend.semantics import CLASSES as ASCEND_CLASSES

        names |= ASCEND_CLASSES
    return names


def _num(v: float):
    if v is None:
        return None
    r = round(v)
    return int(r) if abs(v - r) < 1e-6 * max(1.0, abs(v)) else float(v)


def analyze_function(module: Module, fn: Function, *, params: dict[str, int] | None = None,
                     launch: Launch | None = None, machine: str | RooflineModel | None = "h200",
                     assumed_trips: int = ASSUMED_TRIPS, sass: bool = False,
                     _stack: tuple[str, ...] = (), _param_spaces: dict[str, str] | None = None) -> KernelReport:
    """The report of one kernel (or device function), counted through the functions it calls.

    Every ``call`` of a function with a body brings the callee's report (analysed with the state
    spaces of the pointers passed to it) in at the call site: its instructions join
    :attr:`KernelReport.instructions`, executed as often per thread as the call site times their
    executions per call.  Recursion is not expanded (a function already on the call chain is
    counted at its call only) and chains deeper than ``MAX_CALL_DEPTH`` stop; both are said in
    the report's notes.  Generic ``ld``/``st``/``atom``/``red`` whose address is traced to a state
    space (:class:`analyzer.calls.AddressOrigins`) are described as accesses of that space.
    """
    if module.isa == "ascend":
        infos = [describe_any(i, module.isa) for i in fn.instructions]
    else:  # what describe_any does for PTX, without its dispatch per instruction
        infos = list(map(describe_ptx, fn.instructions))
    cfg = Cfg(fn)
    launch = launch or Launch()
    flow = Dataflow(cfg, dict(params or {}), launch)
    est = Estimator(cfg, flow, assumed_trips).estimate()
    mach = machine if isinstance(machine, RooflineModel) or machine is None else _machine_or_none(machine, module.isa)
    inlined: list[tuple[int, KernelReport]] = []
    notes: list[str] = []
    resolved: dict[int, str] = {}
    if module.isa == "ptx":
        inlined, notes, resolved = _calls_and_spaces(module, fn, infos, flow, launch, assumed_trips,
                                                     _stack + (fn.name,), _param_spaces or {})
    infos = infos + [info for _, sub in inlined for info in sub.infos]
    report = KernelReport(module, fn, infos, cfg, est, mach, launch, dict(params or {}),
                          inlined=inlined, call_notes=notes, resolved_spaces=resolved)
    if module.isa == "ascend":
        report.use_stepped()        # exact counts for every core, where the scalar program decides them
    if sass:
        attach_sass(report)
    return report


def _calls_and_spaces(module, fn, infos, flow, launch, assumed_trips, stack, param_spaces):
    """Resolve ``fn``'s generic accesses (``infos`` replaced in place) and analyse its callees."""
    from dataclasses import replace

    from .calls import MAX_CALL_DEPTH, AddressOrigins, call_arguments, call_target, function_bodies, \
        generic_accesses

    origins = AddressOrigins(fn, flow, module, param_spaces)
    resolved: dict[int, str] = {}
    unresolved = 0
    notes: list[str] = []
    for k in generic_accesses(fn.instructions):
        ins = fn.instructions[k]
        sp = origins.space_of(k)
        if sp is None:
            unresolved += 1
            continue
        resolved[k] = sp
        infos[k] = describe_ptx(replace(ins, modifiers=(sp,) + ins.modifiers))
    if resolved:
        notes.append(f"{fn.name}: {len(resolved)} generic memory instruction(s) traced to their state space "
                     f"({', '.join(sorted(set(resolved.values())))}) and counted there")
    if unresolved:
        notes.append(f"{fn.name}: {unresolved} generic memory instruction(s) whose address is not traced to a "
                     f"state space are counted as generic")
    bodies = function_bodies(module)
    inlined = []
    external: dict[str, int] = {}
    indirect = 0
    for k in [k for k, ins in enumerate(fn.instructions) if ins.opcode == "call"]:
        ins = fn.instructions[k]
        name = call_target(ins)
        callee = bodies.get(name) if name else None
        if callee is None:
            if name is None:
                indirect += 1
            else:
                external[name] = external.get(name, 0) + 1
            continue
        line = ins.span.line
        if name in stack:
            notes.append(f"recursive call to {name} at line {line}: not expanded (recursion is bounded at one "
                         f"level; the body is counted once per call chain, not per recursion depth)")
            continue
        if len(stack) >= MAX_CALL_DEPTH:
            notes.append(f"call to {name} at line {line}: not expanded (call chain deeper than {MAX_CALL_DEPTH})")
            continue
        spaces = {}
        for formal, slot in zip(callee.params, call_arguments(ins)):
            sp = origins.slot_origin(slot, k)
            if sp is not None:
                spaces[formal.name] = sp
        sub = analyze_function(module, callee, launch=launch, machine=None, assumed_trips=assumed_trips,
                               _stack=stack, _param_spaces=spaces)
        inlined.append((k, sub))
        notes.extend(n for n in sub.call_notes if n not in notes)
        notes.extend(f"in {name} (called at line {line}): {n}" for n in sub.estimate.notes)
    if indirect:
        notes.append(f"{fn.name}: {indirect} indirect call(s) (through a register): the callee is not known here, "
                     f"its body is not counted")
    if external:
        notes.append(f"{fn.name}: calls of functions without a body in this file ({', '.join(sorted(external))}) "
                     f"are counted as the call only")
    if inlined:
        names = list(dict.fromkeys(sub.name for _, sub in inlined))
        notes.insert(0, f"{len(inlined)} call(s) of {', '.join(names)} counted through the callee bodies, "
                        f"at their call sites")
    return inlined, notes, resolved


def attach_sass(report: KernelReport) -> None:
    """Give ``report`` its kernel's SASS, or the note that says why there is none (no ptxas or
    disassembler here, a non-PTX file): everything else in the report stays as it is."""
    import isa.sass

    if report.module.isa != "ptx":
        report.sass_note = "SASS exists for PTX kernels only"
        return
    note = isa.sass.note()
    if note is not None:
        report.sass_note = note
        return
    report.sass = isa.sass.listing(report.module).kernel(report.name)


def _machine_or_none(name: str, isa: str) -> RooflineModel | None:
    """The roofline model for PTX; Ascend reports have no roofline, but the name is still checked."""
    if isa != "ptx":
        machine_path(name)
        return None
    return load_machine(name)


def analyze_module(module: Module, *, kernel: str | None = None, **options) -> list[KernelReport]:
    """Reports for every kernel of a module (or the one named ``kernel``)."""
    fns = [module.function(kernel)] if kernel else module.kernels
    return [analyze_function(module, fn, **options) for fn in fns]
