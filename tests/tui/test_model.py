"""The inspector's data layer: highlighting, kernel ranges, sources, search, loops, load errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, EXAMPLES, corpus_or_skip, corpus_ptx_files
from isa.cfg import Cfg
from tui.analysis import cfg_loops, class_label
from tui.highlight import tokens
from tui.model import kernel_range, load_file
from tui.synthetic import synthetic_ptx

DATA = Path(__file__).parent / "data"


def test_tokens_cover_the_line_and_classify_ptx_parts():
    line = "\t@%p8 st.global.v4.b32 \t[%rd85+16], {%r1, %r2, %r3, %r4}; // store"
    toks = tokens(line)
    assert "".join(t for t, _ in toks) == line
    kinds = {t: k for t, k in toks if k}
    assert kinds["@%p8"] == "guard"
    assert kinds["st"] == "opcode"
    assert kinds[".global"] == kinds[".v4"] == kinds[".b32"] == "modifier"
    assert kinds["%rd85"] == "register" and kinds["16"] == "number"
    assert kinds["// store"] == "comment"
    assert dict((t, k) for t, k in tokens("$L__BB0_2:") if k)["$L__BB0_2"] == "label"
    assert dict((t, k) for t, k in tokens("\t.reg .b32 \t%r<359>;") if k)[".reg"] == "directive"
    # a brace list after the opcode does not start a new statement
    inline = dict((t, k) for t, k in tokens("\t{ mov.b32 {low,high}, %r1; }") if k)
    assert inline["mov"] == "opcode" and inline["low"] == "symbol"


def test_kernel_range_follows_braces_past_nested_scopes():
    text = ".visible .entry k(\n.param .u32 p\n)\n{\n{ .reg .f16 a; }\nret;\n}\n.entry j() { ret; }\n"
    assert kernel_range(text.splitlines(), 1) == (1, 7)
    assert kernel_range(text.splitlines(), 8) == (8, 8)


def test_class_labels_prefer_the_headline_class():
    assert class_label(frozenset({"TENSOR_CORE"})) == "tensor core"
    assert class_label(frozenset({"LOAD", "LOAD_SHARED", "LOAD_SHARED_128"})) == "load shared 128"
    assert class_label(frozenset()) == ""


def test_synthetic_file_has_two_nested_loops(tmp_path):
    p = tmp_path / "synth.ptx"
    p.write_text(synthetic_ptx(4200, 1))
    lf = load_file(str(p))
    assert lf.error is None and len(lf.kernels) == 1
    doc = lf.kernels[0]
    assert len(doc.lines) > 4000
    loops = doc.analysis.loops
    assert len(loops) == 1 and len(loops[0].children) == 1
    # the inspector's loops are the CFG's (one graph for analyzer, simulator and inspector)
    cfg = Cfg(doc.fn)
    assert {l.header for l in doc.analysis.loops_flat()} == set(cfg.loops)
    assert [(l.first, l.last, l.depth) for l in cfg_loops(cfg)] == [(l.first, l.last, l.depth) for l in loops]
    inner = loops[0].children[0]
    assert inner.depth == 2
    fma = next(i for i, ins in enumerate(doc.fn.instructions) if ins.opcode == "fma")
    assert doc.analysis.notes[fma].depth == 2
    assert doc.analysis.notes[fma].label == "fp32 fma"


def test_search_matches_text_and_opcode_patterns(tmp_path):
    p = tmp_path / "synth.ptx"
    p.write_text(synthetic_ptx(400, 1))
    doc = load_file(str(p)).kernels[0]
    rows = doc.search("ld.shared")
    assert rows and all("ld.shared" in doc.lines[r] for r in rows)
    # modifiers as a set: 'fma.f32' is not a substring of 'fma.rn.f32' but matches the pattern
    rows = doc.search("fma.f32")
    assert rows and all("fma.rn.f32" in doc.lines[r] for r in rows)
    assert doc.search("") == []
    assert doc.search("%r") and doc.search("[%rd")          # not patterns: text only, no error


SEARCH_PTX = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 k_p)
{
    .reg .b16 %rs<4>;
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .shared .align 4 .b8 sm[64];
    mov.u32 %r1, sm;
    ld.shared::cta.u32 %r2, [%r1];
    cvt.f32.f16 %f1, %rs1;
    cvt.rn.f16.f32 %rs2, %f1;
    ret;
}
"""


def test_search_uses_the_analyzers_patterns(tmp_path):
    """One matcher (issue 15): '/' search reads opcode patterns as validate-kernel does."""
    p = tmp_path / "s.ptx"
    p.write_text(SEARCH_PTX)
    doc = load_file(str(p)).kernels[0]
    row = {w: next(r for r, t in enumerate(doc.lines) if w in t) for w in ("ld.shared", "cvt.f32", "cvt.rn")}
    # type words keep their order: f32 -> f16 is not f16 -> f32
    assert doc.search("cvt.f16.f32") == [row["cvt.rn"]]
    assert doc.search("cvt.f32.f16") == [row["cvt.f32"]]
    # 'shared' matches its ::cta refinement
    assert doc.search("ld.shared.u32") == [row["ld.shared"]]
    assert doc.analysis.provider == "analyzer"


def test_bad_input_becomes_an_error_with_its_location():
    lf = load_file(str(DATA / "bad_opcode.ptx"))
    assert lf.kernels == [] and lf.error is not None
    text = lf.error.render()
    assert "bad_opcode.ptx:14:" in text and "fmaa" in text
    missing = load_file(str(DATA / "no_such_file.ptx"))
    assert "no such file" in missing.error.render()


def test_every_corpus_file_loads_with_kernels_and_expectations(manifest):
    files = corpus_ptx_files()
    assert files
    kernels = 0
    for f in files:
        lf = load_file(str(f))
        assert lf.error is None, lf.error.render()
        for doc in lf.kernels:
            kernels += 1
            assert doc.lines[0].lstrip().startswith((".visible", ".entry", ".weak"))
            assert doc.lines[-1].strip() == "}"
            # every instruction sits on a line of the kernel's range
            assert all(doc.first_line <= ln <= doc.last_line for ln in doc.instr_line)
            assert doc.corpus is not None, f"{f.name}:{doc.name} not found in the manifest"
            # the manifest's expectations hold on the static opcode patterns
            bad = [e.expr for e in doc.analysis.expectations if not e.ok]
            assert not bad, f"{f.name}:{doc.name}: {bad}"
    # one kernel per (manifest entry, target)
    assert kernels == sum(len(e["ptx"]) for e in manifest["entries"])


def test_triton_source_is_found_from_the_file_entry():
    corpus_or_skip()
    doc = load_file(str(CORPUS / "ptx" / "tt_matmul_int8.sm_80.ptx")).kernels[0]
    hit = doc.main_source
    assert hit.path.resolve() == (CORPUS / "triton" / "tt_matmul_int8.py").resolve()
    mma_line = next(ln for ln, i in zip(doc.instr_line, doc.fn.instructions) if i.opcode == "mma")
    name, line = doc.loc_of(mma_line)
    assert name == "triton/tt_matmul_int8.py"
    assert "tl.dot" in doc.source_text()[line - 1]


def test_cuda_source_is_found_by_file_entry_and_with_source_dir(tmp_path):
    ptx = EXAMPLES / "ptx" / "dot_dp4a.sm_80.ptx"
    text = ptx.read_text()
    entry = next(ln for ln in text.splitlines() if ln.strip().startswith(".file") and "dot_dp4a.cu" in ln)
    cu = entry.split('"')[1]
    doc = load_file(str(ptx)).kernels[0]
    assert doc.main_source.path is not None and doc.main_source.path.name == "dot_dp4a.cu"
    # the same PTX as if compiled on another machine: its .file path does not exist here, so
    # nothing is found beside the copy, and --source-dir finds the source by base name
    copy = tmp_path / "dot_dp4a.sm_80.ptx"
    copy.write_text(text.replace(cu, "/elsewhere/build/dot_dp4a.cu"))
    alone = load_file(str(copy)).kernels[0]
    assert alone.main_source.path is None
    with_dir = load_file(str(copy), source_dirs=[str(EXAMPLES / "cuda")]).kernels[0]
    assert with_dir.main_source.path == EXAMPLES / "cuda" / "dot_dp4a.cu"


def test_source_without_file_entries_is_guessed_from_the_stem(tmp_path):
    from tui.sources import guess_source

    (tmp_path / "ptx").mkdir()
    (tmp_path / "cuda").mkdir()
    (tmp_path / "cuda" / "sgemm_naive.cu").write_text("// kernel\n")
    hit = guess_source(tmp_path / "ptx" / "sgemm_naive.sm_80.ptx")
    assert hit.path == tmp_path / "cuda" / "sgemm_naive.cu"
    assert guess_source(tmp_path / "ptx" / "other.sm_80.ptx").path is None


def test_one_analysis_in_the_inspector():
    import tui.analysis

    # no second matcher, expectations or semantics pass of its own
    for name in ("match_pattern", "_manifest_expectations", "_describer", "_apply_analyzer"):
        assert not hasattr(tui.analysis, name), name
    assert not (Path(tui.analysis.__file__).parent / "analyzer_bridge.py").exists()


def test_a_big_file_opens_lazily_kernel_by_kernel(tmp_path, monkeypatch):
    """A big PTX file (over LAZY_CHARS) lists its kernels from the brace scan and parses each when it
    is first shown (issue #15: 65 s of 'loading' for a 30 MB file); the kernels are the same."""
    import tui.model as model
    from tests.analyzer.test_big_files import big_ptx

    path = tmp_path / "big.ptx"
    path.write_text(big_ptx(12))
    whole = model.load_file(str(path))
    monkeypatch.setattr(model, "LAZY_CHARS", 1000)
    lazy = model.load_file(str(path))
    assert [d.name for d in lazy.kernels] == [d.name for d in whole.kernels]
    assert all(isinstance(d, model.LazyKernelDoc) for d in lazy.kernels)
    assert [d.parsed for d in lazy.kernels] == [True] + [False] * 11      # only the first so far
    assert [(d.first_line, d.last_line) for d in lazy.kernels] == [(d.first_line, d.last_line) for d in whole.kernels]
    doc, ref = lazy.kernels[7], whole.kernels[7]
    assert doc.isa == "ptx" and not doc.parsed
    assert [str(i) for i in doc.fn.instructions] == [str(i) for i in ref.fn.instructions]
    assert doc.parsed and doc.analysis.class_mix == ref.analysis.class_mix and doc.analysis.flops == ref.analysis.flops
    assert [i.span.line for i in doc.fn.instructions] == [i.span.line for i in ref.fn.instructions]
    assert sum(d.parsed for d in lazy.kernels) == 2


def test_a_run_makes_the_analysis_measured():
    """After the Run tab's run, the views show the run's measured counts and say so (issue 15)."""
    from tui import runs

    doc = load_file(str(EXAMPLES / "ptx" / "reduce_sum.sm_90.ptx")).kernels[0]
    assert doc.analysis.provider == "analyzer" and doc.analysis.dynamic_exact is False
    r = runs.simulate(doc, spec_path=f"{EXAMPLES / 'manifest.json'}#reduce_sum")
    a = r.analysis
    assert a.provider == "analyzer, measured counts of the last run"
    assert a.work_note == "dynamic, per launch (measured: the counts of the last run)"
    assert a.dynamic_exact is True and a.flops == {"f32": 10760.0}
    atom = next(i for i, ins in enumerate(doc.fn.instructions) if ins.opcode == "atom")
    assert a.notes[atom].dyn * 1024 == 4 and a.notes[atom].exact       # 4 of the launch's 1,024 threads
    # the grid-stride loop: 5,000 elements over 1,024 threads, measured per entry (was "assumed 16")
    (loop,) = a.loops_flat()
    assert loop.trip.endswith("iterations (measured)") and loop.exact
    assert 4 < float(loop.trip.split()[0]) < 6


def test_ascend_overview_uses_the_meta_shapes_and_no_ptx_fields():
    from tui.widgets.overview import overview_markup

    doc = load_file(str(EXAMPLES / "ascend" / "gemm_f16_256x192x320.asm")).kernels[0]
    a = doc.analysis
    # the scalar program stepped on the 24 cores (tests/analyzer/test_ascend_steps.py): exact work, not
    # the .meta lower bound of 385,024 bytes
    assert a.flops == {"f16": 31_457_280.0} and a.bytes["gm->l1"] + a.bytes["l0c->gm"] == 671_744.0
    assert abs(a.intensity - 31_457_280 / 671_744) < 1e-12 and a.provider.endswith("stepped on every core")
    text = overview_markup(doc)
    assert "Registers and shared memory" not in text and "work from each instruction's operands as stepped" in text


def test_a_source_named_by_an_absolute_path_elsewhere_is_found_in_cuda_beside_the_ptx(tmp_path):
    """``.file 1 "/home/someone/proj/k.cu"`` on another machine: look in cuda/ and triton/ beside the
    PTX folder too (issue #15), and say where it looked when nothing is there."""
    from tui.sources import find_source

    (tmp_path / "ptx").mkdir()
    (tmp_path / "cuda").mkdir()
    asm = tmp_path / "ptx" / "k.ptx"
    asm.write_text("")
    (tmp_path / "cuda" / "k.cu").write_text("__global__ void k() {}\n")
    hit = find_source("/home/someone/proj/k.cu", asm)
    assert hit.path is not None and hit.path.resolve() == (tmp_path / "cuda" / "k.cu").resolve()
    miss = find_source("/home/someone/proj/other.py", asm)
    assert miss.path is None and any(s.endswith("triton/other.py") for s in miss.searched)


def test_a_file_without_kernels_names_its_isas_kernel_directive(tmp_path):
    """Issue 15: the inspector said "no kernel (.entry)" for an Ascend-like file, whose kernels are
    ``.kernel``."""
    asm = tmp_path / "nok.asm"
    asm.write_text(".arch davinci-a2\n")
    ptx = tmp_path / "nok.ptx"
    ptx.write_text(".version 8.0\n.target sm_90\n.address_size 64\n")
    assert load_file(str(asm)).error.render() == f"{asm}: error: no kernel (.kernel) in nok.asm"
    assert load_file(str(ptx)).error.render() == f"{ptx}: error: no kernel (.entry) in nok.ptx"


def test_the_overview_labels_bytes_and_the_roofline():
    """Bytes and intensity had no word on whether they are exact or estimated, the roofline verdict none on
    its basis, and the mix said "dynamic estimate" for exact counts."""
    from tui.widgets.overview import overview_markup

    doc = load_file(str(EXAMPLES / "ptx" / "hgemm_wmma.sm_90.ptx")).kernels[0]
    text = overview_markup(doc)
    note = doc.analysis.work_note
    assert note.endswith("(estimate)") or note.endswith("(exact)")
    assert f"[b]Bytes by state space[/]  [dim]{note}[/]" in text
    assert f"[b]Instruction mix by class[/] [dim]({note})[/]" in text
    assert "the roofline verdict is a model: global bytes taken as DRAM bytes, no caches" in text
