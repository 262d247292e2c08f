// Hand-written: z = x + y for 4096 f16 values on vector cores, 256 elements (2 repeats) per tile.
// GM -> UB (MTE2), vadd (V), UB -> GM (MTE3) with the flags that order them.
.arch davinci-a2
.kernel vadd_f16 .vector (.gm .f16 %x[4096], .gm .f16 %y[4096], .gm .f16 %z[4096])
{
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0      // UB buffers start free
    mov %t, block_idx
tile:
    cmp.ge %p0, %t, 16
    @%p0 bra done
    mul %off, %t, 512                           // 256 f16 = 512 bytes per tile
    add %xs, %x, %off
    add %ys, %y, %off
    add %zs, %z, %off
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    copy_gm_to_ubuf ub[0], gm[%xs], 0, 1, 16, 0, 0
    copy_gm_to_ubuf ub[512], gm[%ys], 0, 1, 16, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    vadd.f16 ub[1024], ub[0], ub[512], 2, 1, 1, 1, 8, 8, 8
    set_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_V, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%zs], ub[1024], 0, 1, 16, 0, 0
    set_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    add %t, %t, block_num
    bra tile
done:
    wait_flag PIPE_MTE3, PIPE_MTE2, EVENT_ID0
    ret
}
