.arch davinci-a2
.meta op=softmax dtype=f32 rows=64 cols=500
// y = softmax over each row of x[64x500] (f32); 1 tiles of 85 rows
.kernel softmax_f32_64x500 .vector (.gm .f32 %x[32000], .gm .f32 %y[32000])
{
    set_mask_norm
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    mov %t, block_idx
tile_loop:
    cmp.ge %p0, %t, 1
    @%p0 bra done
    mul %r0, %t, 85
    sub %rows, 64, %r0
    min %rows, %rows, 85
    mul %t0, %r0, 2000
    add %t0, %t0, %x
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    copy_gm_to_ubuf_align_b32 ub[0], gm[%t0], 0, %rows, 2000, 0, 0, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vmax.f32 ub[171520], ub[0], ub[256], %rows, 1, 1, 1, 8, 63, 63
    pipe_barrier PIPE_V
    vmax.f32 ub[171520], ub[171520], ub[512], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vmax.f32 ub[171520], ub[171520], ub[768], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vmax.f32 ub[171520], ub[171520], ub[1024], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vmax.f32 ub[171520], ub[171520], ub[1280], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vmax.f32 ub[171520], ub[171520], ub[1536], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    set_vector_mask 0x0, 0xfffffffffffff
    vmax.f32 ub[171520], ub[171520], ub[1792], %rows, 1, 1, 1, 8, 8, 63
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    pipe_barrier PIPE_V
    vcmax.f32 ub[193280], ub[171520], %rows, 1, 1, 8, ONLY_VALUE
    set_flag PIPE_V, PIPE_S, EVENT_ID0
    wait_flag PIPE_V, PIPE_S, EVENT_ID0
    set_mask_count
    set_vector_mask 0, 500
    mov %r, 0
sub_exp:
    mul %t1, %r, 4
    ld.f32 %m, ub[%t1+193280]
    mul.f32 %m, %m, -1.0
    mul %t2, %r, 2016
    vadds.f32 ub[%t2], ub[%t2], %m, 0, 1, 1, 8, 8
    pipe_barrier PIPE_V
    vexp.f32 ub[%t2], ub[%t2], 0, 1, 1, 8, 8
    add %r, %r, 1
    cmp.lt %p1, %r, %rows
    @%p1 bra sub_exp
    set_mask_norm
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    pipe_barrier PIPE_V
    vadd.f32 ub[171520], ub[0], ub[256], %rows, 1, 1, 1, 8, 63, 63
    pipe_barrier PIPE_V
    vadd.f32 ub[171520], ub[171520], ub[512], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f32 ub[171520], ub[171520], ub[768], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f32 ub[171520], ub[171520], ub[1024], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f32 ub[171520], ub[171520], ub[1280], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f32 ub[171520], ub[171520], ub[1536], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    set_vector_mask 0x0, 0xfffffffffffff
    vadd.f32 ub[171520], ub[171520], ub[1792], %rows, 1, 1, 1, 8, 8, 63
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    pipe_barrier PIPE_V
    vcadd.f32 ub[193632], ub[171520], %rows, 1, 1, 8, 0
    set_flag PIPE_V, PIPE_S, EVENT_ID0
    wait_flag PIPE_V, PIPE_S, EVENT_ID0
    set_mask_count
    set_vector_mask 0, 500
    mov %r, 0
scale:
    mul %t1, %r, 4
    ld.f32 %s, ub[%t1+193632]
    div.f32 %s, 1.0, %s
    mul %t2, %r, 2016
    vmuls.f32 ub[%t2], ub[%t2], %s, 0, 1, 1, 8, 8
    add %r, %r, 1
    cmp.lt %p1, %r, %rows
    @%p1 bra scale
    set_mask_norm
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    mul %t0, %r0, 2000
    add %t0, %t0, %y
    copy_ubuf_to_gm_align_b32 gm[%t0], ub[0], 0, %rows, 2000, 0, 0, 0, 0
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    add %t, %t, block_num
    bra tile_loop
done:
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    ret
}
