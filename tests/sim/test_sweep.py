"""``kernlens sweep``: the sweep file, the figures (Spearman, best gap), and whole sweeps on a local
2-worker Dask cluster (the CLI's own LocalCluster, and an existing one through --scheduler)."""

from __future__ import annotations

import json

import pytest

from isa.errors import InputError
from kernlens.cli import main
from sim import sweep as S

distributed = pytest.importorskip("distributed", reason="kernlens[sweep] (dask, distributed) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="kernlens[sweep] (pyarrow) is not installed")

SMALL = """
[sweep]
name = "small mma"
op = "gemm"
check_size = {{ m = 40, n = 24, k = 48 }}
measured = "measured.json"
[base]
arch = "sm_80"
engine = "mma"
dtype = "f16"
[vary]
stages = [2, 3]
[[variant]]
tile = "32x32x32"
warps = "2x1"
[[variant]]
tile = "64x32x32"
warps = "2x2"
{extra}
[[size]]
m = 64
n = 96
k = 64
"""


def write(tmp_path, extra="", measured=None):
    f = tmp_path / "s.toml"
    f.write_text(SMALL.format(extra=extra))
    if measured is not None:
        (tmp_path / "measured.json").write_text(json.dumps({"sweep": measured}))
    return f


def test_points_are_variants_times_vary(tmp_path):
    sw = S.load_sweep(write(tmp_path))
    pts = sw.points()
    assert len(pts) == 4
    assert [(p["options"]["tile"], p["options"]["stages"]) for p in pts] == [
        ("32x32x32", 2), ("32x32x32", 3), ("64x32x32", 2), ("64x32x32", 3)]
    assert all(p["size"] == {"m": 64, "n": 96, "k": 64} for p in pts)


@pytest.mark.parametrize("text,needle", [
    ("[sweep]\nop = 'conv'\n[[size]]\nm=1\nn=1\nk=1\n", "op = 'conv'"),
    ("[sweep]\n[bogus]\n", "unknown table"),
    ("[sweep]\n[vary]\ntile = []\n[[size]]\nm=1\nn=1\nk=1\n", "non-empty list"),
    ("[sweep]\n[[size]]\nm=1\nn=1\n", "exactly m, n, k"),
    ("[sweep]\npredict = 'a100'\n[[size]]\nm=1\nn=1\nk=1\n", "predict"),
    ("[sweep\n", "not valid TOML"),
])
def test_bad_sweep_files(tmp_path, text, needle):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(InputError, match=needle.replace("[", r"\[")):
        S.load_sweep(f)


def test_rank_correlation():
    assert S.rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert S.rank_correlation([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ties take their mean rank: ranks (0.5, 0.5, 2) vs (0, 1, 2) -> Pearson of the ranks
    assert S.rank_correlation([1, 1, 2], [1, 2, 3]) == pytest.approx(0.8660254, rel=1e-6)
    assert S.rank_correlation([1], [2]) != S.rank_correlation([1], [2])          # nan


def test_summary_gap_and_spearman():
    rows = [{"kernel": "a", "m": 1, "n": 1, "k": 1, "predicted_s": 1.0, "measured_s": 3.0},
            {"kernel": "b", "m": 1, "n": 1, "k": 1, "predicted_s": 2.0, "measured_s": 2.0},
            {"kernel": "c", "m": 1, "n": 1, "k": 1, "predicted_s": 3.0, "measured_s": 4.0}]
    s = S.summary(rows)["1x1x1"]
    assert s["predicted_best"] == "a" and s["measured_best"] == "b"
    assert s["best_gap"] == pytest.approx(0.5)           # a measured 3.0 against the best 2.0
    assert s["spearman"] == pytest.approx(0.5)
    assert "<circle" in S.scatter_svg(rows, "t") and S.scatter_svg(rows, "t").count("<circle") == 3


def test_sweep_on_the_cli_local_cluster(tmp_path, capsys):
    kname = "gemm_mma_f16_nt_32x32x32_w2x1_s2_sm_80"
    f = write(tmp_path, measured=[{"kernel": kname, "m": 64, "n": 96, "k": 64, "seconds": 5e-6},
                                  {"kernel": "gemm_mma_f16_nt_64x32x32_w2x2_s3_sm_80", "m": 64, "n": 96, "k": 64,
                                   "seconds": 4e-6}])
    assert main(["sweep", str(f), "--workers", "2", "--no-measure", "--json", "-o", str(tmp_path / "out")]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["workers"] == 2 and res["points"] == 4
    rows = res["rows"]
    assert [r["kernel"] for r in rows] == [kname, "gemm_mma_f16_nt_32x32x32_w2x1_s3_sm_80",
                                           "gemm_mma_f16_nt_64x32x32_w2x2_s2_sm_80",
                                           "gemm_mma_f16_nt_64x32x32_w2x2_s3_sm_80"]
    for r in rows:
        assert r["error"] is None and r["check_passed"] is True and r["problems"] == 0
        assert r["checked_at"] == "64x96x64"             # 6 or 3 CTAs: the predicted launch ran them all
        assert r["predicted_s"] > 0 and r["predicted_sampled"] is False
    assert rows[0]["measured_s"] == 5e-6 and rows[1]["measured_s"] is None
    summ = res["summary"]["64x96x64"]
    assert summ["points"] == 2
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.num_rows == 4 and "predicted_s" in table.column_names
    assert (tmp_path / "out.svg").read_text().count("<circle") == 2


def test_sweep_on_an_existing_scheduler_and_check_size(tmp_path):
    from distributed import Client, LocalCluster

    f = write(tmp_path)
    sw = S.load_sweep(f)
    # a big problem: the prediction samples CTAs, so the outputs are checked at check_size instead
    sw = S.Sweep(**{**sw.__dict__, "sizes": ({"m": 2048, "n": 2048, "k": 64},), "variants": ({"tile": "64x32x32",
                 "warps": "2x2"},), "vary": {"stages": [2]}})
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert main(["sweep", str(f), "--scheduler", cluster.scheduler_address,
                     "--no-measure", "-o", str(tmp_path / "e")]) == 0
        with Client(cluster.scheduler_address) as client:
            (row,) = S.run_sweep(sw, client, measure=False)
    assert row["error"] is None and row["predicted_sampled"] is True
    assert row["checked_at"] == "40x24x48" and row["check_passed"] is True


def test_a_bad_point_is_a_row_not_a_crash(tmp_path):
    row = S.evaluate({"op": "gemm", "options": {"arch": "sm_80", "engine": "mma", "dtype": "f32"},
                      "size": {"m": 16, "n": 16, "k": 16}, "predict": "none", "check": "none", "check_size": None})
    assert "supported" in row["error"] and row["kernel"] is None


def test_without_dask_a_clear_message(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    assert main(["sweep", str(write(tmp_path))]) == 2
    assert "pip install 'kernlens[sweep]'" in capsys.readouterr().err


def test_unreachable_scheduler(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(S, "CONNECT_TIMEOUT", "1s")
    assert main(["sweep", str(write(tmp_path)), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err
