import numpy as np, json, sys
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[5]))
from sim.ptx.tensor import wgmma_mma_async, mma_sync
out = sys.argv[1]
meta = json.load(open('meta.json'))
n = len(meta['wg'])
images = np.fromfile('wg_images.bin', np.uint8).reshape(n, 32768)
din = np.fromfile('wg_din.bin', np.uint32).reshape(n, 4, 32, 32)
got = np.fromfile(f'{out}/wg_dout.bin', np.uint32).reshape(n, 4, 32, 32)
V = {0: ('m64n64k16', 'f32', 'f16', 0, 0, 1), 1: ('m64n64k16', 'f32', 'f16', 0, 1, 1), 2: ('m64n64k16', 'f32', 'f16', 1, 0, 1),
     3: ('m64n64k16', 'f32', 'bf16', 0, 1, 1), 4: ('m64n64k32', 'f32', 'e4m3', 0, 0, 1), 5: ('m64n64k16', 'f16', 'f16', 0, 0, 1),
     6: ('m64n64k32', 'f32', 'e5m2', 0, 0, 1), 7: ('m64n64k16', 'f32', 'f16', 0, 0, -1), 8: ('m64n64k32', 's32', 's8', 0, 0, 1)}
stats = {}
for i, m in enumerate(meta['wg']):
    shape, dt, t, ta, tb, sa = V[m['variant']]
    R = 16 if dt == 'f16' else 32
    D = wgmma_mma_async(shape, dt, t, t, din[i][..., :R], np.full(4, m['da'], np.uint64), np.full(4, m['db'], np.uint64),
                        images[i], m['scale_d'], imm_scale_a=sa, trans_a=ta, trans_b=tb)
    g = got[i][..., :R]
    eq = (D == g).mean()
    key = m['kind'] + (f"/v{m['variant']}" if m['kind'] == 'layout' else '')
    stats.setdefault(key, []).append(eq)
    if m['kind'] == 'layout' and eq < 1:
        close = np.abs(D.view(np.float32) - g.view(np.float32)).max()
        print('layout mismatch', m['variant'], m['sa'], m['sb'], eq, close)
for k, v in stats.items():
    print(f"wgmma {k}: {len(v)} cases, bit-exact fraction {np.mean(v):.6f}, min {np.min(v):.4f}")
mv = meta['mm']
mi = np.fromfile('mm_in.bin', np.uint32).reshape(len(mv), 32, 10)
mo = np.fromfile(f'{out}/mm_out.bin', np.uint32).reshape(len(mv), 32, 4)
st = {}
for i, m in enumerate(mv):
    nA = {'f16': 4, 'bf16': 4, 'e4m3': 4, 'tf32': 4}[m['t']]
    nB = 2
    nC = 2 if m['ct'] == 'f16' else 4
    D = mma_sync(m['shape'], m['t'], m['t'], m['ct'], m['ct'], 'row', 'col', mi[i:i+1, :, :nA], mi[i:i+1, :, 4:4+nB], mi[i:i+1, :, 6:6+nC])
    st.setdefault((m['shape'], m['t'], m['ct']), []).append((D[0] == mo[i, :, :nC]).mean())
for k, v in st.items():
    print(f"mma {k}: {len(v)} warps, bit-exact fraction {np.mean(v):.6f}")
