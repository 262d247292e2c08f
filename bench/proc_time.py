"""One child process timed from outside (bench/big_file.py, bench/startup.py): wall seconds
(``perf_counter``), CPU seconds (user + system) and peak RSS from ``os.wait4``'s resource usage,
all measured on this machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def measure(cmd: list[str], env: dict | None = None, *, tree: bool = False, **kw) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code) of ``cmd`` run from the repository root with it on
    PYTHONPATH (``env``: the child's environment, default this one's), its output discarded. The
    CPU seconds include those of the child's own worker processes once it has waited for them.
    With ``tree``, the peak RSS is the largest sum over the child and its descendants (worker
    processes), sampled every 50 ms from /proc (Linux; pages shared after ``fork`` count once per
    process, so the sum is an upper bound), or the child's own peak where that is larger."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=ENV if env is None else env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    peak = 0.0
    if tree and Path("/proc/self/stat").exists():
        while True:
            got, status, ru = os.wait4(p.pid, os.WNOHANG)
            if got:
                break
            peak = max(peak, _tree_rss_mb(p.pid))
            time.sleep(0.05)
    else:
        _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, max(peak, ru.ru_maxrss / 1024), p.returncode


def _tree_rss_mb(root: int) -> float:
    """Resident MB of process ``root`` and its descendants now (from /proc/PID/stat)."""
    parent, rss = {}, {}
    page = os.sysconf("SC_PAGE_SIZE")
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d)] = int(fields[1])       # fields after "(comm)": state ppid ... rss is the 22nd
        rss[int(d)] = int(fields[21]) * page
    keep, total = {root}, 0
    changed = True
    while changed:
        changed = False
        for pid, pp in parent.items():
            if pp in keep and pid not in keep:
                keep.add(pid)
                changed = True
    for pid in keep:
        total += rss.get(pid, 0)
    return total / (1 << 20)


if __name__ == "__main__":  # pragma: no cover - a quick look: python bench/proc_time.py CMD...
    print(measure(sys.argv[1:]))
