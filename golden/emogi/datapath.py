"""The zero-copy data path with a warp coalescer in the loop (docs/emogi.md, "RTL
in the loop").

With a *coalescer backend* (option ``backend`` of the zero-copy modes) the edge
list and the weights are not taken from the graph: every warp memory
instruction that reads them goes through the backend, which returns the PCIe
read requests; the requests are served by a byte image of host memory
(:class:`HostImage`), and every active lane takes its element out of the
returned payloads. So the answer of the algorithm depends on the requests: a
lane that no request of its instruction covers has no data and stops the run
with :class:`CoalescerError`.

A lane served by the GPU's cache (the reuse rule of golden/emogi/access.py: the
same warp read the sector at its previous loop iteration) is left out of its
instruction, as in the statistics; it takes its element from the payload that
brought the sector to that warp earlier.

Backends: :class:`CoalescerTLM` here (the TLM, :func:`.coalescer.warp_requests`);
the RTL under cocotb in sim/emogi/. A backend has a ``config``
(:class:`CoalescerConfig`), a ``name`` and ``coalesce(warps)``: the request stream
(``last`` closes each warp's requests) of a list of ``(addrs, mask)`` warps whose
masks are not zero.
"""
from __future__ import annotations

import numpy as np

from ..algorithms.common import segments
from .access import edge_accesses, reused
from .coalescer import PCIeRequest, coalescer_model
from .config import CoalescerConfig

__all__ = ["CoalescerError", "CoalescerTLM", "HostImage", "ZeroCopyReader", "check_backend"]


class CoalescerError(RuntimeError):
    """The coalescer's requests do not deliver what the warps read."""


class CoalescerTLM:
    """The TLM as a coalescer backend."""

    def __init__(self, config: CoalescerConfig | None = None):
        self.config = config or CoalescerConfig()
        self.name = "tlm"

    def coalesce(self, warps) -> list[PCIeRequest]:
        return coalescer_model(self.config, warps)


def check_backend(backend, *, warp: int, sector_bytes: int, line_bytes: int, top_addr: int) -> CoalescerConfig:
    """The backend's configuration, checked against the GPU model's warps and the
    host addresses (``top_addr``: one past the highest byte of the host arrays).

    Raises
    ------
    ValueError
        Not a backend, or a configuration that does not fit the GPU model.
    """
    cfg = getattr(backend, "config", None)
    if not isinstance(cfg, CoalescerConfig) or not callable(getattr(backend, "coalesce", None)):
        raise ValueError(f"option backend must be a coalescer backend (a CoalescerConfig `config` and a "
                         f"`coalesce(warps)` method), not {backend!r}")
    if cfg.lanes != warp:
        raise ValueError(f"the coalescer has {cfg.lanes} lanes, the GPU model's warps {warp}")
    if (cfg.sector_bytes, cfg.line_bytes) != (sector_bytes, line_bytes):
        raise ValueError(f"the coalescer merges {cfg.sector_bytes} B sectors into {cfg.line_bytes} B lines, "
                         f"the GPU model {sector_bytes} B sectors into {line_bytes} B lines")
    if top_addr > 1 << cfg.addr_width:
        raise ValueError(f"the host arrays reach address {top_addr - 1:#x}, beyond the coalescer's "
                         f"{cfg.addr_width}-bit addresses")
    return cfg


class HostImage:
    """The bytes of the host arrays, as PCIe reads return them (little endian; the
    padding between arrays reads as zeros).

    Parameters
    ----------
    arrays : list of (ArrayRef, values)
    line_bytes : int
        The image ends on a line boundary after the last array.
    """

    def __init__(self, arrays, line_bytes: int = 128):
        self.arrays = [ref for ref, _ in arrays]
        if not arrays:
            raise ValueError("a host image needs at least one array")
        self.lo = min(ref.base for ref, _ in arrays) // line_bytes * line_bytes
        hi = max(ref.base + ref.length * ref.esize for ref, _ in arrays)
        hi = -(-hi // line_bytes) * line_bytes
        self.mem = np.zeros(hi - self.lo, np.uint8)
        for ref, values in arrays:
            raw = np.ascontiguousarray(values).view(np.uint8)
            if raw.size > ref.length * ref.esize or raw.size % ref.esize:
                raise ValueError(f"{ref.name}: {raw.size} bytes of values for {ref.length} elements of {ref.esize} B")
            self.mem[ref.base - self.lo: ref.base - self.lo + raw.size] = raw

    @property
    def hi(self) -> int:
        return self.lo + self.mem.size

    def read(self, addr: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Serve read requests: ``(payloads, offsets)``, request ``i``'s payload is
        ``payloads[offsets[i] : offsets[i] + size[i]]``.

        Raises
        ------
        CoalescerError
            A request outside the host arrays.
        """
        addr = np.asarray(addr, dtype=np.int64)
        size = np.asarray(size, dtype=np.int64)
        bad = np.flatnonzero((addr < self.lo) | (addr + size > self.hi) | (size <= 0))
        if bad.size:
            i = int(bad[0])
            raise CoalescerError(f"read request {i} ({int(size[i])} B at {int(addr[i]):#x}) is outside the host "
                                 f"arrays [{self.lo:#x}, {self.hi:#x})")
        idx, _ = segments(addr - self.lo, size)
        return self.mem[idx], np.cumsum(size) - size


class ZeroCopyReader:
    """Reads host arrays through a coalescer backend (see the module docstring).

    Parameters
    ----------
    backend : coalescer backend
    arrays : list of (ArrayRef, values)
        The host arrays and their contents (the values in the array's element type).
    warp, sector_bytes, line_bytes : int
        The GPU model's.
    """

    def __init__(self, backend, arrays, *, warp: int = 32, sector_bytes: int = 32, line_bytes: int = 128):
        self.image = HostImage(arrays, line_bytes)
        self.config = check_backend(backend, warp=warp, sector_bytes=sector_bytes, line_bytes=line_bytes,
                                    top_addr=self.image.hi)
        self.backend = backend
        self.dtypes = {ref.name: np.asarray(v).dtype for ref, v in arrays}
        self.warp = warp
        self.sector_bytes = sector_bytes
        self.line_bytes = line_bytes
        self.spl = line_bytes // sector_bytes
        self.requests = np.zeros(self.spl + 1, np.int64)   # by sector count
        self.calls = 0
        self.instructions = 0
        self.lanes = 0
        self.cache_hits = 0

    # ------------------------------------------------------------------
    def read(self, ref, starts, counts, pattern: str) -> tuple[np.ndarray, np.ndarray]:
        """The workers read ``ref[starts[v] : starts[v] + counts[v]]`` with lane
        pattern ``pattern``. Returns ``(values, filled)``: an array of ``ref``'s
        length holding every element a lane read, and where one did."""
        W = self.warp
        sb = self.sector_bytes.bit_length() - 1
        dtype = self.dtypes[ref.name]
        out = np.zeros(ref.length, dtype)
        filled = np.zeros(ref.length, bool)
        acc = edge_accesses(starts, counts, pattern, ref.esize, base=ref.base, warp=W,
                            sector_bytes=self.sector_bytes, line_bytes=self.line_bytes, reuse=False)
        if acc.pos.size == 0:
            return out, filled
        pos, slot = acc.pos, acc.slot
        wid = acc.tid // W
        lane = acc.tid % W
        addr = ref.base + pos * ref.esize
        hit = reused(wid, slot, addr >> sb)
        lane_bytes = np.zeros((pos.size, ref.esize), np.uint8)

        # ---- the instructions: the lanes that reach memory, grouped by (iteration, warp)
        m = np.flatnonzero(~hit)
        key = slot[m] * (int(wid.max()) + 1) + wid[m]
        if key.size > 1 and np.any(key[1:] < key[:-1]):
            o = np.argsort(key, kind="stable")
            m, key = m[o], key[o]
        new = np.ones(m.size, bool)
        new[1:] = key[1:] != key[:-1]
        inst = np.cumsum(new) - 1
        n_inst = int(inst[-1]) + 1
        lanes_mat = np.zeros((n_inst, W), np.int64)
        mask_mat = np.zeros((n_inst, W), bool)
        lanes_mat[inst, lane[m]] = addr[m]
        mask_mat[inst, lane[m]] = True
        # Inactive lanes get addresses the coalescer must ignore (further lines).
        first = lanes_mat[np.arange(n_inst), np.argmax(mask_mat, axis=1)]
        junk = (first[:, None] + self.line_bytes * (np.arange(W)[None, :] + 3)) % (1 << self.config.addr_width)
        lanes_mat = np.where(mask_mat, lanes_mat, junk)
        weights = (1 << np.arange(W, dtype=object))
        masks = (mask_mat.astype(object) * weights).sum(axis=1).tolist()
        warps = list(zip(lanes_mat.tolist(), masks))

        reqs = self.backend.coalesce(warps)
        self.calls += 1
        self.instructions += n_inst
        self.lanes += int(pos.size)
        self.cache_hits += int(hit.sum())
        r_addr = np.array([r.addr for r in reqs], dtype=np.int64)
        r_size = np.array([r.size for r in reqs], dtype=np.int64)
        r_last = np.array([bool(r.last) for r in reqs], dtype=bool)
        where = f"{ref.name}, {n_inst} warp instructions"
        if r_last.sum() != n_inst or (r_last.size and not r_last[-1]):
            raise CoalescerError(f"{where}: the coalescer closed {int(r_last.sum())} warps with `last` "
                                 f"in {len(reqs)} requests" + ("" if not r_last.size or r_last[-1]
                                                               else ", and its last request does not close one"))
        bad = np.flatnonzero((r_size <= 0) | (r_size % self.sector_bytes != 0) | (r_size > self.line_bytes)
                             | (r_addr % self.sector_bytes != 0))
        if bad.size:
            i = int(bad[0])
            raise CoalescerError(f"{where}: request {i} reads {int(r_size[i])} B at {int(r_addr[i]):#x}, not whole "
                                 f"{self.sector_bytes} B sectors up to a {self.line_bytes} B line")
        self.requests += np.bincount(r_size // self.sector_bytes, minlength=self.spl + 1)
        r_inst = np.cumsum(r_last) - r_last          # instruction of every request
        payload, r_off = self.image.read(r_addr, r_size)

        # ---- lanes that reach memory: the request of their instruction that holds them
        span = self.image.hi - self.image.lo
        shift = max(1, span.bit_length())
        if n_inst >= 1 << (62 - shift):
            raise ValueError(f"{where}: too many instructions for one coalescer call")
        rkey = (r_inst << shift) | (r_addr - self.image.lo)
        ro = np.argsort(rkey, kind="stable")
        lkey = (inst << shift) | (addr[m] - self.image.lo)
        c = np.searchsorted(rkey[ro], lkey, side="right") - 1
        ok = c >= 0
        cr = ro[np.maximum(c, 0)]
        ok &= (r_inst[cr] == inst) & (addr[m] + ref.esize <= r_addr[cr] + r_size[cr])
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            i = int(inst[j])
            got = ", ".join(f"{int(r_size[q])} B at {int(r_addr[q]):#x}" for q in np.flatnonzero(r_inst == i)[:6])
            raise CoalescerError(f"{where}: lane {int(lane[m][j])} of warp instruction {i} reads {ref.name}"
                                 f"[{int(pos[m][j])}] at {int(addr[m][j]):#x}, which none of the instruction's "
                                 f"requests holds ({got or 'no request'})")
        base_off = r_off[cr] + (addr[m] - r_addr[cr])
        lane_bytes[m] = payload[base_off[:, None] + np.arange(ref.esize)[None, :]]

        # ---- lanes served by the cache: the sector a request brought to the same warp before
        h = np.flatnonzero(hit)
        if h.size:
            # Sectors delivered to each warp: (warp, sector, iteration, payload offset).
            nsec = r_size // self.sector_bytes
            d_req = np.repeat(np.arange(r_addr.size), nsec)
            d_idx = np.arange(d_req.size) - np.repeat(np.cumsum(nsec) - nsec, nsec)
            d_sec = (r_addr[d_req] >> sb) + d_idx
            d_off = r_off[d_req] + d_idx * self.sector_bytes
            inst_w = np.zeros(n_inst, np.int64)
            inst_s = np.zeros(n_inst, np.int64)
            inst_w[inst] = wid[m]
            inst_s[inst] = slot[m]
            d_w, d_s = inst_w[r_inst[d_req]], inst_s[r_inst[d_req]]
            lo_sec = self.image.lo >> sb
            S = (span >> sb) + 2
            T = int(slot.max()) + 2
            if (int(wid.max()) + 1) * S * T >= 1 << 62:
                raise ValueError(f"{where}: too many warps for one coalescer call")
            dkey = ((d_w * S) + (d_sec - lo_sec)) * T + d_s
            do = np.argsort(dkey, kind="stable")
            hsec = addr[h] >> sb
            hkey = ((wid[h] * S) + (hsec - lo_sec)) * T + (slot[h] - 1)
            c = np.searchsorted(dkey[do], hkey, side="right") - 1
            cd = do[np.maximum(c, 0)]
            ok = (c >= 0) & (d_w[cd] == wid[h]) & (d_sec[cd] == hsec) & (d_s[cd] < slot[h])
            if not ok.all():
                j = int(np.flatnonzero(~ok)[0])
                raise CoalescerError(f"{where}: lane {int(lane[h][j])} of warp {int(wid[h][j])} at iteration "
                                     f"{int(slot[h][j])} reads {ref.name}[{int(pos[h][j])}] from the cache, but no "
                                     f"request brought its sector to that warp")
            off = d_off[cd] + (addr[h] - (hsec << sb))
            lane_bytes[h] = payload[off[:, None] + np.arange(ref.esize)[None, :]]

        out[pos] = lane_bytes.reshape(-1).view(dtype)
        filled[pos] = True
        return out, filled

    def histogram(self) -> dict:
        return {self.sector_bytes * k: int(self.requests[k]) for k in range(1, self.spl + 1)}

    def summary(self) -> dict:
        return {"backend": getattr(self.backend, "name", type(self.backend).__name__),
                "calls": self.calls, "instructions": self.instructions, "lanes": self.lanes,
                "cache_hits": self.cache_hits, "requests": self.histogram(),
                "request_count": int(self.requests.sum())}
