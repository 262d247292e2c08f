"""Precision modes: GE's documented fallback orders, mix lists, and kernel compliance verdicts on
facts mirroring corpus kernels (ptx/wmma_f16, sgemm_naive, mma_bf16, hgemm_half2)."""

from __future__ import annotations

import pytest

from isa.errors import InputError
from sim.numerics.precision import (ALL_MODES, RULES, ArithmeticFact, MixList, PrecisionPolicy,
                                    check_kernel)

MM_PAIRS = [("f16", "f32"), ("f32", "f32"), ("f16", "f16")]


def sel(mode, op, supported, origin, **kw):
    return PrecisionPolicy(mode).select(op, supported, origin, **kw)


def test_cube_fp16in_fp32out_matrix_fallback_steps():
    for mode in ("cube_fp16in_fp32out", "force_fp32"):
        s = sel(mode, "MatMulV2", MM_PAIRS, "f32")
        assert (s.in_dtype, s.out_dtype, s.engine) == ("f16", "f32", "AICore") and "step 1" in s.reasons[-1]
    s = sel("force_fp32", "MatMulV2", [("f32", "f32"), ("f16", "f16")], "f16")
    assert (s.in_dtype, s.out_dtype) == ("f32", "f32") and "step 2" in s.reasons[-1]
    s = sel("force_fp32", "MatMulV2", [("f16", "f16")], "f32")
    assert (s.in_dtype, s.out_dtype) == ("f16", "f16") and "step 3" in s.reasons[-1]
    s = sel("force_fp32", "MatMulV2", [("bf16", "f32"), ("s8", "s32"), ("f32", "f16")], "f32")
    assert s.engine is None and "step 4" in s.error


def test_cube_fp16in_fp32out_vector_rules_and_black_list():
    assert sel("cube_fp16in_fp32out", "Add", ["f16", "f32"], "f16").in_dtype == "f32"
    s = sel("cube_fp16in_fp32out", "Add", ["f16"], "f16")
    assert s.in_dtype == "f16" and "no effect" in s.reasons[-1]
    black = PrecisionPolicy("cube_fp16in_fp32out", MixList(black=frozenset({"Add"})))
    s = black.select("Add", ["f16"], "f16", aicpu=["f32"])
    assert (s.engine, s.in_dtype) == ("AICPU", "f32")
    assert black.select("Add", ["f16"], "f16").engine is None


def test_force_fp16_and_allow_fp32_to_fp16():
    s = sel("force_fp16", "Add", ["f16", "f32"], "f32")
    assert s.in_dtype == "f16" and "forced to float16" in s.reasons[-1]
    assert sel("fp16", "MatMul", MM_PAIRS, "bf16").in_dtype == "f16"
    assert sel("force_fp16", "Exp", ["f32"], "f32").in_dtype == "f32"
    # matrix: fp32 -> fp16 first; vector: keep fp32 first
    assert sel("allow_fp32_to_fp16", "MatMul", MM_PAIRS, "f32").in_dtype == "f16"
    assert sel("allow_fp32_to_fp16", "Mul", ["f16", "f32"], "f32").in_dtype == "f32"
    s = sel("allow_fp32_to_fp16", "Mul", ["f16"], "f32")
    assert s.in_dtype == "f16" and "does not support float32" in s.reasons[-1]
    # bf16 origin: bf16 -> fp32 -> fp16 -> AI CPU
    assert sel("allow_fp32_to_fp16", "Mul", ["bf16", "f32", "f16"], "bf16").in_dtype == "bf16"
    assert sel("allow_fp32_to_fp16", "Mul", ["f16", "f32"], "bf16").in_dtype == "f32"
    assert sel("allow_fp32_to_fp16", "Mul", ["f16"], "bf16").in_dtype == "f16"
    s = sel("allow_fp32_to_fp16", "Mul", ["s32"], "bf16", aicpu=["bf16"])
    assert s.engine == "AICPU"


def test_origin_modes():
    for mode in ("must_keep_origin_dtype", "origin"):
        assert sel(mode, "Add", ["f16", "f32"], "f16").in_dtype == "f16"
        s = sel(mode, "Add", ["f32", "bf16"], "f16")
        assert s.in_dtype == "f32" and "higher-precision" in s.reasons[-1]
        s = sel(mode, "Add", ["bf16"], "f16", aicpu=["f16"])
        assert (s.engine, s.in_dtype) == ("AICPU", "f16")
        assert sel(mode, "Add", ["f16"], "f32").error is not None


def test_mixed_precision_uses_the_lists():
    pol = PrecisionPolicy("allow_mix_precision", MixList(white=frozenset({"MatMul"}), black=frozenset({"Softmax"})))
    assert pol.select("MatMul", MM_PAIRS, "f32").in_dtype == "f16"
    assert pol.select("Softmax", ["f16", "f32"], "f32").in_dtype == "f32"
    s = pol.select("Relu", ["f16", "f32"], "f32", upstream_reduced=True)
    assert s.in_dtype == "f16" and "gray list" in s.reasons[0]
    assert pol.select("Relu", ["f16", "f32"], "f32", upstream_reduced=False).in_dtype == "f32"
    bf = PrecisionPolicy("mixed_bfloat16", MixList(white=frozenset({"MatMul"})))
    assert bf.select("MatMul", [("bf16", "f32"), ("f32", "f32")], "f32").in_dtype == "bf16"
    assert bf.select("MatMul", [("f32", "f32")], "f32").in_dtype == "f32"   # no bf16 kernel: not reduced
    # default built-in list: Conv2D is white (the documentation's example)
    assert PrecisionPolicy("mixed_float16").select("Conv2D", MM_PAIRS, "f32").in_dtype == "f16"
    s = PrecisionPolicy("cube_hif8").select("MatMul", [("hif8", "f32"), ("f16", "f32")], "f16")
    assert s.in_dtype == "hif8" and "950" in s.reasons[0]
    assert PrecisionPolicy("allow_fp32_to_bf16").select("Add", ["bf16", "f32"], "f32").in_dtype == "f32"
    assert PrecisionPolicy("allow_fp32_to_bf16").select("MatMul", [("bf16", "f32")], "f32").in_dtype == "bf16"


def test_modify_mixlist_json_as_the_compiler_reads_it():
    base = MixList(white=frozenset({"A", "Conv2D"}), black=frozenset({"Yolo"}))
    text = """{
      "black-list": {                  // 黑名单
         "to-remove": [ "Yolo" ],
         "to-add": [ "Matmul", "A" ]
      },
      "white-list": {
         "to-remove": [ "Conv2D" ],
         "to-add": [ "Bias" ]
      }
    }"""
    m = base.modified(text)
    assert m.category("A") == "black" and m.category("Matmul") == "black"
    assert m.category("Yolo") == "gray" and m.category("Conv2D") == "gray" and m.category("Bias") == "white"
    # black to-add A together with white to-remove A: A ends black (documented case 2)
    m2 = base.modified({"black-list": {"to-add": ["A"]}, "white-list": {"to-remove": ["A"]}})
    assert m2.category("A") == "black"
    assert base.modified({"white-list": {"to-remove": ["A"]}}).category("A") == "gray"
    for bad in ({"grey-list": {}}, {"black-list": {"to-remove": ["Conv2D"]}},
                {"black-list": {"to-add": ["X"]}, "white-list": {"to-add": ["X"]}},
                {"white-list": {"add": ["X"]}}, "{not json"):
        with pytest.raises(InputError):
            base.modified(bad)
    info = {"Conv2D": {"precision_reduce": {"flag": "true"}}, "Cast": {"precision_reduce": {"flag": "false"}},
            "Relu": {}}
    lists = MixList.from_ops_info(info)
    assert (lists.category("Conv2D"), lists.category("Cast"), lists.category("Relu")) == ("white", "black", "gray")


def test_unknown_mode():
    with pytest.raises(InputError) as e:
        PrecisionPolicy("allow_fp64")
    assert "mixed_hif8" in e.value.expected
    assert set(RULES) == {PrecisionPolicy(m).canonical for m in ALL_MODES}


# facts mirroring the corpus PTX (sm_90)
WMMA_F16 = [
    ArithmeticFact("add.s64", "vector", "s64", None, "s64", 40),
    ArithmeticFact("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32", "matrix", "f16", "f32", "f32", 88),
    ArithmeticFact("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32", "matrix", "f16", "f32", "f32", 97),
]
SGEMM = [ArithmeticFact("mul.wide.s32", "vector", "s32", None, "s64", 30)] + [
    ArithmeticFact("fma.rn.f32", "vector", "f32", "f32", "f32", 50 + i) for i in range(5)]
MMA_BF16 = [ArithmeticFact("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "matrix", "bf16", "f32", "f32", 120 + i)
            for i in range(3)] + [ArithmeticFact("cvt.rn.bf16x2.f32", "convert", "f32", None, "bf16", 200)]
HGEMM_HALF2 = [ArithmeticFact("fma.rn.f16x2", "vector", "f16x2", "f16", "f16x2", 61),
               ArithmeticFact("cvt.f32.f16", "convert", "f16", None, "f32", 70)]


def test_corpus_verdicts():
    assert check_kernel("cube_fp16in_fp32out", WMMA_F16) == []
    assert check_kernel("force_fp32", WMMA_F16) == []
    v = check_kernel("force_fp16", SGEMM)
    assert [x.line for x in v] == [50, 51, 52, 53, 54]
    assert {x.rule for x in v} == {"vector-fp16"} and v[0].instruction == "fma.rn.f32" and v[0].mode == "force_fp16"
    assert check_kernel("mixed_bfloat16", MMA_BF16) == []
    assert check_kernel("allow_mix_precision_bf16", MMA_BF16) == []


def test_violations_name_rule_instruction_and_line():
    v = check_kernel("cube_fp16in_fp32out", MMA_BF16)
    assert [(x.rule, x.line) for x in v] == [("matrix-fp16-in-fp32-acc", 120), ("matrix-fp16-in-fp32-acc", 121),
                                            ("matrix-fp16-in-fp32-acc", 122)]
    assert "bf16" in v[0].message and "line 120" in str(v[0])
    v = check_kernel("cube_fp16in_fp32out", HGEMM_HALF2)
    assert [(x.rule, x.line) for x in v] == [("vector-fp32", 61)]
    f16_acc = [ArithmeticFact("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "matrix", "f16", "f16", "f16", 9)]
    assert [x.rule for x in check_kernel("force_fp32", f16_acc)] == ["matrix-fp16-in-fp32-acc"]
    assert check_kernel("force_fp16", WMMA_F16) == []
    assert [x.rule for x in check_kernel("mixed_bfloat16", WMMA_F16)] == ["matrix-bf16-in"] * 2
    assert [x.rule for x in check_kernel("mixed_bfloat16", HGEMM_HALF2)] == ["no-fp16-vector"]
    assert [x.rule for x in check_kernel("mixed_float16", MMA_BF16)] == ["no-bf16"] * 3
    tf32 = [ArithmeticFact("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "matrix", "tf32", "f32", "f32", 5)]
    assert [x.rule for x in check_kernel("allow_fp32_to_fp16", tf32)] == ["matrix-fp32-reduced"]
    assert check_kernel("allow_fp32_to_fp16", WMMA_F16) == []
    assert [x.rule for x in check_kernel("cube_hif8", WMMA_F16)] == ["matrix-hif8-in"] * 2
    fp8 = [ArithmeticFact("wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", "matrix", "e4m3", "f32", "f32", 7)]
    assert [x.rule for x in check_kernel("mixed_hif8", fp8)] == ["fp8-is-hif8"]
    # origin needs the model's original dtype
    for mode in ("origin", "must_keep_origin_dtype"):
        with pytest.raises(InputError, match="original dtype"):
            check_kernel(mode, HGEMM_HALF2)
    assert [x.line for x in check_kernel("origin", HGEMM_HALF2, origin_dtype="float32")] == [61]
    assert check_kernel("must_keep_origin_dtype", SGEMM, origin_dtype="f16") == []   # f16 may run as f32
    with pytest.raises(InputError):
        check_kernel("fp16", [ArithmeticFact("x", "scalar", "f32", None, None, 1)])
