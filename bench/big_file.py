"""Big PTX files (issue #15): each command on a ~30 MB, ~5,900-kernel module against its goal.

Goals: ``validate-kernel BIG.ptx`` (every kernel) <= 20 s and <= 1 GB, with a progress bar;
``kernlens fmt BIG.ptx`` the same; analysing one kernel of it (``--kernel``) <= 5 s, and running
one (``kernlens run --kernel``, a copy of a bundled example with its manifest launch) <= 5 s; the inspector
opens at once (a kernel on screen) and quits at once on ``q`` (<= 1 s).

Each command runs in its own process; the figures are measured on this machine: wall seconds,
CPU seconds (user + system, from ``wait4``, worker processes included: steadier than wall time on
a loaded machine) and peak RSS (the sum over the process and its batch workers, sampled).
``validate-kernel`` and ``fmt`` run their batches in one worker process per CPU (``--jobs``,
default); each is also run with ``--jobs 1`` (everything in one process), the figure for a
one-core machine. The inspector runs in a pseudo-terminal (80x24): "open" is until the first
kernel's name is on screen, "quit" from pressing ``q`` to the process's exit.

Run: .venv/bin/python bench/big_file.py [BIG.ptx] [--mb 30] [--only validate,run,fmt,inspect]
(without BIG.ptx it is written by bench/big_ptx.py into a temporary directory: copies of the corpus
and example kernels, each copy with other names, registers, labels and offsets, so that it has as
few repeated lines as real PTX: the distinct-line ratio is printed beside one copy's).
"""

from __future__ import annotations

import argparse
import functools
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
# The on-disk parse cache (isa.cache) is off: a file under its size limit (the --mb 1 slice) would
# otherwise be parsed only on the first run. A 30 MB file is never cached.
ENV = dict(os.environ, PYTHONPATH=str(ROOT), KERNLENS_NO_CACHE="1")
from proc_time import measure  # noqa: E402

measure = functools.partial(measure, env=ENV)
SETTLE = float(os.environ.get("BIG_FILE_SETTLE", "0.5"))   # seconds on screen before q


def line(what: str, wall: float, cpu: float, rss: float, rc: int, goal_s: float, goal_mb: float | None = None) -> None:
    ok = wall <= goal_s and (goal_mb is None or rss <= goal_mb)
    goal = f"goal <= {goal_s:g} s" + (f", <= {goal_mb:g} MB" if goal_mb else "")
    print(f"{what:<44} {wall:7.1f} s wall {cpu:7.1f} s CPU {rss:7.0f} MB peak  exit {rc}  "
          f"({goal}: {'met' if ok else 'NOT met'}{'' if ok or cpu > goal_s else ' on wall time only: CPU within'})")


def inspect(path: Path, kernel_name: str) -> tuple[float, float, float, float]:
    """(open s, quit s, CPU s, peak RSS MB) of ``kernlens inspect`` in a pseudo-terminal."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        os.environ.update(ENV, TERM="xterm-256color", COLUMNS="120", LINES="36")
        os.chdir(ROOT)
        os.execv(PY, [PY, "-m", "kernlens.cli", "inspect", str(path)])
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    t0 = time.perf_counter()
    seen, t_open, t_q = b"", None, None
    want = kernel_name.encode()
    got = 0
    deadline = t0 + 600
    while time.perf_counter() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk and t_q is not None:
                break
            seen = (seen + chunk)[-(1 << 20):]
            if t_open is None and want in seen:
                t_open = time.perf_counter() - t0
                time.sleep(SETTLE)
                os.write(fd, b"q")
                t_q = time.perf_counter()
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            break
    else:
        os.kill(pid, signal.SIGKILL)
    if not got:
        _, status, ru = os.wait4(pid, 0)
    t_quit = time.perf_counter() - t_q if t_q else float("nan")   # from q to the process's exit
    os.close(fd)
    return (t_open if t_open is not None else float("nan")), t_quit, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("big", nargs="?")
    ap.add_argument("--mb", type=float, default=30.0)
    ap.add_argument("--only", default="validate,run,fmt,inspect")
    args = ap.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as d:
        big = Path(args.big) if args.big else Path(d) / "big.ptx"
        if not args.big:
            subprocess.run([PY, str(ROOT / "bench" / "big_ptx.py"), str(big), "--mb", str(args.mb)], env=ENV, check=True)
        import isa.ptx.chunks as chunks

        text = big.read_text()
        found = chunks.entries(text)
        sys.path.insert(0, str(ROOT / "bench"))
        from big_ptx import one_copy, sources, statements

        n, distinct = statements(text)
        n1, d1 = statements(one_copy())     # every source once, as written: how repetitive real kernels are
        verdict = ("about as repetitive as real code" if distinct / n >= 0.8 * d1 / n1 else
                   "repeats far more than real code (a parse's per-text tables, such as the opcode split, "
                   "fill sooner than they would on a real file)")
        print(f"{big.name}: {len(text) / 1e6:.1f} MB, {len(found):,} kernels, {text.count(chr(10)):,} lines, "
              f"{n:,} statement lines of which {distinct:,} distinct ({distinct / n:.1%}; one copy of the "
              f"{len(sources())} corpus/example files: {d1:,} of {n1:,}, {d1 / n1:.1%}): this file is {verdict} "
              f"(exact counts)")
        print(f"{_cpus()} CPU(s) for this process (so --jobs {_cpus()}), load average {os.getloadavg()[0]:.1f} at the start")
        one = found[len(found) // 2].name
        del text
        out = Path(d) / "out"
        if "validate" in only:
            line("validate-kernel BIG.ptx (every kernel)",
                 *measure([PY, "-m", "analyzer.cli", str(big), "-o", str(out)], tree=True), 20, 1024)
            line("validate-kernel BIG.ptx --jobs 1",
                 *measure([PY, "-m", "analyzer.cli", str(big), "--jobs", "1", "-o", str(out)], tree=True), 20, 1024)
            line(f"validate-kernel BIG.ptx --kernel (one)",
                 *measure([PY, "-m", "analyzer.cli", str(big), "--kernel", one, "-o", str(out)]), 5, 1024)
        if "run" in only:
            # a copy of a bundled example the manifest can launch (its kernel renamed __cN)
            import json

            manifest = ROOT / "examples" / "manifest.json"
            names = {e["name"] for e in json.loads(manifest.read_text())["entries"]   # not the bug examples
                     if "bugs/" not in json.dumps(e)} if manifest.exists() else set()
            runnable = [e.name for e in found if e.name.rsplit("__c", 1)[0] in names]
            if runnable:
                k = runnable[len(runnable) // 2]
                line(f"kernlens run BIG.ptx --kernel (one)",
                     *measure([PY, "-m", "kernlens.cli", "run", str(big), "--kernel", k, "--launch",
                               f"{manifest}#{k.rsplit('__c', 1)[0]}"]), 5, 1024)
            else:
                print("kernlens run BIG.ptx --kernel: no copy of a bundled example with a launch in this file")
        if "fmt" in only:
            line("kernlens fmt BIG.ptx",
                 *measure([PY, "-m", "kernlens.cli", "fmt", str(big), "-o", str(out)], tree=True), 20, 1024)
            line("kernlens fmt BIG.ptx --jobs 1",
                 *measure([PY, "-m", "kernlens.cli", "fmt", str(big), "--jobs", "1", "-o", str(out)], tree=True), 20, 1024)
        if "inspect" in only:
            t_open, t_quit, cpu, rss = inspect(big, found[0].name)
            print(f"{'kernlens inspect BIG.ptx':<44} open {t_open:6.1f} s (goal <= 5 s: {'met' if t_open <= 5 else 'NOT met'}), "
                  f"quit {t_quit:5.2f} s after q (goal <= 1 s: {'met' if t_quit <= 1 else 'NOT met'}); "
                  f"{cpu:.1f} s CPU, {rss:.0f} MB peak")
    return 0


if __name__ == "__main__":
    sys.exit(main())
