"""ptxas's order within a basic block (sim.timing.schedule): what it hoists and what it keeps."""

from types import SimpleNamespace

import numpy as np
import pytest

import isa
import sim
from isa.semantics import describe
from sim.timing.schedule import block_orders, reorder
from sim.timing.sm import load_params, op_facts

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .f32 %f<64>; .reg .b32 %r<16>; .reg .b64 %rd<8>;
    .shared .align 16 .b8 sbuf[4096];
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r5, sbuf;
    shl.b32 %r6, %r1, 2;
    add.s32 %r6, %r6, %r5;
    mov.f32 %f1, 0f3F800000;
"""
TAIL = """    st.global.f32 [%rd4], %f40;
    ret;
}
"""


def _pairs(interleaved: bool) -> str:
    """8 chains of two dependent FFMAs: step 1 of chain c writes %f(2+c), step 2 %f(20+c)."""
    one = [f"    fma.rn.f32 %f{2 + c}, %f1, %f1, %f1;" for c in range(8)]
    two = [f"    fma.rn.f32 %f{20 + c}, %f{2 + c}, %f1, %f1;" for c in range(8)]
    body = one + two if interleaved else [x for p in zip(one, two) for x in p]
    total = ["    add.f32 %f40, %f20, %f21;"] + [f"    add.f32 %f40, %f40, %f{20 + c};" for c in range(2, 8)]
    return HEAD + "\n".join(body + total) + "\n" + TAIL


def _cycles(src: str, block: int = 32) -> float:
    r = sim.run_kernel(isa.loads(src), "k", 1, block, [np.zeros(block, np.float32)], timing="h200")
    return r.timing["sm_cycles"]


def test_dependent_pairs_are_interleaved_like_independent_chains():
    # PTX order pays the 4-cycle FFMA latency after each pair's first step (8 x 3 cycles on one
    # warp); ptxas interleaves the chains, so both orders cost the same
    assert _cycles(_pairs(False)) == pytest.approx(_cycles(_pairs(True)), abs=2)


def _loads(fence: bool) -> str:
    body = []
    for j in range(8):
        body.append(f"    ld.shared.f32 %f{2 + j}, [%r6+{128 * j}];")
        body.append(f"    add.f32 %f{20 + j % 4}, %f{20 + j % 4}, %f{2 + j};")
        if fence:
            body.append("    bar.sync 0;")
    body.append("    add.f32 %f40, %f20, %f21;")
    return HEAD + "\n".join(body) + "\n" + TAIL


def test_loads_are_hoisted_above_their_uses_but_not_across_a_barrier():
    lds = load_params().lat["lds"]
    hoisted, fenced = _cycles(_loads(False)), _cycles(_loads(True))
    # eight loads in flight together: one LDS latency, not eight
    assert fenced - hoisted > 6 * lds


def _order(body: str):
    fn = isa.loads(HEAD + body + TAIL).functions[0]
    infos = [describe(i) for i in fn.instructions]
    state = SimpleNamespace(funcs=[SimpleNamespace(fn=fn, base=0)], instructions=fn.instructions, infos=infos)
    facts = op_facts(state, load_params())
    orders = block_orders(state, facts, 276.0)
    return fn, orders


def test_a_load_stays_after_a_store_to_its_space():
    chain = "".join(f"    fma.rn.f32 %f{3 + j}, %f{2 + j}, %f1, %f1;\n" for j in range(16))   # 64 cycles
    body = "    mov.f32 %f2, %f1;\n" + chain + """    st.shared.f32 [%r6], %f18;
    ld.shared.f32 %f30, [%r6+128];
    ld.global.f32 %f31, [%rd4+256];
    add.f32 %f40, %f30, %f31;
"""
    fn, orders = _order(body)
    (start, order), = orders.items()
    text = [fn.instructions[p].opcode + "." + ".".join(fn.instructions[p].modifiers) for p in order]
    st = text.index("st.shared.f32")
    assert text.index("ld.shared.f32") > st                 # may alias the store
    assert text.index("ld.global.f32") < st                 # another space: hoisted to the top
    assert order[-1] == start + len(order) - 1              # the block's last instruction stays last


def test_a_non_coherent_load_is_hoisted_above_a_global_store():
    # the write pass of softmax_rows_warp: y[c] = f(x[c]) four times per iteration, x read with
    # ld.global.nc (read-only for the kernel: no store of it can change the data). ptxas puts the
    # iteration's four LDG.E.CONSTANT above the four STG.E (local ptxas 13.0 SASS of
    # ../shared/corpus/ptx/softmax.sm_90.ptx); a plain ld.global stays after the store before it
    def body(ld):
        return "".join(f"""    {ld} %f{2 + k}, [%rd4+{512 * (k + 1)}];
    mul.f32 %f{10 + k}, %f{2 + k}, %f1;
    st.global.f32 [%rd4+{4 + 512 * (k + 1)}], %f{10 + k};
""" for k in range(4)) + "    mov.f32 %f40, %f1;\n"

    def loads_before_first_store(ld):
        fn, orders = _order(body(ld))
        (start, order), = orders.items() if orders else ((0, tuple(range(len(fn.instructions)))),)
        text = [fn.instructions[p].opcode + "." + ".".join(fn.instructions[p].modifiers) for p in order]
        st = text.index("st.global.f32")
        return sum(1 for t in text[:st] if t.startswith("ld.global"))

    assert loads_before_first_store("ld.global.nc.f32") == 4
    assert loads_before_first_store("ld.global.f32") == 1


def test_reorder_rewrites_whole_runs_only():
    orders = {10: (12, 10, 11, 13)}
    s = [(9, None), (10, "a"), (11, "b"), (12, "c"), (13, "d"), (10, "e"), (11, "f")]
    assert reorder(s, orders) == [(9, None), (12, "c"), (10, "a"), (11, "b"), (13, "d"), (10, "e"), (11, "f")]


def test_a_label_no_branch_names_does_not_end_the_block():
    """Triton marks source lines with labels (``$L__tmp3:``) that no branch targets: the block goes
    on through them, so the loads are still hoisted."""
    plain = _loads(False)
    marked = plain.replace("    add.f32 %f21,", "$L__tmp1:\n    add.f32 %f21,").replace(
        "    ld.shared.f32 %f6,", "$L__tmp2:\n    ld.shared.f32 %f6,")
    assert "$L__tmp2:" in marked
    assert _cycles(marked) == _cycles(plain)


def test_the_load_window_moves_along_a_chain_that_ends_in_a_barrier():
    """An unrolled shared-memory dot product (two LDS per FFMA of one accumulator chain, a bar.sync
    closing the block, as in the SGEMM tiles): ptxas keeps a window of loads ahead of their FFMAs for
    the whole block. The closing barrier orders every load before it but does not read them: counted
    as their consumer it kept every hoisted load in flight to the end of the block, so after the
    first MAX_INFLIGHT_REGISTERS the loads issued right before the FFMA that reads them."""
    from sim.timing.schedule import MAX_INFLIGHT_REGISTERS

    n = 24
    body = ["    mov.f32 %f100, 0f00000000;"]
    for j in range(n):
        body.append(f"    ld.shared.f32 %f{2 * j + 2}, [%r6+{4 * j}];")
        body.append(f"    ld.shared.f32 %f{2 * j + 3}, [%r6+{1024 + 132 * j}];")
        body.append(f"    fma.rn.f32 %f{101 + j}, %f{2 * j + 2}, %f{2 * j + 3}, %f{100 + j};")
    body.append("    bar.sync 0;")
    body.append(f"    add.f32 %f40, %f{100 + n}, %f1;")
    src = (HEAD.replace(".reg .f32 %f<64>;", ".reg .f32 %f<160>;") + "\n".join(body) + "\n" + TAIL)
    fn = isa.loads(src).functions[0]
    infos = [describe(i) for i in fn.instructions]
    state = SimpleNamespace(funcs=[SimpleNamespace(fn=fn, base=0)], instructions=fn.instructions, infos=infos)
    orders = block_orders(state, op_facts(state, load_params()), 276.0)
    order = next(o for o in orders.values() if len(o) > 3 * n)
    ops = [fn.instructions[p] for p in order]
    pos = {p: k for k, p in enumerate(order)}
    lds = [k for k, i in enumerate(ops) if i.opcode == "ld"]
    gaps = []
    for k, i in enumerate(ops):
        if i.opcode != "fma":
            continue
        # loads issued between this FFMA's later operand and the FFMA itself
        src_regs = {o.name for o in i.operands[1:3]}
        at = max(pos[p] for p in order if fn.instructions[p].opcode == "ld"
                 and fn.instructions[p].operands[0].name in src_regs)
        gaps.append(sum(1 for x in lds if at < x < k))
    # while loads remain to be hoisted, every FFMA finds a window of loads issued after its operands
    steady = gaps[:n - MAX_INFLIGHT_REGISTERS // 2]
    assert min(steady) >= MAX_INFLIGHT_REGISTERS - 2, gaps


def test_hoisted_loads_are_bounded_by_their_result_registers():
    """ld.shared.v4 (LDS.128) results take four registers each: at most MAX_INFLIGHT_REGISTERS / 4
    of them are hoisted ahead of their uses (sgemm_vec4's SASS: three LDS.128, then FFMAs)."""
    from sim.timing.schedule import MAX_INFLIGHT_REGISTERS

    n = 8
    body = []
    for j in range(n):
        r = 4 * j + 2
        body.append(f"    ld.shared.v4.f32 {{%f{r}, %f{r + 1}, %f{r + 2}, %f{r + 3}}}, [%r6+{16 * j}];")
        body.append(f"    add.f32 %f{100 + j}, %f{r}, %f{r + 3};")
    body.append("    add.f32 %f40, %f100, %f107;")
    src = HEAD.replace(".reg .f32 %f<64>;", ".reg .f32 %f<160>;") + "\n".join(body) + "\n" + TAIL
    fn = isa.loads(src).functions[0]
    infos = [describe(i) for i in fn.instructions]
    state = SimpleNamespace(funcs=[SimpleNamespace(fn=fn, base=0)], instructions=fn.instructions, infos=infos)
    orders = block_orders(state, op_facts(state, load_params()), 276.0)
    order = next(iter(orders.values()))
    ops = [fn.instructions[p].opcode + "." + ".".join(fn.instructions[p].modifiers) for p in order]
    first_use = ops.index("add.f32")
    assert ops[:first_use].count("ld.shared.v4.f32") == MAX_INFLIGHT_REGISTERS // 4 == 3
    assert ops.count("ld.shared.v4.f32") == n
