// Bad: L0A addresses must be 512-byte aligned; 0x100 is not.
.kernel misaligned .cube (.gm .f16 %a[4096])
{
    copy_gm_to_cbuf l1[0], gm[%a], 0, 1, 256, 0, 0, 0
    set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    load_cbuf_to_ca.f16 l0a[0x100], l1[0], 0, 4, 1, 0, 0, 0, 0
}
