"""The time of one kernel launch: every resource's bound, the one that binds
(docs/golden.md, "Time model").

``cycles = launch + fixed + max(bounds) + latency``, where each bound is the work on the
*busiest* instance of a resource divided by its throughput:

========== ==================================================================
issue      warp instructions of the busiest SM / issue per SM
lsu        L1 / load-store unit accesses of the busiest SM / accesses per cycle
mshr       L1 load misses of the busiest SM x their mean latency / MSHRs (MDM)
icnt       flits on the busiest interconnect port (an SM's or a slice's, either
           way) / flits per cycle
l2         sector accesses of the busiest L2 slice / sectors per cycle
atomics    atomic transactions of the busiest slice / atomics per cycle, or
           the longest chain of atomics to one address / its rate
dram       the busiest channel: data (sectors x 32 B / its bandwidth), its row
           activations x tRRD, or its busiest bank's activations x tRC
pcie       the link to host memory that the kernel's host loads cross (EMOGI:
           zero-copy transfers or UVM page migrations, and the dependent
           round trips; its own model, golden/emogi/host.py)
unit       the cycles an attached unit needs (its own time model)
latency    dependent memory phases: waves x phases x latency - one latency
========== ==================================================================

``fixed`` is an attached unit's chain of dependent latencies (0 for a kernel
without one; a unit's own operation has no launch), and ``latency`` is the mean
load latency of the kernel (L1, L2 or DRAM, by
where its sectors were served; a kernel that reads host memory waits at least
the link's round trip instead). With the limits of
:data:`golden.gpu.config.UNLIMITED` this is the earlier model: launch +
max(issue, DRAM bytes / bandwidth, unit) + one latency.
"""
from __future__ import annotations

import math

import numpy as np

from .config import GPUConfig
from .memsys import Traffic

__all__ = ["BOUNDS", "kernel_time"]

#: Bound names, in the order reports list them.
BOUNDS = ("issue", "lsu", "mshr", "icnt", "l2", "atomics", "dram", "pcie", "unit", "latency")


def _busy(x: np.ndarray, balanced: bool) -> float:
    if x.size == 0:
        return 0.0
    return float(x.sum() / x.size if balanced else x.max())


def kernel_time(c: GPUConfig, t: Traffic, *, sm_instructions: np.ndarray, sm_warps: np.ndarray,
                mem_instructions: int, unit_cycles: float, phases: int, atomic_chain: int,
                launch: bool = True, fixed: float = 0.0, link=None) -> dict:
    """Bounds (cycles), the binding bound, the mean load latency and the launch's cycles.

    ``link(latency, waves)``, for a kernel that reads host memory, returns the
    host link's ``(cycles, round trip)``: its bound ``pcie`` and the latency its
    last reads wait (the kernel's final latency is the larger of the two)."""
    bal = c.cta_scheduler == "balanced"
    b = dict.fromkeys(BOUNDS, 0.0)
    b["issue"] = _busy(sm_instructions, bal) / c.issue_per_sm
    if c.lsu_per_cycle:
        b["lsu"] = _busy(t.sm_lsu, bal) / c.lsu_per_cycle
    served = t.load_sectors
    n = served.sum()
    lat = float((served * (c.l1_latency, c.l2_latency, c.mem_latency)).sum() / n) if n else float(c.mem_latency)
    nm = t.miss_sectors.sum()
    miss_lat = float((t.miss_sectors * (c.l2_latency, c.mem_latency)).sum() / nm) if nm else float(c.mem_latency)
    if c.l1_mshrs and c.l1_global:
        b["mshr"] = _busy(t.sm_miss_requests, bal) * miss_lat / c.l1_mshrs
    if c.icnt_flits_per_cycle:
        b["icnt"] = max(_busy(t.sm_flits_out, bal), _busy(t.sm_flits_in, bal), float(t.slice_flits_in.max()),
                        float(t.slice_flits_out.max())) / c.icnt_flits_per_cycle
    if c.l2_sectors_per_cycle:
        b["l2"] = float(t.slice_sectors.max()) / c.l2_sectors_per_cycle
    atom = 0.0
    if c.atomic_per_cycle:
        atom = float(t.slice_atomics.max()) / c.atomic_per_cycle
    if c.atomic_same_address_per_cycle and atomic_chain > 1:
        atom = max(atom, atomic_chain / c.atomic_same_address_per_cycle)
    b["atomics"] = atom
    per_ch = c.bytes_per_cycle / c.dram_channels
    bus = (t.ch_reads + t.ch_writes) * c.sector_bytes / per_ch
    act = t.ch_activations * c.dram_trrd_ns / c.ns_per_cycle
    bank = t.ch_bank_activations * c.dram_trc_ns / c.ns_per_cycle
    dram_parts = {"bus": float(bus.max()), "activate": float(act.max()), "bank": float(bank.max())}
    b["dram"] = float(np.maximum(np.maximum(bus, act), bank).max())
    b["unit"] = float(unit_cycles)
    waves = 1
    if c.latency_chains and mem_instructions:
        warps = _busy(sm_warps, bal)
        waves = max(1, math.ceil(warps / c.resident_warps_per_sm))
        b["latency"] = max(0.0, (waves * max(phases, 1) - 1) * lat)
    final = lat
    if link is not None:
        lc, ll = link(lat, waves)
        b["pcie"] = float(lc)
        final = max(lat, float(ll))
    binding = max(BOUNDS, key=lambda k: b[k])
    body = b[binding]
    cycles = (c.launch_cycles if launch else 0.0) + fixed + body + (final if mem_instructions else 0.0)
    return {"bounds": b, "binding": binding if body > 0 else "launch" if launch else "unit", "latency": lat, "miss_latency": miss_lat,
            "waves": waves, "dram_parts": dram_parts, "cycles": cycles}
