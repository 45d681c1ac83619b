"""The modelled GPUs (shared/SPEC.md §6) as validated configurations."""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check, check_choice, check_int, check_pow2

__all__ = ["GPUConfig"]


@dataclass(frozen=True)
class GPUConfig(Config):
    """Parameters of the GPU model (golden/gpu, docs/golden.md).

    Parameters
    ----------
    name : str
        Label used in reports.
    sms : int
        Streaming multiprocessors.
    warp_size : int
        Threads per warp.
    threads_per_sm : int
        Resident threads per SM (occupancy bound): sets :attr:`resident_warps`,
        the BFS visibility window and the warps the IRU and GraphPEG keep in
        flight (docs/golden.md).
    clock_mhz : int
        Core clock.
    issue_per_sm : int
        Warp instructions issued per cycle per SM (schedulers).
    sector_bytes, line_bytes : int
        Memory transaction granule (sector) and cache line.
    coalescing : str
        ``"sector"``: one request per distinct 32 B sector (Maxwell and later);
        ``"line"``: one per distinct 128 B line (Fermi with L1 caching).
    l1_kb, l1_ways : int
        L1 data cache per SM (size in KiB, associativity).
    l1_global : bool
        Whether global loads are cached in L1.
    l2_kb, l2_ways : int
        Shared L2.
    dram_gbps : float
        DRAM bandwidth, GB/s.
    mem_latency : int
        Cycles from a request to its data (added once per dependent phase).
    launch_cycles : int
        Fixed cost of a kernel launch, cycles.
    """

    name: str = "gtx980"
    sms: int = 16
    warp_size: int = 32
    threads_per_sm: int = 2048
    clock_mhz: int = 1270
    issue_per_sm: int = 4
    sector_bytes: int = 32
    line_bytes: int = 128
    coalescing: str = "sector"
    l1_kb: int = 32
    l1_ways: int = 4
    l1_global: bool = True
    l2_kb: int = 2048
    l2_ways: int = 16
    dram_gbps: float = 224.0
    mem_latency: int = 400
    launch_cycles: int = 3000

    PRESETS = {
        # SCU and IRU papers: GTX 980 (Maxwell), 16 SMs at 1.27 GHz, 32 KB L1 / 2 MB L2, GDDR5 224 GB/s.
        "gtx980": {},
        "default": {},
        # SCU paper (Table 4): Tegra X1, 2 SMs, 1 GHz, 32 KB / 256 KB, LPDDR4 25.6 GB/s. Its "2 (256
        # threads)" are the CUDA cores (2 x 128, as the GTX 980's "16 (2048 threads)" are 16 x 128);
        # a Maxwell SM (sm_53) holds 2048 resident threads (docs/golden.md, "GPU model").
        "tx1": {"name": "tx1", "sms": 2, "threads_per_sm": 2048, "clock_mhz": 1000, "l2_kb": 256, "dram_gbps": 25.6,
                "launch_cycles": 3000},
        # MFF slides: GTX 480 (Fermi), 15 clusters at 1.4 GHz, 177.4 GB/s; 16 KB L1, 768 KB L2, 128 B line coalescing.
        "gtx480": {"name": "gtx480", "sms": 15, "threads_per_sm": 1536, "clock_mhz": 1400, "issue_per_sm": 2,
                   "coalescing": "line", "l1_kb": 16, "l2_kb": 768, "l2_ways": 8, "dram_gbps": 177.4},
        # GraphPEG paper: Kepler-like, 15 SMs at 980 MHz, 16 KB L1D, 1536 KB L2 (memory not given: 288 GB/s assumed).
        "kepler": {"name": "kepler", "sms": 15, "clock_mhz": 980, "l1_kb": 16, "l2_kb": 1536, "dram_gbps": 288.0},
        # EMOGI paper: Tesla V100 SXM2 16 GB (Volta), 80 SMs at 1.53 GHz, 128 KB L1 / 6 MB L2, HBM2 900 GB/s.
        "v100": {"name": "v100", "sms": 80, "clock_mhz": 1530, "l1_kb": 128, "l2_kb": 6144, "dram_gbps": 900.0},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check(isinstance(self.name, str) and self.name != "", f"{n}.name must be a non-empty string")
        check_int(n, "sms", self.sms, 1, 1024)
        check_choice(n, "warp_size", self.warp_size, (8, 16, 32, 64))
        check_int(n, "threads_per_sm", self.threads_per_sm, self.warp_size, 1 << 16)
        check_int(n, "clock_mhz", self.clock_mhz, 1, 10_000)
        check_int(n, "issue_per_sm", self.issue_per_sm, 1, 16)
        check_pow2(n, "sector_bytes", self.sector_bytes, 4, 512)
        check_pow2(n, "line_bytes", self.line_bytes, self.sector_bytes, 4096)
        check_choice(n, "coalescing", self.coalescing, ("sector", "line"))
        check_int(n, "l1_kb", self.l1_kb, 1, 1 << 16)
        check_pow2(n, "l1_ways", self.l1_ways, 1, 64)
        check_int(n, "l2_kb", self.l2_kb, 1, 1 << 20)
        check_pow2(n, "l2_ways", self.l2_ways, 1, 64)
        check(isinstance(self.dram_gbps, (int, float)) and 0 < self.dram_gbps < 1e5,
              f"{n}.dram_gbps must be a positive number of GB/s, not {self.dram_gbps!r}")
        check_int(n, "mem_latency", self.mem_latency, 0, 100_000)
        check_int(n, "launch_cycles", self.launch_cycles, 0, 10_000_000)
        for level, kb, ways in (("l1", self.l1_kb, self.l1_ways), ("l2", self.l2_kb, self.l2_ways)):
            lines = kb * 1024 // self.line_bytes
            check(lines % ways == 0 and lines >= ways,
                  f"{n}.{level}_kb={kb} holds {lines} lines of {self.line_bytes} B, not a multiple of {level}_ways={ways}")

    @property
    def bytes_per_cycle(self) -> float:
        """DRAM bytes per core cycle."""
        return self.dram_gbps * 1e9 / (self.clock_mhz * 1e6)

    @property
    def resident_warps(self) -> int:
        """Warps resident on the whole GPU at once (the window in which a kernel's
        writes may be missed by other warps' reads, docs/golden.md)."""
        return self.sms * self.threads_per_sm // self.warp_size

    @property
    def transaction_bytes(self) -> int:
        return self.sector_bytes if self.coalescing == "sector" else self.line_bytes

    def derived(self) -> dict:
        return {"bytes_per_cycle": self.bytes_per_cycle, "transaction_bytes": self.transaction_bytes,
                "resident_warps": self.resident_warps}
