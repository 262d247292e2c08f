"""Mixed-precision numerics shared by the simulators, the generators and the analyzer.

Stable API (the PTX simulator relies on these names and signatures):

Formats (:mod:`.formats`, :mod:`.hif8`)
    ``get_format(name) -> FloatFormat | IntFormat``; names ``f64 f32 tf32 f16 bf16 e4m3 e5m2
    hif8 s4 u4 s8 u8 s16 u16 s32 u32 s64 u64`` plus aliases (``fp16``, ``int8``, ``hifloat8``).
    Each format has ``max``, ``min_normal``, ``min_subnormal``, ``eps`` (ints: ``min``/``max``).

Bit patterns (:mod:`.codec`)
    ``decode(bits, fmt) -> float64`` (ints: int64); ``encode(x, fmt, mode='rn', saturate=None)``
    -> unsigned bits; ``values_to_bits(exact_values, fmt)``; ``ordinal``, ``ulp_distance(a, b,
    fmt)``, ``ulp(x, fmt)``; ``pack_int4`` / ``unpack_int4``.

Rounding (:mod:`.rounding`), modes ``rn rna rz rm rp rs`` (and ``rni rzi rmi rpi``)
    ``round_float(x, fmt, mode='rn', saturate=None, *, sat=False, ftz=False, seed=None,
    rng=None, rbits=None) -> float64`` values exactly representable in ``fmt``.
    ``float_to_int(x, itype, mode='rni', *, src='f32')`` (PTX saturation, NaN -> 0).
    ``int_to_float(x, fmt, mode='rn')`` (exact for 64-bit ints), ``round_integral(x, mode)``,
    ``sat01`` (``.sat``), ``saturate_int``, ``wrap_int``, ``round_fraction`` (scalar, exact).

Arithmetic with one rounding (:mod:`.arith`)
    ``add sub mul div (a, b, fmt='f32', mode='rn', **kw)``, ``fma(a, b, c, fmt, mode, **kw)``,
    ``sqrt(a, fmt, mode, **kw)``, ``cvt_float(x, dst, mode, **kw)``; keywords ``ftz``, ``sat``,
    ``saturate``, ``seed``/``rng``/``rbits``.

A PTX line and its call::

    cvt.rn.satfinite.f16.f32 %rs1, %f1;
    bits = encode(decode(f1_bits, 'f32'), 'f16', 'rn', saturate=True)

Quantisation (:mod:`.quant`, :mod:`.calibration`, :mod:`.report`)
    ``QuantParams.make(qtype, scale, zero_point=0, axis=None)``, ``quantize``, ``dequantize``,
    ``fake_quantize``, ``quantized_gemm(a, b, pa, pb) -> QGemmResult``; ``calibrate(data, qtype,
    method)`` with methods ``minmax percentile mse kl``, ``Calibrator``, ``params_from_range``;
    ``error_report(ref, approx) -> ErrorReport``.

Overflow (:mod:`.overflow`)
    ``gemm_with_overflow(a, b, fmt, strategy)`` with ``clip scale promote skip`` ->
    ``(C, OverflowReport)``; ``lowp_gemm``.

Precision modes (:mod:`.precision`)
    ``PrecisionPolicy(mode, mixlist).select(op_type, supported, origin) -> Selection``;
    ``MixList`` (``from_ops_info``, ``modified``); ``ArithmeticFact``, ``Violation``,
    ``check_kernel(mode, facts, origin_dtype=None)``.  See ``docs/numerics.md``.
"""

# Each name is imported from its module on first use (PEP 562): a launch that needs only the
# codec does not pay for quantisation, calibration or the precision-mode tables at start-up.
_WHERE = {
    "arith": "add cvt_float div fma mul sqrt sub",
    "calibration": "Calibrator calibrate params_from_range",
    "codec": "PTX_CANONICAL_NAN decode encode ordinal pack_int4 ulp ulp_distance unpack_int4 values_to_bits",
    "formats": "ALIASES FORMATS FloatFormat IntFormat describe float_format get_format int_format",
    "hif8": "HIF8_VALUES hif8_decode",
    "overflow": "OverflowReport gemm_with_overflow lowp_gemm",
    "precision": "ArithmeticFact MixList PrecisionPolicy Selection Violation check_kernel",
    "quant": "QGemmResult QuantParams dequantize fake_quantize quantize quantized_gemm",
    "report": "ErrorReport error_report",
    "rounding": "MODES float_to_int int_to_float normalize_mode round_float round_fraction round_integral "
                "sat01 saturate_int wrap_int",
}
_MODULE_OF = {name: mod for mod, names in _WHERE.items() for name in names.split()}


def __getattr__(name: str):
    mod = _MODULE_OF.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [
    "ALIASES", "FORMATS", "FloatFormat", "HIF8_VALUES", "IntFormat", "MODES", "PTX_CANONICAL_NAN",
    "add", "cvt_float", "decode", "describe", "div", "encode", "float_format", "float_to_int",
    "fma", "get_format", "hif8_decode", "int_format", "int_to_float", "mul", "normalize_mode",
    "ordinal", "pack_int4", "round_float", "round_fraction", "round_integral", "sat01",
    "saturate_int", "sqrt", "sub", "ulp", "ulp_distance", "unpack_int4", "values_to_bits",
    "wrap_int",
    "Calibrator", "calibrate", "params_from_range", "OverflowReport", "gemm_with_overflow",
    "lowp_gemm", "ArithmeticFact", "MixList", "PrecisionPolicy", "Selection", "Violation",
    "check_kernel", "QGemmResult", "QuantParams", "dequantize", "fake_quantize", "quantize",
    "quantized_gemm", "ErrorReport", "error_report",
]
