"""``analyzer.jsontext.dumps`` writes exactly what ``json.dumps(obj, indent=2)`` writes."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.cli import main
from analyzer.jsontext import dumps
from tests.conftest import EXAMPLES, corpus_ptx_files

_scalars = (st.none() | st.booleans() | st.integers() | st.integers(-2**70, 2**70)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text())
_keys = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=40)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_same_text_as_json_dumps(value):
    assert dumps(value) == json.dumps(value, indent=2)


def test_unusual_values_behave_like_json():
    class Flag(int):
        pass

    assert dumps({"a": Flag(3), 1.5: [True, None], None: {}}) == json.dumps({"a": Flag(3), 1.5: [True, None], None: {}}, indent=2)
    with pytest.raises(TypeError):
        dumps({"when": object()})
    assert dumps({"nan": float("nan"), "inf": [float("inf"), -float("inf")]}) == (
        '{\n  "nan": NaN,\n  "inf": [\n    Infinity,\n    -Infinity\n  ]\n}')


def test_corpus_report_is_the_json_module_text():
    files = corpus_ptx_files()[:6] or sorted((EXAMPLES / "ptx").glob("*.ptx"))
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main([str(f) for f in files] + ["--format", "json"]) == 0
    text = buf.getvalue()
    doc = json.loads(text)
    assert len(doc["kernels"]) >= len(files)
    assert text == json.dumps(doc, indent=2) + "\n"
