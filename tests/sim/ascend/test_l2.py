"""The LRU L2 of the Ascend-like timing model: hits, capacity misses, dirty write-backs."""

from sim.ascend.l2 import L2


def test_reuse_hits_and_lru_eviction():
    l2 = L2(capacity=4096, line=512)
    a, b, c = (0, 2048), (2048, 4096), (4096, 6144)
    assert l2.access(a, 2048, write=False) == (2048, 0)      # first touch: from HBM
    assert l2.access(a, 2048, write=False) == (0, 0)         # re-read: hit
    assert l2.access(b, 2048, write=False) == (2048, 0)
    assert l2.access(a, 2048, write=False) == (0, 0)         # a is now the most recent
    assert l2.access(c, 2048, write=False) == (2048, 0)      # evicts b, the least recent
    assert l2.access(a, 2048, write=False) == (0, 0)
    assert l2.access(b, 2048, write=False) == (2048, 0)
    assert l2.hit_rate == 3 / 7


def test_writes_allocate_dirty_and_are_written_back_on_eviction():
    l2 = L2(capacity=4096, line=512)
    w = (1 << 20, (1 << 20) + 1000)
    assert l2.access(w, 1000, write=True) == (0, 0)          # a write never reads HBM
    assert l2.access(w, 1000, write=False) == (0, 0)         # the data written is read back from L2
    assert l2.access((0, 4096), 4096, write=False) == (4096, 1024)   # pushes the dirty line (1000 B -> 2 lines) out
    assert l2.writeback_bytes == 1024 and l2.miss_bytes == 4096
