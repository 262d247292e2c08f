"""analyzer.plot: the roofline SVG, parsed back (positions, ceilings, labels), and validate-kernel --plot."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest

from analyzer.cli import main
from analyzer.machine import load_machine
from analyzer.plot import RooflinePoint, roofline_svg
from tests.conftest import EXAMPLES

NS = {"s": "http://www.w3.org/2000/svg"}


def _axes(root):
    """Pixel <-> value maps from the decade tick labels (log axes)."""
    xt = {float(t.get("data-value")): float(t.get("x")) for t in root.iterfind(".//s:text[@class='xtick']", NS)}
    yt = {float(t.get("data-value")): float(t.get("y")) - 4 for t in root.iterfind(".//s:text[@class='ytick']", NS)}

    def inv(ticks, pix):
        (v0, p0), (v1, p1) = sorted(ticks.items())[:2]
        return 10 ** (math.log10(v0) + (pix - p0) / (p1 - p0) * (math.log10(v1) - math.log10(v0)))
    return (lambda px: inv(xt, px)), (lambda py: inv(yt, py)), xt, yt


def _parse(svg):
    return ET.fromstring(svg)


def test_point_and_ceilings_sit_where_their_values_say():
    m = load_machine("h200")
    svg = roofline_svg(m, [RooflinePoint("sgemm", 8.0, 2.0e13, "modelled")], kinds=["tensor_f16"])
    root = _parse(svg)
    x_of, y_of, xt, yt = _axes(root)
    assert len(xt) >= 4 and len(yt) >= 3
    (pt,) = root.findall(".//s:circle[@class='point modelled']", NS)
    assert x_of(float(pt.get("cx"))) == pytest.approx(8.0, rel=1e-3)
    assert y_of(float(pt.get("cy"))) == pytest.approx(2.0e13, rel=1e-3)
    label = root.find(".//s:text[@class='point-label']", NS).text
    assert "sgemm (modelled)" in label and "20 TOP/s" in label
    roofs = {c.get("data-kind"): c for c in root.iterfind(".//s:line[@class='ceiling compute']", NS)}
    assert set(roofs) == {"fp32", "fp16", "tensor_f16"}
    for kind, line in roofs.items():
        assert y_of(float(line.get("y1"))) == pytest.approx(m.peak(kind), rel=1e-3)
    assert m.peak("fp32") == pytest.approx(66.9e12, rel=1e-3)          # 256 FLOP/clk x 132 x 1.98 GHz
    assert roofs["fp16"].get("y1") == roofs["fp32"].get("y1")           # HFMA2 at half the FFMA rate: same FLOP/s
    assert float(roofs["tensor_f16"].get("y1")) < float(roofs["fp32"].get("y1"))   # higher up the picture


def test_memory_ceilings_are_bandwidth_times_intensity():
    m = load_machine("h200")
    root = _parse(roofline_svg(m, [RooflinePoint("k", 0.5, 1e12)]))
    x_of, y_of, _, _ = _axes(root)
    mem = {c.get("data-kind"): c for c in root.iterfind(".//s:line[@class='ceiling memory']", NS)}
    assert set(mem) == {"dram", "dram_measured", "l2_measured", "shared"}
    for kind, line in mem.items():
        bw = m.bandwidths[kind]
        for x, y in (("x1", "y1"), ("x2", "y2")):
            i = x_of(float(line.get(x)))
            assert y_of(float(line.get(y))) == pytest.approx(i * bw, rel=1e-3), kind
    assert m.bandwidths["shared"] == pytest.approx(128 * 132 * 1.98e9)
    legend = " ".join(t.text for t in root.iterfind(".//s:text[@class='legend-entry']", NS))
    assert "DRAM (datasheet): 4.8 TB/s" in legend and "L2 (measured copy)" in legend and "estimated" in legend


def test_status_is_checked():
    with pytest.raises(ValueError):
        RooflinePoint("k", 1.0, 1e12, "guessed")


def test_validate_kernel_plot(tmp_path, capsys):
    ptx = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"
    out = tmp_path / "roof.svg"
    launch = ["--param", "M=1024", "--param", "N=1024", "--param", "K=1024", "--grid", "64,64,1", "--block", "16,16,1"]
    assert main([str(ptx), *launch, "--plot", str(out), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    kernels = report["kernels"] if isinstance(report, dict) and "kernels" in report else report
    roof = kernels[0]["dynamic"]["roofline"]
    root = _parse(out.read_text())
    x_of, y_of, _, _ = _axes(root)
    (pt,) = root.findall(".//s:circle[@class='point estimated']", NS)
    assert pt.get("data-label") == "sgemm_tiled"
    assert x_of(float(pt.get("cx"))) == pytest.approx(roof["intensity"], rel=1e-3)
    assert y_of(float(pt.get("cy"))) == pytest.approx(roof["attainable_ops_per_s"], rel=1e-3)
    # the axis is per DRAM byte; the static point's bytes are the requested global bytes, and it says so
    legend = [t.text for t in root.findall(".//s:text[@class='legend-entry']", NS)]
    assert "estimated (static counts, every global byte taken as DRAM, time at the ceilings)" in legend


def test_validate_kernel_plot_without_traffic_is_an_input_error(tmp_path):
    # an Ascend-like file has no roofline: nothing to plot -> exit 2 with a message, no traceback
    asm = EXAMPLES / "ascend" / "vadd_f16.asm"
    assert main([str(asm), "--plot", str(tmp_path / "r.svg")]) == 2
