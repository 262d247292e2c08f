"""Bad input: file:line:col, the line with a caret, what was expected, exit code 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import isa
from isa.errors import InputError, KernlensError, ParseError, SemanticError
from kernlens.cli import main
from tests.isa.ptx_helpers import DECLS, HEADER


def run_cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path, name, data):
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return p


def body(text: str) -> str:
    return HEADER + f".visible .entry k()\n{{\n{DECLS}{text}\n}}\n"


def test_syntax_error_has_location_caret_and_expected(tmp_path, capsys):
    p = write(tmp_path, "bad.ptx", body("\tmov.u32 %r1 %r2;"))
    rc, out, err = run_cli(capsys, "fmt", str(p))
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == f"{p}:12:14: error: unexpected '%r2'"
    assert lines[1] == "  \tmov.u32 %r1 %r2;".expandtabs(1)
    assert lines[2].index("^") == lines[1].index("%r2")
    assert lines[3].startswith("  expected one of:") and "','" in lines[3] and "';'" in lines[3]
    assert "Traceback" not in err


def test_unknown_opcode_is_an_error_with_location_or_a_warning_when_lenient(tmp_path, capsys):
    p = write(tmp_path, "op.ptx", body("\tfmaa.rn.f32 %f1, %f2, %f3, %f4;"))
    with pytest.raises(SemanticError) as exc:
        isa.load(p)
    assert (exc.value.span.line, exc.value.span.col) == (12, 2)
    assert "fmaa" in exc.value.message
    rc, out, err = run_cli(capsys, "fmt", str(p))
    assert rc == 2 and f"{p}:12:2: error:" in err and "fmaa" in err
    rc, out, err = run_cli(capsys, "fmt", "--lenient", str(p))
    assert rc == 0 and "fmaa.rn.f32" in out and f"{p}:12:2: warning:" in err


def test_unknown_modifier_is_rejected():
    with pytest.raises(SemanticError) as exc:
        isa.loads(body("\tld.glboal.f32 %f1, [%rd1];"))
    assert "glboal" in exc.value.message


def test_undeclared_register_is_a_semantic_error():
    with pytest.raises(SemanticError) as exc:
        isa.loads(body("\tmov.u32 %r1, %q7;"), "u.ptx")
    assert exc.value.span.line == 12 and "%q7" in exc.value.message


@pytest.mark.parametrize("name,data,needle", [
    ("empty.ptx", "", "empty file"),
    ("blank.ptx", "\n\n   \n", "empty file"),
    ("binary.ptx", b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)), "not a text file"),
    ("latin1.ptx", b".version 9.0\n// caf\xe9\n", "not a text file"),
    ("target.ptx", ".version 9.0\n.target sm_91x\n", "unknown .target 'sm_91x'"),
    ("noversion.ptx", ".target sm_90\n", "unexpected '.target'"),
])
def test_bad_files_exit_2_with_a_message(tmp_path, capsys, name, data, needle):
    p = write(tmp_path, name, data)
    rc, out, err = run_cli(capsys, "fmt", str(p))
    assert rc == 2 and needle in err and "Traceback" not in err
    assert err.startswith(str(p))


def test_truncated_file_points_at_the_end(tmp_path, capsys, corpus):
    text = (corpus / "ptx" / "sgemm_naive.sm_90.ptx").read_text()
    p = write(tmp_path, "trunc.ptx", text[: len(text) // 2])
    rc, _, err = run_cli(capsys, "fmt", str(p))
    assert rc == 2 and "unexpected end of file (is the file truncated?)" in err
    n_lines = len(text[: len(text) // 2].rstrip().splitlines())
    assert err.startswith(f"{p}:{n_lines}:")


def test_missing_file_and_directory(tmp_path, capsys):
    rc, _, err = run_cli(capsys, "fmt", str(tmp_path / "nope.ptx"))
    assert rc == 2 and "no such file" in err
    rc, _, err = run_cli(capsys, "fmt", str(tmp_path))
    assert rc == 2 and "directory" in err


def test_unwritable_output_exits_2(tmp_path, capsys, corpus):
    rc, out, err = run_cli(capsys, "fmt", str(corpus / "ptx" / "sgemm_naive.sm_90.ptx"), "-o", str(tmp_path))
    assert (rc, out, err) == (2, "", f"error: cannot write {tmp_path}: Is a directory\n")


def test_fifty_megabyte_inputs_fail_cleanly(tmp_path, capsys):
    junk = ("ab$ ~ (( ;; }" * 4096 + "\n") * 1000  # ~53 MB of text that is not PTX
    p = write(tmp_path, "junk.ptx", junk)
    assert p.stat().st_size > 50_000_000
    rc, _, err = run_cli(capsys, "fmt", str(p))
    assert rc == 2 and f"{p}:1:1: error:" in err
    one_line = write(tmp_path, "line.ptx", ".version 9.0 " + "x" * 50_000_000)
    rc, _, err = run_cli(capsys, "fmt", str(one_line))
    assert rc == 2 and "error" in err and len(err) < 10_000  # the caret line is not 50 MB
    nul = write(tmp_path, "nul.ptx", b"\x00" * 50_000_000)
    rc, _, err = run_cli(capsys, "fmt", str(nul))
    assert rc == 2 and "not a text file" in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fmt"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2


def test_console_script_prints_no_traceback(tmp_path):
    p = write(tmp_path, "bad.ptx", body("\tld.global.f32 %f1, [%rd1"))
    r = subprocess.run([sys.executable, "-m", "kernlens", "fmt", str(p)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{p}:13:1: error: unexpected '}}'" in r.stderr  # the unclosed '[' is noticed at the brace


def test_error_render_shows_caret_under_the_token():
    e = ParseError("unexpected 'x'", isa.Span("f.ptx", 3, 5, 3, 8), expected=["';'"], source_line="\tab x;")
    assert e.render().splitlines() == ["f.ptx:3:5: error: unexpected 'x'", "   ab x;", "      ^~~",
                                       "  expected one of: ';'"]


# ------------------------------------------------------------------ property tests

OPCODES = ["mov.u32", "add.s32", "ld.global.f32", "st.shared.v4.b32", "fma.rn.f32", "bra.uni", "setp.lt.s32",
           "shfl.sync.down.b32", "cvt.rn.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ret",
           "bar.sync", "cp.async.commit_group", "xyz.q", "ld", "@%p1", "@!%p1"]
OPERANDS = ["%r1", "%r2", "%f1", "%rd1", "%p1", "-1", "0f3F800000", "0d3FF0000000000000", "[%rd1+4]", "[%r1+-4]",
            "{%f1, %f2}", "{ %r1 }", "_", "%p1|%p2", "!%p1", "$L__BB0_1", "%tid.x", "0x10", "1.5", "(", ")",
            "{", "}", "[", "]", ",", ";", "%nope", "global_smem"]
TOKENS = OPCODES + OPERANDS + [".reg .b32 %x<4>;", "$L__BB0_1:", ".loc 1 2 3", ".pragma \"nounroll\";", "\n", " ",
                               "//c\n", "/*", "*/", ".shared .b8 s[4];", "{ ret; }", "\"", "\x00", "é"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_parser_raises_only_its_own_errors_on_generated_statements(tokens):
    text = body(" ".join(tokens))
    try:
        isa.loads(text, "gen.ptx")
    except KernlensError as exc:
        assert exc.span is not None and exc.render().startswith("gen.ptx")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parser_raises_only_its_own_errors_on_arbitrary_text(text):
    try:
        m = isa.loads(HEADER + text, "gen.ptx")
    except KernlensError as exc:
        assert exc.span is not None and exc.render().startswith("gen.ptx:")
    else:   # accepted text must survive its own canonical form
        assert isa.loads(m.emit(), "again.ptx").items == m.items


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["mov.u32 %r1, %r2;", "add.s32 %r3, %r1, -4;", "@%p1 bra $L__BB0_1;",
                                 "$L__BB0_1:", "{ .reg .b32 %t; mov.b32 %t, 0f3F800000; }",
                                 "ld.global.v2.f32 {%f1, %f2}, [%rd1+-8];", "setp.ne.s32 %p1|%p2, %r1, 0;"]),
                min_size=1, max_size=12))
def test_generated_valid_bodies_roundtrip(stmts):
    label = "$L__BB0_1:"   # defined exactly once, where it first appears (at the end when absent)
    first = stmts.index(label) if label in stmts else len(stmts)
    stmts = [s for k, s in enumerate(stmts) if s != label or k == first] + ([label] if label not in stmts else [])
    m = isa.loads(body("\n".join(stmts) + "\nret;"))
    assert isa.loads(m.emit()).items == m.items


def test_invalid_octal_literal_is_a_located_parse_error():
    """``08`` (8 is no octal digit) was an internal ValueError; now file:line:col with a caret (issue #15)."""
    from isa.errors import ParseError

    text = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %r<2>;\n mov.u32 %r1, 08;\n ret;\n}\n"
    try:
        isa.loads(text, "k.ptx")
    except ParseError as exc:
        assert exc.span.line == 7 and "octal" in str(exc) and "^" in exc.render()
    else:
        raise AssertionError("08 was accepted")
