// Bad: FixPipe reads L0C right after the mad that writes it, with no
// set_flag(PIPE_M, PIPE_FIX) / wait_flag(PIPE_M, PIPE_FIX) between them.
.kernel l0c_race .cube (.gm .f16 %a[256], .gm .f16 %b[256], .gm .f16 %c[256])
{
    copy_gm_to_cbuf l1[0], gm[%a], 0, 1, 16, 0, 0, 0
    copy_gm_to_cbuf l1[512], gm[%b], 0, 1, 16, 0, 0, 0
    set_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    wait_flag PIPE_MTE2, PIPE_MTE1, EVENT_ID0
    load_cbuf_to_ca.f16 l0a[0], l1[0], 0, 1, 1, 0, 0, 0, 0
    load_cbuf_to_cb.f16 l0b[0], l1[512], 0, 1, 1, 0, 0, 1, 0
    set_flag PIPE_MTE1, PIPE_M, EVENT_ID0
    wait_flag PIPE_MTE1, PIPE_M, EVENT_ID0
    mad.f16 l0c[0], l0a[0], l0b[0], 16, 16, 16, 0, 0, 0, 1
    copy_matrix_cc_to_gm.f32 gm[%c], l0c[0], 0, 16, 16, 16, 16, 0, F322F16, 0, 0, 1
}
