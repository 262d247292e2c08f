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


def test_the_inspector_quits_at_once_and_keeps_big_files_out_of_the_collector(monkeypatch):
    """After ``q`` the process leaves at once (os._exit once the terminal is restored): a worker
    still parsing, or the interpreter freeing a 30 MB file's IR object by object, held a blank
    screen for 31 s (issue #15). The app is told to gc.freeze() what it loads."""
    import os
    import sys

    import tui.app
    import tui.cli

    seen = {}

    class FakeApp:
        return_code = 0

        def __init__(self, *a, **kw):
            seen["app"] = self

        def run(self):
            seen["freeze"] = self.freeze_gc

    class Exit(BaseException):
        pass

    def fake_exit(code):
        seen["exit"] = code
        raise Exit

    monkeypatch.setattr(tui.app, "InspectorApp", FakeApp)
    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    with pytest.raises(Exit):
        main(["inspect", VADD])
    assert seen["freeze"] is True and seen["exit"] == 0
