"""The modelled GPUs (shared/SPEC.md §6) as validated configurations.

Every value of a preset cites its source in docs/golden.md ("GPU presets and
their sources"): the papers' configuration tables first, then GPGPU-Sim's
shipped configurations of the same generation (gpgpu-sim_distribution
``configs/``), then published measurements. Values that GPGPU-Sim gives in its
own clock domains are converted to this preset's core clock (a latency keeps
its nanoseconds; a throughput per GPGPU-Sim cycle is scaled by the clock ratio).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..config import Config, check, check_choice, check_int, check_pow2
from .addrmap import AddressMapping

__all__ = ["GPUConfig", "UNLIMITED"]

# GPGPU-Sim -gpgpu_mem_addr_mapping strings (docs/golden.md).
_MAP_FERMI = "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS"
_MAP_KEPLER = "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCC.BCCSSSSS"
_MAP_VOLTA = "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCB.CCCSSSSS"

#: Launch overhead: GPGPU-Sim's QV100 -gpgpu_kernel_launch_latency 5000 cycles at its
#: 1132 MHz core clock = 4.42 us, the only launch cost a shipped configuration gives.
LAUNCH_US = 5000 / 1132.0

#: The values that switch every resource limit of the model off (0 = unlimited,
#: one channel and one slice, work spread evenly over the SMs, no dependent-
#: chain term): :meth:`GPUConfig.unlimited`. With them (and the caches off) the
#: model is the previous one: launch + max(issue, DRAM bytes / bandwidth, unit)
#: + one memory latency.
UNLIMITED = dict(max_ctas_per_sm=0, lsu_per_cycle=0.0, l1_mshrs=0, l2_sub_partitions=1, l2_sectors_per_cycle=0.0,
                 atomic_per_cycle=0.0, atomic_same_address_per_cycle=0.0, icnt_flits_per_cycle=0.0,
                 dram_channels=1, dram_indexing="consecutive", dram_trc_ns=0.0, dram_trrd_ns=0.0,
                 cta_scheduler="balanced",
                 latency_chains=False)


def _num(owner, name, value, lo=0.0, hi=1e9):
    check(isinstance(value, (int, float)) and not isinstance(value, bool) and value == value and lo <= value <= hi,
          f"{owner}.{name} must be a number in [{lo:g}, {hi:g}], not {value!r}")


@lru_cache(maxsize=64)
def _mapping(mapping: str, channels: int, subs: int, indexing: str) -> AddressMapping:
    return AddressMapping(mapping=mapping, channels=channels, sub_partitions=subs, indexing=indexing)


@dataclass(frozen=True)
class GPUConfig(Config):
    """Parameters of the GPU model (golden/gpu, docs/golden.md "Time model").

    A limit of 0 means unlimited (:data:`UNLIMITED`, :meth:`unlimited`).
    Throughputs are per core cycle, latencies in core cycles.

    Parameters
    ----------
    name : str
        Label used in reports.
    sms, warp_size, clock_mhz
        Streaming multiprocessors, threads per warp, core clock (MHz).
    threads_per_sm, max_ctas_per_sm : int
        Resident threads and thread blocks per SM (occupancy): warps beyond
        them run in later waves. ``threads_per_sm`` also sets the BFS
        visibility window and the warps the IRU and GraphPEG keep in flight.
    issue_per_sm : int
        Warp instructions issued per cycle per SM (schedulers).
    cta_scheduler : str
        ``"round_robin"``: thread blocks of 8 warps go to SMs in turn and each
        bound counts the busiest SM; ``"balanced"``: work spread evenly.
    sector_bytes, line_bytes, coalescing
        Memory granule (32 B sector), cache line (128 B); ``"sector"``: one
        request per distinct sector (Maxwell and later), ``"line"``: per line
        (Fermi with L1 caching).
    l1_kb, l1_ways, l1_global : int, int, bool
        L1 data cache per SM; whether global loads are cached in it.
    l1_latency, l2_latency, mem_latency : int
        Unloaded load latency when served by the L1, the L2, DRAM.
    l1_mshrs : int
        Outstanding L1 load misses per SM (the memory-divergence bound of MDM:
        misses x latency / MSHRs).
    lsu_per_cycle, lsu_granule
        L1 / load-store unit accesses per cycle per SM, an access being a
        ``"line"`` (with its sectors) or a ``"sector"``.
    l2_kb, l2_ways : int
        Shared L2, split into ``dram_channels * l2_sub_partitions`` slices.
    l2_sub_partitions : int
        L2 slices per DRAM channel.
    l2_sectors_per_cycle : float
        Sector accesses per cycle per slice (data port).
    atomic_per_cycle : float
        Atomic transactions (one per warp instruction and sector) per cycle
        per slice.
    atomic_same_address_per_cycle : float
        Atomic operations on one address per cycle (they serialize).
    icnt_flit_bytes, icnt_header_bytes, icnt_flits_per_cycle
        Interconnect: a packet is its data plus a header, cut into flits
        (``icnt_flit_bytes`` 0: one flit per packet whatever its size); each SM
        and each slice port moves ``icnt_flits_per_cycle`` flits per cycle each
        way.
    dram_gbps, dram_channels : float, int
        DRAM bandwidth (GB/s) and channels (memory partitions).
    dram_mapping, dram_indexing : str
        GPGPU-Sim address mapping string and partition indexing (channel,
        slice, bank and row of every address; golden/gpu/addrmap.py).
    dram_queue : int
        FR-FCFS scheduler entries per channel: the window in which requests to
        one row are served by one activation.
    dram_trc_ns, dram_trrd_ns : float
        Row cycle (a bank's activations) and activate-to-activate delay (a
        channel's activations); 0: row misses cost nothing.
    launch_cycles : int
        Fixed cost of a kernel launch.
    latency_chains : bool
        Charge dependent memory phases and waves: a warp doing ``k`` dependent
        memory phases needs ``k`` latencies, warps beyond the resident ones run
        in waves.
    """

    name: str = "gtx980"
    sms: int = 16
    warp_size: int = 32
    threads_per_sm: int = 2048
    max_ctas_per_sm: int = 32
    clock_mhz: int = 1270
    issue_per_sm: int = 4
    cta_scheduler: str = "round_robin"
    sector_bytes: int = 32
    line_bytes: int = 128
    coalescing: str = "sector"
    l1_kb: int = 32
    l1_ways: int = 4
    l1_global: bool = True
    l1_latency: int = 124
    l1_mshrs: int = 32
    lsu_per_cycle: float = 1.0
    lsu_granule: str = "line"
    l2_kb: int = 2048
    l2_ways: int = 8
    l2_sub_partitions: int = 2
    l2_latency: int = 292
    l2_sectors_per_cycle: float = 1.0
    atomic_per_cycle: float = 1.0
    atomic_same_address_per_cycle: float = 1.0
    icnt_flit_bytes: int = 40
    icnt_header_bytes: int = 8
    icnt_flits_per_cycle: float = 1.0
    dram_gbps: float = 224.0
    dram_channels: int = 4
    dram_mapping: str = _MAP_FERMI
    dram_indexing: str = "consecutive"
    dram_queue: int = 16
    dram_trc_ns: float = 43.3
    dram_trrd_ns: float = 6.5
    mem_latency: int = 470
    launch_cycles: int = 5610
    latency_chains: bool = True

    PRESETS = {
        # SCU and IRU papers: GTX 980 (Maxwell). Sources per field in docs/golden.md.
        "gtx980": {},
        "default": {},
        # SCU paper Table 4: Tegra X1, 2 SMs at 1 GHz, 32 KB L1 / 256 KB L2, LPDDR4 25.6 GB/s (2 x 32-bit).
        "tx1": {"name": "tx1", "sms": 2, "clock_mhz": 1000, "l2_kb": 256, "dram_gbps": 25.6, "dram_channels": 2,
                "l1_latency": 98, "l2_latency": 230, "mem_latency": 380, "dram_trc_ns": 60.0, "dram_trrd_ns": 10.0,
                "launch_cycles": 4417},
        # MFF slides: GTX 480 (Fermi), 15 SMs at 1.4 GHz, 177.4 GB/s; GPGPU-Sim SM2_GTX480 for the rest
        # (its core runs at 700 MHz: throughputs per GPGPU-Sim cycle are halved, latencies doubled).
        "gtx480": {"name": "gtx480", "sms": 15, "threads_per_sm": 1536, "max_ctas_per_sm": 8, "clock_mhz": 1400,
                   "issue_per_sm": 1, "coalescing": "line", "l1_kb": 16, "l1_ways": 4, "l1_latency": 70,
                   "l1_mshrs": 64, "lsu_per_cycle": 0.5, "l2_kb": 768, "l2_ways": 8, "l2_sub_partitions": 2,
                   "l2_latency": 310, "l2_sectors_per_cycle": 0.5, "atomic_per_cycle": 0.5,
                   "atomic_same_address_per_cycle": 1 / 9, "icnt_flit_bytes": 40, "icnt_flits_per_cycle": 0.5,
                   "dram_gbps": 177.4, "dram_channels": 6, "dram_queue": 64, "mem_latency": 546,
                   "launch_cycles": 6184},
        # GraphPEG paper Table 2: Kepler-like, 15 SMs at 980 MHz, 16 KB L1D, 1536 KB L2; GPGPU-Sim
        # SM3_KEPLER_TITAN for the rest (its 837 MHz clock: latencies scaled by 980/837).
        "kepler": {"name": "kepler", "sms": 15, "max_ctas_per_sm": 16, "clock_mhz": 980, "l1_kb": 16,
                   "l1_ways": 32, "l1_global": False, "l1_latency": 96, "l1_mshrs": 2048, "l2_kb": 1536,
                   "l2_ways": 16, "l2_sub_partitions": 2, "l2_latency": 141, "icnt_flit_bytes": 40,
                   "dram_gbps": 288.0, "dram_channels": 12, "dram_mapping": _MAP_KEPLER, "dram_queue": 64,
                   "dram_trc_ns": 34.6, "dram_trrd_ns": 5.3, "mem_latency": 278, "launch_cycles": 4329},
        # EMOGI paper: Tesla V100 SXM2 16 GB (Volta), 80 SMs at 1.53 GHz, 128 KB L1 / 6 MB L2, HBM2
        # 900 GB/s; GPGPU-Sim SM7_QV100 (1132 MHz: latencies scaled by 1530/1132) for the rest.
        "v100": {"name": "v100", "sms": 80, "clock_mhz": 1530, "l1_kb": 128, "l1_ways": 64, "l1_latency": 27,
                 "l1_mshrs": 512, "lsu_per_cycle": 4.0, "lsu_granule": "sector", "l2_kb": 6144, "l2_ways": 24,
                 "l2_sub_partitions": 2, "l2_latency": 243, "icnt_flit_bytes": 0, "dram_gbps": 900.0,
                 "dram_channels": 32, "dram_mapping": _MAP_VOLTA, "dram_indexing": "ipoly", "dram_queue": 64,
                 "dram_trc_ns": 47.1, "dram_trrd_ns": 3.5, "atomic_same_address_per_cycle": 0.116,
                 "mem_latency": 422, "launch_cycles": 6758},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check(isinstance(self.name, str) and self.name != "", f"{n}.name must be a non-empty string")
        check_int(n, "sms", self.sms, 1, 1024)
        check_choice(n, "warp_size", self.warp_size, (8, 16, 32, 64))
        check_int(n, "threads_per_sm", self.threads_per_sm, self.warp_size, 1 << 16)
        check_int(n, "max_ctas_per_sm", self.max_ctas_per_sm, 0, 1024)
        check_int(n, "clock_mhz", self.clock_mhz, 1, 10_000)
        check_int(n, "issue_per_sm", self.issue_per_sm, 1, 16)
        check_choice(n, "cta_scheduler", self.cta_scheduler, ("round_robin", "balanced"))
        check_pow2(n, "sector_bytes", self.sector_bytes, 4, 512)
        check_pow2(n, "line_bytes", self.line_bytes, self.sector_bytes, 4096)
        check(self.line_bytes // self.sector_bytes <= 8,
              f"{n}: a line holds at most 8 sectors, not {self.line_bytes // self.sector_bytes} "
              f"(line_bytes={self.line_bytes}, sector_bytes={self.sector_bytes})")
        check_choice(n, "coalescing", self.coalescing, ("sector", "line"))
        check_int(n, "l1_kb", self.l1_kb, 1, 1 << 16)
        check_int(n, "l1_ways", self.l1_ways, 1, 1024)
        check(isinstance(self.l1_global, bool), f"{n}.l1_global must be true or false, not {self.l1_global!r}")
        for f in ("l1_latency", "l2_latency", "mem_latency"):
            check_int(n, f, getattr(self, f), 0, 100_000)
        check_int(n, "l1_mshrs", self.l1_mshrs, 0, 1 << 20)
        _num(n, "lsu_per_cycle", self.lsu_per_cycle, 0, 1024)
        check_choice(n, "lsu_granule", self.lsu_granule, ("line", "sector"))
        check_int(n, "l2_kb", self.l2_kb, 1, 1 << 20)
        check_int(n, "l2_ways", self.l2_ways, 1, 1024)
        check_pow2(n, "l2_sub_partitions", self.l2_sub_partitions, 1, 16)
        for f in ("l2_sectors_per_cycle", "atomic_per_cycle", "atomic_same_address_per_cycle",
                  "icnt_flits_per_cycle"):
            _num(n, f, getattr(self, f), 0, 1024)
        check_int(n, "icnt_flit_bytes", self.icnt_flit_bytes, 0, 4096)
        check_int(n, "icnt_header_bytes", self.icnt_header_bytes, 0, 4096)
        check(isinstance(self.dram_gbps, (int, float)) and not isinstance(self.dram_gbps, bool)
              and 0 < self.dram_gbps < 1e5, f"{n}.dram_gbps must be a positive number of GB/s, not {self.dram_gbps!r}")
        check_int(n, "dram_channels", self.dram_channels, 1, 256)
        check_choice(n, "dram_indexing", self.dram_indexing, ("consecutive", "xor", "ipoly"))
        check(isinstance(self.dram_mapping, str), f"{n}.dram_mapping must be a GPGPU-Sim mapping string")
        try:
            m = self.mapping
        except ValueError as e:
            check(False, f"{n}: {e}")
        check_int(n, "dram_queue", self.dram_queue, 1, 1 << 16)
        _num(n, "dram_trc_ns", self.dram_trc_ns, 0, 1e4)
        _num(n, "dram_trrd_ns", self.dram_trrd_ns, 0, 1e4)
        check_int(n, "launch_cycles", self.launch_cycles, 0, 10_000_000)
        check(isinstance(self.latency_chains, bool),
              f"{n}.latency_chains must be true or false, not {self.latency_chains!r}")
        for level, kb, ways in (("l1", self.l1_kb, self.l1_ways), ("l2", self.l2_kb, self.l2_ways)):
            lines = kb * 1024 // self.line_bytes
            check(lines % ways == 0 and lines >= ways,
                  f"{n}.{level}_kb={kb} holds {lines} lines of {self.line_bytes} B, not a multiple of {level}_ways={ways}")
        del m

    # -- derived ------------------------------------------------------------------
    @property
    def mapping(self) -> AddressMapping:
        """Address -> channel, slice, bank, row (GPGPU-Sim's decoder)."""
        return _mapping(self.dram_mapping, self.dram_channels, self.l2_sub_partitions, self.dram_indexing)

    @property
    def l2_slices(self) -> int:
        return self.dram_channels * self.l2_sub_partitions

    @property
    def bytes_per_cycle(self) -> float:
        """DRAM bytes per core cycle (all channels)."""
        return self.dram_gbps * 1e9 / (self.clock_mhz * 1e6)

    @property
    def ns_per_cycle(self) -> float:
        return 1e3 / self.clock_mhz

    @property
    def resident_warps_per_sm(self) -> int:
        """Warps an SM holds at once: thread slots, and thread blocks of 8 warps."""
        w = self.threads_per_sm // self.warp_size
        return w if self.max_ctas_per_sm == 0 else min(w, 8 * self.max_ctas_per_sm)

    @property
    def resident_warps(self) -> int:
        """Warps resident on the whole GPU at once (the window in which a kernel's
        writes may be missed by other warps' reads, docs/golden.md)."""
        return self.sms * self.threads_per_sm // self.warp_size

    @property
    def transaction_bytes(self) -> int:
        return self.sector_bytes if self.coalescing == "sector" else self.line_bytes

    def unlimited(self) -> "GPUConfig":
        """This GPU with every resource limit off (:data:`UNLIMITED`)."""
        return self.replace(**UNLIMITED)

    def derived(self) -> dict:
        return {"bytes_per_cycle": self.bytes_per_cycle, "transaction_bytes": self.transaction_bytes,
                "resident_warps": self.resident_warps, "l2_slices": self.l2_slices,
                "resident_warps_per_sm": self.resident_warps_per_sm}
