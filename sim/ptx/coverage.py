"""The PTX coverage table of ``docs/ptx-coverage.md``, generated from the tables themselves::

    python -m sim.ptx.coverage > docs/ptx-coverage.md

For every opcode of ``isa.ptx.opcodes.SPECS``: parsed (it is in the table, with the modifiers it
allows), analysed (``isa.ptx.semantics.describe`` of its example line gives facts, not ``OTHER``),
simulated (``sim.ptx.ops.BUILDERS`` has a builder that does not refuse it; ``partial`` where the
builder names forms it refuses in ``sim.ptx.ops.LIMITS``).  A second table lists the tensor-core
forms of the ISA and whether the fragment core (``sim.ptx.tensor``) runs them.  ``tests/sim/ptx/
test_coverage.py`` checks that the committed document equals this output, so it cannot drift.
"""

from __future__ import annotations

from isa.errors import KernlensError

#: mma.sync forms of the ISA (9.7.14.5.x): (shape, a/b type, accumulator type)
MMA_ISA_FORMS = [
    ("m8n8k4", "f16", "f16"), ("m8n8k4", "f16", "f32"),
    ("m16n8k8", "f16", "f16"), ("m16n8k8", "f16", "f32"), ("m16n8k16", "f16", "f16"), ("m16n8k16", "f16", "f32"),
    ("m16n8k8", "bf16", "f32"), ("m16n8k16", "bf16", "f32"),
    ("m16n8k4", "tf32", "f32"), ("m16n8k8", "tf32", "f32"),
    ("m8n8k4", "f64", "f64"), ("m16n8k4", "f64", "f64"), ("m16n8k8", "f64", "f64"), ("m16n8k16", "f64", "f64"),
    ("m8n8k16", "s8", "s32"), ("m8n8k16", "u8", "s32"), ("m16n8k16", "s8", "s32"), ("m16n8k32", "s8", "s32"),
    ("m8n8k32", "s4", "s32"), ("m16n8k32", "s4", "s32"), ("m16n8k64", "s4", "s32"),
    ("m8n8k128", "b1", "s32"), ("m16n8k128", "b1", "s32"), ("m16n8k256", "b1", "s32"),
    ("m16n8k16", "e4m3", "f32"), ("m16n8k32", "e4m3", "f32"), ("m16n8k32", "e4m3", "f16"),
]

#: mma.sp forms of the ISA (9.7.14.6): (shape, a/b type, accumulator type)
MMA_SP_ISA_FORMS = [(s, "f16", acc) for s in ("m16n8k16", "m16n8k32") for acc in ("f16", "f32")] + \
    [(s, "bf16", "f32") for s in ("m16n8k16", "m16n8k32")] + [(s, "tf32", "f32") for s in ("m16n8k8", "m16n8k16")] + \
    [(s, t, "s32") for s in ("m16n8k32", "m16n8k64") for t in ("s8", "u8")] + \
    [(s, t, "s32") for s in ("m16n8k64", "m16n8k128") for t in ("s4", "u4")] + \
    [("m16n8k64", t, acc) for t in ("e4m3", "e5m2") for acc in ("f16", "f32")]

#: wmma forms of the ISA (9.7.14.4): (shape, a/b type, accumulator type)
WMMA_ISA_FORMS = [(s, "f16", acc) for s in ("m16n16k16", "m32n8k16", "m8n32k16") for acc in ("f16", "f32")] + \
    [(s, "bf16", "f32") for s in ("m16n16k16", "m32n8k16", "m8n32k16")] + \
    [(s, t, "s32") for s in ("m16n16k16", "m32n8k16", "m8n32k16") for t in ("s8", "u8")] + \
    [("m16n16k8", "tf32", "f32"), ("m8n8k4", "f64", "f64"), ("m8n8k32", "s4", "s32"), ("m8n8k32", "u4", "s32"),
     ("m8n8k128", "b1", "s32")]


def _parsed_example(spec):
    """The spec's example line as an instruction, or None where it holds placeholders."""
    import isa

    text = spec.summary
    if not text or "..." in text:
        return None
    body = text.split(";")[0] + ";"
    try:
        m = isa.loads(".version 9.0\n.target sm_100a\n.address_size 64\n.visible .entry k() {\n" + body + "\n}\n",
                      lenient=True)
    except KernlensError:
        return None
    return m.kernels[0].instructions[0]


def _analysed(spec) -> str:
    from isa.ir import Instruction
    from isa.ptx.semantics import describe

    ins = _parsed_example(spec)
    if ins is None:
        words = spec.name.split(".")
        ins = Instruction(words[0], tuple(words[1:]))
    try:
        info = describe(ins)
    except Exception:  # noqa: BLE001 - a table gap shows as "no"
        return "no"
    return "yes" if info.known and "OTHER" not in info.classes else "no"


def opcode_rows() -> list[tuple[str, str, str, str, str, str]]:
    from isa.ptx.opcodes import SPECS
    from sim.ptx.ops import BUILDERS, LIMITS

    rows = []
    for name in sorted(SPECS):
        spec = SPECS[name]
        b = BUILDERS.get(name)
        if b is None or getattr(b, "refuses", False):
            sim = "no"
            left = "not simulated"
        elif name in LIMITS:
            sim = "partial"
            left = LIMITS[name]
        else:
            sim = "yes"
            left = ""
        rows.append((f"`{name}`", spec.since, "yes", _analysed(spec), sim, left))
    return rows


def _mma_runs(shape, t, acc) -> bool:
    from sim.ptx.tensor import MMA_FORMS

    return (shape, t, acc) in MMA_FORMS


def _mma_sp_runs(shape, t, acc) -> bool:
    from sim.ptx.tensor.mma import MMA_SP_FORMS

    return (shape, t, acc) in MMA_SP_FORMS


def _wmma_runs(shape, t, acc) -> bool:
    from sim.ptx.tensor import wmma_fragment_map

    try:
        for op_, et in (("a", t), ("b", t), ("c", acc)):
            wmma_fragment_map(op_, et, shape)
    except KernlensError:
        return False
    return True


def tensor_rows() -> list[tuple[str, str, str, str]]:
    rows = [("mma.sync", s, f"{t} -> {acc}", "yes" if _mma_runs(s, t, acc) else "no") for s, t, acc in MMA_ISA_FORMS]
    rows += [("mma.sp", s, f"{t} -> {acc}", "yes" if _mma_sp_runs(s, t, acc) else "no") for s, t, acc in MMA_SP_ISA_FORMS]
    rows += [("wmma.mma", s, f"{t} -> {acc}", "yes" if _wmma_runs(s, t, acc) else "no") for s, t, acc in WMMA_ISA_FORMS]
    return rows


def _table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def render() -> str:
    ops = opcode_rows()
    tens = tensor_rows()
    n = len(ops)
    counts = {k: sum(1 for r in ops if r[4] == k) for k in ("yes", "partial", "no")}
    an = sum(1 for r in ops if r[3] == "yes")
    tn = sum(1 for r in tens if r[3] == "yes")
    return "\n".join([
        "# PTX coverage: parsed, analysed, simulated",
        "",
        "Generated by `python -m sim.ptx.coverage > docs/ptx-coverage.md` from the opcode table",
        "(`isa/ptx/opcodes.py`), the semantics table (`isa/ptx/semantics.py`) and the simulator's builders",
        "(`sim/ptx/ops`, refused forms in `sim.ptx.ops.LIMITS`); `tests/sim/ptx/test_coverage.py` fails when",
        "this file and the tables disagree.  *Analysed*: `describe` of the opcode's example line gives its",
        "unit, classes, FLOPs and bytes (not `OTHER`).  *Simulated*: the functional simulator runs it.",
        "",
        f"{n} opcodes: all parsed, {an} analysed, {counts['yes']} simulated, {counts['partial']} partially, "
        f"{counts['no']} not simulated.",
        "",
        _table(("opcode", "since", "parsed", "analysed", "simulated", "what is left"), ops),
        "",
        "## Tensor-core forms",
        "",
        f"{tn} of {len(tens)} `mma.sync`/`mma.sp`/`wmma.mma` forms of the ISA run on the fragment core (`sim/ptx/tensor`).",
        "",
        _table(("instruction", "shape", "types", "simulated"), tens),
        "",
        "## Known differences from the H200",
        "",
        "`examples/ptx/isa/*.ptx` run on the H200 (`bench/device/isa_truth.py`, outputs in",
        "`examples/ptx/isa/h200.npz`) and in the simulator (`tests/sim/ptx/test_isa_examples.py`).",
        "Where the two differ and the ISA defines the result, kernlens follows the ISA:",
        "",
        "* `vsub.s32.s32.s32.sat d.b2, a.b1, b.b0, c`: the H200 writes 0x7F for every negative difference;",
        "  `vabsdiff.s32.s32.s32.sat d.h1, a.b0, b.b2, c`: the H200 writes 0 into half 1.",
        "* `vmad`: the H200 sign-extends `c` and whole-word `.u32` operands of a signed result (the ISA's",
        "  pseudocode zero-extends them); kernlens follows the H200 here, which the programs pin down.",
        "* `cvt.u32.u16` of a `set.f16` result: ptxas elides the zero extension (upper half 0xFFFF).",
        "* `mma.sp` `.tf32` with metadata the ISA leaves undefined (index pairs other than 0b0100/0b1110):",
        "  kernlens applies the 2:4 rule to 16-bit halves of the elements, which matches the H200 on some",
        "  rows only (`mma_spl_m16n8k8_tf32_sel3`, `mma_spl_m16n8k16_tf32_sel1`); defined metadata follows",
        "  the ISA (`tests/sim/ptx/tensor/test_mma_sparse.py`).",
        "* FLOPs of sparse forms (`mma.sp`, `wgmma.mma_async.sp`) are the useful work, `M*N*K` per",
        "  instruction (half of the dense `2*M*N*K`, which is kept as `dense_equivalent_ops`).",
        "",
    ]) + "\n"


def main() -> None:
    import sys

    sys.stdout.write(render())


if __name__ == "__main__":
    main()
