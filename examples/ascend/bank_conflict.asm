// Hand-written: the UB bank-group examples of ascend.md 5 (2201). The destination of each vadds
// starts at 0x1FE00; with block stride 16 all 8 datablocks of a repeat fall in one bank group
// (8 cycles per repeat), with block stride 8 in two groups (4 cycles per repeat).
.arch davinci-a2
.kernel bank_conflict .vector (.gm .f32 %x[64])
{
    vadds.f32 ub[0x1FE00], ub[0x100], 1.0, 4, 16, 1, 1, 8
    vadds.f32 ub[0x1FE00], ub[0x100], 1.0, 4, 8, 1, 1, 8
    vadds.f32 ub[0x1FE00], ub[0x100], 1.0, 4, 1, 1, 8, 8
}
