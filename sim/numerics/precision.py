"""Ascend GE precision modes: dtype selection per operator, mix lists, and kernel compliance.

Sources (see ``docs/numerics.md`` for the rule-by-rule table):

* [GE-PM]  hiascend.com Ascend Graph API "PRECISION_MODE" (atlasgeapi_07_0838 / 0850) and ATC
  ``--precision_mode`` (atlasatcparam_16_0068): force_fp32/cube_fp16in_fp32out, force_fp16,
  allow_fp32_to_fp16, must_keep_origin_dtype, allow_mix_precision(_fp16/_bf16).
* [GE-PM2] ATC ``--precision_mode_v2`` (atlasatcparam_16_0069): fp16, origin,
  cube_fp16in_fp32out, mixed_float16, mixed_bfloat16, mixed_hif8, cube_hif8.
* [MS-PM]  MindSpore ``device_context.ascend.op_precision.precision_mode``: allow_fp32_to_bf16.
* [MIX]    ATC ``--modify_mixlist`` (atlasatcparam_16_0071, aoerc_16_0063): black/white/gray
  lists, ``precision_reduce.flag`` in ops-info JSON, ``to-add``/``to-remove`` semantics.
* [ASC]    ``../shared/facts/ascend.md`` section 4: cube_hif8 / mixed_hif8 only on Ascend 950.

Two uses:

1. :class:`PrecisionPolicy` answers "which dtypes does GE pick for this operator, and why"::

       PrecisionPolicy("cube_fp16in_fp32out").select("MatMulV2", [("f16", "f32"), ("f32", "f32")], "f32")
       -> Selection(in_dtype='f16', out_dtype='f32', engine='AICore', reasons=(...))

2. :func:`check_kernel` checks a compiled kernel's arithmetic against a mode; the analyzer turns
   each instruction into an :class:`ArithmeticFact`, e.g. for::

       wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {...}, {...}, {...}, {...};   // line 88
       ArithmeticFact("wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32", "matrix", "f16", "f32", "f32", 88)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from isa.errors import InputError

V1_MODES = ("force_fp32", "cube_fp16in_fp32out", "force_fp16", "allow_fp32_to_fp16",
            "must_keep_origin_dtype", "allow_mix_precision", "allow_mix_precision_fp16",
            "allow_mix_precision_bf16", "allow_fp32_to_bf16")
V2_MODES = ("fp16", "origin", "cube_fp16in_fp32out", "mixed_float16", "mixed_bfloat16",
            "mixed_hif8", "cube_hif8")
ALL_MODES = tuple(dict.fromkeys(V1_MODES + V2_MODES))

#: mode -> the behaviour it shares ([GE-PM]: force_fp32 == cube_fp16in_fp32out,
#: allow_mix_precision == allow_mix_precision_fp16; [GE-PM2] names the same behaviours anew)
CANONICAL = {
    "force_fp32": "cube_fp16in_fp32out", "cube_fp16in_fp32out": "cube_fp16in_fp32out",
    "force_fp16": "fp16", "fp16": "fp16",
    "allow_fp32_to_fp16": "allow_fp32_to_fp16",
    "must_keep_origin_dtype": "origin", "origin": "origin",
    "allow_mix_precision": "mixed_float16", "allow_mix_precision_fp16": "mixed_float16",
    "mixed_float16": "mixed_float16",
    "allow_mix_precision_bf16": "mixed_bfloat16", "mixed_bfloat16": "mixed_bfloat16",
    "allow_fp32_to_bf16": "allow_fp32_to_bf16",
    "mixed_hif8": "mixed_hif8", "cube_hif8": "cube_hif8",
}

_DT = {"f16": "f16", "fp16": "f16", "float16": "f16", "half": "f16", "f16x2": "f16",
       "bf16": "bf16", "bfloat16": "bf16", "bf16x2": "bf16",
       "f32": "f32", "fp32": "f32", "float32": "f32", "float": "f32", "tf32": "tf32",
       "f64": "f64", "fp64": "f64", "float64": "f64", "double": "f64",
       "hif8": "hif8", "hifloat8": "hif8", "e4m3": "e4m3", "e5m2": "e5m2",
       "e4m3x2": "e4m3", "e5m2x2": "e5m2", "e4m3x4": "e4m3", "e5m2x4": "e5m2"}
GE_NAME = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "hif8": "hifloat8",
           "tf32": "tf32", "f64": "float64", "e4m3": "float8_e4m3", "e5m2": "float8_e5m2"}

#: operator types treated as matrix (cube) operators when ``kind`` is not given; our own list of
#: Ascend IR cube op types, not a GE table
MATRIX_OPS = frozenset({"MatMul", "MatMulV2", "MatMulV3", "BatchMatMul", "BatchMatMulV2",
                        "BatchMatMulV3", "Conv2D", "Conv3D", "Conv2DBackpropInput",
                        "Conv2DBackpropFilter", "Conv2DTranspose", "DepthwiseConv2D",
                        "FullyConnection", "GroupedMatmul", "QuantBatchMatmulV3"})


def norm_dtype(d: str | None) -> str | None:
    """``'float16'``/``'.f16x2'``/``'fp16'`` -> ``'f16'``; integer and unknown names pass through."""
    if d is None:
        return None
    k = str(d).strip().lstrip(".").lower()
    return _DT.get(k, k)


def canonical_mode(mode: str) -> str:
    m = str(mode).strip().lower()
    if m not in CANONICAL:
        raise InputError(f"unknown precision mode {mode!r}", expected=list(ALL_MODES))
    return CANONICAL[m]


# --------------------------------------------------------------------------- mix lists

@dataclass(frozen=True)
class MixList:
    """Black (never reduce), white (reduce) and, implicitly, gray (follow upstream) op types."""

    white: frozenset = frozenset()
    black: frozenset = frozenset()

    def category(self, op_type: str) -> str:
        if op_type in self.black:
            return "black"
        return "white" if op_type in self.white else "gray"

    @staticmethod
    def from_ops_info(info: dict | str | Path) -> "MixList":
        """Built-in lists from ops-info JSON: ``{"Conv2D": {"precision_reduce": {"flag": "true"}}}``
        (true -> white, false -> black, absent -> gray) [MIX]."""
        data = _load_json(info)
        white, black = set(), set()
        for op, spec in data.items():
            flag = (spec or {}).get("precision_reduce", {}).get("flag") if isinstance(spec, dict) else None
            if flag is None:
                continue
            (white if str(flag).lower() == "true" else black).add(op)
        return MixList(frozenset(white), frozenset(black))

    def modified(self, mod: dict | str | Path) -> "MixList":
        """Apply a ``--modify_mixlist`` file [MIX]::

            {"black-list": {"to-remove": ["Yolo"], "to-add": ["Matmul"]},
             "white-list": {"to-remove": ["Conv2D"], "to-add": ["Bias"]}}

        ``black-list.to-add`` moves an op from white/gray to black; ``black-list.to-remove`` moves
        a black op to gray (it must be black); ``white-list`` likewise.  Removals apply first.
        ``//`` comments, as in the documentation's sample, are accepted.
        """
        data = _load_json(mod)
        allowed = {"black-list", "white-list"}
        if not isinstance(data, dict) or set(data) - allowed:
            raise InputError("a mix list has only 'black-list' and 'white-list' sections",
                             expected=sorted(allowed))
        sec = {}
        for name in allowed:
            part = data.get(name, {}) or {}
            if not isinstance(part, dict) or set(part) - {"to-add", "to-remove"}:
                raise InputError(f"'{name}' takes 'to-add' and 'to-remove' lists", expected=["to-add", "to-remove"])
            for key in ("to-add", "to-remove"):
                ops = part.get(key, [])
                if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops):
                    raise InputError(f"'{name}.{key}' must be a list of operator types")
                sec[(name, key)] = list(ops)
        both = set(sec[("black-list", "to-add")]) & set(sec[("white-list", "to-add")])
        if both:
            raise InputError(f"operators added to both lists: {sorted(both)}")
        lists = {"white": set(self.white), "black": set(self.black)}
        for colour in ("black", "white"):
            for op in sec[(f"{colour}-list", "to-remove")]:
                if op not in lists[colour]:
                    raise InputError(f"{colour}-list to-remove: {op} is not on the {colour} list")
                lists[colour].discard(op)
        for colour, other in (("black", "white"), ("white", "black")):
            for op in sec[(f"{colour}-list", "to-add")]:
                lists[other].discard(op)
                lists[colour].add(op)
        return MixList(frozenset(lists["white"]), frozenset(lists["black"]))


def _load_json(src) -> dict:
    if isinstance(src, dict):
        return src
    text = Path(src).read_text() if isinstance(src, Path) or (isinstance(src, str) and not src.lstrip().startswith("{")) else src
    text = re.sub(r"//[^\n\"]*$", "", text, flags=re.M)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"mix list is not valid JSON: {e.msg} (line {e.lineno})") from None


#: the only built-in list entry the documentation shows ("Conv2D": precision_reduce flag true)
DEFAULT_MIXLIST = MixList(white=frozenset({"Conv2D"}))


# --------------------------------------------------------------------------- selection

@dataclass(frozen=True)
class Selection:
    """What GE runs an operator in: input and output dtype, engine, and the reasons, in order."""

    op_type: str
    kind: str
    origin: str
    in_dtype: str | None
    out_dtype: str | None
    engine: str | None            # 'AICore', 'AICPU' or None (error)
    reasons: tuple[str, ...]
    error: str | None = None


class PrecisionPolicy:
    """One precision mode plus a mix list; :meth:`select` applies the documented fallback order."""

    def __init__(self, mode: str, mixlist: MixList | None = None):
        self.mode = str(mode).strip().lower()
        self.canonical = canonical_mode(self.mode)
        self.mixlist = mixlist if mixlist is not None else DEFAULT_MIXLIST

    @property
    def version(self) -> int:
        return 2 if self.mode in V2_MODES and self.mode not in V1_MODES else 1

    def select(self, op_type: str, supported: Iterable, origin: str, *, kind: str | None = None,
               aicpu: Iterable[str] = (), upstream_reduced: bool | None = None) -> Selection:
        """``supported``: the AI Core implementation's dtypes, as names (vector ops) or
        ``(in, out)`` pairs (matrix ops); ``aicpu``: dtypes an AI CPU kernel supports;
        ``upstream_reduced``: for gray-list ops under mixed precision, whether the upstream op
        was reduced."""
        kind = kind or ("matrix" if op_type in MATRIX_OPS else "vector")
        if kind not in ("matrix", "vector"):
            raise InputError(f"operator kind must be 'matrix' or 'vector', not {kind!r}")
        pairs = tuple((norm_dtype(p), norm_dtype(p)) if isinstance(p, str) else
                      (norm_dtype(p[0]), norm_dtype(p[1])) for p in supported)
        ctx = _Ctx(self, op_type, kind, pairs, norm_dtype(origin), {norm_dtype(a) for a in aicpu},
                   upstream_reduced)
        return _RULES[self.canonical](ctx)


@dataclass
class _Ctx:
    policy: PrecisionPolicy
    op: str
    kind: str
    pairs: tuple
    origin: str
    aicpu: set
    upstream: bool | None
    reasons: list = field(default_factory=list)

    def has(self, d):
        return any(i == d for i, _ in self.pairs)

    def pair(self, d, prefer=()):
        outs = [o for i, o in self.pairs if i == d]
        for p in prefer:
            if p in outs:
                return p
        return outs[0] if outs else None

    def say(self, text):
        self.reasons.append(f"{self.policy.mode}: {text}")

    def pick(self, d, why, prefer=None):
        prefer = prefer or ((d, "f32") if self.kind == "matrix" else (d,))
        self.say(why)
        return Selection(self.op, self.kind, self.origin, d, self.pair(d, prefer), "AICore", tuple(self.reasons))

    def pick_pair(self, i, o, why):
        self.say(why)
        return Selection(self.op, self.kind, self.origin, i, o, "AICore", tuple(self.reasons))

    def cpu_or_error(self, d, why):
        if d in self.aicpu:
            self.say(f"{why}; using the {GE_NAME.get(d, d)} AI CPU operator")
            return Selection(self.op, self.kind, self.origin, d, d, "AICPU", tuple(self.reasons))
        msg = f"{why}; no AI CPU operator for {GE_NAME.get(d, d)} either: compilation error"
        self.say(msg)
        return Selection(self.op, self.kind, self.origin, None, None, None, tuple(self.reasons), msg)

    def chain(self, order, cpu_dtype, note=""):
        """Try AI Core dtypes in ``order``, then the AI CPU operator in ``cpu_dtype``."""
        tried = []
        for d in order:
            if self.has(d):
                first = not tried
                why = (f"{'keeps' if d == self.origin else 'selects'} {GE_NAME[d]}"
                       + ("" if first else " because the AI Core operator does not support "
                          + ", ".join(GE_NAME[t] for t in tried)) + note)
                return self.pick(d, why, (d, d) if self.kind == "matrix" else None)
            tried.append(d)
        return self.cpu_or_error(cpu_dtype, "AI Core supports none of " + ", ".join(GE_NAME[t] for t in tried))


def _sel_cube_fp16in_fp32out(c: _Ctx) -> Selection:
    if c.kind == "matrix":
        if not (c.has("f16") or c.has("f32")):
            return c.chain([c.origin], c.origin, " (the mode only concerns operators with float16/float32 implementations)")
        for step, (i, o) in enumerate((("f16", "f32"), ("f32", "f32"), ("f16", "f16")), 1):
            if (i, o) in c.pairs:
                return c.pick_pair(i, o, f"matrix operator, step {step}: {GE_NAME[i]} in / {GE_NAME[o]} out"
                                   + ("" if step == 1 else " (earlier steps unsupported)"))
        msg = "matrix operator supports none of fp16->fp32, fp32->fp32, fp16->fp16: error (step 4)"
        c.say(msg)
        return Selection(c.op, c.kind, c.origin, None, None, None, tuple(c.reasons), msg)
    if c.origin in ("f16", "bf16"):
        if c.has("f32"):
            return c.pick("f32", f"vector operator with {GE_NAME[c.origin]} in the graph is forced to float32")
        if c.policy.mixlist.category(c.op) == "black":
            return c.cpu_or_error("f32", "no float32 AI Core implementation and the op is on the black list")
        if c.has(c.origin):
            return c.pick(c.origin, f"no float32 AI Core implementation: the mode has no effect, {GE_NAME[c.origin]} kept")
    return c.chain([c.origin], c.origin)


def _sel_fp16(c: _Ctx) -> Selection:
    if c.origin in ("f16", "bf16", "f32") and c.has("f16"):
        return c.pick("f16", f"{GE_NAME[c.origin]} in the graph is forced to float16",
                      ("f16", "f32") if c.kind == "matrix" else None)
    if c.origin in ("f16", "bf16", "f32"):
        c.say("the operator has no float16 implementation, so float16 cannot be forced")
    return c.chain([c.origin], c.origin)


def _sel_allow_fp32_to_fp16(c: _Ctx) -> Selection:
    o = c.origin
    if c.kind == "matrix":
        order = {"f32": ["f16", "f32"], "bf16": ["bf16", "f32", "f16"], "f16": ["f16", "f32"]}.get(o, [o])
    else:
        order = {"f32": ["f32", "f16"], "bf16": ["bf16", "f32", "f16"], "f16": ["f16", "f32"]}.get(o, [o])
    return c.chain(order, o, f" ({c.kind} operator, original {GE_NAME.get(o, o)})")


def _sel_origin(c: _Ctx) -> Selection:
    o = c.origin
    if c.has(o):
        return c.pick(o, f"keeps the original {GE_NAME.get(o, o)}", (o, o) if c.kind == "matrix" else None)
    if o == "f16" and c.has("f32"):
        return c.pick("f32", "no float16 AI Core implementation: uses the higher-precision float32")
    return c.cpu_or_error(o, f"no {GE_NAME.get(o, o)} AI Core implementation")


def _mixed(c: _Ctx, low: str) -> Selection:
    o = c.origin
    reducible = {"f32", "bf16"} if low == "f16" else {"f32"}
    if o not in reducible:
        return _sel_origin(c)
    cat = c.policy.mixlist.category(c.op)
    if cat == "gray":
        reduce = bool(c.upstream)
        c.say(f"{c.op} is on the gray list: follows its upstream operator, which was "
              + ("reduced" if reduce else "not reduced" if c.upstream is not None else "not given (taken as not reduced)"))
    else:
        reduce = cat == "white"
        c.say(f"{c.op} is on the {cat} list: {'reduce' if reduce else 'keep'} precision")
    if reduce and c.has(low):
        return c.pick(low, f"{GE_NAME[o]} reduced to {GE_NAME[low]}")
    if reduce:
        c.say(f"no {GE_NAME[low]} implementation: not reduced")
    return _sel_origin(c)


def _sel_allow_fp32_to_bf16(c: _Ctx) -> Selection:
    if c.kind == "matrix" and c.has("bf16"):
        return c.pick("bf16", "matrix operator uses bfloat16")
    if c.kind == "vector" and c.origin == "f32":
        return c.chain(["f32", "bf16"], "f32", " (vector operator keeps float32 when it can)")
    return _sel_origin(c)


def _sel_cube_hif8(c: _Ctx) -> Selection:
    c.say("hifloat8 modes exist only on Ascend 950PR/950DT")
    if c.kind == "matrix" and c.has("hif8"):
        return c.pick("hif8", "cube operator that supports hifloat8 is forced to hifloat8")
    return _sel_origin(c)


def _sel_mixed_hif8(c: _Ctx) -> Selection:
    c.say("hifloat8 modes exist only on Ascend 950PR/950DT")
    if c.origin in ("f16", "bf16", "f32") and c.has("hif8"):
        cat = c.policy.mixlist.category(c.op)
        reduce = cat == "white" or (cat == "gray" and bool(c.upstream))
        c.say(f"{c.op} is on the {cat} list")
        if reduce:
            return c.pick("hif8", f"{GE_NAME[c.origin]} reduced to hifloat8 by the mix policy")
    return _sel_origin(c)


_RULES: dict[str, Callable[[_Ctx], Selection]] = {
    "cube_fp16in_fp32out": _sel_cube_fp16in_fp32out, "fp16": _sel_fp16,
    "allow_fp32_to_fp16": _sel_allow_fp32_to_fp16, "origin": _sel_origin,
    "mixed_float16": lambda c: _mixed(c, "f16"), "mixed_bfloat16": lambda c: _mixed(c, "bf16"),
    "allow_fp32_to_bf16": _sel_allow_fp32_to_bf16, "cube_hif8": _sel_cube_hif8,
    "mixed_hif8": _sel_mixed_hif8,
}


# --------------------------------------------------------------------------- kernel compliance

@dataclass(frozen=True)
class ArithmeticFact:
    """One arithmetic instruction of a compiled kernel, as the analyzer sees it.

    ``kind``: 'matrix' (mma/wmma/wgmma/cube mmad), 'vector' (scalar/SIMT/vector ALU arithmetic)
    or 'convert' (cvt and friends; never a violation by itself).  Dtypes use PTX names.
    """

    full_opcode: str
    kind: str
    in_dtype: str
    acc_dtype: str | None
    out_dtype: str | None
    line: int


@dataclass(frozen=True)
class Violation:
    mode: str
    rule: str
    instruction: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.instruction}: [{self.mode}/{self.rule}] {self.message}"


@dataclass(frozen=True)
class Rule:
    """A compliance rule: which instruction kinds it looks at, the check, and its source."""

    name: str
    kinds: frozenset
    check: Callable[[ArithmeticFact, str | None], str | None]
    source: str


FLOATS = {"f16", "bf16", "f32", "tf32", "f64", "e4m3", "e5m2", "hif8"}


def _in(f):
    return norm_dtype(f.in_dtype)


def _acc(f):
    return norm_dtype(f.acc_dtype or f.out_dtype)


def _r(name, kinds, check, source):
    return Rule(name, frozenset(kinds), check, source)


_MATRIX_F16_F32 = _r("matrix-fp16-in-fp32-acc", {"matrix"},
                     lambda f, o: None if (_in(f), _acc(f)) == ("f16", "f32") else
                     f"matrix op takes {_in(f)} inputs and accumulates in {_acc(f)}; the mode prefers "
                     "float16 inputs with float32 output (fp32/fp32, then fp16/fp16, only when unsupported)",
                     "[GE-PM]/[GE-PM2] cube_fp16in_fp32out, matrix operators, steps 1-3")
_VECTOR_F32 = _r("vector-fp32", {"vector"},
                 lambda f, o: f"{_in(f)} vector arithmetic; vector operators are forced to float32"
                 if _in(f) in ("f16", "bf16") else None,
                 "[GE-PM]/[GE-PM2] cube_fp16in_fp32out, vector operators")
_MATRIX_F16_IN = _r("matrix-fp16-in", {"matrix"},
                    lambda f, o: None if _in(f) == "f16" else f"matrix op takes {_in(f)} inputs; the mode forces float16",
                    "[GE-PM] force_fp16 / [GE-PM2] fp16")
_VECTOR_F16 = _r("vector-fp16", {"vector"},
                 lambda f, o: f"{_in(f)} vector arithmetic; the mode forces float16"
                 if _in(f) in ("f32", "tf32", "bf16") else None,
                 "[GE-PM] force_fp16 / [GE-PM2] fp16")
_MATRIX_NO_F32 = _r("matrix-fp32-reduced", {"matrix"},
                    lambda f, o: f"matrix op takes {_in(f)} inputs; float32 matrix operators are reduced to {o or 'a 16-bit type'}"
                    if _in(f) in ("f32", "tf32") else None,
                    "[GE-PM] allow_fp32_to_fp16 (matrix: float32 -> float16) / mixed precision white list")
_MATRIX_BF16 = _r("matrix-bf16-in", {"matrix"},
                  lambda f, o: None if _in(f) == "bf16" else f"matrix op takes {_in(f)} inputs; the mode reduces matrix operators to bfloat16",
                  "[GE-PM] allow_mix_precision_bf16 / [GE-PM2] mixed_bfloat16 / [MS-PM] allow_fp32_to_bf16")
_NO_BF16 = _r("no-bf16", {"matrix", "vector"},
              lambda f, o: "bfloat16 arithmetic; the mode mixes float16 and float32 only" if _in(f) == "bf16" else None,
              "[GE-PM] allow_mix_precision_fp16 / [GE-PM2] mixed_float16")
_NO_F16_VECTOR = _r("no-fp16-vector", {"vector"},
                    lambda f, o: "float16 vector arithmetic; the mode reduces to bfloat16, not float16" if _in(f) == "f16" else None,
                    "[GE-PM] allow_mix_precision_bf16 / [GE-PM2] mixed_bfloat16 / [MS-PM] allow_fp32_to_bf16")
_KEEP_ORIGIN = _r("keep-origin", {"matrix", "vector"},
                  lambda f, o: f"{_in(f)} arithmetic in a {o} kernel; the mode keeps the original precision"
                  if o is not None and _in(f) in FLOATS and _in(f) != o and not (o == "f16" and _in(f) == "f32") else None,
                  "[GE-PM] must_keep_origin_dtype / [GE-PM2] origin (float16 may run as float32)")
_MATRIX_HIF8 = _r("matrix-hif8-in", {"matrix"},
                  lambda f, o: None if _in(f) == "hif8" else f"matrix op takes {_in(f)} inputs; cube_hif8 forces hifloat8 (Ascend 950 only)",
                  "[GE-PM2] cube_hif8, [ASC] asc_enable_hif8")
_EIGHT_BIT_HIF8 = _r("fp8-is-hif8", {"matrix"},
                     lambda f, o: f"{_in(f)} matrix inputs; the 8-bit float of mixed_hif8 is hifloat8"
                     if _in(f) in ("e4m3", "e5m2") else None,
                     "[GE-PM2] mixed_hif8")

#: canonical mode -> rules (the table docs/numerics.md reproduces)
RULES: dict[str, tuple[Rule, ...]] = {
    "cube_fp16in_fp32out": (_MATRIX_F16_F32, _VECTOR_F32),
    "fp16": (_MATRIX_F16_IN, _VECTOR_F16),
    "allow_fp32_to_fp16": (_MATRIX_NO_F32,),
    "origin": (_KEEP_ORIGIN,),
    "mixed_float16": (_NO_BF16, _MATRIX_NO_F32),
    "mixed_bfloat16": (_MATRIX_BF16, _NO_F16_VECTOR),
    "allow_fp32_to_bf16": (_MATRIX_BF16, _NO_F16_VECTOR),
    "cube_hif8": (_MATRIX_HIF8,),
    "mixed_hif8": (_EIGHT_BIT_HIF8,),
}

_REDUCED_TO = {"allow_fp32_to_fp16": "float16", "mixed_float16": "float16"}


def judged(facts: Iterable[ArithmeticFact]) -> list[ArithmeticFact]:
    """The facts :func:`check_kernel` judges: floating-point matrix and vector arithmetic."""
    out = []
    for f in facts:
        if f.kind not in ("matrix", "vector", "convert"):
            raise InputError(f"fact kind must be matrix, vector or convert, not {f.kind!r}")
        if f.kind != "convert" and _in(f) in FLOATS:
            out.append(f)
    return out


def check_kernel(mode: str, facts: Iterable[ArithmeticFact], *, origin_dtype: str | None = None) -> list[Violation]:
    """Every violation of ``mode``'s rules by the kernel's arithmetic, in line order.

    Only floating-point arithmetic is judged (integer address arithmetic, dp4a and int8 mma are
    outside the precision modes); conversions never violate.  The origin modes
    (``origin``, ``must_keep_origin_dtype``) need ``origin_dtype``, the model's original precision,
    which a compiled kernel does not carry: without it they raise ``InputError``.
    """
    canon = canonical_mode(mode)
    origin = norm_dtype(origin_dtype)
    if canon == "origin" and origin is None:
        raise InputError(f"precision mode {mode!r} keeps the model's original dtype, which the kernel does "
                         "not record: give it (validate-kernel --origin-dtype f16, or check_kernel(..., origin_dtype='f16'))")
    hint = origin if canon == "origin" else _REDUCED_TO.get(canon)
    out = []
    for f in judged(facts):
        for rule in RULES[canon]:
            if f.kind in rule.kinds:
                msg = rule.check(f, hint)
                if msg:
                    out.append(Violation(str(mode), rule.name, f.full_opcode, f.line, msg))
    return sorted(out, key=lambda v: v.line)
