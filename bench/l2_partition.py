"""Which L2 partition a 4 KiB run is homed in, and which SMs sit on which side (issue #10), decoded from the
slice_probe runs of bench/device/atomic_slice_truth.sh / l2_partition_truth.sh (measured, Nsight Compute).

    .venv/bin/python bench/l2_partition.py [DIR]      # DIR holds probe_<chunk>_<smid>.csv/.json pairs

In a slice_probe launch one CTA on a chosen SM makes warp j send 2^j x 32 L2 reductions to line j of a group of
up to 20 lines. The L2 counts a reduction once where it arrives and again in the other partition when the line
is homed there (arriving over the fabric), so ``lts__t_sectors_op_red - lts__t_sectors_srcunit_tex_op_red``
is 32 x the sum of 2^j over the group's lines that are far from that SM: a bit mask per launch. For each
probe this prints the far lines, tests them against the rule read from examples/h200/atomic_slice (far from
SM 0 iff address bit 12 ^ 13 ^ 15 of the line is 1, measured there on the first 128 KiB), per 2 MiB page
(a page may follow the rule or its complement: the hash also sees physical address bits above 2 MiB), and,
for a group probed from every SM, which SMs see the same lines far as SM 0 (its side) and which see the
complement (the other side).
"""

from __future__ import annotations

import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIR = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples" / "h200" / "l2_partition"


def metrics(path: Path) -> list[dict[str, float]]:
    """Per profiled launch (in order), metric name -> value."""
    text = path.read_text().splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith('"ID"'))
    per_id: dict[int, dict[str, float]] = defaultdict(dict)
    for row in csv.DictReader(text[start:]):
        per_id[int(row["ID"])][row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    return [per_id[i] for i in sorted(per_id)]


def far_lines(group: list[int], m: dict[str, float]) -> list[int]:
    """The lines of ``group`` that the launch's counters say are homed in the far partition."""
    extra = m["lts__t_sectors_op_red.sum"] - m["lts__t_sectors_srcunit_tex_op_red.sum"]
    mask, rest = divmod(int(round(extra)), 32)
    if rest or mask >= 1 << len(group):
        raise ValueError(f"far sectors {extra:.0f} are not 32 x a mask of {len(group)} lines")
    return [line for j, line in enumerate(group) if mask >> j & 1]


def rule(line: int) -> int:
    """1 where the rule of examples/h200/atomic_slice says far from SM 0: address bit 12 ^ 13 ^ 15."""
    a = line * 128
    return (a >> 12 ^ a >> 13 ^ a >> 15) & 1


def probes(d: Path):
    for js in sorted(d.glob("probe_*.json")):
        c = js.with_suffix(".csv")
        if not c.exists():
            continue
        data = json.loads(js.read_text())
        launches = metrics(c)
        if len(launches) != len(data["groups"]):
            print(f"{c.name}: {len(launches)} launches for {len(data['groups'])} groups: left out")
            continue
        yield js.stem, data, launches


def main() -> int:
    found = False
    for name, data, launches in probes(DIR):
        found = True
        by_sm: dict[int, set[int]] = defaultdict(set)
        lines_of: dict[int, list[int]] = defaultdict(list)
        for g, m in zip(data["groups"], launches):
            sm = g.get("smid", data["smid"])
            sm = g.get("smid_flag", sm) if g.get("smid_flag", -1) >= 0 else sm
            by_sm[int(sm)].update(far_lines(g["lines"], m))
            lines_of[int(sm)] += g["lines"]
        print(f"{name}: {len(launches)} launches from {len(by_sm)} SM(s), buffer at {data['buffer_ptr']:#x}")
        if len(by_sm) == 1:
            (sm, far), = by_sm.items()
            pages: dict[int, list[int]] = defaultdict(list)
            for line in lines_of[sm]:
                pages[line * 128 >> 21].append(line)
            for page, lines in sorted(pages.items()):
                same = sum((line in far) == bool(rule(line)) for line in lines)
                print(f"  SM {sm}, 2 MiB page {page}: {len(lines)} lines, {sum(x in far for x in lines)} far; "
                      f"the bit 12^13^15 rule holds for {same}, its complement for {len(lines) - same}")
        else:
            ref = by_sm[min(by_sm)]
            lines = lines_of[min(by_sm)]
            same, other, mixed = [], [], []
            for sm, far in sorted(by_sm.items()):
                if far == ref:
                    same.append(sm)
                elif far == set(lines) - ref:
                    other.append(sm)
                else:
                    mixed.append(sm)
            print(f"  the side of SM {min(by_sm)} ({len(same)}): {same}")
            print(f"  the other side ({len(other)}): {other}")
            if mixed:
                print(f"  neither ({len(mixed)}): {mixed}")
    if not found:
        print(f"no probe_*.csv/.json pairs in {DIR}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
