// Bad: the vector pipe waits for MTE2 EVENT_ID1, but only EVENT_ID0 is ever set.
.kernel wait_without_set .vector (.gm .f16 %x[256], .gm .f16 %y[256])
{
    copy_gm_to_ubuf ub[0], gm[%x], 0, 1, 16, 0, 0
    set_flag PIPE_MTE2, PIPE_V, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_V, EVENT_ID1
    vmuls.f16 ub[0], ub[0], 2.0, 2, 1, 1, 8, 8
}
