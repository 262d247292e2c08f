"""Byte gathers and scatters on a CTA's shared memory for the tensor-core instructions.

Shared memory is a flat ``uint8`` array: either one array ``[S]`` used by all W warps (one CTA), or
``[W, S]`` (row w is the shared memory of warp w's CTA).  Addresses are byte offsets into it, int
arrays whose first axis is W.  Out-of-range addresses raise :class:`SimulationError`; the engine is
expected to validate (and report) them first with the ``*_addresses`` helpers.
"""

from __future__ import annotations

import numpy as np

from isa.errors import SimulationError


def _index(smem: np.ndarray, addr: np.ndarray, what: str):
    addr = np.asarray(addr, dtype=np.int64)
    size = smem.shape[-1]
    if addr.size and (addr.min() < 0 or addr.max() >= size):
        bad = addr[(addr < 0) | (addr >= size)].ravel()[0]
        raise SimulationError(f"{what}: shared-memory byte address {int(bad)} is outside the "
                              f"{size}-byte shared window")
    if smem.ndim == 1:
        return (addr,)
    w = np.arange(addr.shape[0]).reshape((-1,) + (1,) * (addr.ndim - 1))
    return (np.broadcast_to(w, addr.shape), addr)


def gather_bytes(smem: np.ndarray, addr: np.ndarray, width: int, what: str) -> np.ndarray:
    """Bytes at ``addr[..., None] + arange(width)`` -> uint8 array ``addr.shape + (width,)``."""
    full = np.asarray(addr, dtype=np.int64)[..., None] + np.arange(width)
    return smem[_index(smem, full, what)]


def scatter_bytes(smem: np.ndarray, addr: np.ndarray, data: np.ndarray, what: str) -> None:
    """Write ``data`` (uint8, ``addr.shape + (width,)``) at ``addr`` in place; later entries win."""
    width = data.shape[-1]
    full = np.asarray(addr, dtype=np.int64)[..., None] + np.arange(width)
    smem[_index(smem, full, what)] = data


def as_u16(b: np.ndarray) -> np.ndarray:
    """uint8 [..., 2n] little-endian -> uint16 [..., n]."""
    b = np.ascontiguousarray(b)
    return b.view(np.uint16) if b.dtype == np.uint8 else b


def as_bytes(x: np.ndarray) -> np.ndarray:
    """uint16/uint32 [..., n] -> uint8 [..., n*size] little-endian."""
    x = np.ascontiguousarray(x)
    return x.view(np.uint8).reshape(x.shape[:-1] + (x.shape[-1] * x.dtype.itemsize,))
