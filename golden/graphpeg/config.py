"""Configuration and command encoding of GraphPEG, the graph processing engine per SM
(Lü et al., ACM TACO 18(3), 2021, §3 and §4; docs/graphpeg.md).

The encodings (command operations, kernel modes, EF-exchange control and state
codes, the edge record) are defined here once: the TLM, the RTL (``hw/graphpeg``)
and the drivers all import them.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check, check_int, check_pow2
from ..fetch import FetchConfig, MemPortConfig

__all__ = ["GraphPEGConfig", "CMD_OPS", "KERNEL_MODES", "EF_BC", "EF_BS", "EF_OUTCOMES", "EDGE_ENTRY_BYTES",
           "STATUSES"]

#: Command operations of the top: ``setup`` (clear both vertex lists, set the spill
#: regions), ``run`` (one kernel: the output list becomes the input list).
CMD_OPS = {"setup": 0, "run": 1}
#: Kernel modes (§3.2): edge gathering (``__pop_edge_*``) and vertex-list (``__pop_vert``).
KERNEL_MODES = {"edge": 0, "vertex": 1}
#: Balancing control register R_BC (§3.3.2): idle, edge donating, edge receiving
#: standby, edge receiving.
EF_BC = {"idle": 0, "ED": 1, "ERS": 2, "ER": 3}
#: Balancing state register R_BS: nothing to report, done (ready to receive, donated,
#: inserted), failed (no free ALWT entry, nothing to donate).
EF_BS = {"idle": 0, "ok": 1, "fail": 2}
#: Outcome of a balancing decision (the TLM's ``EFDecision.outcome``, the RTL's
#: ``ef_info.outcome``): the entry moved; the receiver had no IVD entry (R_BS fail
#: in ERS); the donor had no RD or FE entry with edges left (R_BS fail in ED).
EF_OUTCOMES = {"moved": 0, "no_entry": 1, "nothing": 2}
#: ALWT entry status (§3.3.1).
STATUSES = {"IVD": 0, "FI": 1, "RD": 2, "FE": 3}
#: Bytes of one gathered edge in the edge buffer: source, destination, weight and
#: edge index, 4 bytes each (the four ``__pop_edge_*`` intrinsics).
EDGE_ENTRY_BYTES = 16


@dataclass(frozen=True)
class GraphPEGConfig(Config):
    """Parameters of GraphPEG.

    Parameters
    ----------
    sms : int
        SM engines of the RTL top (and of a TLM backend built from this
        configuration). The golden algorithms without an explicit backend attach
        one engine to every SM of the GPU model instead.
    alwt_entries : int
        Adjacency list working table entries per SM (§4.2: 24). The TLM takes any
        count (the benchmark's "unlimited" is 65536); the RTL at most 64.
    edge_buffer_bytes : int
        Shared memory for gathered edges per SM (§4.2: 2 KB), 16 bytes per edge.
    vlist_bytes : int
        Shared memory for the input and output vertex lists per SM (§4.2: 46 KB),
        split evenly between the two; 4 bytes per vertex.
    warp_size : int
        Lanes per warp: a pop hands out up to this many edges.
    ef_enabled : bool
        EF load balancing between SMs (§3.3.2) in the kernels the drivers launch.
    ef_interval : int
        Cycles between two checks of the control processor (§4.1: 512).
    ef_shift : int
        N of the threshold ``Rmax - Rmin >= Rmax >> N`` (§4.3: 4).
    width : int
        Edges per cycle of the RTL's edge path and pop port (1, 2, 4 or 8).
    addr_width, block_bytes : int
        Memory port geometry (a request reads or writes one block).
    fetch_inflight : int
        Block reads in flight of each of the RTL's fetch engines (index, edge,
        weight, refill).
    """

    sms: int = 1
    alwt_entries: int = 24
    edge_buffer_bytes: int = 2048
    vlist_bytes: int = 46 * 1024
    warp_size: int = 32
    ef_enabled: bool = True
    ef_interval: int = 512
    ef_shift: int = 4
    width: int = 4
    addr_width: int = 32
    block_bytes: int = 32
    fetch_inflight: int = 16

    PRESETS = {
        # The paper's engine (§4.2-4.4): 24 ALWT entries, 2 KB edge buffer, 46 KB of
        # vertex lists, EF check every 512 cycles with N = 4; one SM (area per SM).
        "default": {},
        # The paper's GPU: the same engine on each of 15 SMs (Table 2).
        "paper": {"sms": 15},
        # Small, for simulation: 2 SMs, 4 ALWT entries, a 16-edge buffer, 16-vertex
        # lists and 8-lane warps, so that every limit is reached by small graphs.
        "sim": {"sms": 2, "alwt_entries": 4, "edge_buffer_bytes": 256, "vlist_bytes": 128, "warp_size": 8,
                "ef_interval": 64, "fetch_inflight": 8},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check_int(n, "sms", self.sms, 1, 256)
        check_int(n, "alwt_entries", self.alwt_entries, 1, 1 << 16)
        check_pow2(n, "warp_size", self.warp_size, 1, 64)
        check(self.width in (1, 2, 4, 8), f"{n}.width must be one of 1, 2, 4, 8, not {self.width!r}")
        check_int(n, "edge_buffer_bytes", self.edge_buffer_bytes, EDGE_ENTRY_BYTES, 1 << 20)
        check(self.edge_buffer_bytes % (EDGE_ENTRY_BYTES * self.width) == 0,
              f"{n}.edge_buffer_bytes must be a multiple of {EDGE_ENTRY_BYTES * self.width} "
              f"({EDGE_ENTRY_BYTES} B per edge x width {self.width}), not {self.edge_buffer_bytes}")
        check(self.edge_buffer_edges >= self.warp_size,
              f"{n}.edge_buffer_bytes={self.edge_buffer_bytes} holds {self.edge_buffer_edges} edges, fewer than "
              f"a warp ({self.warp_size})")
        # Progress: while fewer than a warp of edges wait in the buffer (no pop until
        # the SM has gathered everything), the next chunk (up to a block of edges)
        # must still fit, or the engine waits for ever.
        wpb = self.block_bytes // 4 if isinstance(self.block_bytes, int) and self.block_bytes > 0 else 1
        check(self.edge_buffer_edges >= self.warp_size + wpb - 1,
              f"{n}.edge_buffer_bytes={self.edge_buffer_bytes} holds {self.edge_buffer_edges} edges: it needs a "
              f"warp plus a block of edges less one ({self.warp_size} + {wpb} - 1 = {self.warp_size + wpb - 1}), "
              f"or a chunk can wait for room that no pop frees")
        check_int(n, "addr_width", self.addr_width, 16, 48)
        check_pow2(n, "block_bytes", self.block_bytes, 8, 256)
        check_int(n, "vlist_bytes", self.vlist_bytes, 8, 1 << 24)
        check(self.vlist_entries >= self.block_bytes // 4,
              f"{n}.vlist_bytes={self.vlist_bytes} gives {self.vlist_entries} vertices per list, fewer than one "
              f"block of {self.block_bytes // 4} (a refill reads whole blocks)")
        check(isinstance(self.ef_enabled, bool), f"{n}.ef_enabled must be true or false, not {self.ef_enabled!r}")
        check_int(n, "ef_interval", self.ef_interval, 16, (1 << 16) - 1)
        check_int(n, "ef_shift", self.ef_shift, 0, 31)
        check_pow2(n, "fetch_inflight", self.fetch_inflight, 2, 256)

    # ------------------------------------------------------------------ derived
    @property
    def edge_buffer_edges(self) -> int:
        """Edges the edge buffer holds."""
        return self.edge_buffer_bytes // EDGE_ENTRY_BYTES

    @property
    def vlist_entries(self) -> int:
        """Vertices each of the two vertex lists holds on chip."""
        return self.vlist_bytes // 8

    @property
    def words_per_block(self) -> int:
        return self.block_bytes // 4

    def fetch(self, width: int) -> FetchConfig:
        """The configuration of one of the RTL's fetch engines (4-byte elements; a range
        lies in one or two blocks, so a merge window of one block is enough)."""
        return FetchConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, width=width,
                           max_elem_bytes=4, max_inflight=self.fetch_inflight, merge_window=1, count_width=8)

    @property
    def writer_tag_width(self) -> int:
        return max(1, (self.fetch_inflight - 1).bit_length())

    @property
    def sm_port(self) -> MemPortConfig:
        """One SM's memory port: five initiators (index, edge, weight, refill, spill)."""
        inner = max(self.fetch(1).tag_width, self.writer_tag_width)
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes, tag_width=3 + inner)

    @property
    def port(self) -> MemPortConfig:
        """The top's memory port (the SMs' ports through a round-robin arbiter; one SM's
        port as it is)."""
        sm_bits = (self.sms - 1).bit_length()
        return MemPortConfig(addr_width=self.addr_width, block_bytes=self.block_bytes,
                             tag_width=sm_bits + self.sm_port.tag_width)

    @property
    def alwt_entry_bits(self) -> int:
        """Bits of one ALWT entry: vertex, SIndex, remaining count (EIndex - SIndex), status."""
        return 32 + 32 + 32 + 2

    def derived(self) -> dict:
        return {"edge_buffer_edges": self.edge_buffer_edges, "vlist_entries": self.vlist_entries,
                "alwt_bits": self.alwt_entries * self.alwt_entry_bits, "cmd_ops": CMD_OPS,
                "kernel_modes": KERNEL_MODES, "ef_bc": EF_BC, "ef_bs": EF_BS, "ef_outcomes": EF_OUTCOMES,
                "port_tag_width": self.port.tag_width}
