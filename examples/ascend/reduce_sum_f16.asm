.arch davinci-a2
.meta op=reduce reduce=sum dtype=f16 rows=300 cols=1000
// y[300] = sum over each row of x[300x1000] (f16); 4 tiles of 86 rows; 7 full chunks + 104 tail lanes per row
.kernel reduce_sum_f16_300x1000 .vector (.gm .f16 %x[300000], .gm .f16 %y[300])
{
    set_mask_norm
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    set_flag PIPE_MTE3, PIPE_V, EVENT_ID0
    mov %t, block_idx
tile_loop:
    cmp.ge %p0, %t, 4
    @%p0 bra done
    mul %r0, %t, 86
    sub %rows, 300, %r0
    min %rows, %rows, 86
    mul %t0, %r0, 2000
    add %t0, %t0, %x
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    copy_gm_to_ubuf_align_b16 ub[0], gm[%t0], 0, %rows, 2000, 0, 0, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0
    vadd.f16 ub[173568], ub[0], ub[256], %rows, 1, 1, 1, 8, 63, 63
    pipe_barrier PIPE_V
    vadd.f16 ub[173568], ub[173568], ub[512], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f16 ub[173568], ub[173568], ub[768], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f16 ub[173568], ub[173568], ub[1024], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f16 ub[173568], ub[173568], ub[1280], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    vadd.f16 ub[173568], ub[173568], ub[1536], %rows, 1, 1, 1, 8, 8, 63
    pipe_barrier PIPE_V
    set_vector_mask 0xffffffffff, 0xffffffffffffffff
    vadd.f16 ub[173568], ub[173568], ub[1792], %rows, 1, 1, 1, 8, 8, 63
    set_vector_mask 0xffffffffffffffff, 0xffffffffffffffff
    pipe_barrier PIPE_V
    vcadd.f16 ub[195584], ub[173568], %rows, 1, 1, 8, 0
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    mul %t0, %r0, 2
    add %t0, %t0, %y
    mul %t1, %rows, 2
    copy_ubuf_to_gm_align_b16 gm[%t0], ub[195584], 0, 1, %t1, 0, 0, 0, 0
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    set_flag PIPE_MTE3, PIPE_V, EVENT_ID0
    add %t, %t, block_num
    bra tile_loop
done:
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    wait_flag PIPE_MTE3, PIPE_V, EVENT_ID0
    ret
}
