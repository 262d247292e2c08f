"""How long ``kernlens inspect`` takes to open a file and become interactive, and to react.

Measures, headless (Textual's test driver, 160x48): from constructing the app to the first kernel
shown with the loading indicator gone, for the largest corpus PTX file (target: under 2 s) and a
synthetic 4,500-line file; then the mean time per page-down, per search keystroke, and per kernel
switch; then, on the project's examples, how long a simulator run from the Run tab (``r``) and a
timing-model run from the Timeline tab take until their results are on screen.
Run: ``.venv/bin/python bench/tui_open.py``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui.app import InspectorApp  # noqa: E402
from tui.synthetic import synthetic_ptx  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "ptx"
EXAMPLES = ROOT / "examples"


async def measure(path: Path, label: str) -> None:
    t0 = time.perf_counter()
    app = InspectorApp([str(path)])
    async with app.run_test(size=(160, 48)) as pilot:
        while not (app.loaded and app.doc is not None and not app.query_one("#main").loading):
            await asyncio.sleep(0.005)
        await pilot.pause()
        t_open = time.perf_counter() - t0
        lines = sum(1 for _ in path.open())
        print(f"{label}: {path.name} ({lines} lines): interactive after {t_open:.2f} s"
              f" ({'OK' if t_open < 2 else 'over'} the 2 s target)")
        n = 30
        t = time.perf_counter()
        for _ in range(n):
            await pilot.press("x")  # unbound: the test driver's own cost per key
        base = 1000 * (time.perf_counter() - t) / n
        print(f"  baseline (unbound key, test driver overhead): {base:.1f} ms per key; figures below include it")
        for key in ("j", "pagedown"):
            t = time.perf_counter()
            for _ in range(n):
                await pilot.press(key)
            await pilot.pause()
            print(f"  {key}: {1000 * (time.perf_counter() - t) / n:.1f} ms per key")
        t = time.perf_counter()
        await pilot.press("slash", *"ld.shared", "enter")
        await pilot.pause()
        print(f"  search 'ld.shared' typed key by key: {1000 * (time.perf_counter() - t) / 10:.1f} ms per key")
        if len(app.entries) > 1:
            t = time.perf_counter()
            for _ in range(10):
                await pilot.press("right_square_bracket")
            await pilot.pause()
            print(f"  kernel switch: {1000 * (time.perf_counter() - t) / 10:.1f} ms per switch")


async def measure_runs() -> None:
    for rel, key, done in (("ptx/sgemm_tiled.sm_90.ptx", "r", lambda app: app.doc.sim is not None),
                           ("ptx/bugs/missing_sync.sm_90.ptx", "r", lambda app: app.doc.sim is not None),
                           ("ascend/gemm_f16_256x192x320.asm", "r", lambda app: app.doc.sim is not None),
                           ("ascend/gemm_f16_256x192x320.asm", "5", lambda app: app.doc.timeline is not None),
                           ("ascend/softmax_f32.asm", "5", lambda app: app.doc.timeline is not None)):
        app = InspectorApp([str(EXAMPLES / rel)])
        async with app.run_test(size=(160, 48)) as pilot:
            while not (app.loaded and app.doc is not None):
                await asyncio.sleep(0.005)
            await pilot.pause()
            t = time.perf_counter()
            await pilot.press(key)
            while not done(app):
                await asyncio.sleep(0.005)
            await pilot.pause()
            what = "Run tab (simulator)" if key == "r" else "Timeline tab (timing model)"
            print(f"{what}: {rel}: results on screen {time.perf_counter() - t:.2f} s after the key")


async def main() -> None:
    files = sorted(CORPUS.glob("*.ptx"), key=lambda p: p.stat().st_size) if CORPUS.exists() else []
    if files:
        await measure(files[-1], "largest corpus file")
    else:
        print("../shared/corpus is absent: skipping the corpus file")
    with tempfile.TemporaryDirectory() as d:
        one = Path(d) / "synthetic_4500.ptx"
        one.write_text(synthetic_ptx(4500, 1))
        await measure(one, "synthetic, one kernel")
        three = Path(d) / "synthetic_4500x3.ptx"
        three.write_text(synthetic_ptx(4500, 3))
        await measure(three, "synthetic, three kernels")
    await measure_runs()


if __name__ == "__main__":
    asyncio.run(main())
