"""Writes the litmus PTX files of this folder (run it after changing a test's shape):

    python tests/sim/litmus/make_litmus.py

Each test is one kernel ``litmus(u64 mem, u64 out)``: ``mem`` holds x at byte 0 and y at byte
128 (zeros), ``out`` one u32 per register r0..r3. Thread roles T0..T3 are the CTAs of the grid
(``gpu``/``sys`` placement) or the warps of one CTA (``cta`` placement); only lane 0 of a role
runs its code. Accesses are ``.relaxed`` at the test's scope; ``FENCE`` is the test's fence.
"""

from pathlib import Path

HEAD = """//
// litmus {name}: {doc}
.version 8.0
.target sm_90
.address_size 64
.visible .entry litmus(.param .u64 litmus_mem, .param .u64 litmus_out)
{{
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [litmus_mem];
    ld.param.u64 %rd3, [litmus_out];
    add.s64 %rd2, %rd1, 128;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra DONE;
    mov.u32 %r3, {role};
"""
ROLE = {"cta": "%tid.x;\n    shr.u32 %r3, %r3, 5", "gpu": "%ctaid.x", "sys": "%ctaid.x"}
TAIL = """DONE:
    ret;
}
"""

ST = "    st.relaxed.{s}.global.u32 [{a}], {v};\n"
LD = "    ld.relaxed.{s}.global.u32 %r{k}, [{a}];\n"
OUT = "    st.global.u32 [%rd3+{o}], %r{k};\n"
#: shapes whose results go out after all their accesses (load buffering: the load and the store after
#: it are adjacent and independent, the form in which the store may be performed first); the others
#: store each result right after its load
OUT_LAST = {"lb"}
X, Y = "%rd1", "%rd2"


def threads(name, doc, place, fence, roles, last=False):
    s = "cta" if place == "cta" else place
    body = ""
    for i, ops in enumerate(roles):
        body += f"    setp.eq.u32 %p2, %r3, {i};\n    @%p2 bra T{i};\n"
    body += "    bra DONE;\n"
    for i, ops in enumerate(roles):
        body += f"T{i}:\n"
        outs = ""
        for op in ops:
            if op == "F":
                body += f"    {fence};\n" if fence else ""
            elif op[0] in ("st", "st.release"):
                body += ST.format(s=s, a=op[1], v=op[2]).replace(".relaxed.", ".release." if op[0] != "st" else ".relaxed.")
            else:
                k = op[2]
                body += LD.format(s=s, a=op[1], k=4 + k).replace(".relaxed.", ".acquire." if op[0] == "ld.acquire"
                                                                    else ".relaxed.")
                if last:
                    outs += OUT.format(o=4 * k, k=4 + k)
                else:
                    body += OUT.format(o=4 * k, k=4 + k)
        body += outs + "    bra DONE;\n"
    return HEAD.format(name=name, doc=doc, role=ROLE[place]) + body + TAIL


SHAPES = {
    "mp": ("message passing: T0 x=1; F; y=1 | T1 r0=y; F; r1=x",
           [[("st", X, 1), "F", ("st", Y, 1)], [("ld", Y, 0), "F", ("ld", X, 1)]]),
    "mp_writer_fence": ("MP with a fence in the writer only",
                        [[("st", X, 1), "F", ("st", Y, 1)], [("ld", Y, 0), ("ld", X, 1)]]),
    "mp_relacq": ("MP through release/acquire: T0 x=1; st.release y=1 | T1 r0=ld.acquire y; r1=x",
                  [[("st", X, 1), ("st.release", Y, 1)], [("ld.acquire", Y, 0), ("ld", X, 1)]]),
    "sb": ("store buffering: T0 x=1; F; r0=y | T1 y=1; F; r1=x",
           [[("st", X, 1), "F", ("ld", Y, 0)], [("st", Y, 1), "F", ("ld", X, 1)]]),
    "lb": ("load buffering: T0 r0=x; F; y=1 | T1 r1=y; F; x=1",
           [[("ld", X, 0), "F", ("st", Y, 1)], [("ld", Y, 1), "F", ("st", X, 1)]]),
    "iriw": ("independent reads of independent writes: T0 x=1 | T1 y=1 | T2 r0=x; F; r1=y | T3 r2=y; F; r3=x",
             [[("st", X, 1)], [("st", Y, 1)], [("ld", X, 0), "F", ("ld", Y, 1)], [("ld", Y, 2), "F", ("ld", X, 3)]]),
    "corr": ("coherence of read-read: T0 x=1; x=2 | T1 r0=x; F; r1=x",
             [[("st", X, 1), ("st", X, 2)], [("ld", X, 0), "F", ("ld", X, 1)]]),
}
#: (file stem, shape, placement, fence)
TESTS = [
    ("mp", "mp", "gpu", None), ("mp_sc_gpu", "mp", "gpu", "fence.sc.gpu"),
    ("mp_acqrel_gpu", "mp", "gpu", "fence.acq_rel.gpu"), ("mp_sc_sys", "mp", "sys", "fence.sc.sys"),
    ("mp_sc_cta_across_ctas", "mp", "gpu", "fence.sc.cta"), ("mp_cta", "mp", "cta", None),
    ("mp_sc_cta", "mp", "cta", "fence.sc.cta"), ("mp_writer_fence", "mp_writer_fence", "gpu", "fence.sc.gpu"),
    ("mp_relacq_cta", "mp_relacq", "cta", None), ("mp_relacq_gpu", "mp_relacq", "gpu", None),
    ("sb", "sb", "gpu", None), ("sb_sc_gpu", "sb", "gpu", "fence.sc.gpu"), ("sb_cta", "sb", "cta", None),
    ("sb_sc_cta", "sb", "cta", "fence.sc.cta"), ("sb_sc_cta_across_ctas", "sb", "gpu", "fence.sc.cta"),
    ("lb", "lb", "gpu", None), ("lb_sc_gpu", "lb", "gpu", "fence.sc.gpu"),
    ("iriw", "iriw", "gpu", None), ("iriw_sc_gpu", "iriw", "gpu", "fence.sc.gpu"),
    ("corr", "corr", "gpu", None), ("corr_cta", "corr", "cta", None),
]

if __name__ == "__main__":
    here = Path(__file__).parent
    for stem, shape, place, fence in TESTS:
        doc, roles = SHAPES[shape]
        text = threads(stem, f"{doc}; placement {place}; F = {fence or 'nothing'}", place, fence, roles,
                       last=shape in OUT_LAST)
        (here / f"{stem}.ptx").write_text(text)
