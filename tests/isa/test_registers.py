"""Register reads and writes from the ISA tables (isa.ptx.registers)."""

import isa
from isa.semantics import registers


def _ins(body: str):
    src = f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .pred %p<4>; .reg .b32 %r<8>; .reg .f32 %f<40>; .reg .b64 %rd<8>;
    {body}
    ret;
}}
"""
    return isa.loads(src).function("k").instructions[0]


def test_plain_dest_and_sources():
    u = registers(_ins("fma.rn.f32 %f5, %f3, %f4, %f5;"))
    assert u.writes == ("%f5",) and u.reads == ("%f3", "%f4", "%f5")


def test_store_writes_nothing_and_reads_guard_address_value():
    u = registers(_ins("@%p1 st.global.f32 [%rd4+8], %f1;"))
    assert u.writes == () and u.reads == ("%p1", "%rd4", "%f1")


def test_setp_pair_and_special_registers():
    assert registers(_ins("setp.lt.s32 %p1|%p2, %r1, %r2;")).writes == ("%p1", "%p2")
    assert registers(_ins("mov.u32 %r1, %tid.x;")).reads == ()


def test_wgmma_writes_and_reads_its_d_registers():
    d = ", ".join(f"%f{i}" for i in range(1, 33))
    u = registers(_ins(f"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{{d}}}, %rd5, %rd6, %p1, 1, 1, 0, 1;"))
    assert u.writes == tuple(f"%f{i}" for i in range(1, 33))
    assert set(u.writes) <= set(u.reads) and "%rd5" in u.reads and "%p1" in u.reads


def test_vector_load_writes_every_element():
    u = registers(_ins("ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];"))
    assert u.writes == ("%f1", "%f2", "%f3", "%f4") and u.reads == ("%rd1",)


def test_writes_alone_are_the_writes_of_registers_on_every_corpus_and_example_instruction():
    """isa.semantics.written_registers (what the analyzer's reaching definitions read) gives what
    registers().writes gives, on every instruction of the corpus and the bundled examples."""
    from pathlib import Path

    from isa.semantics import written_registers
    from tests.conftest import corpus_or_skip

    corpus_or_skip()
    root = Path(__file__).resolve().parents[2]
    files = sorted((root.parent / "shared" / "corpus" / "ptx").glob("*.ptx")) + \
        sorted((root / "examples" / "ptx").rglob("*.ptx"))
    n = written = 0
    for f in files:
        try:
            m = isa.load(f)
        except isa.KernlensError:
            continue                 # the files that are errors on purpose
        for fn in m.functions:
            for ins in fn.instructions:
                got = written_registers(ins)
                assert got == registers(ins).writes, (f.name, ins.span.line, str(ins))
                n += 1
                written += bool(got)
    assert n > 10000 and written > n // 2
    assert written_registers(_ins("setp.lt.s32 %p1|%p2, %r1, %r2;")) == ("%p1", "%p2")
    assert written_registers(_ins("mov.u32 %r1, %tid.x;")) == ("%r1",)
    assert written_registers(_ins("st.global.f32 [%rd4+8], %f1;")) == ()
