"""Configuration and command encoding of the Stream Compaction Unit (SCU paper §3,
§4, Tables 1–2; docs/scu.md).

The encodings (operation codes, comparison codes, descriptor fields) are defined
here once: the TLM, the RTL (``hw/scu``) and the drivers all import them.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check, check_choice, check_int, check_pow2
from ..fetch import FetchConfig, MemPortConfig

__all__ = ["SCUConfig", "OPS", "OP_CODES", "CMPS", "CMP_CODES", "STREAMS"]

#: Operations and their codes in a command descriptor.
OPS = ("bitmask", "data", "access", "replicate", "expand", "filter", "group")
OP_CODES = {name: i for i, name in enumerate(OPS)}
#: Comparisons of the bitmask constructor.
CMPS = ("eq", "ne", "lt", "le", "gt", "ge")
CMP_CODES = {name: i for i, name in enumerate(CMPS)}
#: The unit's read streams, one fetch engine each (docs/scu.md, "Pipeline"):
#: ``idx`` (indexes), ``cnt`` (counts, or costs for the best-cost filter),
#: ``mask`` (bitmask words), ``data`` (data, linear or gathered).
STREAMS = ("idx", "cnt", "mask", "data")


@dataclass(frozen=True)
class SCUConfig(Config):
    """Parameters of the SCU, set before synthesis (the hash *contents* are run time).

    Parameters
    ----------
    addr_width, block_bytes : int
        Memory port geometry (32 B = one GPU sector).
    width : int
        Pipeline width: elements per cycle (1 Tegra X1, 4 GTX 980; Table 2).
    max_elem_bytes : int
        Largest data element: 4, or 8 (4 and 8 at run time).
    max_inflight, merge_window : int
        Coalescing unit of the data stream: requests in flight and merge window
        (Table 1: 32 and 4).
    param_inflight : int
        Requests in flight of each parameter stream (indexes, counts, bitmask).
    count_width : int
        Width of element counts and positions.
    filter_sets, filter_ways : int
        Filtering hash: sets x ways entries of {id, cost} (4 B/line for BFS,
        8 B/line for SSSP in the paper: one entry holds both).
    group_sets, group_ways, group_size : int
        Grouping hash: sets x ways entries, each a memory block tag and up to
        ``group_size`` element positions (8 in the paper).
    group_block_bytes : int
        The memory block that grouping keys on (a 128 B cache line).
    """

    addr_width: int = 32
    block_bytes: int = 32
    width: int = 4
    max_elem_bytes: int = 8
    max_inflight: int = 32
    merge_window: int = 4
    param_inflight: int = 8
    count_width: int = 32
    filter_sets: int = 256
    filter_ways: int = 4
    group_sets: int = 64
    group_ways: int = 4
    group_size: int = 8
    group_block_bytes: int = 128

    PRESETS = {
        "default": {},
        # Tegra X1 (Table 2: width 1). Hash sizes scaled for simulation: the paper's
        # 132 KB / 192 KB filters (16-way) and 144 KB grouping hash become 1024
        # filter entries (8 KB) and 256 groups (9 KB); "tx1-paper" has the full sizes.
        "tx1": {"width": 1, "filter_sets": 256, "filter_ways": 4, "group_sets": 64, "group_ways": 4},
        # GTX 980 (Table 2: width 4); paper hashes 1 MB / 1.5 MB / 1.2 MB, scaled.
        "gtx980": {"width": 4, "filter_sets": 1024, "filter_ways": 4, "group_sets": 128, "group_ways": 4},
        # The paper's hash geometry (for area): 192 KB 16-way filter of 8 B lines
        # (24576 entries -> 1536 sets, rounded to 2048), 144 KB 16-way grouping of
        # 32 B lines (4608 entries -> 288 sets, rounded to 256).
        "tx1-paper": {"width": 1, "filter_sets": 2048, "filter_ways": 16, "group_sets": 256, "group_ways": 16},
        # Small hashes that collide often (tests).
        "tiny": {"width": 2, "max_inflight": 8, "param_inflight": 4, "filter_sets": 4, "filter_ways": 2,
                 "group_sets": 4, "group_ways": 2, "group_size": 4},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "addr_width", self.addr_width, 16, 48)
        check_pow2(n, "block_bytes", self.block_bytes, 8, 256)
        check_choice(n, "width", self.width, (1, 2, 4, 8))
        check_choice(n, "max_elem_bytes", self.max_elem_bytes, (4, 8))
        check_pow2(n, "max_inflight", self.max_inflight, 2, 1024)
        check_int(n, "merge_window", self.merge_window, 0, 16)
        check(self.merge_window < self.max_inflight,
              f"{n}.merge_window must be smaller than max_inflight ({self.max_inflight}), not {self.merge_window}")
        check_pow2(n, "param_inflight", self.param_inflight, 2, 1024)
        check_int(n, "count_width", self.count_width, 8, 32)
        check_pow2(n, "filter_sets", self.filter_sets, 1, 1 << 20)
        check_pow2(n, "filter_ways", self.filter_ways, 1, 64)
        check_pow2(n, "group_sets", self.group_sets, 1, 1 << 20)
        check_pow2(n, "group_ways", self.group_ways, 1, 64)
        check_int(n, "group_size", self.group_size, 1, 32)
        check_pow2(n, "group_block_bytes", self.group_block_bytes, 4, 4096)
        check(self.group_block_bytes < (1 << self.addr_width),
              f"{n}.group_block_bytes must be below the address space")

    # -- the fetch engines of the four streams ---------------------------------------
    @property
    def data_fetch(self) -> FetchConfig:
        return FetchConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, width=self.width,
                           max_elem_bytes=self.max_elem_bytes, max_inflight=self.max_inflight,
                           merge_window=self.merge_window, count_width=self.count_width)

    @property
    def param_fetch(self) -> FetchConfig:
        """Indexes and counts: 4-byte elements, ``width`` per beat."""
        return FetchConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, width=self.width,
                           max_elem_bytes=4, max_inflight=self.param_inflight,
                           merge_window=min(self.merge_window, self.param_inflight - 1),
                           count_width=self.count_width)

    @property
    def mask_fetch(self) -> FetchConfig:
        """Bitmask words: one 32-bit word (32 elements' bits) per beat."""
        return self.param_fetch.replace(width=1)

    def stream_fetch(self, stream: str) -> FetchConfig:
        return {"idx": self.param_fetch, "cnt": self.param_fetch, "mask": self.mask_fetch,
                "data": self.data_fetch}[stream]

    @property
    def port(self) -> MemPortConfig:
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, tag_width=self.tag_width)

    @property
    def tag_width(self) -> int:
        """Memory port tag: 3 source bits (4 streams and the store) + the engines' slot tag."""
        slots = max(self.data_fetch.tag_width, self.param_fetch.tag_width, self.write_tag_width)
        return 3 + slots

    @property
    def write_tag_width(self) -> int:
        """Writes in flight: as many as the data stream's reads (at least 16)."""
        return max(4, (self.max_inflight - 1).bit_length())

    @property
    def filter_entry_bits(self) -> int:
        return 1 + 32 + 32              # valid, id, cost

    @property
    def group_tag_bits(self) -> int:
        return self.addr_width - (self.group_block_bytes.bit_length() - 1)

    @property
    def group_entry_bits(self) -> int:
        return 1 + self.group_tag_bits + (self.group_size.bit_length()) + self.group_size * self.count_width

    def derived(self) -> dict:
        return {"tag_width": self.tag_width, "filter_entries": self.filter_sets * self.filter_ways,
                "filter_bits": self.filter_sets * self.filter_ways * self.filter_entry_bits,
                "group_entries": self.group_sets * self.group_ways,
                "group_bits": self.group_sets * self.group_ways * self.group_entry_bits,
                "ops": OP_CODES, "cmps": CMP_CODES}
