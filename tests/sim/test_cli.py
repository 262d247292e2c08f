"""kernlens run: bad input exits 2 with a located message, dispatch to the Ascend simulator,
and (with the engine) real runs with checks, JSON, heat and output files."""

from __future__ import annotations

import json
import sys
import types

import numpy as np
import pytest

from kernlens.cli import main
from tests.conftest import CORPUS, ROOT, corpus_or_skip

MACHINES_TOML = ROOT / "sim" / "machines" / "davinci-a2.toml"

PTX = """\
.version 8.7
.target sm_90
.address_size 64

.visible .entry scale2(
    .param .u64 scale2_param_0,
    .param .u64 scale2_param_1,
    .param .u32 scale2_param_2
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [scale2_param_0];
    ld.param.u64 %rd2, [scale2_param_1];
    ld.param.u32 %r2, [scale2_param_2];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra $L__BB0_2;
    cvta.to.global.u64 %rd3, %rd1;
    mul.wide.s32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    ld.global.f32 %f1, [%rd5];
    add.f32 %f2, %f1, %f1;
    cvta.to.global.u64 %rd6, %rd2;
    add.s64 %rd7, %rd6, %rd4;
    st.global.f32 [%rd7], %f2;
$L__BB0_2:
    ret;
}
"""

REF = """\
import numpy as np
def double(d):
    return {"y": (d["x"].astype(np.float64) * 2).astype(np.float32)}
def wrong(d):
    return {"y": d["x"] * 3}
def broken(d):
    raise ValueError("nope")
"""


def _spec(n=100, block=64, grid=2, nargs=3):
    args = [{"buffer": "x", "dtype": "f32", "shape": [n], "init": "randn", "role": "in"},
            {"buffer": "y", "dtype": "f32", "shape": [n], "init": "zeros", "role": "out"},
            {"scalar": "n", "dtype": "s32", "value": n}]
    return {"grid": [grid, 1, 1], "block": [block, 1, 1], "dynamic_shared_bytes": 0, "args": args[:nargs]}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "k.ptx").write_text(PTX)
    (tmp_path / "spec.json").write_text(json.dumps(_spec()))
    (tmp_path / "refmod.py").write_text(REF)
    return tmp_path


def test_missing_launch_is_exit_2(files, capsys):
    assert main(["run", str(files / "k.ptx")]) == 2
    assert "needs --launch" in capsys.readouterr().err


def test_missing_file_is_exit_2(files, capsys):
    assert main(["run", str(files / "nope.ptx"), "--launch", str(files / "spec.json")]) == 2
    nope = files / "nope.ptx"
    assert capsys.readouterr().err.startswith(f"{nope}: error: no such file: {nope}")   # as validate-kernel says it


def test_binary_file_is_exit_2(files, capsys):
    (files / "bin.ptx").write_bytes(b"\xff\xfe\x00\x81")
    assert main(["run", str(files / "bin.ptx"), "--launch", str(files / "spec.json")]) == 2
    bin_ = files / "bin.ptx"
    assert capsys.readouterr().err.startswith(f"{bin_}: error: not a text file (binary data): {bin_}")


def test_parse_error_is_located(files, capsys):
    (files / "bad.ptx").write_text(PTX.replace("add.f32 %f2", "frobnicate.f32 %f2"))
    assert main(["run", str(files / "bad.ptx"), "--launch", str(files / "spec.json")]) == 2
    err = capsys.readouterr().err
    assert f"{files / 'bad.ptx'}:29:" in err and "error" in err


def test_parameter_count_mismatch_points_at_the_kernel(files, capsys):
    (files / "short.json").write_text(json.dumps(_spec(nargs=2)))
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "short.json")]) == 2
    err = capsys.readouterr().err
    assert "takes 3 parameters" in err and "gives 2" in err and ":5:" in err


def test_bad_spec_value_is_located_in_the_json(files, capsys):
    spec = _spec()
    spec["args"][0]["init"] = "gauss(1)"
    (files / "bad.json").write_text(json.dumps(spec, indent=1))
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "bad.json")]) == 2
    err = capsys.readouterr().err
    line = next(i for i, s in enumerate(json.dumps(spec, indent=1).splitlines(), 1) if "gauss" in s)
    assert f"bad.json:{line}:" in err and "bad init" in err


def test_unknown_kernel_and_machine(files, capsys):
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "spec.json"), "--kernel", "nope"]) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "spec.json"), "--machine", "tpu"]) == 2
    assert "unknown machine" in capsys.readouterr().err


def test_ascend_files_and_machine_dispatch_to_run_ascend(files, monkeypatch):
    seen = []
    fake = types.ModuleType("sim.ascend.cli")
    fake.add_arguments = lambda p: (p.add_argument("--json", action="store_true"),   # clashes: kept first
                                    p.add_argument("--cores", type=int, default=1))
    fake.run_ascend = lambda args: seen.append((args.file, args.machine, args.cores)) or 0
    monkeypatch.setitem(sys.modules, "sim.ascend.cli", fake)
    assert main(["run", str(files / "k.asm"), "--cores", "4"]) == 0
    assert main(["run", str(files / "k.ptx"), "--machine", "davinci-a2"]) == 0
    assert seen == [(str(files / "k.asm"), None, 4), (str(files / "k.ptx"), "davinci-a2", 1)]


def test_bad_reference_is_exit_2(files, capsys):
    base = ["run", str(files / "k.ptx"), "--launch", str(files / "spec.json")]
    assert main(base + ["--reference", "nocolon"]) == 2
    assert "MODULE:FUNCTION" in capsys.readouterr().err
    assert main(base + ["--reference", f"{files / 'refmod.py'}:missing"]) == 2
    assert "no function 'missing'" in capsys.readouterr().err
    assert main(base + ["--reference", f"{files / 'refmod.py'}:broken"]) == 2
    assert "raised ValueError: nope" in capsys.readouterr().err


def test_run_checks_and_writes_outputs(files, capsys):
    base = ["run", str(files / "k.ptx"), "--launch", str(files / "spec.json")]
    assert main(base + ["--reference", f"{files / 'refmod.py'}:double", "--out", str(files / "o.npz")]) == 0
    text = capsys.readouterr().out
    assert "check: PASS (1/1 outputs)" in text and "undefined behaviour: none found" in text
    with np.load(files / "o.npz") as z:
        assert np.array_equal(z["got_y"], z["in_x"] * 2) and z["in_n"] == 100
    # the written file feeds --inputs, and the wrong reference fails with exit 1
    assert main(base + ["--inputs", str(files / "o.npz"), "--reference", f"{files / 'refmod.py'}:wrong"]) == 1
    assert "FAIL y (f32, 100)" in capsys.readouterr().out


def test_json_output_has_stats_problems_check_and_heat(files, capsys):
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "spec.json"), "--json", "--heat",
                 "--reference", f"{files / 'refmod.py'}:double"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] is True and d["problems"] == [] and d["check"]["passed"] is True
    assert d["stats"]["thread_instructions"] > 100 and d["grid"] == [2, 1, 1]
    heat = {int(k): v for k, v in d["heat"].items()}
    assert heat[28]["global_load_sectors"] == 4 * 3 + 1 and heat[28]["executions"] == 4   # 100 floats, warps of 32


def test_out_of_bounds_launch_is_exit_1(files, capsys):
    spec = _spec()
    spec["args"][2]["value"] = 128            # n larger than the buffers: the last warp runs off the end
    (files / "oob.json").write_text(json.dumps(spec))
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "oob.json")]) == 1
    out = capsys.readouterr().out
    assert "out_of_bounds" in out and "line 28" in out


def test_corpus_entry_by_manifest_name(capsys):
    corpus_or_skip()
    assert main(["run", str(CORPUS / "ptx" / "quantize.sm_90.ptx"), "--launch",
                 f"{CORPUS / 'manifest.json'}#dequantize_s8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kernel"] == "dequantize_s8" and d["check"]["passed"] and d["check"]["outputs"][0]["max_abs"] == 0.0


@pytest.mark.parametrize("content,words", [
    (b"", "cannot read inputs"),                                   # empty file
    (None, "not a single .npy array"),                             # a .npy, not an .npz
    (b"PK\x03\x04garbage", "cannot read inputs"),                 # a broken zip
])
def test_unreadable_inputs_are_exit_2_on_both_paths(files, capsys, content, words):
    path = files / "in.npz"
    if content is None:
        with open(path, "wb") as fh:
            np.save(fh, np.zeros(3))
    else:
        path.write_bytes(content)
    asm = files / "k.asm"
    asm.write_text(ASM_SCALE)
    for argv in (["run", str(files / "k.ptx"), "--launch", str(files / "spec.json"), "--inputs", str(path)],
                 ["run", str(asm), "--inputs", str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"{path}: error: ") and words in err and "Traceback" not in err


ASM_SCALE = """.kernel s .vector (.gm .f32 %x[64], .gm .f32 %y[64])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 8, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vmuls.f32 ub[256], ub[0], 2.0, 1, 1, 1, 8, 8
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%y], ub[256], 0, 1, 8, 0, 0
}
"""


def test_ascend_inputs_by_name_value_and_size(files, capsys):
    asm = files / "k.asm"
    asm.write_text(ASM_SCALE)
    # float64 values go into the .f32 parameter by value, not by reinterpreting bytes
    np.savez(files / "ok.npz", x=np.arange(64, dtype=np.float64))
    assert main(["run", str(asm), "--inputs", str(files / "ok.npz"), "--out", str(files / "o.npz")]) == 0
    with np.load(files / "o.npz") as z:
        np.testing.assert_array_equal(z["got_y"], np.arange(64, dtype=np.float32) * 2)
        np.testing.assert_array_equal(z["in_x"], np.arange(64))
    # the --out file given back as --inputs: in_NAME keys read, got_NAME ignored
    assert main(["run", str(asm), "--inputs", str(files / "o.npz"), "--out", str(files / "o2.npz")]) == 0
    with np.load(files / "o2.npz") as z:
        np.testing.assert_array_equal(z["got_y"], np.arange(64, dtype=np.float32) * 2)
    capsys.readouterr()
    # a name that is no parameter (a typo would otherwise run on zeros)
    np.savez(files / "typo.npz", xx=np.zeros(64, dtype=np.float32))
    assert main(["run", str(asm), "--inputs", str(files / "typo.npz")]) == 2
    err = capsys.readouterr().err
    assert "input 'xx' matches no parameter of kernel 's'" in err and "expected one of: x, y" in err
    # the wrong element count
    np.savez(files / "short.npz", x=np.zeros(10, dtype=np.float32))
    assert main(["run", str(asm), "--inputs", str(files / "short.npz")]) == 2
    assert "input 'x' has 10 x float32 = 40 bytes, parameter %x declares 64 x .f32 = 256 bytes" in \
        capsys.readouterr().err


@pytest.mark.parametrize("opt", [["--launch", "spec.json"], ["--reference", "m:f"], ["--rtol", "0.1"], ["--heat"],
                                 # were ignored without a word (the Ascend-like model ran instead of h200's)
                                 ["--timing", "h200"], ["--plot", "r.svg"], ["--sass"]])
def test_ptx_only_options_are_refused_for_ascend_runs(files, capsys, opt):
    asm = files / "k.asm"
    asm.write_text(ASM_SCALE)
    assert main(["run", str(asm)] + opt) == 2
    assert f"error: {opt[0]} is for PTX runs" in capsys.readouterr().err


def test_ascend_run_errors_are_exit_2(files, capsys):
    asm = files / "k.asm"
    asm.write_text(ASM_SCALE)
    cases = [(["--machine", "nope"], "error: unknown machine 'nope'"),
             (["--cores", "0"], "error: --cores must be at least 1, got 0"),
             (["--kernel", "nosuch"], "no kernel named 'nosuch'"),
             (["--check"], "--check needs a kernel with a '.meta op=...' header")]
    for extra, words in cases:
        assert main(["run", str(asm)] + extra) == 2, extra
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (extra, err)
    assert main(["run", str(files / "missing.asm")]) == 2
    assert "no such file" in capsys.readouterr().err
    # --machine takes a TOML path too (as its help says)
    toml = files / "m.toml"
    toml.write_text(MACHINES_TOML.read_text().replace("value = 48, source", "value = 2, source", 1))
    assert main(["run", str(asm), "--machine", str(toml), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cores"] == 2
    assert main(["run", str(asm), "--machine", str(files / "none.toml")]) == 2
    assert "unknown machine" in capsys.readouterr().err


@pytest.mark.parametrize("opt", [["--trace", "t.json"], ["--cores", "2"], ["--check"]])
def test_ascend_only_options_are_refused_for_ptx_runs(files, capsys, opt):
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "spec.json")] + opt) == 2
    assert f"error: {opt[0]} is for Ascend-like runs" in capsys.readouterr().err


def test_ascend_gemm_rate_has_units(capsys):
    """'14.7 for the cores used' had no unit (issue 15)."""
    assert main(["run", str(ROOT / "examples" / "ascend" / "gemm_f16_256x192x320.asm")]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if "peak" in l)
    assert "TFLOP/s of 353.9 TFLOP/s peak" in line and "the 24 cube core(s) used peak at 353.9 TFLOP/s" in line


def test_ascend_run_says_its_timing_is_modelled_and_counts_instructions(capsys):
    """Every number says what it is (issue 15): the Ascend-like run printed cycles, time and pipe
    busy figures without saying they are modelled, and no instruction count beside them."""
    path = str(ROOT / "examples" / "ascend" / "gemm_f16_256x192x320.asm")
    assert main(["run", path, "--cores", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("  cycles ") and out[1].endswith("us  (modelled)")
    assert out[2] == "  instructions 1,348 executed (counted in this run, all cores)"
    assert any(l.startswith("  pipe ") and l.endswith("(modelled)") for l in out)
    assert main(["run", path, "--cores", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["label"] == "modelled" and d["instructions"] == 1348
    # per field, as a PTX run's result.timing["labels"]; every figure of the JSON is covered
    from sim.timing.labels import unlabelled

    lab = d["labels"]
    assert (lab["cycles"], lab["instructions"], lab["gm.bytes"], lab["gm.l2_hit_rate"]) == (
        "modelled", "exact", "exact", "modelled")
    figures = {k: v for k, v in d.items() if k in ("cycles", "seconds", "pipes", "flags", "stalls", "instructions",
                                                   "gm", "gemm", "pipes_by_core_kind")}
    assert unlabelled(figures, lab) == []
    text = "\n".join(out)
    assert "stalls (cycles, modelled): " in text and "flag waits (modelled): " in text
    assert "; modelled: 31,457,280 FLOPs over the modelled time, peaks of the machine model)" in text


def test_a_sampled_timing_run_says_its_counts_and_check_are_partial(tmp_path, capsys):
    """#10: a sampled run computes only some CTAs. The counts were printed as the launch's ("per
    launch") and a given reference was dropped with "check: no reference (give --reference ...)"."""
    from tests.sim.timing.test_sm import _kernel

    ptx = tmp_path / "k.ptx"
    ptx.write_text(_kernel("    st.global.f32 [%rd4], %f1;", regs=".reg .f32 %f<2>; .reg .b32 %r<8>; .reg .b64 %rd<8>;"))
    spec = tmp_path / "k.json"
    spec.write_text(json.dumps({"kernel": "k", "grid": [600, 1, 1], "block": [32, 1, 1], "args": [
        {"buffer": "out", "dtype": "f32", "shape": [600 * 32], "init": "zeros", "role": "out"},
        {"scalar": "n", "dtype": "u32", "value": 0}]}))
    args = ["run", str(ptx), "--launch", str(spec), "--timing", "h200", "--reference", "examples.reference:nope"]
    main(args)
    out = capsys.readouterr().out.splitlines()
    why = "5 of 600 CTAs ran (the timing model's sample; --sample all runs every CTA)"
    assert out[1] == f"  counts and problems below are of part of the launch: {why}"
    assert any(l.startswith("  top opcodes (warp-instructions of the CTAs run): ") for l in out)
    assert f"check: not run against examples.reference:nope: only {why}" in out
    assert not any("no reference" in l for l in out)
    main(args + ["--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["partial"] == why and d["check"] is None and d["timing"]["sampled"] is True
    main(args[:-2] + ["--sample", "all", "--json"])
    assert "partial" not in json.loads(capsys.readouterr().out)


def test_trace_without_timing_on_ptx_says_what_it_needs(files, capsys):
    """The message said a PTX run has no trace; with --timing h200 it has one (issue #10)."""
    assert main(["run", str(files / "k.ptx"), "--launch", str(files / "spec.json"), "--trace", "t.json"]) == 2
    assert "on PTX, --trace goes with --timing h200" in capsys.readouterr().err


def test_a_launch_of_a_kernel_the_file_lacks_names_the_file(capsys):
    """``kernlens run F --launch manifest.json#OTHER`` said ``error: no kernel named ...`` with no file."""
    from kernlens.cli import main as kl
    from tests.conftest import EXAMPLES

    ptx = EXAMPLES / "ptx" / "sgemm_tiled.sm_90.ptx"
    assert kl(["run", str(ptx), "--launch", f"{EXAMPLES / 'manifest.json'}#hgemm_wmma"]) == 2
    assert capsys.readouterr().err.startswith(f"{ptx}: error: no kernel named 'hgemm_wmma' (kernels: sgemm_tiled)")
