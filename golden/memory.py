"""A sparse, byte-addressable global memory shared by the golden model and the
simulation memory model.

Arrays (CSR ``row_ptr``, ``col``, frontiers, ...) are placed at aligned byte
addresses with :meth:`AddressSpace.alloc`; the GPU model uses those addresses for
coalescing, the TLMs read and write through them, and the cocotb memory model
serves the RTL's memory port from the same object.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MemoryError_", "Region", "AddressSpace", "place_array"]

PAGE_BITS = 16
PAGE_BYTES = 1 << PAGE_BITS


class MemoryError_(ValueError):
    """An access the address space cannot serve (out of range, bad alignment)."""


@dataclass(frozen=True)
class Region:
    """A named array placed in the address space."""

    name: str
    base: int
    nbytes: int
    dtype: str

    @property
    def end(self) -> int:
        return self.base + self.nbytes


class AddressSpace:
    """Sparse memory of ``2**addr_bits`` bytes, zero where never written.

    Parameters
    ----------
    addr_bits : int
        Width of a byte address (32 by default).
    base : int
        First address handed out by :meth:`alloc` (0x1000 by default, so that
        address 0 is never a valid array).
    """

    def __init__(self, addr_bits: int = 32, base: int = 0x1000):
        if not 12 <= addr_bits <= 48:
            raise MemoryError_(f"addr_bits must be in [12, 48], not {addr_bits}")
        self.addr_bits = addr_bits
        self.size = 1 << addr_bits
        self._pages: dict[int, np.ndarray] = {}
        self._next = base
        self.regions: dict[str, Region] = {}

    def copy(self) -> "AddressSpace":
        """An independent copy (contents, regions, allocation point)."""
        other = AddressSpace.__new__(AddressSpace)
        other.addr_bits, other.size, other._next = self.addr_bits, self.size, self._next
        other._pages = {k: v.copy() for k, v in self._pages.items()}
        other.regions = dict(self.regions)
        return other

    # -- allocation ----------------------------------------------------------------
    def alloc(self, name: str, data, *, align: int = 256, dtype=None) -> int:
        """Place ``data`` (array-like) at the next ``align``-aligned address.

        Returns the base byte address. Names are unique.
        """
        if name in self.regions:
            raise MemoryError_(f"region {name!r} already allocated")
        arr = np.ascontiguousarray(np.asarray(data, dtype=dtype))
        if align <= 0 or align & (align - 1):
            raise MemoryError_(f"alignment must be a power of two, not {align}")
        base = (self._next + align - 1) & ~(align - 1)
        nbytes = arr.nbytes
        if base + nbytes > self.size:
            raise MemoryError_(f"region {name!r} of {nbytes} bytes does not fit below 2**{self.addr_bits}")
        self.regions[name] = Region(name, base, nbytes, arr.dtype.str)
        self.write(base, arr.view(np.uint8).reshape(-1))
        self._next = base + max(nbytes, 1)
        return base

    def reserve(self, name: str, count: int, dtype, *, align: int = 256) -> int:
        """Place a region of ``count`` elements without writing it (reads as zeros).

        The golden GPU model uses this to give arrays addresses for coalescing
        without copying their contents."""
        if name in self.regions:
            raise MemoryError_(f"region {name!r} already allocated")
        if align <= 0 or align & (align - 1):
            raise MemoryError_(f"alignment must be a power of two, not {align}")
        dt = np.dtype(dtype)
        nbytes = int(count) * dt.itemsize
        base = (self._next + align - 1) & ~(align - 1)
        if base + nbytes > self.size:
            raise MemoryError_(f"region {name!r} of {nbytes} bytes does not fit below 2**{self.addr_bits}")
        self.regions[name] = Region(name, base, nbytes, dt.str)
        self._next = base + max(nbytes, 1)
        return base

    def alloc_empty(self, name: str, count: int, dtype, *, align: int = 256) -> int:
        """Reserve a zero-filled array of ``count`` elements."""
        return self.alloc(name, np.zeros(count, dtype=dtype), align=align)

    def region(self, name: str) -> Region:
        try:
            return self.regions[name]
        except KeyError:
            raise MemoryError_(f"no region named {name!r}") from None

    def array(self, name: str, count: int | None = None) -> np.ndarray:
        """A copy of the named region as a numpy array of its dtype."""
        reg = self.region(name)
        dt = np.dtype(reg.dtype)
        n = reg.nbytes // dt.itemsize if count is None else count
        return self.read(reg.base, n * dt.itemsize).view(dt).copy()

    def region_of(self, addr: int) -> Region | None:
        for reg in self.regions.values():
            if reg.base <= addr < reg.end:
                return reg
        return None

    # -- byte access ---------------------------------------------------------------
    def _check(self, addr: int, n: int) -> None:
        if addr < 0 or n < 0 or addr + n > self.size:
            raise MemoryError_(f"access [{addr:#x}, {addr + n:#x}) outside the {self.addr_bits}-bit address space")

    def _page(self, index: int, create: bool) -> np.ndarray | None:
        page = self._pages.get(index)
        if page is None and create:
            page = self._pages[index] = np.zeros(PAGE_BYTES, dtype=np.uint8)
        return page

    def read(self, addr: int, n: int) -> np.ndarray:
        """``n`` bytes at ``addr`` as a new uint8 array."""
        self._check(addr, n)
        off = addr & (PAGE_BYTES - 1)
        if off + n <= PAGE_BYTES:                       # within one page
            page = self._pages.get(addr >> PAGE_BITS)
            return page[off:off + n].copy() if page is not None else np.zeros(n, dtype=np.uint8)
        out = np.zeros(n, dtype=np.uint8)
        pos = 0
        while pos < n:
            a = addr + pos
            idx, off = a >> PAGE_BITS, a & (PAGE_BYTES - 1)
            take = min(n - pos, PAGE_BYTES - off)
            page = self._pages.get(idx)
            if page is not None:
                out[pos:pos + take] = page[off:off + take]
            pos += take
        return out

    def write(self, addr: int, data, mask=None) -> None:
        """Write bytes ``data`` at ``addr``; where ``mask`` (bool per byte) is 0 keep the old byte."""
        data = np.asarray(data, dtype=np.uint8).reshape(-1)
        n = data.size
        self._check(addr, n)
        if mask is not None:
            mask = np.asarray(mask, dtype=bool).reshape(-1)
            if mask.size != n:
                raise MemoryError_(f"byte mask has {mask.size} entries for {n} bytes")
        pos = 0
        while pos < n:
            a = addr + pos
            idx, off = a >> PAGE_BITS, a & (PAGE_BYTES - 1)
            take = min(n - pos, PAGE_BYTES - off)
            page = self._page(idx, True)
            if mask is None:
                page[off:off + take] = data[pos:pos + take]
            else:
                m = mask[pos:pos + take]
                page[off:off + take][m] = data[pos:pos + take][m]
            pos += take

    def read_int(self, addr: int, nbytes: int) -> int:
        return int.from_bytes(self.read(addr, nbytes).tobytes(), "little")

    def write_int(self, addr: int, value: int, nbytes: int) -> None:
        self.write(addr, np.frombuffer(int(value).to_bytes(nbytes, "little"), dtype=np.uint8))

    def read_elems(self, addr: int, count: int, esize: int) -> np.ndarray:
        """``count`` little-endian unsigned elements of ``esize`` (4 or 8) bytes."""
        dt = {4: np.uint32, 8: np.uint64}[esize]
        return self.read(addr, count * esize).view(dt)         # read() returns a new array

    def gather_elems(self, addrs, esize: int) -> np.ndarray:
        """Elements at arbitrary ``esize``-aligned byte addresses (vectorised per page)."""
        dt = {4: np.uint32, 8: np.uint64}[esize]
        addrs = np.asarray(addrs, dtype=np.int64).reshape(-1)
        out = np.zeros(addrs.size, dtype=dt)
        if addrs.size == 0:
            return out
        if addrs.min() < 0 or addrs.max() + esize > self.size:
            raise MemoryError_(f"gather outside the {self.addr_bits}-bit address space")
        if (addrs & (esize - 1)).any():                  # esize is 4 or 8
            raise MemoryError_(f"gather addresses must be multiples of the element size {esize}")
        pages = addrs >> PAGE_BITS
        if pages.size > 1 and bool((pages[1:] < pages[:-1]).any()):
            order = np.argsort(pages, kind="stable")
            sp = pages[order]
        else:                                           # in page order already (ranges read in order)
            order, sp = None, pages
        cut = (np.flatnonzero(sp[1:] != sp[:-1]) + 1).tolist()
        for s, e in zip([0] + cut, cut + [sp.size]):
            page = self._pages.get(int(sp[s]))
            if page is not None:
                sel = slice(s, e) if order is None else order[s:e]
                out[sel] = page.view(dt)[(addrs[sel] & (PAGE_BYTES - 1)) >> (esize.bit_length() - 1)]
        return out


def place_array(space: AddressSpace, arrays: dict, name: str, values: np.ndarray) -> int:
    """Write ``values`` into the region ``name`` of ``space`` (a new, larger region
    when they outgrow it; ``arrays`` remembers name -> (base, capacity)); returns
    its base. The one array placer of the units' backends (TLM and RTL)."""
    base, cap = arrays.get(name, (None, -1))
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    if raw.size > cap:
        base = space.reserve(f"{name}#{len(arrays)}", max(raw.size, 1), np.uint8, align=256)
        arrays[name] = (base, raw.size)
    if raw.size:
        space.write(base, raw)
    return base
