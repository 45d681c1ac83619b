"""Microkernels that exercise one resource of the GPU model each, with the
value of the bound they were built for computed by hand from the configuration
(docs/golden.md, "Microkernels"; ``benchmarks/gpu_model.py``; the tests).

Every microkernel returns a :class:`Micro`: the GPU report of its measured
launch, the bound it was built for and that bound's expected value in cycles.
Arrays are much larger than the L2 where a kernel must miss, and a warm-up
launch fills the caches where it must hit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .config import GPUConfig
from .machine import GPU

__all__ = ["Micro", "MICROKERNELS", "run_microkernel"]


@dataclass
class Micro:
    name: str
    built_for: str            # the bound the kernel exercises
    expected: float           # its value (cycles) computed from the configuration
    kernel: dict              # the measured launch (GPU.report()["kernels"] entry)
    note: str = ""

    @property
    def measured(self) -> float:
        return float(self.kernel["bounds"][self.built_for])

    @property
    def binding(self) -> str:
        return self.kernel["bound"]

    @property
    def binds(self) -> bool:
        """The built-for bound is the largest (ties allowed)."""
        b = self.kernel["bounds"]
        return b[self.built_for] >= max(b.values()) * (1 - 1e-9)


def _gpu(c: GPUConfig) -> GPU:
    return GPU(c, stats=True, caches=True)


def _launch(g: GPU, name: str) -> dict:
    return next(k for k in g.report()["kernels"] if k["name"] == name)


def stream(c: GPUConfig, n: int = 1 << 22) -> Micro:
    """Copy ``b[t] = a[t]``: DRAM bandwidth. Both 16 MiB arrays exceed every L2, so
    each sector is read once and written back once when evicted (the last L2-full
    of dirty lines is still in the L2 at the end), spread evenly over the
    channels: ``dram = (2 * n * 4 B - L2 size) / bytes per cycle``."""
    g = _gpu(c)
    a, b = g.array("a", n), g.array("b", n)
    with g.kernel("stream", n) as k:
        k.load(a, range(n))
        k.store(b, range(n))
    return Micro("stream", "dram", (2 * n * 4 - c.l2_kb * 1024) / c.bytes_per_cycle, _launch(g, "stream"),
                 "(2 x n x 4 B - L2 size) / (dram_gbps / clock)")


def gather(c: GPUConfig, k_sectors: int = 32, warps: int = 1 << 13) -> Micro:
    """Every warp instruction reads ``k`` sectors, each in a line no other access
    touches (lanes in groups of 32/k share a sector), so every access misses the
    L1 and the L2. With the L1 caching global loads the MSHRs bind:
    ``misses per SM x mem_latency / l1_mshrs``; without (MSHRs not modelled for
    bypassing loads), the load/store unit: ``k x warps per SM / lsu_per_cycle``."""
    g = _gpu(c)
    per_line = c.line_bytes // 4
    n = warps * 32
    a = g.array("a", warps * k_sectors * per_line)
    lane = np.arange(n) % 32
    warp = np.arange(n) // 32
    grp = lane * k_sectors // 32                         # group of the lane: one sector each
    line = warp * k_sectors + grp
    idx = line * per_line + lane % (32 // k_sectors) % (c.sector_bytes // 4)
    with g.kernel("gather", n) as k:
        k.load(a, idx)
    per_sm = warps // c.sms if c.cta_scheduler == "balanced" else \
        8 * math.ceil(math.ceil(warps / 8) / c.sms)
    if c.l1_global and c.l1_mshrs:
        exp = k_sectors * per_sm * c.mem_latency / c.l1_mshrs
        return Micro(f"gather{k_sectors}", "mshr", exp, _launch(g, "gather"),
                     "k x warps per SM x mem_latency / l1_mshrs")
    acc = k_sectors if c.lsu_granule == "sector" else k_sectors
    return Micro(f"gather{k_sectors}", "lsu", acc * per_sm / c.lsu_per_cycle, _launch(g, "gather"),
                 "k x warps per SM / lsu_per_cycle")


def atomics(c: GPUConfig, target: str = "random", warps: int = 1 << 12) -> Micro:
    """``atomicAdd`` by every lane: to random words of an array that fits in the L2
    (loaded by a warm-up kernel): transactions per slice = lanes / slices;
    to one cache line: 4 sectors per instruction, all in one slice; to one address:
    the chain of lanes / its rate."""
    g = _gpu(c)
    n = warps * 32
    words = (c.l2_kb * 1024 // 4) // 4
    a = g.array("a", words)
    with g.kernel("warm", words) as k:
        k.load(a, range(words))
    rng = np.random.default_rng(7)
    if target == "random":
        idx = rng.integers(0, words, n)
        exp = n / c.l2_slices / c.atomic_per_cycle
        note = "lanes / slices / atomic_per_cycle"
    elif target == "line":
        idx = np.arange(n) % 32
        exp = max(warps * (c.line_bytes // c.sector_bytes) / c.atomic_per_cycle,
                  warps / c.atomic_same_address_per_cycle)
        note = "max(instructions x sectors per line / atomic_per_cycle, instructions / atomic_same_address_per_cycle)"
    else:
        idx = np.zeros(n, np.int64)
        exp = n / c.atomic_same_address_per_cycle
        note = "lanes / atomic_same_address_per_cycle"
    with g.kernel("atomic", n) as k:
        k.atomic(a, idx)
    return Micro(f"atomic-{target}", "atomics", exp, _launch(g, "atomic"), note)


def chase(c: GPUConfig, steps: int = 16) -> Micro:
    """One thread follows a chain of ``steps`` pointers, each in a fresh line:
    ``latency = (steps - 1) x mem_latency`` (and the launch then takes
    launch + steps x mem_latency)."""
    g = _gpu(c)
    per_line = c.line_bytes // 4
    a = g.array("a", (steps + 1) * per_line * 64)
    with g.kernel("chase", 1, phases=steps) as k:
        for s in range(steps):
            k.load(a, [s * per_line * 64])
    return Micro("chase", "latency", (steps - 1) * c.mem_latency, _launch(g, "chase"),
                 "(steps - 1) x mem_latency")


def waves(c: GPUConfig, factor: int = 4, phases: int = 2) -> Micro:
    """``factor`` x the resident warps, each doing ``phases`` dependent loads of one
    line that stays in the L1: ``latency = (factor x phases - 1) x l1_latency``
    (the first access of each SM misses; the kernel's mean latency is used)."""
    g = _gpu(c)
    warps_sm = c.resident_warps_per_sm * factor
    n = warps_sm * c.sms * 32
    a = g.array("a", 32)
    with g.kernel("waves", n, phases=phases) as k:
        for _ in range(phases):
            k.load(a, np.arange(n) % 32)
    lat = c.l1_latency if c.l1_global else c.l2_latency
    return Micro(f"waves{factor}", "latency", (factor * phases - 1) * lat, _launch(g, "waves"),
                 "(waves x phases - 1) x load latency (L1, or L2 without L1 caching)")


def occupancy(c: GPUConfig, phases: int = 8) -> Micro:
    """One warp per SM doing ``phases`` dependent loads of fresh lines: latency
    bound, ``(phases - 1) x mem_latency``, far above its throughput bounds."""
    g = _gpu(c)
    per_line = c.line_bytes // 4
    warps = c.sms * 8                     # one block of 8 warps per SM; only lane 0 of each warp loads
    n = warps * 32
    a = g.array("a", (phases + 1) * warps * per_line)
    tid = np.arange(0, n, 32 * 8)         # lane 0 of the first warp of each block
    with g.kernel("occupancy", n, phases=phases) as k:
        for s in range(phases):
            k.load(a, (s * warps + tid // 32) * per_line, tid=tid)
    return Micro("occupancy", "latency", (phases - 1) * c.mem_latency, _launch(g, "occupancy"),
                 "(phases - 1) x mem_latency")


def one_slice(c: GPUConfig, warps: int = 1 << 12, spread: bool = False) -> Micro:
    """Each warp reads one whole line (4 sectors), every line in L2 slice 0 (or,
    ``spread``, lines in order over all slices), after a warm-up kernel has
    brought them into the L2: the L2 bound of the busiest slice, ``4 x warps /
    l2_sectors_per_cycle`` (spread: divided by the slices)."""
    g = _gpu(c)
    warps = min(warps, c.l2_kb * 1024 // c.line_bytes // 2)      # the lines fit in the L2
    per_line = c.line_bytes // 4
    a = g.array("a", warps * c.l2_slices * per_line * 4)
    lines = np.arange(warps * c.l2_slices * 4)
    if spread:
        chosen = lines[:warps]
    else:
        sl = c.mapping.slices(a.base + lines * c.line_bytes)
        chosen = lines[sl == 0][:warps]
        if chosen.size < warps:
            raise ValueError("not enough lines in slice 0")
    n = warps * 32
    idx = chosen[np.arange(n) // 32] * per_line + np.arange(n) % 32
    with g.kernel("warm", n) as k:
        k.load(a, idx)
    with g.kernel("slice", n) as k:
        k.load(a, idx)
    spl = c.line_bytes // c.sector_bytes
    exp = spl * warps / c.l2_sectors_per_cycle / (c.l2_slices if spread else 1)
    return Micro("spread" if spread else "one-slice", "l2", exp, _launch(g, "slice"),
                 "sectors of the busiest slice / l2_sectors_per_cycle")


#: name -> (function, keyword arguments)
MICROKERNELS = {
    "stream": (stream, {}),
    "gather1": (gather, {"k_sectors": 1}),
    "gather4": (gather, {"k_sectors": 4}),
    "gather8": (gather, {"k_sectors": 8}),
    "gather32": (gather, {"k_sectors": 32}),
    "atomic-random": (atomics, {"target": "random"}),
    "atomic-line": (atomics, {"target": "line"}),
    "atomic-address": (atomics, {"target": "address"}),
    "chase": (chase, {}),
    "occupancy": (occupancy, {}),
    "waves4": (waves, {"factor": 4}),
    "one-slice": (one_slice, {}),
}


def run_microkernel(name: str, config: GPUConfig) -> Micro:
    """Run the microkernel ``name`` (:data:`MICROKERNELS`) on ``config``."""
    if name not in MICROKERNELS:
        raise ValueError(f"unknown microkernel {name!r}; microkernels: {', '.join(MICROKERNELS)}")
    fn, kw = MICROKERNELS[name]
    return fn(config, **kw)
