.arch davinci-a2
.meta op=gemm m=100 n=96 k=160 dtype=s8 out=s8 layout_a=row layout_b=col l1_tile=64,64,128 l0_tile=64,64,64 stages=2 epilogue=requant scale=0.000244140625 offset=0
// C[100x96] (s8) = A[100x160] (row-major) @ B[160x96] (col-major), s8 in, s32 accumulate; 4 blocks of 64x64, swizzle <3,0>
.kernel gemm_s8_100x96x160_s2 .cube (.gm .s8 %a[16000], .gm .s8 %b[15360], .gm .s8 %c[9600])
{
    set_flag PIPE_MTE1, PIPE_MTE2, EVENT_ID0
    set_flag PIPE_MTE1, PIPE_MTE2, EVENT_ID1
    set_flag PIPE_M, PIPE_MTE1, EVENT_ID0
    set_flag PIPE_M, PIPE_MTE1, EVENT_ID1
    set_flag PIPE_FIX, PIPE_M, EVENT_ID0
    set_quant_pre 0x400039800000
    mov %l1s, 0
    mov %l0s, 0
    mov %blk, block_idx
block_loop:
    cmp.ge %p0, %blk, 4
    @%p0 bra done
    div %g, %blk, 6
    rem %ing, %blk, 6
    mul %mi, %g, 3
    sub %rows, 2, %mi
    min %rows, %rows, 3
    rem %t0, %ing, %rows
    add %mi, %mi, %t0
    div %ni, %ing, %rows
    mul %m0, %mi, 64
    mul %n0, %ni, 64
    sub %mact, 100, %m0
    min %mact, %mact, 64
    sub %nact, 96, %n0
    min %nact, %nact, 64
    add %M1, %mact, 15
    shr %M1, %M1, 4
    add %N1, %nact, 15
    shr %N1, %N1, 4
    wait_flag PIPE_FIX, PIPE_M, EVENT_ID0
    mov %kk, 0
k_loop:
    sub %kact, 160, %kk
    min %kact, %kact, 128
    mul %l1a, %l1s, 8192
    mul %l1b, %l1s, 8192
    add %l1b, %l1b, 16384
    wait_flag PIPE_MTE1, PIPE_MTE2, %l1s
    mul %t0, %m0, 160
    add %t0, %t0, %kk
    mul %t0, %t0, 1
    add %t0, %t0, %a
    copy_gm_to_cbuf_multi_nd2nz_b8 l1[%l1a], gm[%t0], 0, 1, %mact, %kact, 0, 160, 64, 1, 0
    mul %t0, %n0, 160
    add %t0, %t0, %kk
    mul %t0, %t0, 1
    add %t0, %t0, %b
    copy_gm_to_cbuf_multi_nd2nz_b8 l1[%l1b], gm[%t0], 0, 1, %nact, %kact, 0, 160, 64, 1, 0
    set_flag PIPE_MTE2, PIPE_MTE1, %l1s
    wait_flag PIPE_MTE2, PIPE_MTE1, %l1s
    mov %kk0, 0
k0_loop:
    sub %k0act, %kact, %kk0
    min %k0act, %k0act, 64
    add %K1, %k0act, 31
    div %K1, %K1, 32
    mul %l0a, %l0s, 4096
    mul %l0b, %l0s, 4096
    div %kb0, %kk0, 32
    wait_flag PIPE_M, PIPE_MTE1, %l0s
    cmp.eq %p2, %k0act, 64
    @!%p2 bra tail_loads
    mul %t2, %kb0, 2048
    add %t2, %t2, %l1a
    load_cbuf_to_ca.s8 l0a[%l0a+0], l1[%t2+0], 0, %M1, 1, 1, 0, 0, 0
    load_cbuf_to_ca.s8 l0a[%l0a+512], l1[%t2+2048], 0, %M1, 1, 1, 0, 0, 0
    mul %t4, %N1, 512
    mov %t1, %l0b
    mul %t2, %kb0, 2048
    add %t2, %t2, %l1b
    load_cbuf_to_cb.s8 l0b[%t1], l1[%t2+0], 0, %N1, 1, 0, 0, 0, 0
    add %t1, %t1, %t4
    load_cbuf_to_cb.s8 l0b[%t1], l1[%t2+2048], 0, %N1, 1, 0, 0, 0, 0
    add %t1, %t1, %t4
    bra loads_done
tail_loads:
    mov %kb, 0
lda_loop:
    mul %t1, %kb, 512
    add %t1, %t1, %l0a
    add %t2, %kb0, %kb
    mul %t2, %t2, 4
    sub %t3, %K1, 1
    load_cbuf_to_ca.s8 l0a[%t1], l1[%l1a], %t2, %M1, 1, %t3, 0, 0, 0
    add %kb, %kb, 1
    cmp.lt %p1, %kb, %K1
    @%p1 bra lda_loop
    mov %kb, 0
ldb_loop:
    mul %t1, %kb, %N1
    mul %t1, %t1, 512
    add %t1, %t1, %l0b
    add %t2, %kb0, %kb
    mul %t2, %t2, 4
    load_cbuf_to_cb.s8 l0b[%t1], l1[%l1b], %t2, %N1, 1, 0, 0, 0, 0
    add %kb, %kb, 1
    cmp.lt %p1, %kb, %K1
    @%p1 bra ldb_loop
loads_done:
    set_flag PIPE_MTE1, PIPE_M, %l0s
    wait_flag PIPE_MTE1, PIPE_M, %l0s
    cmp.eq %t1, %kk, 0
    cmp.eq %t2, %kk0, 0
    and %init, %t1, %t2
    mad.s8 l0c[0], l0a[%l0a], l0b[%l0b], %mact, %k0act, %nact, 0, 0, 0, %init
    set_flag PIPE_M, PIPE_MTE1, %l0s
    xor %l0s, %l0s, 1
    add %kk0, %kk0, 64
    cmp.lt %p1, %kk0, %kact
    @%p1 bra k0_loop
    set_flag PIPE_MTE1, PIPE_MTE2, %l1s
    xor %l1s, %l1s, 1
    add %kk, %kk, 128
    cmp.lt %p1, %kk, 160
    @%p1 bra k_loop
    mul %t0, %m0, 96
    add %t0, %t0, %n0
    mul %t0, %t0, 1
    add %t0, %t0, %c
    shl %t1, %M1, 4
    set_flag PIPE_M, PIPE_FIX, EVENT_ID0
    wait_flag PIPE_M, PIPE_FIX, EVENT_ID0
    copy_matrix_cc_to_gm.s32 gm[%t0], l0c[0], 0, %nact, %mact, 96, %t1, 0, REQ8, 0, 0, 1
    set_flag PIPE_FIX, PIPE_M, EVENT_ID0
    add %blk, %blk, block_num
    bra block_loop
done:
    wait_flag PIPE_MTE1, PIPE_MTE2, EVENT_ID0
    wait_flag PIPE_MTE1, PIPE_MTE2, EVENT_ID1
    wait_flag PIPE_M, PIPE_MTE1, EVENT_ID0
    wait_flag PIPE_M, PIPE_MTE1, EVENT_ID1
    wait_flag PIPE_FIX, PIPE_M, EVENT_ID0
    ret
}
