"""Configuration and command encoding of the Stream Compaction Unit (SCU paper §3,
§4, Tables 1–2; docs/scu.md).

The encodings (operation codes, comparison codes, descriptor fields) are defined
here once: the TLM, the RTL (``hw/scu``) and the drivers all import them.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..config import check, check_int, check_pow2
from ..fetch import FetchConfig, FetchFields, MemPortConfig, check_fetch_fields

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
class SCUConfig(FetchFields):
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
        Data stream: block requests in flight (the Data Fetch's request FIFO)
        and the coalescing unit's merge window (Table 1: a 38 KB FIFO, i.e.
        1216 blocks of 32 B, rounded down to 1024; 4-merge). Table 1's "32
        in-flight requests" is read as the coalescing unit's merge table, not
        a limit on the memory requests outstanding (docs/scu.md, "Paper
        parameters").
    param_inflight : int
        Requests in flight of each parameter stream (indexes, counts, bitmask):
        Table 1's 5 KB vector buffering is 160 blocks for three streams, 53
        each, rounded down to 32.
    count_width : int
        Width of element counts and positions.
    filter_sets, filter_ways : int
        Filtering hash: sets x ways entries of {id, cost} (4 B/line for BFS,
        8 B/line for SSSP in the paper: one entry holds both). With the hash
        in memory, ``filter_sets`` is the unique-element (BFS) geometry.
    filter_best_sets : int
        Sets of the best-cost (SSSP) filter when the hash is in memory and
        configured at run time with 8 B entries (Table 2); 0: ``filter_sets``.
    group_sets, group_ways, group_size : int
        Grouping hash: sets x ways entries, each a memory block tag and up to
        ``group_size`` element positions (8 in the paper).
    group_block_bytes : int
        The memory block that grouping keys on (a 128 B cache line).
    hash_in_memory : bool
        The paper's design (§4.1): the hashes live in memory, cached in the
        L2, and are probed through it (the TLM's time model then charges every
        probe to the GPU's L2 slices and DRAM; filtering and grouping run at
        the pipeline width). False: the on-chip SRAM variant the RTL
        implements (one probe per cycle). Sets need not be powers of two in
        memory (a key's set is its fold modulo the sets); the RTL is built
        only for the on-chip variant.
    hash_inflight : int
        Hash probes in flight (in memory): Table 1's 18 KB hash request buffer
        at 16 B per probe (id, cost, position, set address) = 1152.
    icnt_ports : int
        The unit's interconnect ports, each moving the GPU's
        ``icnt_flits_per_cycle`` each way; 0: one per pipeline lane
        (``width``): the paper gives no port limit and processes ``width``
        elements per cycle, filtering included (docs/scu.md).
    """

    param_inflight: int = 8
    count_width: int = 32
    filter_sets: int = 256
    filter_ways: int = 4
    group_sets: int = 64
    group_ways: int = 4
    group_size: int = 8
    group_block_bytes: int = 128
    filter_best_sets: int = 0
    hash_in_memory: bool = False
    hash_inflight: int = 1152
    icnt_ports: int = 0

    PRESETS = {
        "default": {},
        # The papers' units (docs/scu.md, "Paper parameters"): Table 1's buffers and
        # Table 2's hashes in memory. Tegra X1: width 1; BFS filter 132 KB of 4 B
        # entries, 16-way (2112 sets); SSSP filter 192 KB of 8 B (1536 sets);
        # grouping 144 KB of 32 B (288 sets).
        "tx1": {"width": 1, "max_inflight": 1024, "param_inflight": 32, "hash_in_memory": True,
                "filter_sets": 2112, "filter_best_sets": 1536, "filter_ways": 16, "group_sets": 288,
                "group_ways": 16},
        # GTX 980: width 4; 1 MB of 4 B (16384 sets), 1.5 MB of 8 B (12288 sets),
        # 1.2 MB of 32 B (2457 sets, 39 321 entries), all 16-way.
        "gtx980": {"width": 4, "max_inflight": 1024, "param_inflight": 32, "hash_in_memory": True,
                   "filter_sets": 16384, "filter_best_sets": 12288, "filter_ways": 16, "group_sets": 2457,
                   "group_ways": 16},
        # RTL simulation (on-chip hashes, scaled): the papers' widths with hashes of
        # 1024 (tx1) / 4096 (gtx980) filter entries and 256 / 512 groups, and the
        # fetch engines' RTL sizes (32 data requests, 8 per parameter stream).
        "tx1-sim": {"width": 1, "filter_sets": 256, "filter_ways": 4, "group_sets": 64, "group_ways": 4},
        "gtx980-sim": {"width": 4, "filter_sets": 1024, "filter_ways": 4, "group_sets": 128, "group_ways": 4},
        # The paper's hash capacity on chip (area of the SRAM variant): 192 KB 16-way
        # filter of 8 B lines (1536 sets, rounded to 2048), 144 KB 16-way grouping of
        # 32 B lines (288 sets, rounded to 256).
        "tx1-onchip": {"width": 1, "filter_sets": 2048, "filter_ways": 16, "group_sets": 256, "group_ways": 16},
        # Small hashes that collide often (tests).
        "tiny": {"width": 2, "max_inflight": 8, "param_inflight": 4, "filter_sets": 4, "filter_ways": 2,
                 "group_sets": 4, "group_ways": 2, "group_size": 4},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check_fetch_fields(self, count_min=8)
        check_pow2(n, "param_inflight", self.param_inflight, 2, 1024)
        check(isinstance(self.hash_in_memory, bool),
              f"{n}.hash_in_memory must be true or false, not {self.hash_in_memory!r}")
        sets = check_int if self.hash_in_memory else check_pow2     # in memory: any number of sets
        sets(n, "filter_sets", self.filter_sets, 1, 1 << 20)
        check_pow2(n, "filter_ways", self.filter_ways, 1, 64)
        sets(n, "group_sets", self.group_sets, 1, 1 << 20)
        check_int(n, "filter_best_sets", self.filter_best_sets, 0, 1 << 20)
        check(self.filter_best_sets in (0, self.filter_sets) or self.hash_in_memory,
              f"{n}.filter_best_sets={self.filter_best_sets}: a separate best-cost geometry needs the hash in "
              f"memory (hash_in_memory=True); the on-chip hash has filter_sets={self.filter_sets}")
        check_int(n, "hash_inflight", self.hash_inflight, 1, 1 << 20)
        check_int(n, "icnt_ports", self.icnt_ports, 0, 64)
        check_pow2(n, "group_ways", self.group_ways, 1, 64)
        check_int(n, "group_size", self.group_size, 1, 32)
        check_pow2(n, "group_block_bytes", self.group_block_bytes, 4, 4096)
        check(self.group_block_bytes < (1 << self.addr_width),
              f"{n}.group_block_bytes must be below the address space")

    # -- the fetch engines of the four streams ---------------------------------------
    # (cached: the configuration is frozen, and the TLM asks for them on every operation)
    @cached_property
    def data_fetch(self) -> FetchConfig:
        return FetchConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, width=self.width,
                           max_elem_bytes=self.max_elem_bytes, max_inflight=self.max_inflight,
                           merge_window=self.merge_window, count_width=self.count_width)

    @cached_property
    def param_fetch(self) -> FetchConfig:
        """Indexes and counts: 4-byte elements, ``width`` per beat."""
        return FetchConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, width=self.width,
                           max_elem_bytes=4, max_inflight=self.param_inflight,
                           merge_window=min(self.merge_window, self.param_inflight - 1),
                           count_width=self.count_width)

    @cached_property
    def mask_fetch(self) -> FetchConfig:
        """Bitmask words: one 32-bit word (32 elements' bits) per beat."""
        return self.param_fetch.replace(width=1)

    def stream_fetch(self, stream: str) -> FetchConfig:
        return {"idx": self.param_fetch, "cnt": self.param_fetch, "mask": self.mask_fetch,
                "data": self.data_fetch}[stream]

    @cached_property
    def port(self) -> MemPortConfig:
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, tag_width=self.tag_width)

    @cached_property
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

    @property
    def best_sets(self) -> int:
        """Sets of the best-cost filter."""
        return self.filter_best_sets or self.filter_sets

    @property
    def ports(self) -> int:
        """Interconnect ports (``icnt_ports``, 0: ``width``)."""
        return self.icnt_ports or self.width

    def derived(self) -> dict:
        return {"tag_width": self.tag_width, "filter_entries": self.filter_sets * self.filter_ways,
                "filter_bits": self.filter_sets * self.filter_ways * self.filter_entry_bits,
                "group_entries": self.group_sets * self.group_ways,
                "group_bits": self.group_sets * self.group_ways * self.group_entry_bits,
                "ops": OP_CODES, "cmps": CMP_CODES}
