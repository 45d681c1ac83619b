"""Configurations of the EMOGI model (docs/emogi.md): the PCIe link to host
memory, the UVM baseline, and the warp coalescer that the RTL implements.

Numbers from the paper (Min et al., PVLDB 14(2) 2021, shared/papers/emogi-vldb2021.md):

* PCIe 3.0 x16: 12.3 GB/s measured peak (cudaMemcpy, and 128 B zero-copy reads);
  PCIe 4.0 x16: about 24 GB/s (§5.6).
* TLP overhead: "at least 18 bytes of header", 36 % of a 32 B read, 12.3 % of a
  128 B read (§3.3): both are ``18 / (size + 18)``.
* Round trip 1.0–1.6 µs, 256 outstanding reads (8-bit tags); 32 B requests at
  1.6 µs give 256 x 32 B / 1.6 µs = 5.12 GB/s = 4.77 GiB/s, the paper's "4.77GB/s"
  (its computed figures are in GiB/s: 32 B / (1.0 µs / 256) is its "7.63GB/s");
  Naive reaches 4.7 (§5.3.2, unit not stated).
* UVM reaches 9 GB/s on PCIe 3.0 (page-fault handling) and scales 1.53x with
  PCIe 4.0 (§5.6).

Units: every ``*_gbps`` here is 10^9 bytes per second.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check, check_choice, check_int, check_pow2

__all__ = ["PCIeConfig", "UVMConfig", "CoalescerConfig", "RAW_GTS", "PAGE_ORDERS", "parse_capacity"]

#: Transfer rate per lane (GT/s) and line-code efficiency of each PCIe generation.
RAW_GTS = {3: (8.0, 128 / 130), 4: (16.0, 128 / 130), 5: (32.0, 128 / 130)}


@dataclass(frozen=True)
class PCIeConfig(Config):
    """The link between the GPU and pinned host memory (docs/emogi.md, "PCIe link").

    Parameters
    ----------
    name : str
        Label used in reports.
    gen, lanes : int
        PCIe generation (3, 4, 5) and link width; they give the raw rate, a bound
        the achievable figures are checked against.
    peak_gbps : float
        Data bandwidth (10^9 B/s) achieved with the largest read requests
        (``max_read_bytes``), the cudaMemcpy peak.
    header_bytes : int
        Overhead per read request on the wire (TLP header, framing, DLLP share):
        a request of ``s`` bytes occupies ``s + header_bytes`` bytes of link time.
    max_read_bytes : int
        Largest read the GPU sends to host memory (one 128 B line).
    rtt_ns : float
        Round trip of one read (request to completion).
    tags : int
        Reads that may be outstanding at once (PCIe 3.0: 8-bit tag).
    """

    name: str = "pcie3-x16"
    gen: int = 3
    lanes: int = 16
    peak_gbps: float = 12.3
    header_bytes: int = 18
    max_read_bytes: int = 128
    rtt_ns: float = 1600.0
    tags: int = 256

    PRESETS = {
        # EMOGI §3.3, §5.3.2: V100 system, PCIe 3.0 x16, 12.3 GB/s by cudaMemcpy, RTT 1.0-1.6 us.
        "pcie3-x16": {},
        "default": {},
        # EMOGI §5.6: DGX A100 with the root port in PCIe 4.0 mode, about 24 GB/s. Round trip
        # as PCIe 3.0 (not given); 768 outstanding reads (PCIe 4.0's 10-bit tags): with 256,
        # 128 B reads at 1.6 us could not exceed 256 x 128 B / 1.6 us = 20.5 GB/s.
        "pcie4-x16": {"name": "pcie4-x16", "gen": 4, "peak_gbps": 24.0, "tags": 768},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check(isinstance(self.name, str) and self.name != "", f"{n}.name must be a non-empty string")
        check_choice(n, "gen", self.gen, tuple(RAW_GTS))
        check_choice(n, "lanes", self.lanes, (1, 2, 4, 8, 16))
        check_int(n, "header_bytes", self.header_bytes, 0, 256)
        check_pow2(n, "max_read_bytes", self.max_read_bytes, 32, 4096)
        check_int(n, "tags", self.tags, 1, 4096)
        check(isinstance(self.rtt_ns, (int, float)) and not isinstance(self.rtt_ns, bool) and 0 < self.rtt_ns < 1e7,
              f"{n}.rtt_ns must be a positive number of nanoseconds, not {self.rtt_ns!r}")
        check(isinstance(self.peak_gbps, (int, float)) and not isinstance(self.peak_gbps, bool) and self.peak_gbps > 0,
              f"{n}.peak_gbps must be a positive number of GB/s, not {self.peak_gbps!r}")
        check(self.wire_gbps <= self.raw_gbps,
              f"{n}.peak_gbps={self.peak_gbps} with {self.header_bytes} B headers needs {self.wire_gbps:.2f} GB/s "
              f"on the wire, more than a gen {self.gen} x{self.lanes} link carries ({self.raw_gbps:.2f} GB/s)")

    @property
    def raw_gbps(self) -> float:
        """Line rate after encoding, 10^9 B/s per direction."""
        gts, code = RAW_GTS[self.gen]
        return gts * self.lanes * code / 8

    @property
    def wire_gbps(self) -> float:
        """Request bytes plus headers per second that give ``peak_gbps`` of data."""
        return self.peak_gbps * (self.max_read_bytes + self.header_bytes) / self.max_read_bytes

    def overhead(self, size: int) -> float:
        """Fraction of the wire taken by headers for reads of ``size`` bytes."""
        return self.header_bytes / (size + self.header_bytes)

    def bandwidth_gbps(self, size: int) -> float:
        """Data bandwidth of a stream of ``size``-byte reads: the smaller of the wire
        bound and the tag bound (``tags`` reads per round trip)."""
        wire = self.wire_gbps * size / (size + self.header_bytes)
        tag = self.tags * size / self.rtt_ns          # bytes per ns = GB/s
        return min(wire, tag)

    def derived(self) -> dict:
        sizes = [32 * k for k in range(1, self.max_read_bytes // 32 + 1)]
        return {"raw_gbps": self.raw_gbps, "wire_gbps": self.wire_gbps,
                "overhead": {s: self.overhead(s) for s in sizes},
                "bandwidth_gbps": {s: self.bandwidth_gbps(s) for s in sizes}}


#: Orders of a kernel's UVM page touches (``UVMConfig.page_order``,
#: :func:`golden.emogi.link.page_touches`).
PAGE_ORDERS = ("waves", "first-touch", "lockstep")


@dataclass(frozen=True)
class UVMConfig(Config):
    """The UVM baseline (docs/emogi.md, "UVM"): the edge list migrates in pages on
    demand into the part of GPU memory it may use, least recently used pages
    are dropped (read-only copies: no write-back).

    Parameters
    ----------
    page_bytes : int
        Migration granule (4 KiB system page, the minimum the driver moves).
    capacity_ratio : float
        GPU memory left for migrated pages, as a fraction of the host-resident
        data (edge list and weights): about 0.5 for the paper's GK and GU
        (31.5-32 GB edge lists, 16 GB V100); >= 1 means everything fits. Used
        when ``capacity_bytes`` is 0.
    capacity_bytes : int
        GPU memory left for migrated pages, in bytes (a whole number of pages is
        used: ``capacity_bytes // page_bytes``); 0: use ``capacity_ratio``.
    fault_overhead_ns : float
        CPU time of the fault handler per page, not overlapped with the page's
        DMA. Default: 4096 B / 9 GB/s - 4096 B / 12.3 GB/s = 122 ns, so that UVM
        reaches the paper's 9 GB/s on PCIe 3.0; on PCIe 4.0 (24 GB/s) this gives
        the paper's 1.53x UVM scaling (4096/9 / (4096/24 + 122) = 1.55).
    fault_latency_us : float
        Exposed latency of the first fault batch of a kernel (assumed; the paper
        gives none).
    page_order : str
        Order of a kernel's page touches (:func:`golden.emogi.link.page_touches`):
        ``waves`` of resident warps (the model), or, for comparison (benchmark
        part (c)), ``lockstep`` (every warp of the kernel resident) or
        ``first-touch`` (each page once per kernel, at its first touch).
    """

    page_bytes: int = 4096
    capacity_ratio: float = 0.5
    capacity_bytes: int = 0
    fault_overhead_ns: float = 122.1
    fault_latency_us: float = 20.0
    page_order: str = "waves"

    PRESETS = {"default": {}, "v100": {}, "fits": {"capacity_ratio": 1.0}}

    def validate(self) -> None:
        n = type(self).__name__
        check_pow2(n, "page_bytes", self.page_bytes, 512, 1 << 21)
        for name in ("capacity_ratio", "fault_overhead_ns", "fault_latency_us"):
            v = getattr(self, name)
            check(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 and v < float("inf"),
                  f"{n}.{name} must be a non-negative number, not {v!r}")
        check(self.capacity_ratio > 0, f"{n}.capacity_ratio must be above 0, not {self.capacity_ratio!r}")
        check_int(n, "capacity_bytes", self.capacity_bytes, 0, 1 << 60)
        check_choice(n, "page_order", self.page_order, PAGE_ORDERS)
        check(self.capacity_bytes == 0 or self.capacity_bytes >= self.page_bytes,
              f"{n}.capacity_bytes must be 0 (use capacity_ratio) or at least one page ({self.page_bytes} B), "
              f"not {self.capacity_bytes}")

    def capacity_pages(self, data_bytes: int) -> int:
        """Pages of GPU memory for ``data_bytes`` of host data (at least one)."""
        pages = max(1, -(-int(data_bytes) // self.page_bytes))
        if self.capacity_bytes:
            return self.capacity_bytes // self.page_bytes
        if self.capacity_ratio >= 1:
            return pages
        return max(1, int(self.capacity_ratio * pages))


#: Byte units accepted by :func:`parse_capacity`.
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}


def parse_capacity(value) -> dict:
    """A UVM capacity as :class:`UVMConfig` fields: a number (or a string without
    unit) is a ratio of the host data (``capacity_ratio``), a string with a byte
    unit (``B``, ``KB``, ``MB``, ``GB``, ``KiB``, ``MiB``, ``GiB``, ...) an absolute
    size (``capacity_bytes``). E.g. ``0.5``, ``"0.25"``, ``"16GiB"``, ``"4096 B"``.

    Raises
    ------
    ConfigError
        Neither form, a ratio not above 0, or a size below one byte.
    """
    from ..config import ConfigError
    what = ("a UVM capacity is a ratio of the host data (e.g. 0.5) or a size with a unit "
            f"(e.g. 16GiB, 512MiB, 4096B), not {value!r}")
    if isinstance(value, bool):
        raise ConfigError(what)
    if isinstance(value, (int, float)):
        ratio = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(" ", "")
        num = text.rstrip("BbKkMmGgTtIi")
        unit = text[len(num):].upper()
        try:
            x = float(num)
        except ValueError:
            raise ConfigError(what) from None
        if unit:
            if unit not in _UNITS:
                raise ConfigError(what)
            size = x * _UNITS[unit]
            if not (size >= 1 and size < 2**60) or size != int(size):
                raise ConfigError(f"a UVM capacity in bytes must be a whole number of bytes from 1 B to 1 EiB "
                                  f"(exclusive), not {value!r}")
            return {"capacity_bytes": int(size)}
        ratio = x
    else:
        raise ConfigError(what)
    if not (ratio > 0 and ratio < float("inf")):
        raise ConfigError(f"a UVM capacity ratio must be a finite number above 0, not {value!r}")
    return {"capacity_ratio": ratio, "capacity_bytes": 0}


@dataclass(frozen=True)
class CoalescerConfig(Config):
    """The warp coalescer (hw/emogi): one warp memory instruction in (lane byte
    addresses and an active mask), the PCIe read requests out.

    Parameters
    ----------
    lanes : int
        Lanes per warp.
    addr_width : int
        Width of a byte address.
    sector_bytes : int
        Smallest request (the GPU's 32 B sector).
    line_bytes : int
        Largest request (a 128 B cache line); a request never crosses a line.
    """

    lanes: int = 32
    addr_width: int = 48
    sector_bytes: int = 32
    line_bytes: int = 128

    PRESETS = {
        # EMOGI's GPUs: 32-lane warps, 32 B sectors merged up to 128 B lines (§3.3); 48-bit addresses.
        "default": {},
        # Volta/Ampere virtual addresses are 49 bits wide.
        "v100": {"addr_width": 49},
        # A small instance for quick simulations and area comparisons.
        "small": {"lanes": 8, "addr_width": 32},
    }

    def validate(self) -> None:
        n = type(self).__name__
        check_choice(n, "lanes", self.lanes, (4, 8, 16, 32, 64))
        check_pow2(n, "sector_bytes", self.sector_bytes, 4, 256)
        check_pow2(n, "line_bytes", self.line_bytes, self.sector_bytes, 8 * self.sector_bytes)
        check_int(n, "addr_width", self.addr_width, 16, 64)
        check(self.addr_width > self.line_bits,
              f"{n}.addr_width must be above log2(line_bytes) = {self.line_bits}, not {self.addr_width}")

    @property
    def sector_bits(self) -> int:
        return self.sector_bytes.bit_length() - 1

    @property
    def line_bits(self) -> int:
        return self.line_bytes.bit_length() - 1

    @property
    def sectors_per_line(self) -> int:
        return self.line_bytes // self.sector_bytes

    def derived(self) -> dict:
        return {"sectors_per_line": self.sectors_per_line, "request_sizes":
                [self.sector_bytes * k for k in range(1, self.sectors_per_line + 1)]}
