"""The PTX opcode table: every instruction of real compiler output validates, misspellings do not,
and the table agrees with ptxas on sample lines."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import isa
from isa.ir import Instruction
from isa.ptx.opcodes import SPECS, canonical, resolve, validate
from tests.conftest import corpus_ptx_params


def _ins(text: str) -> Instruction:
    op, *mods = text.split()[0].rstrip(";").split(".")
    return Instruction(op, tuple(mods))


@pytest.mark.parametrize("path", corpus_ptx_params(), ids=lambda p: p.name)
def test_every_corpus_instruction_validates(path):
    module = isa.load(path)
    seen = 0
    for fn in module.functions:
        for ins in fn.instructions:
            assert validate(ins) is None, (path.name, ins.span.line, ins.full_opcode, validate(ins))
            seen += 1
    assert seen > 20


# The forms listed in ../shared/facts/ptx.md section 8 (and 10) as real compiler output.
FACTS_FORMS = """
ld.global.nc.f32 ld.global.nc.v4.f32 ld.param.u64 ld.param.b64 ld.param.v2.u32 st.param.f32 st.local.v4.f32
st.shared.v2.b16 cvta.to.global.u64 cvta.local.u64 cvta.global.u64 mad.lo.s32 mad.wide.s32 mul.wide.s32
mul.wide.u32 mul.hi.s32 mul.hi.u32 setp.lt.s32 setp.gt.f32 setp.ne.b32 and.pred selp.b32 selp.u32 bfe.u32
bfe.s32 prmt.b32 cvt.rni.s32.f32 cvt.rzi.s32.f32 cvt.rmi.u32.f32 cvt.rn.f32.s32 cvt.rn.f64.s64 cvt.f64.f32
cvt.u64.u32 cvt.s64.s32 cvt.s16.s8 cvt.rn.f16.f32 cvt.rn.bf16.f32 cvt.f32.bf16 cvt.rn.f16x2.f32
cvt.rn.bf16x2.f32 dp4a.s32.s32 dp4a.u32.u32 fma.rn.f16x2 ex2.approx.ftz.f32 ex2.approx.f32 div.full.f32
max.f32 min.s32 rem.s32 neg.s32 membar.gl trap ret shfl.sync.down.b32 shfl.sync.bfly.b32 vote.sync.ballot.b32
redux.sync.add.u32 bar.sync bar.warp.sync atom.global.add.f32 atom.shared.add.f32 atom.global.cas.b32
atom.global.add.u64 atom.global.max.s32 atom.add.noftz.bf16x2 cp.async.cg.shared.global
cp.async.ca.shared.global cp.async.commit_group cp.async.wait_group ldmatrix.sync.aligned.m8n8.x4.shared.b16
ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32
wmma.store.d.sync.aligned.row.m16n16k16.global.f32 wmma.load.a.sync.aligned.row.m16n16k16.global.f16
wgmma.fence.sync.aligned wgmma.commit_group.sync.aligned wgmma.wait_group.sync.aligned
wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 mbarrier.init.shared::cta.b64
mbarrier.try_wait.parity.shared::cta.b64 fence.proxy.async.shared::cta setmaxnreg.inc.sync.aligned.u32
elect.sync stmatrix.sync.aligned.m8n8.x2.shared.b16 bra.uni bra atom.global.gpu.acq_rel.add.f32
mbarrier.arrive.expect_tx.shared::cta.b64 mov.pred mov.b32 cvt.rn.f32.s16 ld.global.b32 ld.global.b16
cvt.rna.tf32.f32 cvt.rn.satfinite.e4m3x2.f32 cvt.rs.satfinite.e4m3x4.f32
""".split()


@pytest.mark.parametrize("form", FACTS_FORMS)
def test_facts_forms_validate(form):
    assert validate(_ins(form)) is None, validate(_ins(form))


@pytest.mark.parametrize("form,message", [
    ("fmaa.rn.f32", "unknown opcode 'fmaa'"),
    ("ld.glboal.f32", "unknown modifier '.glboal' for 'ld'"),
    ("ld.global.xyz", "unknown modifier '.xyz' for 'ld'"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f33", "unknown modifier '.f33' for 'mma'"),
    ("cp.asnyc.cg.shared.global", "unknown opcode 'cp.asnyc'"),
    ("wgmma.mma_asnyc.sync.aligned.m64n64k16.f32.f16.f16", "unknown opcode 'wgmma.mma_asnyc'"),
    ("wgmma.mma_async.sync.aligned.m64n7k16.f32.f16.f16", "unknown modifier '.m64n7k16' for 'wgmma.mma_async'"),
    ("mbarrier.try_wiat.shared.b64", "unknown opcode 'mbarrier.try_wiat'"),
    ("shfl.sync.sideways.b32", "unknown modifier '.sideways' for 'shfl.sync'"),
    ("ldmatrix.sync.aligned.m8n8.x3.shared.b16", "unknown modifier '.x3' for 'ldmatrix'"),
    ("bar.sync.aligned", "unknown modifier '.aligned' for 'bar'"),   # ptxas: Illegal modifier '.aligned'
    ("mov.f16", "unknown modifier '.f16' for 'mov'"),                 # ptxas: Unexpected instruction types
])
def test_misspellings_are_rejected(form, message):
    got = validate(_ins(form))
    assert got is not None and got.startswith(message), got


def test_suggestions_name_the_close_word():
    assert validate(_ins("fmaa.rn.f32")) == "unknown opcode 'fmaa' (did you mean 'fma'?)"
    assert validate(_ins("ld.glboal.f32")).endswith("(did you mean '.global'?)")


@pytest.mark.parametrize("form,name", [
    ("cp.async.cg.shared.global", "cp.async"),
    ("cp.async.commit_group", "cp.async.commit_group"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", "cp.async.bulk.tensor"),
    ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", "cp.async.bulk"),
    ("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", "wgmma.mma_async"),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16", "wmma.load"),
    ("mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.try_wait"),
    ("bar.warp.sync", "bar.warp.sync"),
    ("bar.sync", "bar"),
    ("vote.ballot.sync.b32", "vote.sync"),          # ptxas accepts the sync word anywhere
    ("shfl.down.sync.b32", "shfl.sync"),
    ("mad.lo.cc.u32", "mad.cc"),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", "mma.sp"),
    ("ld.global.nc.v4.f32", "ld"),
    ("cvt.pack.sat.u8.s32.b32", "cvt.pack"),
])
def test_canonical_names(form, name):
    assert canonical(_ins(form)) == name
    assert validate(_ins(form)) is None


def test_modifier_order_is_free():
    assert resolve("ld", ("nc", "global", "v4", "f32")) == ("ld", ("nc", "global", "v4", "f32"))
    assert validate(_ins("atom.add.global.f32")) is None
    assert validate(_ins("wmma.load.a.sync.aligned.m16n16k16.global.row.f16")) is None


def test_table_covers_the_isa_families():
    for name in ("tex", "suld", "vadd4", "multimem.ld_reduce", "tensormap.replace", "clusterlaunchcontrol.try_cancel",
                 "tcgen05.mma", "red.async", "st.async", "cp.reduce.async.bulk.tensor", "griddepcontrol",
                 "barrier.cluster", "movmatrix", "prefetchu", "createpolicy", "bmsk", "szext", "dp2a"):
        assert name in SPECS
    assert len(SPECS) > 150


POSITIVE = """
ld.global.nc.L1::no_allocate.f32 %r, [%rd];
ld.global.L2::256B.f32 %r, [%rd];
ld.relaxed.gpu.global.u32 %r, [%rd];
prefetch.global.L2::evict_last [%rd];
atom.add.global.f32 %r, [%rd], %r;
atom.global.add.noftz.f16x2 %r, [%rd], %r;
red.global.add.f32 [%rd], %r;
ldu.global.u32 %r, [%rd];
bar.cta.sync 0;
barrier.sync.aligned 0;
membar.proxy.alias;
fence.acq_rel.gpu;
fence.proxy.tensormap::generic.release.gpu;
fence.mbarrier_init.release.cluster;
redux.sync.min.u32 %r, %r, -1;
vote.ballot.sync.b32 %r, %p, -1;
shfl.down.sync.b32 %r, %r, 1, 31, -1;
mad.lo.cc.u32 %r, %r, %r, %r;
griddepcontrol.wait;
nanosleep.u32 %r;
setmaxnreg.inc.sync.aligned.u32 232;
cvt.rn.satfinite.e4m3x2.f32 %h, %r, %r;
cvt.rn.f16x2.e4m3x2 %r, %h;
min.NaN.f32 %r, %r, %r;
max.xorsign.abs.f32 %r, %r, %r;
tanh.approx.f32 %r, %r;
ex2.approx.ftz.bf16x2 %r, %r;
copysign.f32 %r, %r, %r;
testp.finite.f32 %p, %r;
fma.rn.bf16x2 %r, %r, %r, %r;
dp2a.lo.s32.s32 %r, %r, %r, %r;
lop3.b32 %r, %r, %r, %r, 0x96;
shf.l.wrap.b32 %r, %r, %r, %r;
cvt.pack.sat.u8.s32.b32 %r, %r, %r, %r;
""".strip().splitlines()

NEGATIVE = ["ld.global.f16 %h, [%rd];", "mov.u8 %h, %h;", "bar.sync.aligned 0;", "ld.vote.global.u32 %r, [%rd];"]


def _ptxas_accepts(lines: list[str], tmp_path) -> tuple[bool, str]:
    body = "\n".join(lines)
    text = (".version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k(){\n"
            ".reg .b64 %rd; .reg .b32 %r; .reg .b16 %h; .reg .pred %p;\n" + body + "\nret;\n}\n")
    src = tmp_path / "t.ptx"
    src.write_text(text)
    proc = subprocess.run([shutil.which("ptxas"), "-arch=sm_90a", str(src), "-o", str(tmp_path / "t.o")],
                          capture_output=True, text=True)
    return proc.returncode == 0, proc.stderr


def test_table_agrees_with_ptxas(tmp_path):
    if shutil.which("ptxas") is None:
        pytest.skip("ptxas is not on PATH")
    for line in POSITIVE:
        assert validate(_ins(line)) is None, line
    ok, err = _ptxas_accepts(POSITIVE, tmp_path)
    assert ok, err
    for line in NEGATIVE:
        assert validate(_ins(line)) is not None, line
        ok, _ = _ptxas_accepts([line], tmp_path)
        assert not ok, line


def test_nvcc_debug_output_validates(tmp_path, corpus):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    out = tmp_path / "G.ptx"
    subprocess.run([nvcc, "-G", "-ptx", "-arch=sm_80", str(corpus / "cuda" / "hgemm_half2.cu"), "-o", str(out)],
                   check=True, capture_output=True)
    module = isa.load(out)
    n = 0
    for fn in module.functions:
        for ins in fn.instructions:
            assert validate(ins) is None, (ins.span.line, ins.full_opcode, validate(ins))
            n += 1
    assert n > 100
