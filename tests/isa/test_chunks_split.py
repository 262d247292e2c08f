"""isa.ptx.chunks.Split (issue #15): a big file's module-level part parsed once and its kernels batch
by batch gives, for every batch, the module that parsing the file with the other kernels blanked
gives: the same items in the same order, the same spans down to each operand."""

from __future__ import annotations

from pathlib import Path

import pytest

from isa.ptx import chunks, parser

TEXT = """// a header comment with a brace {
.version 8.0
.target sm_90, debug // target options
.address_size 64
.file 1 "a.cu"
.global .align 4 .u32 g0 = 7;
.func (.reg .b32 y) f(.reg .b32 x)
{
    add.s32 y, x, 1;
    ret;
}
.visible .entry k0(.param .u64 out) { .reg .b32 %r<3>; mov.u32 %r1, 0; ret; } .global .u32 after0;
   .visible .entry k1(.param .u64 out)
.maxntid 128
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    .loc 1 4 2
    ld.param.u64 %rd1, [out];
    { .reg .b32 %inner; mov.u32 %inner, g0; }
    /* a comment } with a brace */
    call (%r2), f, (%r1);
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2+4], %r2;
    ret;
}
.global .u32 between;   .visible .entry k2() { ret; }
.file 2 "b.cu"
.visible .entry k3(.param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [n];
L0:
    add.s32 %r2, %r2, -3;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra L0;
    ret;
}
.global .u32 tail;
"""


def spans(module) -> list:
    """Every place the IR records: items, and each instruction's span, .loc and operand spans."""
    out = []
    for item in module.items:
        out.append((type(item).__name__, getattr(item, "name", None), item.span))
        if getattr(item, "body", None) is not None:
            for ins in item.instructions:
                out.append((ins.span, ins.loc, ins.guard and ins.guard.span,
                            tuple(getattr(o, "span", None) for o in ins.operands)))
    return out


def check_split(text: str, file: str, max_chars: int) -> int:
    """Each batch module against the straightforward parses: the whole file's items with only the
    batch's kernels (spans and all), and the file with the other kernels blanked (the IR)."""
    found = chunks.entries(text)
    split = chunks.Split.make(text, file, found)
    assert split is not None
    whole = parser.parse(text, file)
    defined = {e.name for e in found}
    ranges = split.batches(max_chars)
    old = list(chunks.batches(text, max_chars=max_chars, found=found))
    assert [[e.name for e in found[i:j]] for i, j in ranges] == [names for names, _ in old]
    for (i, j), (names, piece) in zip(ranges, old):
        got = split.module(i, j)
        want = [it for it in whole.items if getattr(it, "name", None) not in defined or it.name in names]
        assert got.items == tuple(want)
        assert spans(got) == spans(whole.__class__(isa="ptx", items=tuple(want)))
        assert got == parser.parse(piece, file)
        assert got.source == text
    return len(ranges)


@pytest.mark.parametrize("max_chars", [1, 300, 10_000])
def test_each_batch_module_is_the_blanked_file_parse(max_chars):
    # k2 (not at the start of its line) is not a chunk: it stays in the module-level part, as in batches()
    assert [e.name for e in chunks.entries(TEXT)] == ["k0", "k1", "k3"]
    assert check_split(TEXT, "t.ptx", max_chars) == {1: 3, 300: 3, 10_000: 1}[max_chars]


def test_corpus_files_concatenated_split_as_parsed_whole():
    """Real kernels: the corpus's Triton and CUDA files (kernels and .func, .loc, .file) as one module."""
    root = Path(__file__).resolve().parents[2]
    files = sorted((root.parent / "shared" / "corpus" / "ptx").glob("*.ptx"))[:12]
    if not files:
        pytest.skip("no ../shared corpus here")
    import sys

    sys.path.insert(0, str(root / "bench"))
    import big_ptx

    text, kernels = big_ptx.build(0.3, files)
    assert kernels > 20
    assert check_split(text, "big.ptx", 20_000) > 3


def test_no_split_without_a_header_it_knows():
    bad = TEXT.replace(".version 8.0\n", "")
    assert chunks.Split.make(bad, "t.ptx") is None
    broken = TEXT.replace(".global .u32 tail;", ".global .u32 tail")   # the module-level part does not parse
    assert chunks.Split.make(broken, "t.ptx") is None


def test_jobs_degrade_to_this_process_without_fork(monkeypatch):
    import multiprocessing

    assert chunks.jobs_wanted(3) == 3 and chunks.jobs_wanted(-2) == 1
    assert chunks.jobs_wanted(0) >= 1 and chunks.jobs_wanted(None) == chunks.jobs_wanted(0)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert chunks.jobs_wanted(4) == 1 and chunks.jobs_wanted(0) == 1


LIKE_KERNEL = """
.visible .entry m{i}(.param .u64 out)
{{
    .reg .pred %p<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
\tmov.u32 %r2, 7;
    setp.lt.s32 %p1, %r1, 4;
    @%p1 bra L{i};
    @!%p1 add.s32 %r2, %r2, %r1;
L{i}:  add.s32 %r3, %r2, 1;
    {{ .reg .b32 %in; mov.u32 %in, 7; add.s32 %r4, %in, 1; }}
    /*
    mov.u32 %r1, %tid.x;
    */
    .loc 1 {i} 2
    cvta.to.global.u64 %rd2, %rd1;
    st.global.v2.u32 [%rd2+8], {{%r3, %r4}};
    ret;
}}
"""


@pytest.mark.parametrize("fast", [False, True])
def test_many_like_kernels_give_the_parse_of_the_text(monkeypatch, fast):
    """Kernels that repeat the same lines (in scopes, after .loc, with guards, other indents, a
    copy inside a block comment): every batch is the whole-file parse, with the fast path
    (isa.ptx.fastpath) and without it."""
    monkeypatch.setattr(parser, "FAST_PATH", fast)
    text = ".version 8.0\n.target sm_90\n.address_size 64\n.file 1 \"a.cu\"\n" + "".join(
        LIKE_KERNEL.format(i=i) for i in range(12))
    found = chunks.entries(text)
    split = chunks.Split.make(text, "m.ptx", found)
    assert check_split(text, "m.ptx", 600) == 12
    assert split is not None
    whole = parser.parse(text, "m.ptx")
    for i in range(12):
        got = split.module(i, i + 1)
        want = [it for it in whole.items if not getattr(it, "is_kernel", False) or it.name == f"m{i}"]
        assert spans(got) == spans(whole.__class__(isa="ptx", items=tuple(want)))
        assert got.items == tuple(want)


def test_a_batch_that_does_not_parse_gives_the_text_s_error(monkeypatch):
    """A kernel whose line continues an unfinished statement: its batch's error is the one the
    real text gives, with its source line (with the fast path: its substituted parse fails and
    the real text is parsed again)."""
    good = LIKE_KERNEL.format(i=0)
    bad = LIKE_KERNEL.format(i=1).replace("    ld.param.u64 %rd1, [out];\n",
                                          "    ld.param.u64 %rd1,\n    mov.u32 %r1, %tid.x;\n")
    text = ".version 8.0\n.target sm_90\n.address_size 64\n" + good + bad
    split = chunks.Split.make(text, "m.ptx")
    split.module(0, 1)
    with pytest.raises(Exception) as got:
        split.module(1, 2)
    with pytest.raises(Exception) as want:
        parser.parse(text, "m.ptx")
    assert str(got.value) == str(want.value) and got.value.span == want.value.span
    assert got.value.source_line == want.value.source_line and "\x02" not in got.value.source_line
