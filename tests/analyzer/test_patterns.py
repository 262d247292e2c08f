"""Opcode patterns and expectations."""

from __future__ import annotations

import pytest

from analyzer.patterns import compile_pattern, is_class_name, parse_expectation
from isa.errors import InputError
from isa.ir import Instruction


def _i(text):
    op, *mods = text.split(".")
    return Instruction(op, tuple(mods))


@pytest.mark.parametrize("pattern,text,expected", [
    ("ld.shared.v4", "ld.shared.v4.f32", True),
    ("ld.shared.v4", "ld.v4.shared.b32", True),
    ("ld.shared.v4", "ld.shared.v2.f32", False),
    ("ld.shared", "ld.shared::cta.u32", True),
    ("ld.global", "ld.global.nc.f32", True),
    ("mma.sync", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", True),
    ("cp.async", "cp.async.cg.shared.global", True),
    ("cp.async", "cp.async.commit_group", False),
    ("wgmma", "wgmma.fence.sync.aligned", True),
    ("cvt.f16.f32", "cvt.rn.f16.f32", True),
    ("cvt.f16.f32", "cvt.f32.f16", False),
    ("fma.f32", "fma.rm.f32", True),
    ("bar.sync", "bar.warp.sync", False),
    ("shfl.sync", "shfl.sync.bfly.b32", True),
])
def test_pattern_matching(pattern, text, expected):
    assert compile_pattern(pattern).matches(_i(text)) is expected


def test_expectations():
    e = parse_expectation("TENSOR_CORE >= 1")
    assert (e.name, e.op, e.count, e.is_class) == ("TENSOR_CORE", ">=", 1, True)
    assert e.holds(1) and not e.holds(0)
    assert parse_expectation("ld.shared.v4<3").holds(2)
    assert not is_class_name("ld.shared") and is_class_name("LOAD_SHARED_128")
    with pytest.raises(InputError, match="bad expectation"):
        parse_expectation("TENSOR_CORE=>1")
