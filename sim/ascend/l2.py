"""The chip's L2 as the Ascend-like timing model sees it: LRU over the GM spans that transfers touch.

Every GM transfer (MTE2 read, MTE3 / FixPipe write) names the byte span it covers; the L2 keeps
spans, least recently used first, up to its capacity (192 MiB on ``davinci-a2`` [INI]). A read of
a span that is resident hits; otherwise its bytes come from HBM (a miss). Writes allocate their
span dirty (MTE3 / FixPipe write into L2, [ASC-L2]); when an insertion pushes a dirty span out,
its bytes are written back to HBM and that write-back is charged to the transfer that caused it
("the old data needs to be written back to the GM during the replacement (this process occupies
the GM bandwidth)" [ASC-L2]). What is still dirty when the kernel ends is not charged.

    l2 = L2(capacity=192 * 2**20, line=512)
    l2.access((a, a + 65536), 65536, write=False)   # (65536, 0): first touch misses
    l2.access((a, a + 65536), 65536, write=False)   # (0, 0): the second block reading the tile hits

Granularity is the transfer's span, not the cache line: a span that only partly overlaps a
resident one counts as a miss (the GEMM and vector generators read identical tiles, so this
matters only for hand-written overlapping copies; documented in docs/ascend-isa.md).
"""

from __future__ import annotations

from collections import OrderedDict


class L2:
    def __init__(self, capacity: int, line: int):
        self.capacity = capacity
        self.line = line
        self.spans: OrderedDict[tuple[int, int], list] = OrderedDict()   # span -> [bytes, dirty]
        self.used = 0
        self.hit_bytes = 0
        self.miss_bytes = 0
        self.writeback_bytes = 0

    def access(self, span: tuple[int, int], nbytes: int, write: bool) -> tuple[int, int]:
        """Touch ``span`` (``nbytes`` moved); returns (bytes read from HBM, dirty bytes written back)."""
        size = -(-max(nbytes, 1) // self.line) * self.line
        got = self.spans.get(span)
        if got is not None:
            self.spans.move_to_end(span)
            got[1] = got[1] or write
            if not write:
                self.hit_bytes += nbytes
            return 0, 0
        miss = 0 if write else nbytes
        self.miss_bytes += miss
        self.spans[span] = [size, write]
        self.used += size
        wb = 0
        while self.used > self.capacity and len(self.spans) > 1:
            _, (sz, dirty) = self.spans.popitem(last=False)
            self.used -= sz
            if dirty:
                wb += sz
        self.writeback_bytes += wb
        return miss, wb

    @property
    def hit_rate(self) -> float:
        reads = self.hit_bytes + self.miss_bytes
        return self.hit_bytes / reads if reads else 0.0
