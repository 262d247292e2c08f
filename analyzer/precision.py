"""``validate-kernel --precision-mode MODE``: the analyzer's instruction facts as the arithmetic facts
that ``sim.numerics.precision.check_kernel`` judges.

Each floating-point instruction becomes one ``ArithmeticFact(full_opcode, kind, in_dtype, acc_dtype,
out_dtype, line)``: ``matrix`` for tensor-core work, ``convert`` for conversions, ``vector`` for other
arithmetic that produces a floating-point value::

    wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 ...  -> ('matrix', in f16, acc f32, out f32)
    fma.rn.f32 %f14, %f13, %f12, %f29;                   -> ('vector', in f32, acc f32, out f32)
    cvt.rn.f16.f32 %rs1, %f1;                            -> ('convert', in f32, out f16)
"""

from __future__ import annotations

from isa.semantics import Unit
from isa.types import FLOAT_TYPES
from sim.numerics import precision as numerics

from .report import KernelReport

_FLOAT_UNITS = (Unit.FP16, Unit.FP32, Unit.FP64, Unit.SFU)
_FLOAT_ARITH = ("FP16_ARITH", "FP32_ARITH", "FP64_ARITH")


def facts(report: KernelReport) -> list[numerics.ArithmeticFact]:
    """``ArithmeticFact`` per floating-point arithmetic instruction of a kernel."""
    out = []
    for ins, info in zip(report.instructions, report.infos):
        if "CONVERT" in info.classes:
            kind = "convert"
        elif info.unit in (Unit.TENSOR, Unit.CUBE):
            kind = "matrix"
        elif info.unit in _FLOAT_UNITS + (Unit.VECTOR,) and info.out_dtype in FLOAT_TYPES and (
                info.flops or any(c in info.classes for c in _FLOAT_ARITH)):
            kind = "vector"
        else:
            continue
        out.append(numerics.ArithmeticFact(ins.full_opcode, kind, info.in_dtype, info.acc_dtype, info.out_dtype,
                                           ins.span.line))
    return out


def check(reports: list[KernelReport], mode: str, origin_dtype: str | None = None) -> dict:
    """Run the precision check on every report::

        {'mode': 'force_fp16', 'checked': 5, 'violations': [{'kernel', 'file', 'line', 'instruction',
         'rule', 'message'}, ...], 'kernels': {'sgemm_naive': 'violates'}}

    ``checked`` counts the floating-point arithmetic instructions judged (conversions and integer
    arithmetic are not); an unknown mode, or an origin mode without ``origin_dtype`` (the model's
    original dtype: ``validate-kernel --origin-dtype f16``), raises ``InputError``.
    """
    result = {"mode": mode, "checked": 0, "violations": [], "kernels": {}}
    if origin_dtype is not None:
        if numerics.norm_dtype(origin_dtype) not in FLOAT_TYPES:
            from isa.errors import InputError

            raise InputError(f"--origin-dtype {origin_dtype!r} is not a floating-point dtype (f16, bf16, f32)")
        result["origin_dtype"] = origin_dtype
    for r in reports:
        kernel_facts = facts(r)
        violations = numerics.check_kernel(mode, kernel_facts, origin_dtype=origin_dtype)
        result["checked"] += len(numerics.judged(kernel_facts))
        result["kernels"][r.name] = "complies" if not violations else "violates"
        for v in violations:
            result["violations"].append({"kernel": r.name, "file": r.path, "line": v.line,
                                         "instruction": v.instruction, "rule": v.rule,
                                         "message": f"kernel '{r.name}': {v.instruction}: {v.message} "
                                                    f"[{mode}/{v.rule}]"})
    return result
