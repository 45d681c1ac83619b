"""Vectorised warp memory coalescer (docs/golden.md, "Coalescing").

A *lane access* is one thread's access to one address. Lane accesses with the same
*key* belong to the same warp memory instruction. For every instruction the
coalescer counts, as GPGPU-Sim/Accel-Sim do:

* **sectors**: distinct 32 B sectors touched (Maxwell and later issue one
  request per sector);
* **lines**: distinct 128 B lines touched (Fermi with L1 caching);
* **requests by size**: the sectors of one line, merged while contiguous, as
  EMOGI's PCIe traces show them: a run of 1–4 contiguous sectors inside one
  128 B line is one request of 32, 64, 96 or 128 B; a gap or a line boundary
  starts a new request.

Example: a warp reading 128 contiguous bytes from a line offset of 96 touches 4
sectors in 2 lines: one 32 B request (the last sector of the first line) and
one 96 B request (first three sectors of the next line).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Coalesced", "coalesce", "coalesce_compacted", "coalesce_dense", "coalesce_range", "coalesce_spans", "coalesce_warp",
           "warp_keys", "line_items", "span_items", "counts_from_items", "run_bounds"]


@dataclass
class Coalesced:
    """Counts for a set of warp memory instructions."""

    instructions: int = 0          # warp memory instructions (distinct keys with an active lane)
    lanes: int = 0                 # lane accesses
    sectors: int = 0               # distinct (instruction, sector)
    lines: int = 0                 # distinct (instruction, line)
    requests: np.ndarray = field(default_factory=lambda: np.zeros(5, np.int64))  # index k: requests of k sectors
    # For the memory system: the distinct (key, sector) pairs in key order (:func:`coalesce`
    # with ``keep``), or the line accesses (key, line, mask) (:func:`coalesce_dense` with ``keep``).
    keys: np.ndarray | None = None
    sector_ids: np.ndarray | None = None
    items: tuple | None = None

    @property
    def request_count(self) -> int:
        return int(self.requests.sum())

    def request_hist(self, sector_bytes: int = 32) -> dict:
        return {sector_bytes * k: int(self.requests[k]) for k in range(1, len(self.requests))}

    def add(self, other: "Coalesced") -> None:
        self.instructions += other.instructions
        self.lanes += other.lanes
        self.sectors += other.sectors
        self.lines += other.lines
        self.requests = self.requests + other.requests


def warp_keys(tid: np.ndarray, slot: np.ndarray | int | None, warp_size: int = 32) -> np.ndarray:
    """Key of each lane access: warp ``tid // warp_size`` at loop iteration ``slot``.

    Keys sort by (slot, warp): warps are taken to run in lock step, iteration by
    iteration (the order the cache model sees)."""
    warp = np.asarray(tid, dtype=np.int64) // warp_size
    if slot is None:
        return warp
    nw = int(warp.max()) + 1 if warp.size else 1
    return np.asarray(slot, dtype=np.int64) * nw + warp


_SENT = np.iinfo(np.int64).max


def _ranks(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense rank of every key (0 = smallest) and the sorted distinct keys."""
    if key.size > 1 and bool(np.all(key[1:] >= key[:-1])):
        new = np.empty(key.size, bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        return new.cumsum() - 1, key[new]
    kmin, kmax = int(key.min()), int(key.max())
    span = kmax - kmin + 1
    if span <= max(4 * key.size, 1 << 20):
        present = np.zeros(span, bool)
        present[key - kmin] = True
        distinct = present.nonzero()[0]
        rank_of = present.cumsum() - 1
        return rank_of[key - kmin], distinct + kmin
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.ones(ks.size, bool)
    new[1:] = ks[1:] != ks[:-1]
    r = new.cumsum() - 1
    rank = np.empty_like(r)
    rank[order] = r
    return rank, ks[new]


def _count_runs(s: np.ndarray, newrow: np.ndarray, spl: int, out: Coalesced, keep_rows=None) -> None:
    # ``s``: distinct sectors of each instruction, ascending, instructions one after another;
    # ``newrow``: True where an instruction starts.
    m = s.size
    out.sectors = m
    line = s >> (spl.bit_length() - 1) if spl & (spl - 1) == 0 else s // spl   # (s >= 0)
    newline = newrow.copy()
    newline[1:] |= line[1:] != line[:-1]
    out.lines = int(np.count_nonzero(newline))
    newreq = newline
    newreq[1:] |= s[1:] != s[:-1] + 1
    lengths = np.diff(np.flatnonzero(newreq), append=m)      # sectors of each request
    out.requests = np.bincount(lengths, minlength=spl + 1)[: spl + 1].astype(np.int64)


def coalesce(addr: np.ndarray, key: np.ndarray, *, lane: np.ndarray | None = None, warp_size: int = 32,
             sector_bytes: int = 32, line_bytes: int = 128, keep: bool = False) -> Coalesced:
    """Coalesce lane accesses ``addr`` (byte addresses) grouped by ``key``.

    Parameters
    ----------
    addr, key : int arrays of equal length
    lane : int array, optional
        Lane (0..warp_size-1) of each access, distinct within an instruction; by
        default the accesses of one key take lanes in order.
    keep : bool
        Also return the distinct (key, sector) pairs, sorted, for the cache model.

    Sorted input (keys ascending, addresses ascending within a key: sequential
    accesses) is counted directly; otherwise each instruction's lanes are laid
    out as one row of an ``(instructions, warp_size)`` matrix sorted row by row,
    so the cost stays linear in the number of accesses (no global sort).
    """
    addr = np.asarray(addr, dtype=np.int64).reshape(-1)
    key = np.asarray(key, dtype=np.int64).reshape(-1)
    if addr.shape != key.shape:
        raise ValueError(f"addr and key must have the same shape, not {addr.shape} and {key.shape}")
    spl = line_bytes // sector_bytes
    out = Coalesced(requests=np.zeros(spl + 1, np.int64))
    n = addr.size
    if n == 0:
        if keep:
            out.keys = np.zeros(0, np.int64)
            out.sector_ids = np.zeros(0, np.int64)
        return out
    if addr.min() < 0:
        raise ValueError("negative address in a warp access")
    sec = addr >> (sector_bytes.bit_length() - 1)
    out.lanes = n
    # Fast path: sequential accesses, already in (key, address) order.
    if n > 1:
        kstep = key[1:] != key[:-1]
        if bool(np.all(key[1:] >= key[:-1])) and bool(np.all((sec[1:] >= sec[:-1]) | kstep)):
            newrow = np.empty(n, bool)
            newrow[0] = True
            newrow[1:] = kstep
            rs = newrow.nonzero()[0]
            widest = int(max(int((rs[1:] - rs[:-1]).max()) if rs.size > 1 else 0, n - int(rs[-1])))
            if widest > warp_size:
                raise ValueError(f"an instruction has {widest} lane accesses, more than the warp size {warp_size}")
            first = newrow.copy()
            first[1:] |= sec[1:] != sec[:-1]
            s = sec[first]
            nr = newrow[first]
            out.instructions = int(np.count_nonzero(newrow))
            _count_runs(s, nr, spl, out)
            if keep:
                out.keys = key[first]
                out.sector_ids = s
            return out
    if lane is not None:
        lane = np.asarray(lane, dtype=np.int64).reshape(-1)
        kmin, span = int(key.min()), int(key.max()) - int(key.min()) + 1
        # (at most ``span`` instructions: too many accesses for them to be mostly idle)
        if n * 4 < span * warp_size and span <= 1 << 31 and int(sec.max()) < 1 << 32:
            # Mostly idle warps (a pull sweep's loop iterations over skewed degrees): one
            # sort of the (instruction, sector) pairs, no ranks and no matrix.
            kk = key - kmin
            c = np.sort((kk << 32) | sec, kind="stable")    # timsort: the runs of ascending threads
            hk = c >> 32
            rows = 1 + int(np.count_nonzero(hk[1:] != hk[:-1]))
            if n * 4 < rows * warp_size:
                d = np.sort((kk << warp_size.bit_length()) | lane, kind="stable")
                if bool((d[1:] == d[:-1]).any()):
                    raise ValueError("two accesses of one warp instruction use the same lane")
                _coalesce_pairs(c, spl, out, keep, kmin=kmin)
                return out
    rank, distinct = _ranks(key)
    rows = distinct.size
    if lane is None:
        # Position of each access among those of its key, in input order.
        order = np.argsort(rank, kind="stable")
        counts = np.bincount(rank, minlength=rows)
        if counts.max() > warp_size:
            raise ValueError(f"an instruction has {counts.max()} lane accesses, more than the warp size {warp_size}")
        starts = np.concatenate(([0], counts.cumsum()[:-1]))
        lane = np.empty(n, np.int64)
        lane[order] = np.arange(n) - starts[rank[order]]
    if n * 4 < rows * warp_size and rows < 1 << 31 and int(sec.max()) < 1 << 32:
        used = np.zeros(rows * warp_size, bool)
        used[rank * warp_size + lane] = True
        if int(np.count_nonzero(used)) != n:
            raise ValueError("two accesses of one warp instruction use the same lane")
        _coalesce_pairs(np.sort((rank << 32) | sec, kind="stable"), spl, out, keep, distinct=distinct)
        return out
    mat = np.full(rows * warp_size, _SENT, np.int64)
    mat[rank * warp_size + lane] = sec
    mat = mat.reshape(rows, warp_size)
    mat.sort(axis=1)
    first = np.empty(mat.shape, bool)
    first[:, 0] = True
    np.not_equal(mat[:, 1:], mat[:, :-1], out=first[:, 1:])
    first &= mat != _SENT
    per_row = np.count_nonzero(first, axis=1)
    if int(np.count_nonzero(mat != _SENT)) != n:
        raise ValueError("two accesses of one warp instruction use the same lane")
    s = mat[first]                                  # distinct sectors, row-major = key order
    m = s.size
    out.instructions = rows
    newrow = np.zeros(m, bool)
    starts = per_row.cumsum() - per_row
    newrow[starts[per_row > 0]] = True
    _count_runs(s, newrow, spl, out)
    if keep:
        out.keys = np.repeat(distinct, per_row)
        out.sector_ids = s
    return out


def _coalesce_pairs(c, spl, out, keep, *, distinct=None, kmin=0) -> None:
    """:func:`coalesce` when most lanes are idle (fewer than a quarter of the
    ``instructions x warp_size`` matrix's cells used: a pull sweep's loop
    iterations over skewed degrees), from ``c``: the sorted ``row << 32 | sector``
    of every access, ``row`` the instruction's key minus ``kmin`` or its index in
    ``distinct`` (the same counts and keys as the matrix)."""
    n = c.size
    first = np.empty(n, bool)
    first[0] = True
    np.not_equal(c[1:], c[:-1], out=first[1:])
    u = c[first]                                        # distinct (instruction, sector), sorted
    s = u & 0xFFFFFFFF
    r = u >> 32
    newrow = np.empty(u.size, bool)
    newrow[0] = True
    np.not_equal(r[1:], r[:-1], out=newrow[1:])
    out.instructions = int(np.count_nonzero(newrow))
    _count_runs(s, newrow, spl, out)
    if keep:
        out.keys = distinct[r] if distinct is not None else r + kmin
        out.sector_ids = s


_SENT32 = np.iinfo(np.int32).max


def _request_table(spl: int) -> np.ndarray:
    """``T[mask, k]``: requests of ``k`` sectors in a line whose sectors ``mask`` are
    touched (maximal runs of contiguous set bits), for every 8-bit mask."""
    t = np.zeros((256, spl + 1), np.int64)
    for m in range(256):
        run = 0
        for b in range(spl + 1):
            if b < spl and m >> b & 1:
                run += 1
            elif run:
                t[m, run] += 1
                run = 0
    return t


_REQ = {spl: _request_table(spl) for spl in (1, 2, 4, 8)}
_POP8 = np.array([bin(i).count("1") for i in range(256)], np.int64)


def counts_from_items(mask: np.ndarray, spl: int, out: Coalesced) -> None:
    """Fill ``out.sectors``, ``.lines`` and ``.requests`` from line accesses' masks."""
    h = np.bincount(mask, minlength=256)
    out.lines = int(mask.size)
    out.sectors = int(h @ _POP8)
    out.requests = h @ _REQ[spl]


def coalesce_dense(sec: np.ndarray, active: np.ndarray | None = None, *, warp_size: int = 32,
                   sectors_per_line: int = 4, bounds: tuple[int, int] | None = None, shift: int = 0,
                   keep: bool = False) -> Coalesced:
    """Lane ``t`` of thread ``t`` (warp ``t // warp_size``) touches sector ``sec[t]``
    when ``active[t]`` (default: all). Same counts as :func:`coalesce` on those
    accesses, computed on an ``(warps, warp_size)`` matrix of sectors sorted row
    by row, without compacting the active lanes first: a line access starts
    where a row starts or its line changes, its mask ORs its lanes' sector bits,
    and the counts follow from the masks (:func:`counts_from_items`).

    ``sec`` may be relative to any line-aligned origin (the counts only depend on
    differences), which lets callers keep it in 32 bits. ``bounds`` = (smallest,
    largest) sector when the caller already knows them. With ``shift``, ``sec``
    holds element indices and the sector is ``sec >> shift`` (elements that divide
    a sector, array at a line boundary): it is computed straight into the matrix.
    With ``keep``, ``items`` holds the line accesses ``(warp, line, mask)`` of
    :func:`line_items` (lines relative to the same origin)."""
    spl = sectors_per_line
    out = Coalesced(requests=np.zeros(spl + 1, np.int64))
    n = sec.size
    if keep:
        out.items = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint8))
    if n == 0:
        return out
    lo, hi = bounds if bounds is not None else (int(sec.min()), int(sec.max()))
    if lo < 0:
        raise ValueError("negative sector in a warp access")
    dt, sent = (np.int32, _SENT32) if hi < _SENT32 - spl else (np.int64, _SENT)
    nw = -(-n // warp_size)
    mat = np.full(nw * warp_size, sent, dt)
    if active is None:
        np.right_shift(sec, shift, out=mat[:n], casting="unsafe")
        out.lanes = n
    else:
        np.right_shift(sec, shift, out=mat[:n], where=active, casting="unsafe")
        out.lanes = int(np.count_nonzero(active))
        if out.lanes == 0:
            return out
    m2 = mat.reshape(nw, warp_size)
    if not bool(np.all(m2[:, 1:] >= m2[:, :-1])):
        m2.sort(axis=1)
    sh = spl.bit_length() - 1
    line = mat >> sh
    nl = np.empty(mat.size, bool)
    nl[0] = True
    np.not_equal(line[1:], line[:-1], out=nl[1:])
    nl[::warp_size] = True
    pos = nl.nonzero()[0]
    bits = np.left_shift(np.uint8(1), (mat & (spl - 1)).astype(np.uint8))
    mask = np.bitwise_or.reduceat(bits, pos)
    start = line[pos]
    real = start != (sent >> sh)
    if not real.all():
        pos, start, mask = pos[real], start[real], mask[real]
    row = pos >> (warp_size.bit_length() - 1)
    out.instructions = 1 + int(np.count_nonzero(row[1:] != row[:-1])) if row.size else 0
    counts_from_items(mask, spl, out)
    if keep:
        out.items = (row, start.astype(np.int64), mask)
    return out


def coalesce_spans(lo: np.ndarray, hi: np.ndarray, lanes: int, *, sector_bytes: int = 32,
                   line_bytes: int = 128) -> Coalesced:
    """Warp instructions that each touch one contiguous byte span ``[lo[i], hi[i]]``
    (``hi`` = last byte, inclusive; ``lanes`` = total lane accesses): counted in
    closed form, since every line a span touches is one request."""
    spl = line_bytes // sector_bytes
    out = Coalesced(requests=np.zeros(spl + 1, np.int64))
    if lo.size == 0:
        return out
    sb, lb = sector_bytes.bit_length() - 1, line_bytes.bit_length() - 1
    s0, s1 = lo >> sb, hi >> sb
    l0, l1 = lo >> lb, hi >> lb
    out.instructions = int(lo.size)
    out.lanes = int(lanes)
    out.sectors = int((s1 - s0 + 1).sum())
    out.lines = int((l1 - l0 + 1).sum())
    single = l0 == l1
    req = np.bincount((s1 - s0 + 1)[single], minlength=spl + 1)[: spl + 1].astype(np.int64)
    multi = ~single
    if multi.any():
        req += np.bincount(spl - (s0[multi] % spl), minlength=spl + 1)[: spl + 1]
        req += np.bincount((s1[multi] % spl) + 1, minlength=spl + 1)[: spl + 1]
        req[spl] += int((l1 - l0 - 1)[multi].sum())
    out.requests = req
    return out


def coalesce_range(base: int, esize: int, n: int, *, warp_size: int = 32, sector_bytes: int = 32,
                   line_bytes: int = 128) -> Coalesced:
    """Thread ``t`` (``0 <= t < n``) accesses the element at byte ``base + t * esize``:
    the same counts as :func:`coalesce` on those addresses, in closed form."""
    if n <= 0:
        return Coalesced(requests=np.zeros(line_bytes // sector_bytes + 1, np.int64))
    first = np.arange(-(-n // warp_size), dtype=np.int64) * warp_size
    lo = base + first * esize
    hi = base + np.minimum(first + warp_size, n) * esize - 1
    return coalesce_spans(lo, hi, n, sector_bytes=sector_bytes, line_bytes=line_bytes)


def run_bounds(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) positions of the runs of equal values of ``w``
    (not empty)."""
    new = np.empty(w.size, bool)
    new[0] = True
    np.not_equal(w[1:], w[:-1], out=new[1:])
    starts = new.nonzero()[0]
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = w.size
    return starts, ends


def coalesce_compacted(base: int, esize: int, tid: np.ndarray, *, warp_size: int = 32, sector_bytes: int = 32,
                       line_bytes: int = 128) -> Coalesced:
    """A compacted write: element ``i`` (at byte ``base + i * esize``) is accessed by
    thread ``tid[i]``, ``tid`` ascending, so each warp's elements are one contiguous
    span. Same counts as :func:`coalesce`, in closed form."""
    n = tid.size
    if n == 0:
        return Coalesced(requests=np.zeros(line_bytes // sector_bytes + 1, np.int64))
    starts, ends = run_bounds(tid // warp_size)
    return coalesce_spans(base + starts * esize, base + ends * esize - 1, n, sector_bytes=sector_bytes,
                          line_bytes=line_bytes)


def line_items(keys: np.ndarray, sectors: np.ndarray, sectors_per_line: int = 4):
    """The line accesses of warp instructions: from the distinct ``(key, sector)``
    pairs sorted by key then sector (``Coalesced.keys`` / ``.sector_ids``),
    ``(key, line, mask)`` for every distinct (key, line), ``mask`` holding bit
    ``s % sectors_per_line`` of every sector ``s`` of the line."""
    if keys.size == 0:
        return keys, sectors, np.zeros(0, np.uint8)
    sh = sectors_per_line.bit_length() - 1
    line = sectors >> sh
    new = np.empty(keys.size, bool)
    new[0] = True
    np.not_equal(line[1:], line[:-1], out=new[1:])
    new[1:] |= keys[1:] != keys[:-1]
    starts = new.nonzero()[0]
    bits = np.left_shift(np.uint8(1), (sectors & (sectors_per_line - 1)).astype(np.uint8))
    mask = bits if starts.size == keys.size else np.bitwise_or.reduceat(bits, starts)
    return keys[starts], line[starts], mask


def span_items(lo: np.ndarray, hi: np.ndarray, keys: np.ndarray, *, sector_bytes: int = 32, line_bytes: int = 128):
    """The line accesses of warp instructions that each touch the byte span
    ``[lo[i], hi[i]]`` (inclusive): ``(key, line, mask)`` per line of each span."""
    if lo.size == 0:
        return keys[:0], lo[:0], np.zeros(0, np.uint8)
    sb, lb = sector_bytes.bit_length() - 1, line_bytes.bit_length() - 1
    spl = line_bytes // sector_bytes
    l0, l1 = lo >> lb, hi >> lb
    nl = l1 - l0 + 1
    if int(nl.max()) == 1:
        owner = None
        line = l0
        s0, s1 = (lo >> sb) - (l0 << (lb - sb)), (hi >> sb) - (l0 << (lb - sb))
    else:
        owner = np.repeat(np.arange(lo.size), nl)
        line = l0[owner] + (np.arange(owner.size) - np.repeat(nl.cumsum() - nl, nl))
        base = line << (lb - sb)
        s0 = np.maximum(lo[owner] >> sb, base) - base
        s1 = np.minimum(hi[owner] >> sb, base + spl - 1) - base
    mask = (((np.int64(1) << (s1 - s0 + 1)) - 1) << s0).astype(np.uint8)
    return (keys if owner is None else keys[owner]), line, mask


def coalesce_warp(addrs, mask=None, *, sector_bytes: int = 32, line_bytes: int = 128) -> Coalesced:
    """One warp instruction: lane addresses and an optional active mask."""
    addrs = np.asarray(addrs, dtype=np.int64)
    if mask is not None:
        addrs = addrs[np.asarray(mask, dtype=bool)]
    return coalesce(addrs, np.zeros(addrs.size, np.int64), sector_bytes=sector_bytes, line_bytes=line_bytes)
