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


def measure(cmd: list[str], env: dict | None = None, **kw) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code) of ``cmd`` run from the repository root with it on
    PYTHONPATH (``env``: the child's environment, default this one's), its output discarded."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=ENV if env is None else env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, p.returncode


if __name__ == "__main__":  # pragma: no cover - a quick look: python bench/proc_time.py CMD...
    print(measure(sys.argv[1:]))
