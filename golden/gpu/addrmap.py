"""GPGPU-Sim's DRAM address decoder, vectorised: byte address -> channel, L2 slice, bank, row, column.

A numpy re-implementation of ``linear_to_raw_address_translation`` in GPGPU-Sim's
``src/gpgpu-sim/addrdec.cc`` (``addrdec_parseoption``, ``init``, ``addrdec_tlx``) and of
``bitwise_hash_function`` / ``ipoly_hash_function`` in ``hashing.cc`` (gpgpu-sim_distribution
commit 90ec3399). A *slice* is GPGPU-Sim's memory sub-partition (one L2 slice), numbered
``channel * sub_partitions + k`` as in ``addrdec_tlx``.

Speed: outside the division of the non-power-of-two ("gap") path every field is GF(2)-linear in
the address bits (a bit extraction, XOR-ed with hash bits for ``xor``/``ipoly``). Each field is
compiled once into shift-and-mask terms, one per contiguous bit run, or, where cheaper (hashes,
scattered bits), into 65536-entry lookup tables, one per 16-bit word of the address that the field
reads, XOR-ed together. A call costs a few numpy passes and no Python loop over bits or elements.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = ["AddressMapping", "Decoded", "GPGPUSIM_MAPPINGS"]

#: GPGPU-Sim presets (``-gpgpu_mem_addr_mapping``, ``-gpgpu_n_mem``,
#: ``-gpgpu_n_sub_partition_per_mchannel``, ``-gpgpu_memory_partition_indexing``) by our preset name.
_FERMI = "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS"  # also the GTX 750 Ti's
GPGPUSIM_MAPPINGS = {
    # configs/tested-cfgs/SM2_GTX480/gpgpusim.config: -gpgpu_mem_addr_mapping, -gpgpu_n_mem 6,
    # -gpgpu_n_sub_partition_per_mchannel 2, -gpgpu_memory_partition_indexing 0
    "gtx480": dict(mapping=_FERMI, channels=6, sub_partitions=2, indexing="consecutive"),
    # configs/deprecated-cfgs/GeForceGTX750Ti/gpgpusim.config: -gpgpu_mem_addr_mapping (Maxwell);
    # 4 channels x 1 sub-partition for our GTX 980 preset (4 x 64-bit controllers)
    "gtx980": dict(mapping=_FERMI, channels=4, sub_partitions=1, indexing="consecutive"),
    # configs/deprecated-cfgs/GeForceGTX750Ti/gpgpusim.config: -gpgpu_mem_addr_mapping, -gpgpu_n_mem 2,
    # -gpgpu_n_sub_partition_per_mchannel 1 (our Tegra X1 preset: 2 x 32-bit channels)
    "tx1": dict(mapping=_FERMI, channels=2, sub_partitions=1, indexing="consecutive"),
    # configs/tested-cfgs/SM3_KEPLER_TITAN/gpgpusim.config: -gpgpu_mem_addr_mapping, -gpgpu_n_mem 12,
    # -gpgpu_n_sub_partition_per_mchannel 2, -gpgpu_memory_partition_indexing 0
    "kepler": dict(mapping="dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCC.BCCSSSSS",
                   channels=12, sub_partitions=2, indexing="consecutive"),
    # configs/tested-cfgs/SM7_QV100/gpgpusim.config: -gpgpu_mem_addr_mapping, -gpgpu_n_mem 32,
    # -gpgpu_n_sub_partition_per_mchannel 2, -gpgpu_memory_partition_indexing 2 (IPOLY)
    "v100": dict(mapping="dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCB.CCCSSSSS",
                 channels=32, sub_partitions=2, indexing="ipoly"),
}

_INDEXING = ("consecutive", "xor", "ipoly")  # partition_index_function CONSECUTIVE, BITWISE_PERMUTATION, IPOLY
# hashing.cc ipoly_hash_function, per number of slices: new_index[i] = b[i] ^ XOR of a[j], j in row i.
_IPOLY = {
    16: ((11, 10, 9, 8, 6, 4, 3, 0), (12, 8, 7, 6, 5, 3, 1, 0), (9, 8, 7, 6, 4, 2, 1), (10, 9, 8, 7, 5, 3, 2)),
    32: ((13, 12, 11, 10, 9, 6, 5, 3, 0), (14, 13, 12, 11, 10, 7, 6, 4, 1), (14, 10, 9, 8, 7, 6, 3, 2, 0),
         (11, 10, 9, 8, 7, 4, 3, 1), (12, 11, 10, 9, 8, 5, 4, 2)),
    64: ((18, 17, 16, 15, 12, 10, 6, 5, 0), (15, 13, 12, 11, 10, 7, 5, 1, 0), (16, 14, 13, 12, 11, 8, 6, 2, 1),
         (17, 15, 14, 13, 12, 9, 7, 3, 2), (18, 16, 15, 14, 13, 10, 8, 4, 3), (17, 16, 15, 14, 11, 9, 5, 4)),
}
_MAP_RE = re.compile(r"dramid@(\d+);([BRCSbrcs0.| ]*)")
_WORDS = np.arange(1 << 16, dtype=np.int64)


def _next_pow2(n: int) -> int:
    """addrdec.cc ``next_powerOf2``, quirk included: 1 -> 0 (so IPOLY rejects one channel)."""
    n -= 1
    while n & (n - 1):
        n &= n - 1
    return n << 1


class Decoded(NamedTuple):
    """Fields of ``addrdec_t`` per address (int64 arrays of the input's shape); ``slice`` is ``sub_partition``."""
    channel: np.ndarray
    slice: np.ndarray
    bank: np.ndarray
    row: np.ndarray
    col: np.ndarray


class _Linear:
    """Field = XOR over input bits ``i < 63`` set in ``x`` of ``cols[i]`` (addrdec_packbits when one bit each)."""

    def __init__(self, cols):
        cols = [int(c) for c in cols[:63]]  # bit 63 of a non-negative int64 is 0
        self.empty = not any(cols)
        runs = []  # [lo, n, p]: input bits lo..lo+n-1 -> output bits p..p+n-1
        pext = all(c & (c - 1) == 0 for c in cols)
        for i, c in enumerate(cols if pext else ()):
            if c:
                p = c.bit_length() - 1
                if runs and runs[-1][0] + runs[-1][1] == i and runs[-1][2] + runs[-1][1] == p:
                    runs[-1][1] += 1
                else:
                    runs.append([i, 1, p])
        words = [k for k in range(4) if any(cols[16 * k:16 * k + 16])]
        run_cost = sum(1 + (lo != p) for lo, _, p in runs) + len(runs) - 1  # passes over the array
        self.runs = runs if pext and run_cost <= 2 * len(words) + 1 else None
        self.luts = []
        if self.runs is None:
            dtype = np.min_scalar_type((1 << max(cols).bit_length()) - 1)
            for k in words:
                lut = np.zeros(1 << 16, np.int64)
                for j, c in enumerate(cols[16 * k:16 * k + 16]):
                    lut ^= ((_WORDS >> j) & 1) * c
                self.luts.append((k, lut.astype(dtype)))

    def __call__(self, x: np.ndarray) -> np.ndarray | None:
        """Evaluate on contiguous little-endian int64 ``x``; None when the field reads no bit."""
        if self.empty:
            return None
        out = None
        if self.runs is not None:
            for lo, n, p in self.runs:
                m = ((1 << n) - 1) << p
                t = x >> (lo - p) if lo > p else (x << (p - lo) if lo < p else x)
                t = np.bitwise_and(t, m, out=t if t is not x else None)
                out = t if out is None else np.bitwise_or(out, t, out=out)
            return out
        words = x.view("<u2").reshape(-1, 4)
        for k, lut in self.luts:
            t = lut.take(words[:, k], mode="clip")
            out = t if out is None else np.bitwise_xor(out, t, out=out)
        return out.astype(np.int64, copy=False)


def _xor(x, y):
    return y if x is None else x if y is None else np.bitwise_xor(x, y, out=x)


@dataclass(frozen=True)
class AddressMapping:
    """GPGPU-Sim address decoding for one configuration (addrdec.cc ``linear_to_raw_address_translation``).

    Parameters
    ----------
    mapping : str
        ``-gpgpu_mem_addr_mapping``: ``"dramid@N;"`` then 64 characters, MSB first, from ``B`` (bank),
        ``R`` (row), ``C`` (column), ``S`` (burst, also a column bit), ``0`` (unused); ``.``, ``|`` and
        spaces are ignored, lower case is accepted (``addrdec_parseoption``). ``D`` bits are refused:
        ``addrdec_parseoption`` asserts when they come with ``dramid@``.
    channels : int
        ``-gpgpu_n_mem``. A power of two inserts log2(channels) chip bits at bit N and moves the
        B/R/C bits at or above N up (``init``); otherwise chip = (addr >> N) % channels and the fields
        are decoded from ((addr >> N) // channels) << N | (addr & (2**N - 1)) (``addrdec_tlx``, gap).
    sub_partitions : int
        ``-gpgpu_n_sub_partition_per_mchannel`` (a power of two): slice = chip * sub_partitions +
        (bank & (sub_partitions - 1)) (``addrdec_tlx``).
    indexing : str
        ``-gpgpu_memory_partition_indexing``: ``"consecutive"`` (0), ``"xor"`` (1, ``bitwise_hash_function``
        on the chip, power-of-two channels only) or ``"ipoly"`` (2, ``ipoly_hash_function`` on the slice,
        for next_powerOf2(channels) * sub_partitions in 16, 32, 64; modulo the slice count in the gap case).

    Addresses are non-negative integers below 2**63 (GPGPU-Sim's ``new_addr_type`` is 64-bit unsigned).
    """
    mapping: str
    channels: int
    sub_partitions: int = 1
    indexing: str = "consecutive"
    _fields: dict = field(init=False, repr=False, compare=False)
    _geom: tuple = field(init=False, repr=False, compare=False)  # N, gap, log2 sub, #B bits, #C+S bits

    def __post_init__(self):
        m = _MAP_RE.fullmatch(self.mapping) if isinstance(self.mapping, str) else None
        bits = re.sub(r"[.| ]", "", m.group(2)).upper() if m else ""
        if not m or len(bits) != 64 or int(m.group(1)) > 63:
            raise ValueError("AddressMapping.mapping must be 'dramid@N;' (N < 64) followed by 64 characters from "
                             f"B/R/C/S/0 ('.', '|' and spaces ignored), not {self.mapping!r}")
        ch, sub, idx = self.channels, self.sub_partitions, self.indexing
        if not isinstance(ch, (int, np.integer)) or isinstance(ch, bool) or ch < 1:
            raise ValueError(f"AddressMapping.channels must be an integer >= 1, not {ch!r}")
        if not isinstance(sub, (int, np.integer)) or isinstance(sub, bool) or sub < 1 or sub & (sub - 1):
            raise ValueError(f"AddressMapping.sub_partitions must be a power of two (1, 2, 4, ...), not {sub!r}")
        if idx not in _INDEXING:
            raise ValueError(f"AddressMapping.indexing must be one of {', '.join(map(repr, _INDEXING))}, not {idx!r}")
        n, lc, ls = int(m.group(1)), int(ch).bit_length() - 1, int(sub).bit_length() - 1
        gap = ch != 1 << lc
        nbs = _next_pow2(int(ch)) * sub
        if idx == "xor" and gap:
            raise ValueError(f"AddressMapping.indexing='xor' needs a power-of-two channels (1, 2, 4, ...), not {ch!r}")
        if idx == "ipoly" and nbs not in _IPOLY:
            raise ValueError("AddressMapping.indexing='ipoly' needs next_powerOf2(channels) * sub_partitions in "
                             f"{tuple(_IPOLY)} (ipoly_hash_function's tables), not {nbs}")
        masks = {f: sum(1 << (63 - i) for i, c in enumerate(bits) if c in f) for f in ("B", "R", "CS")}
        if not gap:  # init: insert the chip bits at ADDR_CHIP_S
            low = (1 << n) - 1
            masks = {f: (((v & ~low) << lc) | (v & low)) & ((1 << 64) - 1) for f, v in masks.items()}
        # Per field, the column (output contribution) of each bit of addr ("a") and of q = (addr >> N) // channels.
        cols = {f: ([0] * 64, [0] * 64) for f in ("bank", "row", "col", "slice")}

        def put(f, i, v):  # bit i of addr (non-gap) or of rest (gap: rest bit i >= N is q bit i - N)
            if i < 64:
                hi = gap and i >= n
                cols[f][hi][i - n if hi else i] ^= v

        for f, key in (("bank", "B"), ("row", "R"), ("col", "CS")):
            for pos, i in enumerate(i for i in range(64) if masks[key] >> i & 1):
                put(f, i, 1 << pos)
                if f == "bank" and pos < ls:
                    put("slice", i, 1 << pos)  # tlx->bk & (m_n_sub_partition_in_channel - 1)
        high = n if gap else n + lc + ls  # rest_of_addr_high_bits: q, or addr >> (ADDR_CHIP_S + log2 ch + log2 sub)
        if not gap:
            for j in range(lc):
                put("slice", n + j, 1 << (ls + j))  # chip bits
                if idx == "xor":
                    put("slice", high + j, 1 << (ls + j))  # bitwise_hash_function: chip ^ (high & (ch - 1))
        if idx == "ipoly":
            for o, row in enumerate(_IPOLY[nbs]):
                for j in row:
                    put("slice", high + j, 1 << o)
        object.__setattr__(self, "_fields", {f: (_Linear(a), _Linear(q)) for f, (a, q) in cols.items()})
        object.__setattr__(self, "_geom", (n, gap, ls, bin(masks["B"]).count("1"), bin(masks["CS"]).count("1")))

    @property
    def banks(self) -> int:
        """Banks per channel: 2 ** (number of B bits)."""
        return 1 << self._geom[3]

    @property
    def row_bytes(self) -> int:
        """Bytes of one row of one bank of one channel: 2 ** (number of C and S bits)."""
        return 1 << self._geom[4]

    @property
    def n_slices(self) -> int:
        """L2 slices (memory sub-partitions) in all: ``channels * sub_partitions``."""
        return int(self.channels) * int(self.sub_partitions)

    def _prep(self, addr):
        arr = np.asarray(addr)
        if arr.dtype.kind not in "iu" and arr.size:  # [] is float64
            raise TypeError(f"AddressMapping: addresses must be integers, not {arr.dtype}")
        x = np.ascontiguousarray(arr.reshape(-1), dtype="<i8")
        q, chip = np.divmod(x >> self._geom[0], int(self.channels)) if self._geom[1] else (None, None)  # gap
        return arr.shape, x, q, chip

    def _field(self, f, x, q):
        lin_a, lin_q = self._fields[f]
        out = _xor(lin_a(x), None if q is None else lin_q(q))
        return np.zeros(len(x), np.int64) if out is None else out

    def _slice(self, x, q, chip):
        s = self._field("slice", x, q)
        if chip is not None:  # gap: chip * sub_partitions, then IPOLY takes the modulo
            s ^= np.left_shift(chip, self._geom[2], out=chip)
            if self.indexing == "ipoly":
                s %= self.n_slices
        return s

    def slices(self, addr) -> np.ndarray:
        """Slice (``addrdec_t::sub_partition``) of each byte address in ``addr``; int64, same shape."""
        shape, x, q, chip = self._prep(addr)
        return self._slice(x, q, chip).reshape(shape)

    def rows(self, addr) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(channel, bank, row)`` of each byte address (what the DRAM row model needs; no column)."""
        shape, x, q, chip = self._prep(addr)
        bank, row = (self._field(f, x, q).reshape(shape) for f in ("bank", "row"))
        return (self._slice(x, q, chip) >> self._geom[2]).reshape(shape), bank, row

    def decode(self, addr) -> Decoded:
        """``addrdec_tlx`` on each byte address in ``addr``: channel, slice, bank, row, col (int64, same shape).

        ``col`` includes the S (burst) bits; ``channel`` is ``slice // sub_partitions``, as in ``addrdec_tlx``.
        """
        shape, x, q, chip = self._prep(addr)
        bank, row, col = (self._field(f, x, q) for f in ("bank", "row", "col"))
        s = self._slice(x, q, chip)
        return Decoded(*(v.reshape(shape) for v in (s >> self._geom[2], s, bank, row, col)))
