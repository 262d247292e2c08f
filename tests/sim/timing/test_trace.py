"""The H200 model's trace (``run_kernel(..., trace=True)``, ``kernlens run --timing h200 --trace``):
the SM that sets the time, sub-partitions with a track per warp and per pipe, the SM's memory units
as tracks, and a Chrome/Perfetto JSON that names every track."""

import json

import numpy as np

import isa
import sim
from sim.timing.trace import chrome_trace
from tests.conftest import EXAMPLES
from tests.sim.timing.test_sm import _kernel


def _early_exit_run(trace=True):
    """CTA 0 returns at once; CTAs 1 and 2 run a 64-long dependent FFMA chain: SM 0 is not the slowest."""
    body = "\n".join(["    setp.eq.u32 %p1, %r2, 0;", "    @%p1 bra DONE;", "    mov.f32 %f1, 0f3F800000;"]
                     + ["    fma.rn.f32 %f1, %f1, %f1, %f1;"] * 64 + ["    st.global.f32 [%rd4], %f1;", "DONE:"])
    out = np.zeros(3 * 32 * 40, np.float32)
    return sim.run_kernel(isa.loads(_kernel(body)), "k", 3, 32, [out, np.uint32(0)], timing="h200", trace=trace)


def test_the_trace_is_of_the_sm_that_sets_the_time():
    tm = _early_exit_run().timing
    sl = tm["_slices"]
    issues = [s for s in sl if s.cat == "issue"]
    # before: the trace was SM 0's (CTA 0, which exits) and was dropped because it was not the slowest: 0 slices
    assert sum(s.name == "fma.rn.f32" for s in issues) == 64
    assert {s.process for s in issues} == {"SM 1 sub-partition 0"}          # CTA 1 on SM 1 (ties: the first)
    assert max(s.end for s in issues) <= tm["sm_cycles"] + 1
    assert max(s.end for s in issues) > 0.9 * tm["sm_cycles"]


def test_without_trace_the_timing_mapping_holds_no_slices():
    tm = _early_exit_run(trace=False).timing
    assert "_slices" not in tm and tm["cycles"] > 0
    json.dumps(tm)                                            # plain data only


def test_pipes_and_memory_units_are_tracks():
    body = "\n".join(["    mov.f32 %f1, 0f3F800000;"] + [f"    fma.rn.f32 %f{2 + i}, %f1, %f1, %f1;" for i in range(8)]
                     + ["    ld.global.f32 %f20, [%rd4];", "    add.f32 %f21, %f20, %f2;",
                        "    st.global.f32 [%rd4], %f21;"])
    out = np.zeros(64 * 40, np.float32)
    r = sim.run_kernel(isa.loads(_kernel(body)), "k", 1, 64, [out, np.uint32(0)], timing="h200", trace=True)
    sl = r.timing["_slices"]
    tracks = {(s.process, s.track) for s in sl}
    assert ("SM 0 sub-partition 0", "warp 0") in tracks and ("SM 0 sub-partition 1", "warp 1") in tracks
    assert ("SM 0 sub-partition 0", "fma pipe") in tracks
    assert ("SM 0 memory", "l1") in tracks and ("SM 0 memory", "l2") in tracks
    on_fma = [s for s in sl if s.track == "fma pipe" and s.process.endswith(" 0")]
    assert all(s.cat == "pipe" for s in on_fma)
    fma = [s for s in on_fma if s.name == "fma.rn.f32"]           # (simple integer ops may take the FMA pipe too)
    assert len(fma) == 8 and all(s.end - s.start == 1.0 for s in fma)
    # the pipe is busy one interval per issue, from the issue cycle
    issue_starts = sorted(s.start for s in sl if s.track == "warp 0" and s.name == "fma.rn.f32")
    assert sorted(s.start for s in fma) == issue_starts
    l1 = [s for s in sl if s.track == "l1"]
    assert {s.name for s in l1} == {"ld.global.f32", "st.global.f32"} and all(s.cat == "unit" for s in l1)
    # Chrome JSON: every slice sits on a named track of a named process
    tr = json.loads(json.dumps(chrome_trace(sl, 1.98e9)))
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in tr["traceEvents"] if e["ph"] == "M"
             and e["name"] in ("thread_name", "process_name")}
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(sl) and all((e["pid"], e["tid"]) in names and (e["pid"], None) in names for e in xs)
    assert {"l1", "l2", "fma pipe", "warp 0"} <= set(names.values())


def test_cli_trace_has_warps_pipes_and_units(tmp_path, capsys):
    from kernlens.cli import main

    out = tmp_path / "t.json"
    rc = main(["run", str(EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"), "--launch",
               f"{EXAMPLES / 'manifest.json'}#sgemm_tiled", "--timing", "h200", "--trace", str(out)])
    capsys.readouterr()
    assert rc == 0
    tr = json.loads(out.read_text())
    threads = {e["args"]["name"] for e in tr["traceEvents"] if e.get("name") == "thread_name"}
    procs = {e["args"]["name"] for e in tr["traceEvents"] if e.get("name") == "process_name"}
    assert {"warp 0", "fma pipe", "shared", "l1"} <= threads
    assert {f"SM {tr_sm} memory" for tr_sm in [p.split()[1] for p in procs if p.endswith("memory")]} <= procs
    assert any(p.endswith("sub-partition 3") for p in procs)
    cats = {e.get("cat") for e in tr["traceEvents"] if e["ph"] == "X"}
    assert cats == {"issue", "pipe", "unit"}
    # otherData names the traced SM, the one whose processes the trace holds
    sm = tr["otherData"]["traced_sm"]
    assert isinstance(sm, int) and f"SM {sm} memory" in procs and tr["otherData"]["label"] == "modelled"
    assert tr["otherData"]["traced"].startswith(f"SM {sm}, ")


def test_the_slowest_sm_is_named():
    assert _early_exit_run(trace=False).timing["slowest_sm"] == 1        # CTA 0 on SM 0 exits at once
