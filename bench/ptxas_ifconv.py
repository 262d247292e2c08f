"""Which ``if`` bodies does ptxas (sm_90) predicate? The evidence for sim/timing/schedule.py's MAX_IF_BODY.

    PYTHONPATH=. python bench/ptxas_ifconv.py          # needs ptxas on PATH (no nvdisasm/cuobjdump)

Each case is one small kernel (test_if_conversion's: a thread index, a global load, then the ``if``s,
then a barrier and a store) with one or more ``setp; @p bra L; body; L:`` in a row, a body being
n PTX instructions of one kind (``ldst``: ld.global.nc + st.shared pairs, ``ffma``: FFMA/FADD on one
chain, ``int``: xor/mad.lo, ``stg``: global stores), optionally ``gap`` unrelated FMULs before each
``if``. It is compiled with ``ptxas -arch=sm_90 -O3`` and the BRA instructions left in the cubin's
``.text`` are counted (opcode bits ``0x947``, the ``EXIT`` ``0x94d``; the self-branch after the last
EXIT is not counted): a body ptxas predicated leaves no BRA. *Measured* with the local ptxas; the
figures are compiler facts, not timings.

Found with ptxas 13.0 (2026-12-03): a body of at most 8 PTX instructions is predicated wherever it
stands (alone, in runs of up to 6 ``if``s, after 120 other instructions); a body of 9-20 is predicated
alone in this small kernel but not in a run of ``if``s ([9, 9, 9] keeps all three BRAs, [10, 10] both,
[12, 4] and [4, 12] the 12's), and with other code around it the outcome varies (two bodies of 12,
each after 20 FMULs, keep both BRAs; an earlier version of this probe, whose gap was a dependent
FMUL/FADD chain, kept the BRA of a lone body of 16 after 40 of them); 21 and more always keep it.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry guarded(.param .u64 a, .param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<200>;
    .reg .f32 %f<200>;
    .reg .b64 %rd<200>;
    .shared .align 4 .b8 s[8192];
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd5, %r1, 4;
    add.s64 %rd6, %rd3, %rd5;
    mov.u32 %r2, s;
    shl.b32 %r3, %r1, 2;
    add.s32 %r4, %r2, %r3;
    ld.global.nc.f32 %f100, [%rd6+4096];
    mov.f32 %f1, %f100;
    mov.f32 %f2, %f100;
    mov.f32 %f3, %f100;
    mov.f32 %f4, %f100;
    mov.f32 %f5, %f100;
    mov.f32 %f6, %f100;
"""
TAIL = """    bar.sync 0;
    and.b32 %r5, %r3, 60;
    add.s32 %r6, %r2, %r5;
    ld.shared.f32 %f7, [%r6];
    add.f32 %f7, %f7, %f1;
    add.s64 %rd7, %rd4, %rd5;
    st.global.f32 [%rd7], %f7;
    ret;
}
"""


def body(kind: str, n: int, j: int = 0) -> list[str]:
    """``n`` PTX instructions of ``kind`` for the ``j``-th ``if`` (its own registers and addresses)."""
    f = f"%f{1 + j}"
    if kind == "ldst":
        out = []
        for k in range(n // 2):
            out += [f"ld.global.nc.f32 %f{10 + 10 * j + k}, [%rd6+{1024 * (k % 4) + 128 * k}];",
                    f"st.shared.f32 [%r4+{256 * k + 2048 * j}], %f{10 + 10 * j + k};"]
        return out + ([f"add.f32 {f}, {f}, 0f3F000000;"] if n % 2 else [])
    if kind == "ffma":
        return [f"fma.rn.f32 {f}, {f}, %f100, 0f3E800000;" if k % 2 == 0 else f"add.f32 {f}, {f}, 0f3F000000;"
                for k in range(n)]
    if kind == "int":
        r = f"%r{100 + j}"
        return ([f"cvt.rzi.s32.f32 {r}, {f};"]
                + [f"mad.lo.s32 {r}, {r}, %r1, {k + 3};" if k % 2 else f"xor.b32 {r}, {r}, {k + 7};" for k in range(n - 2)]
                + [f"cvt.rn.f32.s32 {f}, {r};"])
    if kind == "stg":
        return [f"st.global.f32 [%rd6+{4096 * k + 65536 * j}], %f100;" for k in range(n)]
    raise ValueError(kind)


def kernel(ifs: list[tuple[str, int]], gap: int = 0) -> str:
    """PTX with one ``if`` per ``(kind, n)``, each after ``gap`` FMULs."""
    text = HEAD
    for j, (kind, n) in enumerate(ifs):
        text += "".join(f"    mul.f32 %f{150 + k % 40}, %f100, 0f3F{16 + k % 200:02X}0000;\n" for k in range(gap))
        if gap:
            text += f"    add.f32 %f1, %f1, %f{150 + (gap - 1) % 40};\n"
        text += f"    setp.gt.u32 %p2, %r1, {15 - 2 * j};\n    @%p2 bra $M{j};\n"
        text += "".join(f"    {x}\n" for x in body(kind, n, j)) + f"$M{j}:\n"
    text += "".join(f"    add.f32 %f1, %f1, %f{1 + j};\n" for j in range(1, len(ifs)))
    return text + TAIL


def _text(cubin: bytes, name: str) -> bytes:
    """The ``.text.<name>`` section of an ELF64 cubin."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx][4]
    for nm, _typ, _flags, _addr, off, size in secs:
        if cubin[strtab + nm:cubin.index(b"\0", strtab + nm)].decode() == f".text.{name}":
            return cubin[off:off + size]
    raise KeyError(name)


def branches_kept(ptx: str, ptxas: str | None = None) -> int:
    """BRAs ptxas -O3 -arch=sm_90 leaves in ``guarded`` before its last EXIT."""
    ptxas = ptxas or shutil.which("ptxas")
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as fh:
            fh.write(ptx)
        subprocess.run([ptxas, "-arch=sm_90", "-O3", src, "-o", out], check=True, capture_output=True)
        with open(out, "rb") as fh:
            code = _text(fh.read(), "guarded")
    ops = [struct.unpack_from("<Q", code, i)[0] & 0xFFF for i in range(0, len(code), 16)]
    last = max(i for i, o in enumerate(ops) if o == 0x94D)
    return sum(1 for o in ops[:last] if o == 0x947)


CASES = [([(k, n)], 0) for k in ("ldst", "ffma", "int", "stg") for n in (8, 12, 16, 20, 21, 24)] + [
    ([("ffma", 8)] * 3, 0), ([("ffma", 9)] * 3, 0), ([("stg", 8)] * 6, 0), ([("ldst", 8)] * 4, 0),
    ([("ffma", 10)] * 2, 0), ([("ffma", 12), ("stg", 4)], 0), ([("stg", 4), ("ffma", 12)], 0),
    ([("stg", 8)], 120), ([("ffma", 8)] * 2, 60), ([("stg", 12)], 20), ([("stg", 16)], 40), ([("ffma", 20)], 40),
    ([("stg", 12), ("ffma", 12)], 20), ([("stg", 12), ("stg", 4)], 20)]


def main() -> int:
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        print("ptxas is not on PATH: nothing to measure")
        return 0
    ver = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"ptxas: {ver}; measured: BRAs left in the SASS (0 = every body predicated)")
    print(f"{'ifs (kind, PTX instructions)':54s} {'gap':>4s} {'BRAs kept':>9s}")
    for ifs, gap in CASES:
        label = ", ".join(f"{k} {n}" for k, n in ifs)
        print(f"{label:54s} {gap:4d} {branches_kept(kernel(ifs, gap), ptxas):5d} / {len(ifs)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
