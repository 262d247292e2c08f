import numpy as np, ml_dtypes, json, sys
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[5]))
from sim.ptx.tensor import Descriptor, encode, matrix_to_fragment, mma_fragment_map
rng = np.random.default_rng(1234)
WC = np.dtype([('variant', '<i4'), ('scale_d', '<i4'), ('da', '<u8'), ('db', '<u8')])
cases, images, dins, meta = [], [], [], []

def img_f16(kind='randn'):
    if kind == 'sub':
        v = rng.standard_normal(16384) * np.where(rng.random(16384) < 0.5, 2.0**-13, 1.0)
    else:
        v = rng.standard_normal(16384)
    return v.astype(np.float16).view(np.uint8)
def img_bf16():
    return rng.standard_normal(16384).astype(ml_dtypes.bfloat16).view(np.uint8)
def img_fp8(t, kind):
    if kind == 'bytes':
        b = rng.integers(0, 256, 32768).astype(np.uint8)
        bad = (b & 0x7F) == 0x7F if t == 'e4m3' else (b & 0x7C) == 0x7C
        b[bad] = 0
        return b
    dt = ml_dtypes.float8_e4m3fn if t == 'e4m3' else ml_dtypes.float8_e5m2
    return np.clip(rng.standard_normal(32768), -448, 448).astype(dt).view(np.uint8)
def din_f32(scale=1.0):
    return (rng.standard_normal((128, 32)) * scale).astype(np.float32).view(np.uint32)
def din_f16():
    d = np.zeros((128, 32), np.uint32)
    h = rng.standard_normal((128, 32)).astype(np.float16).view(np.uint16).astype(np.uint32)
    d[:, :16] = h[:, :16] | (h[:, 16:] << 16)
    return d

def kdesc(swz, start, big=False):
    if swz == 0:
        return Descriptor(start, 2048, 256, 0, 0).encode()
    return Descriptor(start, 0, 8 * swz * (2 if big else 1), 0, swz).encode()
def mndesc(swz, start):
    if swz == 0:
        return Descriptor(start, 128, 256, 0, 0).encode()
    return Descriptor(start, {128: 4096, 64: 2048, 32: 1024}[swz], 8 * swz, 0, swz).encode()

def add(variant, scale_d, da, db, img, din, **m):
    cases.append((variant, scale_d, da, db)); images.append(img); dins.append(din)
    meta.append(dict(variant=variant, scale_d=scale_d, da=int(da), db=int(db), **m))

A0, B0 = 0, 16384
for variant, (ta, tb) in ((0, (0, 0)), (1, (0, 1)), (2, (1, 0))):
    for sa in (0, 32, 64, 128):
        for sb in (0, 32, 64, 128):
            off = 32 if (sa >= 64 and not ta and rng.random() < 0.5) else 0
            da = mndesc(sa, A0) if ta else kdesc(sa, A0 + off, big=(sa == 32))
            db = mndesc(sb, B0) if tb else kdesc(sb, B0)
            add(variant, int(rng.integers(0, 2)), da, db, img_f16(), din_f32(), kind='layout', sa=sa, sb=sb)
for i in range(40):
    add(4, int(i % 2), kdesc(64, A0), kdesc(64, B0), img_fp8('e4m3', 'bytes' if i % 4 < 2 else 'randn'),
        din_f32(1.0 if i % 4 < 2 else 4.0), kind='e4m3')
for i in range(10):
    add(6, int(i % 2), kdesc(64, A0), kdesc(64, B0), img_fp8('e5m2', 'randn'), din_f32(), kind='e5m2')
for i in range(8):
    add(3, 1, kdesc(64, A0), mndesc(128, B0), img_bf16(), din_f32(), kind='bf16')
for i in range(10):
    add(5, 1, kdesc(0, A0), kdesc(0, B0), img_f16(), din_f16(), kind='f16acc')
for i in range(3):
    add(7, 1, kdesc(128, A0), kdesc(128, B0), img_f16(), din_f32(), kind='neg')
for i in range(6):
    add(0, 1, kdesc(0, A0), kdesc(0, B0), img_f16('sub'), din_f32(2.0**-20), kind='sub')
for i in range(2):
    add(8, 1, kdesc(64, A0), kdesc(64, B0), rng.integers(0, 256, 32768).astype(np.uint8),
        rng.integers(-2**31, 2**31, (128, 32)).astype(np.int64).astype(np.uint32), kind='s8')
np.array(cases, dtype=WC).tofile('wg_cases.bin')
np.concatenate(images).astype(np.uint8).tofile('wg_images.bin')
np.concatenate(dins).astype(np.uint32).tofile('wg_din.bin')

# mma.sync cases: regs a0..a3 b0 b1 c0..c3 per lane
mv, mi, mmeta = [], [], []
def mm(variant, shape, t, ct, a, b, c):
    A = matrix_to_fragment(encode(a, t)[None], mma_fragment_map(shape, 'a', t))[0]
    B = matrix_to_fragment(encode(b, t)[None], mma_fragment_map(shape, 'b', t))[0]
    C = matrix_to_fragment(encode(c, ct)[None], mma_fragment_map(shape, 'c', ct))[0]
    regs = np.zeros((32, 10), np.uint32)
    regs[:, :A.shape[1]] = A; regs[:, 4:4 + B.shape[1]] = B; regs[:, 6:6 + C.shape[1]] = C
    mv.append(variant); mi.append(regs); mmeta.append(dict(variant=variant, shape=shape, t=t, ct=ct))
for i in range(20):
    s = 2.0**-13 if i % 2 else 1.0
    mm(0, 'm16n8k16', 'f16', 'f32', rng.standard_normal((16, 16)) * s, rng.standard_normal((16, 8)) * s,
       rng.standard_normal((16, 8)) * s * s)
for i in range(40):
    if i % 2:
        a = rng.integers(0, 256, (16, 32)).astype(np.uint8); a[(a & 0x7F) == 0x7F] = 0
        b = rng.integers(0, 256, (32, 8)).astype(np.uint8); b[(b & 0x7F) == 0x7F] = 0
        a = a.view(ml_dtypes.float8_e4m3fn).astype(np.float64); b = b.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    else:
        a = rng.standard_normal((16, 32)); b = rng.standard_normal((32, 8))
    mm(1, 'm16n8k32', 'e4m3', 'f32', a, b, rng.standard_normal((16, 8)) * (4 if i % 3 else 0))
for i in range(10):
    mm(2, 'm16n8k16', 'f16', 'f16', rng.standard_normal((16, 16)), rng.standard_normal((16, 8)), rng.standard_normal((16, 8)))
for i in range(10):
    mm(3, 'm16n8k8', 'tf32', 'f32', rng.standard_normal((16, 8)), rng.standard_normal((8, 8)), rng.standard_normal((16, 8)))
for i in range(10):
    mm(4, 'm16n8k16', 'bf16', 'f32', rng.standard_normal((16, 16)), rng.standard_normal((16, 8)), rng.standard_normal((16, 8)))
np.array(mv, np.int32).tofile('mm_variants.bin')
np.stack(mi).astype(np.uint32).tofile('mm_in.bin')
json.dump(dict(wg=meta, mm=mmeta), open('meta.json', 'w'))
print(len(cases), len(mv))
