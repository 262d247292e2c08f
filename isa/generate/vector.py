"""Vector-core kernels: row reductions (sum / max) and a row softmax, for the Ascend-like assembly.

Rows are cut into tiles that fit UB; tiles are spread over vector cores (``block_idx`` stride
``block_num``). A row of C elements is folded chunk by chunk (256 B = one repeat per chunk, one
repeat per row of the tile) with ``vadd``/``vmax``, the last partial chunk under a tail mask, and
reduced with ``vcadd``/``vcmax`` (one result per repeat = per row)::

    text = reduce_kernel(ReduceConfig(op="sum", dtype="f16", rows=300, cols=1000))
"""

from __future__ import annotations

from dataclasses import dataclass

from isa.errors import InputError

from .gemm import _Asm, header

SIZE = {"f16": 2, "f32": 4}
UB = 196608
FULL = 0xFFFFFFFFFFFFFFFF


@dataclass(frozen=True)
class ReduceConfig:
    op: str = "sum"
    dtype: str = "f16"
    rows: int = 64
    cols: int = 1024


def _check(dtype: str, rows: int, cols: int) -> None:
    if dtype not in SIZE:
        raise InputError(f"--dtype {dtype} is not supported here", expected=sorted(SIZE))
    if rows < 1 or cols < 1:
        raise InputError(f"--rows and --cols must be positive (got {rows}, {cols})")
    pitch = (cols * SIZE[dtype] + 31) // 32 * 32
    if pitch // 32 > 255:
        most = 255 * 32 // SIZE[dtype]
        raise InputError(f"--cols {cols}: a row of {cols * SIZE[dtype]} bytes needs a repeat stride of "
                         f"{pitch // 32} blocks, above the 255 the repeat-stride field holds; the largest row "
                         f"this generator supports is {255 * 32} bytes: --cols {most} or fewer for {dtype} "
                         f"(a longer row: reduce it in pieces of at most {most} columns and add the partial results)")


def _mask(n: int, lanes: int) -> tuple[int, int]:
    """(mask_high, mask_low) selecting the first ``n`` lanes."""
    lo = (1 << min(n, 64)) - 1
    hi = (1 << max(0, n - 64)) - 1 if lanes == 128 else 0
    return hi, lo


def _tiling(dtype, cols, extra_per_row):
    size = SIZE[dtype]
    pitch = (cols * size + 31) // 32 * 32
    lanes = 256 // size
    nfull, tail = divmod(cols, lanes)
    acc = 0 if cols <= lanes else 256
    tr = min(255, (UB - 1024) // (pitch + acc + extra_per_row))
    return size, pitch, lanes, nfull, tail, tr


def _fold_rows(A: _Asm, dt, kind, x, acc, out, pitch, lanes, nfull, tail, red_tail) -> None:
    """Per-row reduction of the tile at ``x`` (``%rows`` rows, pitch bytes apart) into ``out``."""
    vop = {"sum": "vadd", "max": "vmax"}[kind]
    rs = pitch // 32
    if nfull == 0 or (nfull == 1 and tail == 0):
        n = tail if nfull == 0 else lanes
        if n < lanes:
            A("set_vector_mask {:#x}, {:#x}".format(*_mask(n, lanes)))
        _reduce(A, dt, kind, out, x, rs)
        if n < lanes:
            A(f"set_vector_mask {FULL:#x}, {FULL:#x}")
        return
    if nfull >= 2:
        A(f"{vop}.{dt} ub[{acc}], ub[{x}], ub[{x + 256}], %rows, 1, 1, 1, 8, {rs}, {rs}")
        start = 2
    else:
        A(f"vcopy.{dt} ub[{acc}], ub[{x}], %rows, 1, 1, 8, {rs}")
        start = 1
    for j in range(start, nfull):
        A("pipe_barrier PIPE_V")
        A(f"{vop}.{dt} ub[{acc}], ub[{acc}], ub[{x + 256 * j}], %rows, 1, 1, 1, 8, 8, {rs}")
    if tail:
        A("pipe_barrier PIPE_V")
        A("set_vector_mask {:#x}, {:#x}".format(*_mask(tail, lanes)))
        A(f"{vop}.{dt} ub[{acc}], ub[{acc}], ub[{x + 256 * nfull}], %rows, 1, 1, 1, 8, 8, {rs}")
        A(f"set_vector_mask {FULL:#x}, {FULL:#x}")
    A("pipe_barrier PIPE_V")
    _reduce(A, dt, kind, out, acc, 8)


def _reduce(A, dt, kind, out, src, rs):
    if kind == "sum":
        A(f"vcadd.{dt} ub[{out}], ub[{src}], %rows, 1, 1, {rs}, 0")
    else:
        A(f"vcmax.{dt} ub[{out}], ub[{src}], %rows, 1, 1, {rs}, ONLY_VALUE")


def _tile_prologue(A, tr, rows, size, cols, pitch, x):
    A(f"mul %r0, %t, {tr}")
    A(f"sub %rows, {rows}, %r0")
    A(f"min %rows, %rows, {tr}")
    A(f"mul %t0, %r0, {cols * size}")
    A("add %t0, %t0, %x")
    A("wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    gap = (pitch - (cols * size + 31) // 32 * 32) // 32
    A(f"copy_gm_to_ubuf_align_b{8 * size} ub[{x}], gm[%t0], 0, %rows, {cols * size}, 0, 0, 0, {gap}")
    A("set_flag PIPE_MTE2, PIPE_V, EVENT_ID0")
    A("wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0")


def reduce_kernel(cfg: ReduceConfig, name: str | None = None) -> str:
    """``y[r] = sum_c x[r, c]`` (or max) for an R x C row-major matrix, on vector cores."""
    if cfg.op not in ("sum", "max"):
        raise InputError(f"--op must be sum or max, got {cfg.op}")
    _check(cfg.dtype, cfg.rows, cfg.cols)
    dt, R, C = cfg.dtype, cfg.rows, cfg.cols
    size, pitch, lanes, nfull, tail, tr = _tiling(dt, C, 0)
    tr = min(tr, (UB - 1024) // (pitch + 256 + size))
    x = 0
    acc = (tr * pitch + 255) // 256 * 256
    out = acc + tr * 256
    ntiles = -(-R // tr)
    name = name or f"reduce_{cfg.op}_{dt}_{R}x{C}"
    A = _Asm()
    A("set_mask_norm")
    A(f"set_vector_mask {FULL:#x}, {FULL:#x}")
    A("set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("mov %t, block_idx")
    A.label("tile_loop")
    A(f"cmp.ge %p0, %t, {ntiles}")
    A("@%p0 bra done")
    _tile_prologue(A, tr, R, size, C, pitch, x)
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    _fold_rows(A, dt, cfg.op, x, acc, out, pitch, lanes, nfull, tail, None)
    A("set_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A(f"mul %t0, %r0, {size}")
    A("add %t0, %t0, %y")
    A(f"mul %t1, %rows, {size}")
    A(f"copy_ubuf_to_gm_align_b{8 * size} gm[%t0], ub[{out}], 0, 1, %t1, 0, 0, 0, 0")
    A("set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    A("set_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("add %t, %t, block_num")
    A("bra tile_loop")
    A.label("done")
    A("wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    A("wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0")
    A("ret")
    lines = [".arch davinci-a2", header("reduce", reduce=cfg.op, dtype=dt, rows=R, cols=C),
             f"// y[{R}] = {cfg.op} over each row of x[{R}x{C}] ({dt}); {ntiles} tiles of {tr} rows; "
             f"{nfull} full chunks + {tail} tail lanes per row",
             f".kernel {name} .vector (.gm .{dt} %x[{R * C}], .gm .{dt} %y[{R}])", "{"]
    return "\n".join(lines + A.lines + ["}"]) + "\n"


@dataclass(frozen=True)
class SoftmaxConfig:
    dtype: str = "f16"
    rows: int = 64
    cols: int = 1024


def softmax_kernel(cfg: SoftmaxConfig, name: str | None = None) -> str:
    """Row softmax ``y = exp(x - max) / sum(exp(x - max))`` on vector cores: row max by ``vmax``
    + ``vcmax``, per-row ``vadds``/``vexp``/``vmuls`` in counter mask mode with the row's scalar
    read back through ``ld`` (PIPE_S, after a V -> S flag), row sums by ``vadd`` + ``vcadd``."""
    _check(cfg.dtype, cfg.rows, cfg.cols)
    dt, R, C = cfg.dtype, cfg.rows, cfg.cols
    size, pitch, lanes, nfull, tail, tr = _tiling(dt, C, 0)
    tr = min(tr, (UB - 2048) // (pitch + 256 + 2 * size))
    x = 0
    acc = (tr * pitch + 255) // 256 * 256
    mx = acc + tr * 256
    sm = mx + (tr * size + 31) // 32 * 32
    ntiles = -(-R // tr)
    name = name or f"softmax_{dt}_{R}x{C}"
    A = _Asm()
    A("set_mask_norm")
    A(f"set_vector_mask {FULL:#x}, {FULL:#x}")
    A("set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    A("mov %t, block_idx")
    A.label("tile_loop")
    A(f"cmp.ge %p0, %t, {ntiles}")
    A("@%p0 bra done")
    _tile_prologue(A, tr, R, size, C, pitch, x)
    _fold_rows(A, dt, "max", x, acc, mx, pitch, lanes, nfull, tail, None)
    A("set_flag PIPE_V, PIPE_S, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_S, EVENT_ID0")
    A("set_mask_count")
    A(f"set_vector_mask 0, {C}")
    A("mov %r, 0")
    A.label("sub_exp")
    A(f"mul %t1, %r, {size}")
    A(f"ld.{dt} %m, ub[%t1+{mx}]")
    A("mul.f32 %m, %m, -1.0")
    A(f"mul %t2, %r, {pitch}")
    A(f"vadds.{dt} ub[%t2], ub[%t2], %m, 0, 1, 1, 8, 8")
    A("pipe_barrier PIPE_V")
    A(f"vexp.{dt} ub[%t2], ub[%t2], 0, 1, 1, 8, 8")
    A("add %r, %r, 1")
    A("cmp.lt %p1, %r, %rows")
    A("@%p1 bra sub_exp")
    A("set_mask_norm")
    A(f"set_vector_mask {FULL:#x}, {FULL:#x}")
    A("pipe_barrier PIPE_V")
    _fold_rows(A, dt, "sum", x, acc, sm, pitch, lanes, nfull, tail, None)
    A("set_flag PIPE_V, PIPE_S, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_S, EVENT_ID0")
    A("set_mask_count")
    A(f"set_vector_mask 0, {C}")
    A("mov %r, 0")
    A.label("scale")
    A(f"mul %t1, %r, {size}")
    A(f"ld.{dt} %s, ub[%t1+{sm}]")
    A("div.f32 %s, 1.0, %s")
    A(f"mul %t2, %r, {pitch}")
    A(f"vmuls.{dt} ub[%t2], ub[%t2], %s, 0, 1, 1, 8, 8")
    A("add %r, %r, 1")
    A("cmp.lt %p1, %r, %rows")
    A("@%p1 bra scale")
    A("set_mask_norm")
    A(f"set_vector_mask {FULL:#x}, {FULL:#x}")
    A("set_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A("wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0")
    A(f"mul %t0, %r0, {C * size}")
    A("add %t0, %t0, %y")
    gap = (pitch - (C * size + 31) // 32 * 32) // 32
    A(f"copy_ubuf_to_gm_align_b{8 * size} gm[%t0], ub[{x}], 0, %rows, {C * size}, 0, 0, {gap}, 0")
    A("set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    A("add %t, %t, block_num")
    A("bra tile_loop")
    A.label("done")
    A("wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0")
    A("ret")
    lines = [".arch davinci-a2", header("softmax", dtype=dt, rows=R, cols=C),
             f"// y = softmax over each row of x[{R}x{C}] ({dt}); {ntiles} tiles of {tr} rows",
             f".kernel {name} .vector (.gm .{dt} %x[{R * C}], .gm .{dt} %y[{R * C}])", "{"]
    return "\n".join(lines + A.lines + ["}"]) + "\n"
