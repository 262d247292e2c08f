#!/bin/bash
# The one device run for the PTX generators (#14). From a copy of the kernlens tree (cwd), with the
# pure-Python packages the device image lacks (lark, textual, dask, distributed, ...) in $SITE:
#   bash bench/device/generated_truth.sh KERNELS_DIR OUT_DIR
# KERNELS_DIR from `python bench/device/generated_truth.py prepare DIR`. Writes OUT_DIR/generated.npz,
# generated.json (driver), verify.txt (kernlens verify --on-gpu), sweep_device.* (kernlens sweep), log.txt.
K=$1; OUT=$2
export PYTHONPATH=${SITE:-$PWD/../site} PYTHONUNBUFFERED=1
{
nvidia-smi -L; ptxas --version | tail -1; python3 -c "import cupy, torch; print('cupy', cupy.__version__, 'torch', torch.__version__)"
timeout 150 python3 bench/device/generated_truth.py run "$K" "$OUT"; echo "driver rc=$?"
for t in c40.gemm_wgmma_f16_nt_128x256x64_w2x1_s4_sm_90a c07.gemm_mma_f16_nn_32x32x32_w2x1_s3_sm_80; do
  timeout 45 python3 -m kernlens.cli verify "$K/$t.ptx" --launch "$K/$t.launch.json" --on-gpu --repeat 20 --json \
      >> "$OUT/verify.txt"; echo "verify $t rc=$?" | tee -a "$OUT/verify.txt"
done
timeout 130 python3 -m kernlens.cli sweep examples/sweep/wgmma_f16_4096.toml --workers 14 -o "$OUT/sweep_device"
echo "sweep rc=$?"
} 2>&1 | tee "$OUT/log.txt"
