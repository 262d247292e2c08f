"""Small builders for PTX test snippets."""

from __future__ import annotations

import isa

HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"
DECLS = """\t.reg .pred %p<10>;
\t.reg .b16 %rs<20>;
\t.reg .b32 %r<200>;
\t.reg .f32 %f<100>;
\t.reg .b64 %rd<100>;
\t.reg .f64 %fd<10>;
"""


def module(text: str, header: str = HEADER) -> isa.Module:
    return isa.loads(header + text)


def kernel(body: str, *, decls: str = DECLS, params: str = ".param .u64 k_param_0", header: str = HEADER,
           prelude: str = "") -> isa.Function:
    m = isa.loads(header + prelude + f".visible .entry k(\n\t{params}\n)\n{{\n{decls}{body}\n}}\n")
    return m.kernels[0]


def only(fn: isa.Function) -> isa.Instruction:
    assert len(fn.instructions) == 1, fn.instructions
    return fn.instructions[0]
