"""validate-kernel on big PTX files (issue #15): kernel batches parsed one at a time, the text report
written as it goes, progress on stderr, and every report the same as for the whole-file parse."""

from __future__ import annotations

import io

import pytest

import analyzer.cli as cli
from isa.ptx import chunks

KERNEL = """
.visible .entry k{i}(.param .u64 out, .param .u32 n)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
LOOP_{i}:
    add.s32 %r3, %r3, {i};
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, {trips};
    @%p1 bra LOOP_{i};
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r3;
    ret;
}}
"""


def big_ptx(n: int) -> str:
    head = ".version 8.0\n.target sm_90\n.address_size 64\n// a comment with a brace { in it\n"
    return head + "".join(KERNEL.format(i=i, trips=i % 7 + 1) for i in range(n))


@pytest.fixture
def big(tmp_path):
    path = tmp_path / "big.ptx"
    path.write_text(big_ptx(60))
    return path


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_batched_reports_are_the_whole_file_reports(big, tmp_path, monkeypatch, fmt, jobs):
    args = [str(big), "--format", fmt, "--expect", "INT_ARITH>=3", "--precision-mode", "force_fp32"]
    whole, batched = tmp_path / "whole", tmp_path / "batched"
    assert cli.main(args + ["-o", str(whole)]) in (0, 1)
    monkeypatch.setattr(cli, "STREAM_CHARS", 2000)
    monkeypatch.setattr(cli, "BATCH_CHARS", 3000)
    calls = []
    real = chunks.Split.module

    def spy(self, i, j, *a):
        calls.append(j - i)
        return real(self, i, j, *a)

    monkeypatch.setattr(chunks.Split, "module", spy)
    assert cli.main(args + ["--jobs", jobs, "-o", str(batched)]) in (0, 1)
    if jobs == "1":                   # (the workers' calls are not seen here)
        assert len(calls) > 5 and sum(calls) == 60 and max(calls) < 10     # parsed batch by batch
    else:
        assert calls == []            # every batch was done in a worker process
    assert batched.read_text() == whole.read_text()
    if fmt == "text":
        assert whole.read_text().count("─ k") == 60


def test_batches_parsed_whole_where_the_module_level_part_does_not_split(big, tmp_path, monkeypatch):
    """Without a header :class:`chunks.Split` recognises, each batch is the file with the other
    kernels blanked: the same report."""
    whole, batched = tmp_path / "whole", tmp_path / "batched"
    assert cli.main([str(big), "--format", "json", "-o", str(whole)]) == 0
    monkeypatch.setattr(cli, "STREAM_CHARS", 2000)
    monkeypatch.setattr(cli, "BATCH_CHARS", 3000)
    monkeypatch.setattr(chunks.Split, "make", classmethod(lambda cls, *a, **k: None))
    assert cli.main([str(big), "--format", "json", "-o", str(batched)]) == 0
    assert batched.read_text() == whole.read_text()


def test_an_error_in_a_worker_batch_is_located_as_in_the_whole_file(big, tmp_path, monkeypatch, capsys):
    text = big.read_text().replace("add.s32 %r3, %r3, 41;", "add.s32 %r3, %r3, 08;")
    big.write_text(text)
    assert cli.main([str(big)]) == 2
    whole = capsys.readouterr().err
    line = text[: text.index(", 08;")].count("\n") + 1
    assert f"big.ptx:{line}:" in whole and "invalid octal integer literal '08'" in whole and "^" in whole
    monkeypatch.setattr(cli, "STREAM_CHARS", 2000)
    monkeypatch.setattr(cli, "BATCH_CHARS", 3000)
    assert cli.main([str(big), "--jobs", "2"]) == 2
    assert capsys.readouterr().err.endswith(whole)       # after the reports of the batches before it


def test_text_is_written_as_each_batch_is_done_with_progress(big, monkeypatch, capsys):
    monkeypatch.setattr(cli, "STREAM_CHARS", 2000)
    monkeypatch.setattr(cli, "BATCH_CHARS", 3000)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr(cli.sys, "stderr", err)
    seen = []
    import analyzer.report as report

    orig = report.analyze_function

    def spy(module, fn, **kw):
        seen.append((fn.name, capsys.readouterr().out.count("─ k")))
        return orig(module, fn, **kw)

    monkeypatch.setattr(report, "analyze_function", spy)
    assert cli.main([str(big), "--jobs", "1"]) == 0
    # when the last kernel is analysed, the reports of the earlier batches are out already
    assert seen[-1][0] == "k59" and sum(n for _, n in seen) > 40
    text = err.getvalue()
    assert "\r" in text and "60/60 kernels" in text and text.endswith("\n")
    assert "big.ptx: [" in text


def test_small_files_show_no_progress_and_errors_leave_no_partial_report(big, tmp_path, capsys):
    out = tmp_path / "out.txt"
    assert cli.main([str(big), "--kernel", "nope", "-o", str(out)]) == 2
    assert not out.exists()
    assert capsys.readouterr().err.startswith("error: no kernel named 'nope'")
    assert cli.main([str(big)]) == 0
    assert capsys.readouterr().err == ""


def test_progress_with_worker_processes(big, monkeypatch, capsys):
    """With --jobs 2 the batches are analysed in workers; the bar still counts every kernel, in the
    parent, as each batch's reports come back."""
    monkeypatch.setattr(cli, "STREAM_CHARS", 2000)
    monkeypatch.setattr(cli, "BATCH_CHARS", 3000)

    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr(cli.sys, "stderr", err)
    assert cli.main([str(big), "--jobs", "2"]) == 0
    assert capsys.readouterr().out.count("─ k") == 60
    text = err.getvalue()
    assert "\r" in text and "60/60 kernels" in text and text.endswith("\n") and "big.ptx: [" in text
