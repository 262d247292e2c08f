"""State spaces of one simulated launch: global, shared, local, param and const memory.

Every space is a flat ``uint8`` array; an access names lanes, space-local byte addresses and a
width, and gets back flat byte indices plus which lanes were invalid. Global memory holds the
argument buffers (and module ``.global`` variables) at device addresses from
:data:`GLOBAL_BASE`, separated by red zones so an access past one buffer never lands in the
next. Shared memory is one array per CTA of the batch, local memory one array per thread.

Generic addresses (``ld.f32 %f1, [%rd4];``, ``cvta.shared.u64``) map shared, local, param and
const memory into windows; everything else is global::

    cvta.shared.u64 %rd2, %rd1;   # %rd2 = SHARED_WINDOW + %rd1
    ld.u32 %r1, [%rd2];           # -> shared memory of the thread's CTA at offset %rd1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dtypes import UINT

GLOBAL_BASE = 0x7F00_0000_0000
REDZONE = 256
ALIGN = 256
WINDOW_SIZE = 1 << 32
WINDOWS = {"shared": 0x1000_0000_0000, "local": 0x2000_0000_0000, "param": 0x3000_0000_0000,
           "const": 0x4000_0000_0000}
U64 = np.uint64

ONES = {1: np.uint8(1), 2: np.uint16(0x0101), 4: np.uint32(0x01010101), 8: np.uint64(0x0101010101010101)}


@dataclass(frozen=True)
class Buffer:
    """A named allocation in global memory (an argument buffer or a module variable)."""

    name: str
    base: int
    size: int
    param: int | None = None   # index of the kernel parameter it was passed as


class GlobalMemory:
    """The device heap: argument buffers and ``.global`` variables at fixed addresses."""

    def __init__(self, allocations: list[tuple[str, bytes | np.ndarray, int | None]]):
        bufs = []
        addr = GLOBAL_BASE
        for name, content, param in allocations:
            size = len(content) if isinstance(content, (bytes, bytearray)) else int(content.nbytes)
            bufs.append(Buffer(name, addr, size, param))
            addr += -(-max(size, 1) // ALIGN) * ALIGN + REDZONE
        self.buffers = bufs
        self.data = np.zeros(max(addr - GLOBAL_BASE, 16) + 16, dtype=np.uint8)
        for b, (_, content, _) in zip(bufs, allocations):
            raw = np.frombuffer(bytes(content), dtype=np.uint8) if isinstance(content, (bytes, bytearray)) \
                else np.ascontiguousarray(content).reshape(-1).view(np.uint8)
            self.data[b.base - GLOBAL_BASE:b.base - GLOBAL_BASE + b.size] = raw
        self.bases = np.array([b.base for b in bufs] or [0], dtype=np.uint64)
        self.ends = np.array([b.base + b.size for b in bufs] or [0], dtype=np.uint64)

    def buffer(self, name: str) -> Buffer:
        return next(b for b in self.buffers if b.name == name)

    def read(self, b: Buffer) -> np.ndarray:
        return self.data[b.base - GLOBAL_BASE:b.base - GLOBAL_BASE + b.size]

    def check(self, addr: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        """(flat byte index, in-bounds mask) for addresses of ``width``-byte accesses."""
        if not self.buffers:
            return np.zeros(addr.shape, np.int64), np.zeros(addr.shape, bool)
        k = np.searchsorted(self.bases, addr, side="right").astype(np.int64) - 1
        kk = np.maximum(k, 0)
        # addr < end first: an address near 2**64 would wrap addr + width round to a small number
        ok = (k >= 0) & (addr < self.ends[kk]) & (addr + U64(width) <= self.ends[kk])
        flat = (addr - U64(GLOBAL_BASE)).astype(np.int64)
        return np.where(ok, flat, 0), ok

    def describe(self, addr: int, width: int = 1) -> str | None:
        """The buffer nearest ``addr``, in words: ``C (param 2): 4 bytes past the end of 640 bytes``."""
        if not self.buffers:
            return None
        best = None
        for b in self.buffers:
            if b.base <= addr < b.base + b.size:
                d, rel = 0, f"offset {addr - b.base} of {b.size} bytes"
            elif addr >= b.base + b.size:
                d = addr - (b.base + b.size)
                rel = f"{addr + width - (b.base + b.size)} bytes past the end of {b.size} bytes"
            else:
                d = b.base - addr
                rel = f"{b.base - addr} bytes before the start of {b.size} bytes"
            if best is None or d < best[0]:
                best = (d, b, rel)
        _, b, rel = best
        who = b.name if b.param is None else f"{b.name} (param {b.param})"
        return f"{who}: {rel}"


class Region:
    """A flat byte array of a state space replicated per CTA (shared) or per thread (local)."""

    def __init__(self, name: str, size: int, copies: int, track_writes: bool = False):
        self.name = name
        self.size = int(size)
        self.stride = -(-max(self.size, 1) // 16) * 16
        self.copies = copies
        self.data = np.zeros(self.stride * copies + 16, dtype=np.uint8)
        self.written = np.zeros_like(self.data) if track_writes else None

    def reset(self) -> None:
        self.data.fill(0)
        if self.written is not None:
            self.written.fill(0)

    def check(self, copy: np.ndarray | int, addr: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        ok = (addr < U64(self.size)) & (addr + U64(width) <= U64(self.size))   # no wrap past 2**64
        flat = np.asarray(copy, dtype=np.int64) * self.stride + np.where(ok, addr, 0).astype(np.int64)
        return flat, ok


def gather(data: np.ndarray, flat: np.ndarray, esize: int, nelem: int) -> np.ndarray:
    """[n, nelem] unsigned values of ``esize`` bytes at byte offsets ``flat`` (aligned)."""
    view = data.view(UINT[esize]) if esize <= 8 else data.view(np.uint64)
    idx = flat // esize
    if nelem == 1:
        return view[idx][:, None]
    return view[idx[:, None] + np.arange(nelem)]


def scatter(data: np.ndarray, flat: np.ndarray, values: np.ndarray, esize: int) -> None:
    """Store [n, nelem] values at ``flat`` (lanes in order: a later lane wins a shared address)."""
    view = data.view(UINT[esize])
    idx = flat // esize
    if values.shape[1] == 1:
        view[idx] = values[:, 0]
    else:
        view[idx[:, None] + np.arange(values.shape[1])] = values


def mark_written(written: np.ndarray, flat: np.ndarray, esize: int, nelem: int) -> None:
    view = written.view(UINT[esize])
    idx = flat // esize
    if nelem == 1:
        view[idx] = ONES[esize]
    else:
        view[idx[:, None] + np.arange(nelem)] = ONES[esize]


def unwritten(written: np.ndarray, flat: np.ndarray, esize: int, nelem: int) -> np.ndarray:
    """Per lane: does any byte of the access lie in never-written memory?"""
    view = written.view(UINT[esize])
    idx = flat // esize
    if nelem == 1:
        return view[idx] != ONES[esize]
    return (view[idx[:, None] + np.arange(nelem)] != ONES[esize]).any(axis=1)
