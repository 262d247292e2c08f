"""Do two versions of the H200 timing model predict exactly the same figures? (for pure refactors)

    PYTHONPATH=. python bench/timing_identical.py --write before.json            # every perf launch
    PYTHONPATH=. python bench/timing_identical.py --compare before.json          # after the change
    PYTHONPATH=. python bench/timing_identical.py --small --write small.json     # the small launches

Runs the corpus's public launches (:func:`corpus_runs.timed_launches`) with ``timing="h200"`` and
writes every modelled figure of ``result.timing`` (cycles, stalls, pipes, memory, occupancy, work,
bound, ...; not the measured seconds the prediction took, not the trace slices) to JSON, floats as
``repr`` so that equality is bit-exact. ``--compare`` runs again and lists every figure that differs
(exit status 1 when any does): a speed or naming refactor must leave the list empty.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from corpus_runs import manifest, timed_launches

SKIP = {"model_seconds", "predict_seconds", "_slices"}


def _plain(v):
    """JSON-safe, bit-exact: floats as repr strings, tuples as lists, mappings by key."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "item"):                  # numpy scalars
        return _plain(v.item())
    return repr(v)


def figures(tm: dict) -> dict:
    return {k: _plain(v) for k, v in tm.items() if k not in SKIP}


def diff(a, b, path="") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'after' if k not in a else 'before'}")
            else:
                out += diff(a[k], b[k], f"{path}/{k}")
        return out
    return [] if a == b else [f"{path}: {a!r} -> {b!r}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--small", action="store_true", help="the small launches (default: the perf launches)")
    ap.add_argument("--both", action="store_true", help="small and perf launches")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", help="write the figures to this JSON file")
    g.add_argument("--compare", help="compare with the figures in this JSON file")
    a = ap.parse_args(argv)
    man = manifest()
    if man is None:
        return 2
    whiches = ("launch", "perf_launch") if a.both else ("launch",) if a.small else ("perf_launch",)
    before = json.loads(Path(a.compare).read_text()) if a.compare else None
    got: dict = {}
    bad = 0
    for e, which, (tm, wall, cpu, _, _) in timed_launches(man["entries"], a.kernels, whiches):
        key = f"{e['name']} {which}"
        got[key] = figures(tm)
        if before is None:
            print(f"{key:45s} {tm['cycles']:16.1f} cycles (modelled)  {cpu:6.2f} cpu s", flush=True)
            continue
        if key not in before:
            print(f"{key:45s} not in {a.compare}", flush=True)
            bad += 1
            continue
        d = diff(before[key], got[key])
        bad += bool(d)
        print(f"{key:45s} {'identical' if not d else f'{len(d)} figures differ'}  {cpu:6.2f} cpu s", flush=True)
        for line in d[:20]:
            print("    " + line)
    if a.write:
        Path(a.write).write_text(json.dumps(got, indent=1, sort_keys=True))
        print(f"{len(got)} launches written to {a.write}")
        return 0
    missing = sorted(set(before) - set(got)) if not a.kernels else []
    for k in missing:
        print(f"{k:45s} missing now")
    print(f"{len(got) - bad}/{len(got)} launches identical" + (f", {len(missing)} missing" if missing else ""))
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
