"""``kernlens run FILE --launch SPEC --timing h200 --plot OUT.svg``: the kernel on the H200 roofline
by its executed work, its modelled DRAM bytes and its modelled time (analyzer.plot draws it)."""

from __future__ import annotations

import json
import re

import pytest

from analyzer.machine import load_machine
from kernlens.cli import main
from tests.conftest import EXAMPLES

SGEMM = str(EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx")
HGEMM = str(EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx")
MAN = str(EXAMPLES / "manifest.json")


def _attrs(svg: str, cls: str) -> list[dict]:
    out = []
    for m in re.finditer(rf'<(?:circle|line) class="{cls}[^"]*" ([^>]*)/>', svg):
        out.append(dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1))))
    return out


def _timed(path, entry, tmp_path, capsys):
    svg = tmp_path / "roofline.svg"
    rc = main(["run", path, "--launch", f"{MAN}#{entry}", "--timing", "h200", "--plot", str(svg), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0, out["problems"]
    # the work of the modelled point and the run's measured work are one sum (analyzer.report.work_sums)
    w = out["measured_work"]
    assert sum(out["timing"]["work"].values()) == w["flops"] + w["int_ops"] > 0
    return out["timing"], svg.read_text()


def test_plot_places_the_modelled_point_by_executed_work_modelled_bytes_and_time(tmp_path, capsys):
    tm, svg = _timed(SGEMM, "sgemm_tiled", tmp_path, capsys)
    # 3 x 3 CTAs of 16 x 16 threads, K = 50 padded to 4 tiles of 16: 64 FFMA (2 FLOP) per thread, exact
    assert tm["work"] == {"fp32": 2304 * 64 * 2}
    dram = tm["memory"]["dram_bytes_read"] + tm["memory"]["dram_bytes_write"]
    (pt,) = _attrs(svg, "point")
    assert float(pt["data-intensity"]) == pytest.approx(294912 / dram, rel=1e-5)
    assert float(pt["data-ops-per-s"]) == pytest.approx(294912 / tm["seconds"], rel=1e-5)
    assert 'class="point modelled"' in svg and "modelled time, not measured" in svg
    assert "(timing model)" in svg and "measured copy" in svg       # legend: the status, the measured ceilings
    kinds = {a["data-kind"] for a in _attrs(svg, "ceiling")}
    assert kinds == {"fp32", "fp16", "dram", "dram_measured", "l2_measured", "shared"}
    m = load_machine("h200")
    fp32 = next(a for a in _attrs(svg, "ceiling compute") if a["data-kind"] == "fp32")
    assert float(fp32["data-ops-per-s"]) == pytest.approx(m.peak("fp32"), rel=1e-5)


def test_plot_of_a_tensor_kernel_draws_its_tensor_ceiling(tmp_path, capsys):
    tm, svg = _timed(HGEMM, "hgemm_wmma", tmp_path, capsys)
    assert set(tm["work"]) == {"mma_sync_f16"} and tm["work"]["mma_sync_f16"] > 0
    kinds = {a["data-kind"] for a in _attrs(svg, "ceiling compute")}
    assert kinds == {"fp32", "fp16", "mma_sync_f16"}


def test_plot_needs_timing(tmp_path, capsys):
    rc = main(["run", SGEMM, "--launch", f"{MAN}#sgemm_tiled", "--plot", str(tmp_path / "r.svg")])
    assert rc == 2
    assert "--plot needs --timing h200" in capsys.readouterr().err
    assert not (tmp_path / "r.svg").exists()
