"""kernlens fmt on a big PTX file (issue #15): batch by batch of kernels, the same output as the
whole-file parse, module-level items (globals, .func, .file) in their places, no half-written file."""

from __future__ import annotations

import pytest

import isa.cli as fmt_cli
from kernlens.cli import main

KERNEL = """
.visible .entry k{i}(.param .u64 out)
{{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, {i};
    call (%r2), f{f}, (%r1);
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r2;
    ret;
}}
"""
FUNC = """
.func (.reg .b32 y) f{i}(.reg .b32 x)
{{
    add.s32 y, x, {i};
    ret;
}}
.global .align 4 .u32 g{i} = {i};
"""


def big_ptx(n: int) -> str:
    out = [".version 8.0\n.target sm_90\n.address_size 64\n// a brace { in a comment\n.file 1 \"a.cu\"\n", FUNC.format(i=0)]
    for i in range(n):
        if i % 9 == 4:
            out.append(FUNC.format(i=i))
        out.append(KERNEL.format(i=i, f=max(j for j in [0] + list(range(4, i + 1, 9)) if j <= i)))
    return "".join(out)


@pytest.mark.parametrize("batch,jobs", [(300, "1"), (1000, "1"), (5000, "1"), (300, "2"), (1000, "3")])
def test_batched_fmt_is_the_whole_file_fmt(tmp_path, monkeypatch, capsys, batch, jobs):
    path = tmp_path / "big.ptx"
    path.write_text(big_ptx(40))
    assert main(["fmt", str(path)]) == 0
    whole = capsys.readouterr().out
    assert whole.count(".entry") == 40 and whole.count(".func") == 5 and ".global .align 4 .u32 g31 = 31;" in whole
    monkeypatch.setattr(fmt_cli, "STREAM_CHARS", 100)
    monkeypatch.setattr(fmt_cli, "BATCH_CHARS", batch)
    parts = []
    real = fmt_cli._pieces

    def spy(args):
        for p in real(args):
            parts.append(p)
            yield p

    monkeypatch.setattr(fmt_cli, "_pieces", spy)
    assert main(["fmt", str(path), "--jobs", jobs]) == 0
    assert capsys.readouterr().out == whole
    assert len(parts) > 1 if batch < 5000 else True


def test_batched_fmt_without_a_split_is_the_whole_file_fmt(tmp_path, monkeypatch, capsys):
    """Where :class:`isa.ptx.chunks.Split` does not apply, the file with the other kernels blanked
    is parsed per batch: the same output."""
    from isa.ptx import chunks

    path = tmp_path / "big.ptx"
    path.write_text(big_ptx(40))
    assert main(["fmt", str(path)]) == 0
    whole = capsys.readouterr().out
    monkeypatch.setattr(fmt_cli, "STREAM_CHARS", 100)
    monkeypatch.setattr(fmt_cli, "BATCH_CHARS", 300)
    monkeypatch.setattr(chunks.Split, "make", classmethod(lambda cls, *a, **k: None))
    assert main(["fmt", str(path)]) == 0
    assert capsys.readouterr().out == whole


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_error_in_a_later_batch_leaves_no_output_file(tmp_path, monkeypatch, capsys, jobs):
    path = tmp_path / "big.ptx"
    text = big_ptx(40).replace("mov.u32 %r1, 33;", "mov.u32 %r1, 0 8;")
    path.write_text(text)
    assert main(["fmt", str(path)]) == 2
    whole = capsys.readouterr().err
    line = text[: text.index("0 8;")].count("\n") + 1
    assert whole.startswith(f"{path}:{line}:") and "error" in whole and "^" in whole
    monkeypatch.setattr(fmt_cli, "STREAM_CHARS", 100)
    monkeypatch.setattr(fmt_cli, "BATCH_CHARS", 300)
    out = tmp_path / "out.ptx"
    assert main(["fmt", str(path), "-o", str(out), "--jobs", jobs]) == 2
    assert not out.exists()
    assert capsys.readouterr().err == whole
