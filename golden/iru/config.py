"""Configuration and encodings of the Irregular accesses Reorder Unit (IRU paper §3,
§5 Table 1; docs/iru.md).

The encodings (filter/merge operations, reply kinds, ring flit kinds) are defined
here once: the TLM, the RTL (``hw/iru``) and the drivers all import them.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check, check_choice, check_int, check_pow2
from ..fetch import FetchConfig, MemPortConfig

__all__ = ["IRUConfig", "FILTER_OPS", "FILTER_CODES", "REPLY_KINDS", "KIND_CODES"]

#: Filter/merge operations (§4): ``none`` reorders only; ``min`` keeps, of the
#: elements with the same index found together in the hash, the one with the
#: smallest secondary value (unsigned 32-bit comparison, SSSP); ``fadd`` adds
#: their secondary values as IEEE-754 binary32 numbers (PageRank).
FILTER_OPS = ("none", "min", "fadd")
FILTER_CODES = {name: i for i, name in enumerate(FILTER_OPS)}

#: Why a reply was sent (docs/iru.md, "Data replier"):
#: ``entry``: one hash entry held enough elements; ``disabled``: a whole warp of
#: filtered (disabled) threads; ``timeout``: the request timed out and the fullest
#: entries were merged; ``flush``: no more input, the fullest entries merged;
#: ``final``: the home partition's last replies (live elements, then disabled).
REPLY_KINDS = ("entry", "disabled", "timeout", "flush", "final")
KIND_CODES = {name: i for i, name in enumerate(REPLY_KINDS)}


@dataclass(frozen=True)
class IRUConfig(Config):
    """Parameters of the IRU, set before synthesis (the operation is run time).

    Parameters
    ----------
    addr_width : int
        Byte-address width.
    block_bytes : int
        Memory port block: one prefetch request (the paper's prefetch buffer of
        1.7 KB for 8 requests holds 128 B lines).
    partitions : int
        Memory partitions, one IRU partition each (GTX 980: 4), joined by a ring.
    sets : int
        Sets of the reordering hash *per partition* (direct mapped: one entry per
        set; Table 1: 1024 sets over 4 partitions = 256).
    banks : int
        Banks of a partition's hash (Table 1: 2); one insertion per bank and cycle.
    entry_size : int
        Elements an entry holds (32 = a warp); also the largest warp request.
    index_bits : int
        Width of an index (24 in the paper).
    count_width : int
        Width of the element count ``n`` and of the positions.
    key_block_bytes : int
        The memory block of the irregular access that the hash keys on (a 128 B
        cache line).
    interleave_bytes : int
        Memory-partition interleave: the index array's bytes ``[k*I, (k+1)*I)``
        live in partition ``k % partitions``, which prefetches them.
    prefetch_inflight : int
        Prefetch requests on the fly per partition (Table 1: 8).
    timeout : int
        Cycles the oldest waiting warp request of a partition waits for an entry
        that can answer it alone before the replier merges the fullest entries (not
        given in the paper).
    request_depth : int
        Warp requests a partition buffers (Table 1: 2 KB).
    queue_depth : int
        Depth of each classifier queue (one per bank and one towards the ring).
    """

    addr_width: int = 32
    block_bytes: int = 128
    partitions: int = 4
    sets: int = 256
    banks: int = 2
    entry_size: int = 32
    index_bits: int = 24
    count_width: int = 24
    key_block_bytes: int = 128
    interleave_bytes: int = 256
    prefetch_inflight: int = 8
    timeout: int = 1000
    request_depth: int = 256
    queue_depth: int = 16

    PRESETS = {
        # Table 1 (GTX 980): 4 partitions, 1024 sets (256 per partition, 2 banks),
        # 8 prefetches on the fly, a 2 KB request FIFO (256 requests).
        "gtx980": {},
        # One partition of the gtx980 IRU (the paper's per-partition area figure).
        "default": {"partitions": 1},
        # Simulation size (RTL in the loop, Verilator): 2 partitions of 8 sets, 32-element entries.
        "small": {"block_bytes": 32, "partitions": 2, "sets": 8, "prefetch_inflight": 4, "interleave_bytes": 64,
                  "timeout": 150, "request_depth": 16, "queue_depth": 4, "count_width": 20},
        # The same with the paper's 4 partitions.
        "small4": {"block_bytes": 32, "partitions": 4, "sets": 8, "prefetch_inflight": 4, "interleave_bytes": 64,
                   "timeout": 150, "request_depth": 16, "queue_depth": 4, "count_width": 20},
        # Tiny hashes and 8-element entries (warps of 8): collisions and edge cases.
        "tiny": {"block_bytes": 32, "partitions": 2, "sets": 4, "entry_size": 8, "prefetch_inflight": 2,
                 "interleave_bytes": 32, "timeout": 60, "request_depth": 8, "queue_depth": 3,
                 "count_width": 12},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "addr_width", self.addr_width, 16, 48)
        check_pow2(n, "block_bytes", self.block_bytes, 8, 256)
        check_choice(n, "partitions", self.partitions, (1, 2, 4, 8))
        check_pow2(n, "sets", self.sets, 1, 1 << 16)
        check_pow2(n, "banks", self.banks, 1, 16)
        check(self.banks <= self.sets, f"{n}.banks must be at most sets ({self.sets}), not {self.banks}")
        check_choice(n, "entry_size", self.entry_size, (4, 8, 16, 32))
        check_int(n, "index_bits", self.index_bits, 8, 32)
        check_int(n, "count_width", self.count_width, 8, 32)
        check(self.count_width > self.entry_size.bit_length(),
              f"{n}.count_width must exceed log2(entry_size) + 1, not {self.count_width}")
        check_pow2(n, "key_block_bytes", self.key_block_bytes, 4, 1 << 16)
        check_pow2(n, "interleave_bytes", self.interleave_bytes, 4, 1 << 20)
        check_pow2(n, "prefetch_inflight", self.prefetch_inflight, 2, 256)
        check_int(n, "timeout", self.timeout, 1, 1 << 20)
        check_int(n, "request_depth", self.request_depth, 2, 4096)
        check_int(n, "queue_depth", self.queue_depth, 2, 1024)
        check(self.key_block_bytes < (1 << self.addr_width), f"{n}.key_block_bytes must be below the address space")

    # -- derived geometry -------------------------------------------------------------
    @property
    def part_bits(self) -> int:
        return self.partitions.bit_length() - 1

    @property
    def set_bits(self) -> int:
        return self.sets.bit_length() - 1

    @property
    def bank_bits(self) -> int:
        return self.banks.bit_length() - 1

    @property
    def rows(self) -> int:
        """Sets per bank."""
        return self.sets // self.banks

    @property
    def hash_bits(self) -> int:
        """Bits of the global set number (partition and local set)."""
        return self.part_bits + self.set_bits

    @property
    def key_bits(self) -> int:
        """Bits of a key block number."""
        return self.addr_width - (self.key_block_bytes.bit_length() - 1)

    @property
    def slot_bits(self) -> int:
        """Bits of an entry's element count (0..entry_size)."""
        return self.entry_size.bit_length()

    @property
    def warp_bits(self) -> int:
        """Bits of a warp number (warps of ``entry_size`` threads over ``n`` elements)."""
        return self.count_width - (self.entry_size.bit_length() - 1)

    @property
    def elem_bits(self) -> int:
        """One stored element: index, 32-bit secondary value, position."""
        return self.index_bits + 32 + self.count_width

    @property
    def entry_bits(self) -> int:
        return self.entry_size * self.elem_bits

    @property
    def max_n(self) -> int:
        return (1 << self.count_width) - 1

    # -- the prefetcher ------------------------------------------------------------------
    @property
    def fetch(self) -> FetchConfig:
        """The fetch engine of each prefetch stream (indices, secondary values)."""
        return FetchConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, width=1, max_elem_bytes=4,
                           max_inflight=self.prefetch_inflight, merge_window=0, count_width=self.count_width)

    @property
    def tag_width(self) -> int:
        """Memory port tag: one source bit (indices / secondary) + the engine's slot."""
        return 1 + self.fetch.tag_width

    @property
    def port(self) -> MemPortConfig:
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, tag_width=self.tag_width)

    def derived(self) -> dict:
        hash_bits = self.partitions * self.sets * self.entry_bits
        return {"tag_width": self.tag_width, "hash_bits": self.hash_bits, "rows": self.rows,
                "warp_bits": self.warp_bits, "elem_bits": self.elem_bits, "entry_bits": self.entry_bits,
                "hash_storage_bits": hash_bits, "hash_storage_kb": hash_bits / 8192,
                "filter_ops": FILTER_CODES, "reply_kinds": KIND_CODES}
