// Bad: the second copy writes past the end of the 192 KB UB.
.kernel overflow .vector (.gm .f16 %x[65536], .gm .f16 %y[4096])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 64, 0, 0
    copy_gm_to_ubuf ub[0x2F000], gm[%x], 0, 1, 256, 0, 0
    set_flag PIPE_MTE2, PIPE_MTE3, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE3, EVENT_ID0
    copy_ubuf_to_gm gm[%y], ub[0], 0, 1, 64, 0, 0
}
