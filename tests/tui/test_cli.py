"""``kernlens inspect``: inputs that leave nothing to show are refused before the UI starts."""

from __future__ import annotations

import pytest

from kernlens.cli import main
from tests.conftest import EXAMPLES

VADD = str(EXAMPLES / "ascend" / "vadd_f16.asm")


@pytest.mark.parametrize("argv,words", [
    (["/nonexistent/k.ptx"], "error: no such file: /nonexistent/k.ptx"),
    (["/nonexistent/a.ptx", "/nonexistent/b.ptx"], "error: none of the 2 files exists"),
    ([VADD, "--launch", "/nonexistent/spec.json#x"], "error: cannot read launch spec: no such file: /nonexistent/spec.json"),
    ([VADD, "--machine", "nope"], "error: unknown machine 'nope'"),
    ([VADD, "--machine", "h200"], "'h200' is not an Ascend-like machine model"),
])
def test_bad_inspect_arguments_are_exit_2(capsys, argv, words):
    assert main(["inspect"] + argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and "internal error" not in err


def test_good_arguments_reach_the_terminal_check(capsys):
    # under pytest stdout is not a TTY: valid arguments get as far as that check
    assert main(["inspect", VADD, "/nonexistent/other.ptx", "--machine", "davinci-a2"]) == 2
    assert "needs a terminal" in capsys.readouterr().err
