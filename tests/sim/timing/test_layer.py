"""The shared timing layer: units, queues with back-pressure, stages, stalls, traces."""

import json

from sim.timing import Pipeline, Queue, QueueStage, Slice, Stalls, Unit, UnitStage, chrome_trace


def test_unit_throughput_and_busy():
    u = Unit("fma", interval=2.0)
    starts = [u.reserve(0.0) for _ in range(5)]
    assert starts == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert u.busy == 10.0 and u.utilization(20.0) == 0.5


def test_queue_full_waits_for_oldest():
    q = Queue("store", depth=2)
    assert q.admit(0.0, leave=300.0) == (0.0, 0.0)
    assert q.admit(1.0, leave=310.0) == (1.0, 0.0)
    assert q.admit(5.0, leave=600.0) == (300.0, 295.0)
    assert q.full_waits == 1 and q.drained_at(400.0) == 600.0


def test_pipeline_charges_the_binding_stage():
    st = Stalls()
    units = {"lsu": Unit("lsu", interval=1.0)}
    q = Queue("mio", depth=1)
    p = Pipeline([UnitStage(units, lambda it: "lsu", cause="pipe"),
                  QueueStage(q, lambda it: True, lambda it, t: t + 100)], st)
    assert p.offer("a", 0.0) == 0.0
    assert p.offer("b", 0.0) == 100.0          # the queue holds one entry until 100
    assert st.cycles == {"queue_full:mio": 100.0}
    assert st.per_issue(2) == {"queue_full:mio": 50.0}


def test_chrome_trace_tracks():
    sl = [Slice("SM 0", "fma", "fma.rn.f32", 0, 2), Slice("SM 0", "lsu", "ld", 1, 30), Slice("SM 1", "fma", "x", 0, 1)]
    tr = chrome_trace(sl, hz=1e9)
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 3 and xs[1]["dur"] == 29e-3
    names = {e["args"]["name"] for e in tr["traceEvents"] if e["name"] == "thread_name"}
    assert names == {"fma", "lsu"}
    json.dumps(tr)
