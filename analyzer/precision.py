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

from isa.errors import InputError
from isa.semantics import Unit
from isa.types import FLOAT_TYPES

from .report import KernelReport

_FLOAT_UNITS = (Unit.FP16, Unit.FP32, Unit.FP64, Unit.SFU)


def _module():
    try:
        from sim.numerics import precision
    except ImportError:
        raise InputError("--precision-mode needs sim.numerics.precision, which is not available in this "
                         "installation") from None
    return precision


def modes() -> list[str]:
    p = _module()
    for name in ("MODES", "PRECISION_MODES"):
        if hasattr(p, name):
            return sorted(getattr(p, name))
    return []


def _is_float(t: str | None) -> bool:
    return t in FLOAT_TYPES


def facts(report: KernelReport) -> list:
    """``ArithmeticFact`` per floating-point arithmetic instruction of a kernel."""
    p = _module()
    out = []
    for ins, info in zip(report.instructions, report.infos):
        if "CONVERT" in info.classes:
            kind = "convert"
        elif info.unit in (Unit.TENSOR, Unit.CUBE):
            kind = "matrix"
        elif info.unit in _FLOAT_UNITS + (Unit.VECTOR,) and _is_float(info.out_dtype) and (
                info.flops or "FP16_ARITH" in info.classes or "FP32_ARITH" in info.classes
                or "FP64_ARITH" in info.classes):
            kind = "vector"
        else:
            continue
        out.append(p.ArithmeticFact(ins.full_opcode, kind, info.in_dtype, info.acc_dtype, info.out_dtype,
                                    ins.span.line))
    return out


def check(reports: list[KernelReport], mode: str) -> dict:
    """Run the precision check on every report: ``{'mode', 'violations': [...], 'kernels': {...}}``."""
    p = _module()
    result = {"mode": mode, "violations": [], "kernels": {}}
    for r in reports:
        try:
            violations = p.check_kernel(mode, facts(r))
        except (KeyError, ValueError) as exc:
            raise InputError(f"unknown precision mode '{mode}': {exc}") from None
        result["kernels"][r.name] = "complies" if not violations else "violates"
        for v in violations:
            line = getattr(v, "line", None) or r.function.span.line
            msg = getattr(v, "message", None) or str(v)
            instr = getattr(v, "instruction", None)
            rule = getattr(v, "rule", None)
            result["violations"].append({"kernel": r.name, "file": r.path, "line": line, "instruction": instr,
                                         "rule": rule,
                                         "message": f"kernel '{r.name}': {instr + ': ' if instr else ''}{msg}"
                                         + (f" [{mode}/{rule}]" if rule else "")})
    return result
