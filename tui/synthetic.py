"""A large, valid PTX file for responsiveness checks (``bench/tui_open.py``, the TUI tests).

Each kernel has an outer loop over a parameter bound and an inner loop of 64 trips around a long
straight run of fp32 FMAs, shared loads and integer work, so the views have loops, classes and
several thousand lines to scroll::

    $L__inner_0:
        ld.shared.f32 %f3, [%r5+4];
        fma.rn.f32 %f1, %f2, %f3, %f1;
"""

from __future__ import annotations

_BODY = (
    "\tld.shared.f32 \t%f{a}, [%r5+{off}];",
    "\tfma.rn.f32 \t%f{b}, %f{a}, %f{c}, %f{b};",
    "\tadd.s32 \t%r6, %r6, {k};",
    "\tmul.f32 \t%f{c}, %f{b}, %f{a};",
)


def synthetic_ptx(lines: int = 4500, kernels: int = 1) -> str:
    """PTX text of about ``lines`` lines split over ``kernels`` entries."""
    out = [".version 8.0", ".target sm_80", ".address_size 64", ""]
    per = max(40, lines // kernels)
    for k in range(kernels):
        out += [f".visible .entry synth_kernel_{k}(", "\t.param .u64 synth_p0,", "\t.param .u32 synth_n", ")", "{",
                "\t.reg .pred \t%p<4>;", "\t.reg .b32 \t%r<16>;", "\t.reg .f32 \t%f<40>;", "\t.reg .b64 \t%rd<8>;",
                "\t.shared .align 4 .b8 synth_smem[4096];", "",
                "\tld.param.u64 \t%rd1, [synth_p0];", "\tld.param.u32 \t%r1, [synth_n];",
                "\tmov.u32 \t%r5, synth_smem;", "\tmov.u32 \t%r2, 0;",
                f"$L__outer_{k}:", "\tmov.u32 \t%r3, 0;", f"$L__inner_{k}:"]
        n = per - 30
        for i in range(n):
            out.append(_BODY[i % 4].format(a=2 + i % 8, b=10 + i % 8, c=20 + i % 8, off=4 * (i % 512), k=i % 7 + 1))
        out += ["\tadd.s32 \t%r3, %r3, 1;", "\tsetp.lt.u32 \t%p1, %r3, 64;", f"\t@%p1 bra \t$L__inner_{k};",
                "\tadd.s32 \t%r2, %r2, 1;", "\tsetp.lt.u32 \t%p2, %r2, %r1;", f"\t@%p2 bra \t$L__outer_{k};",
                "\tst.global.f32 \t[%rd1], %f10;", "\tret;", "", "}", ""]
    return "\n".join(out) + "\n"
