"""GPU energy: energy per event plus static power, per GPU preset (docs/energy.md).

The events are the ones the GPU model counts (golden/gpu/machine.py,
golden/gpu/memsys.py): warp instructions issued, the lanes of memory
instructions, L1 (load/store unit) accesses, interconnect flits, L2 accesses
and atomics, DRAM sector reads and writes and row activations, and bytes over
PCIe (EMOGI's zero-copy reads, UVM's migrations). Each preset is one power
model's set, used whole (docs/energy.md says why sets must not be mixed):

* ``v100``: AccelWattch (Kandiah et al., MICRO 2021), its shipped QV100 set;
* ``gtx480``: GPUWattch (Leng et al., ISCA 2013), its shipped GTX 480 set;
* ``gtx980``, ``kepler``: GPUWattch's set at 28 nm (the papers that ran these
  GPUs used GPUWattch; no calibrated Maxwell or Kepler set is public);
* ``tx1``: the same 28 nm set with LPDDR4 DRAM (DRAMsim3's IDD-based energies).

Energies per event are the power model's base energy (McPAT/CACTI, computed
from the shipped configuration) times the configuration's fitted scaling
factor; docs/energy.md lists every value with its source and the readings.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import Config, check

__all__ = ["EnergyConfig", "COMPONENTS", "gpu_energy", "energy_table"]

#: Components of a run's energy, in report order.
COMPONENTS = ("sm", "l1", "icnt", "l2", "dram", "pcie", "unit")

_PJ_FIELDS = ("issue_pj", "alu_pj", "lane_pj", "l1_hit_pj", "l1_miss_pj", "l2_hit_pj", "l2_miss_pj", "atomic_pj",
              "icnt_flit_pj", "dram_read_pj", "dram_write_pj", "dram_act_pj", "pcie_byte_pj")
_W_FIELDS = ("const_w", "sm_w", "dram_static_w")

# GPUWattch GTX 480 set (40 nm), and its base energies re-computed by McPAT at 28 nm:
# ratio 28 nm / 40 nm per structure (docs/energy.md, "28 nm").
_R = {"decode": 0.481, "datapath": 0.555, "reg": 0.556, "l1": 0.545, "l2": 0.534, "noc": 0.574, "mem": 0.98}
_GTX480 = {
    "issue_pj": 3.61, "sched_pj": 54.9, "int_pj": 86.0, "reg_rd_pj": 7.27, "reg_wr_pj": 5.99,
    "l1_hit_pj": 2930.0, "l1_miss_pj": 2230.0, "l2_hit_pj": 2810.0, "l2_miss_pj": 102.0, "l2_write_pj": 13900.0,
    "icnt_flit_pj": 1940.0, "dram_read_pj": 26900.0 / 2, "dram_write_pj": 15900.0 / 2, "dram_act_pj": 4230.0,
}


def _alu(sched, int_op, rd, wr):
    # a warp ALU instruction: the scheduler once, 32 integer thread ops, each with two
    # register reads and one write (graph kernels are integer code)
    return sched + 32 * (int_op + 2 * rd + wr)


def _gpuwattch(scale: bool) -> dict:
    g = _GTX480
    r = _R if scale else dict.fromkeys(_R, 1.0)
    rd, wr = g["reg_rd_pj"] * r["reg"], g["reg_wr_pj"] * r["reg"]
    return {
        "issue_pj": g["issue_pj"] * r["decode"],
        "alu_pj": _alu(g["sched_pj"] * r["datapath"], g["int_pj"] * r["datapath"], rd, wr),
        "lane_pj": rd + wr,
        "l1_hit_pj": g["l1_hit_pj"] * r["l1"], "l1_miss_pj": g["l1_miss_pj"] * r["l1"],
        "l2_hit_pj": g["l2_hit_pj"] * r["l2"], "l2_miss_pj": g["l2_miss_pj"] * r["l2"],
        "atomic_pj": g["l2_write_pj"] * r["l2"],
        "icnt_flit_pj": g["icnt_flit_pj"] * r["noc"],
        "dram_read_pj": g["dram_read_pj"] * r["mem"], "dram_write_pj": g["dram_write_pj"] * r["mem"],
        "dram_act_pj": g["dram_act_pj"] * r["mem"],
    }


@dataclass(frozen=True)
class EnergyConfig(Config):
    """Energy per event (pJ) and static power (W) of one GPU; docs/energy.md.

    Parameters
    ----------
    issue_pj : energy of issuing one warp instruction (fetch/decode, every instruction)
    alu_pj : a warp ALU instruction beyond the issue (scheduler, 32 integer ops with
        their register reads and writes)
    lane_pj : an active lane of a memory instruction (its register read and write)
    l1_hit_pj, l1_miss_pj : an L1 / load-store unit access that hits / misses
    l2_hit_pj, l2_miss_pj : an L2 access (a 32 B sector; a 128 B line with line coalescing)
    atomic_pj : the operation of one atomic sector at the L2 (beyond its access)
    icnt_flit_pj : one interconnect flit
    dram_read_pj, dram_write_pj : a 32 B sector read / written, memory controller and PHY included
    dram_act_pj : one row activation (with its precharge)
    pcie_byte_pj : one byte over PCIe (both ends' transceivers)
    const_w : constant power of the chip while it runs (clock tree, L2 and memory
        controller leakage, ...)
    sm_w : static power per SM while the GPU runs
    dram_static_w : the DRAM devices' background (standby and refresh) power
    """

    name: str = "gtx980"
    issue_pj: float = 0.0
    alu_pj: float = 0.0
    lane_pj: float = 0.0
    l1_hit_pj: float = 0.0
    l1_miss_pj: float = 0.0
    l2_hit_pj: float = 0.0
    l2_miss_pj: float = 0.0
    atomic_pj: float = 0.0
    icnt_flit_pj: float = 0.0
    dram_read_pj: float = 0.0
    dram_write_pj: float = 0.0
    dram_act_pj: float = 0.0
    pcie_byte_pj: float = 28.0
    const_w: float = 0.0
    sm_w: float = 0.0
    dram_static_w: float = 0.0

    PRESETS = {
        # GPUWattch's GTX 480 set at 28 nm; GDDR5 (8 x32 devices, DRAMsim3 standby + refresh)
        "gtx980": {**_gpuwattch(True), "const_w": 11.0 + 1.05, "sm_w": 2.84 * _R["datapath"],
                   "dram_static_w": 8 * (0.0915 + 0.0066)},
        # GPUWattch's GTX 480 set (40 nm) as shipped; McPAT leakage; GDDR5 (12 x32 devices)
        "gtx480": {"name": "gtx480", **_gpuwattch(False), "const_w": 11.0 + 1.05, "sm_w": 2.84,
                   "dram_static_w": 12 * (0.0915 + 0.0066)},
        # as gtx980 (28 nm GK110), GDDR5 (12 x32 devices)
        "kepler": {"name": "kepler", **_gpuwattch(True), "const_w": 11.0 + 1.05, "sm_w": 2.84 * _R["datapath"],
                   "dram_static_w": 12 * (0.0915 + 0.0066)},
        # the 28 nm set (McPAT has no 20 nm); constant power scaled to 2 SMs of 15; LPDDR4
        # (DRAMsim3 LPDDR4_8Gb_x16: 4 x16 devices)
        "tx1": {"name": "tx1", **_gpuwattch(True), "dram_read_pj": 1562.0, "dram_write_pj": 1442.0,
                "dram_act_pj": 1740.0, "const_w": (11.0 + 1.05) * 2 / 15, "sm_w": 2.84 * _R["datapath"],
                "dram_static_w": 4 * (0.056 + 0.0127)},
        # AccelWattch QV100 set; HBM2 (32 channels, DRAMsim3 standby + refresh)
        "v100": {"name": "v100", "issue_pj": 5.88, "alu_pj": _alu(17.3, 6.92, 2.50, 2.14), "lane_pj": 2.50 + 2.14,
                 "l1_hit_pj": 507.0, "l1_miss_pj": 338.0, "l2_hit_pj": 68.8, "l2_miss_pj": 4.5, "atomic_pj": 270.0,
                 "icnt_flit_pj": 86.1, "dram_read_pj": 2060.0, "dram_write_pj": 1180.0, "dram_act_pj": 333.0,
                 "const_w": 32.33, "sm_w": (15.29 + 31 * 0.586) / 80, "dram_static_w": 32 * (0.066 + 0.0156)},
    }
    PRESETS["default"] = PRESETS["gtx980"]

    def validate(self) -> None:
        n = type(self).__name__
        check(isinstance(self.name, str) and self.name != "", f"{n}.name must be a non-empty string")
        for f in _PJ_FIELDS + _W_FIELDS:
            v = getattr(self, f)
            check(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e9,
                  f"{n}.{f} must be a number in [0, 1e9), not {v!r}")

    @classmethod
    def for_gpu(cls, gpu_name: str) -> "EnergyConfig":
        """The preset of the GPU preset ``gpu_name`` (a clear error for a GPU without one)."""
        return cls.preset(gpu_name)


def gpu_energy(report: dict, gpu, energy: EnergyConfig, seconds: float, *, pcie_bytes: float = 0.0,
               unit_j: float | None = None) -> dict:
    """Energy of one run by component (joules): ``report`` is the GPU model's
    :meth:`golden.gpu.machine.GPU.report` (its ``total``), ``gpu`` its
    :class:`GPUConfig`, ``seconds`` the run's estimated time (static energy),
    ``pcie_bytes`` the bytes that crossed PCIe, ``unit_j`` the attached unit's
    own dynamic energy (None: no unit; golden/<unit>/energy.py)."""
    if not (isinstance(seconds, (int, float)) and seconds >= 0):
        raise ValueError(f"seconds must be a non-negative number, not {seconds!r}")
    t = report["total"]
    res = t.get("resources", {})

    def tot(name):
        return float(res.get(name, {}).get("total", 0.0))

    e = energy
    pj = 1e-12
    lanes = sum(t[k]["lanes"] for k in ("loads", "stores", "atomics"))
    alu = float(t["alu_instructions"])
    sm_dyn = (e.issue_pj * t["warp_instructions"] + e.alu_pj * alu + e.lane_pj * lanes) * pj
    # L1: every load/store unit access; hits and misses in the L1's sector proportion
    lsu = tot("sm_lsu")
    l1 = t["l1"]
    hit_rate = l1["hits"] / l1["accesses"] if l1.get("accesses") else 0.0
    l1_dyn = lsu * (hit_rate * e.l1_hit_pj + (1 - hit_rate) * e.l1_miss_pj) * pj
    icnt_dyn = (tot("slice_flits_in") + tot("slice_flits_out")) * e.icnt_flit_pj * pj
    per_access = (gpu.line_bytes // gpu.sector_bytes) if gpu.coalescing == "line" else 1
    l2 = t["l2"]
    l2_hits = l2.get("hits", 0) / per_access
    l2_misses = (l2.get("accesses", 0) - l2.get("hits", 0)) / per_access
    atomics = tot("slice_atomics") / per_access
    l2_dyn = (l2_hits * e.l2_hit_pj + l2_misses * e.l2_miss_pj + atomics * e.atomic_pj) * pj
    dram_dyn = (t["dram_reads"] * e.dram_read_pj + t["dram_writes"] * e.dram_write_pj +
                t["dram_activations"] * e.dram_act_pj) * pj
    pcie_dyn = float(pcie_bytes) * e.pcie_byte_pj * pj
    comp = {
        "sm": {"dynamic_j": sm_dyn, "static_j": (e.const_w + gpu.sms * e.sm_w) * seconds},
        "l1": {"dynamic_j": l1_dyn, "static_j": 0.0},
        "icnt": {"dynamic_j": icnt_dyn, "static_j": 0.0},
        "l2": {"dynamic_j": l2_dyn, "static_j": 0.0},
        "dram": {"dynamic_j": dram_dyn, "static_j": e.dram_static_w * seconds},
        "pcie": {"dynamic_j": pcie_dyn, "static_j": 0.0},
        "unit": {"dynamic_j": float(unit_j or 0.0), "static_j": 0.0},
    }
    dyn = sum(c["dynamic_j"] for c in comp.values())
    sta = sum(c["static_j"] for c in comp.values())
    return {"preset": e.name, "seconds": float(seconds), "components": comp, "dynamic_j": dyn, "static_j": sta,
            "total_j": dyn + sta, "unit_modelled": unit_j is not None,
            "counts": {"warp_instructions": t["warp_instructions"], "alu_instructions": alu, "lanes": lanes,
                       "l1_accesses": lsu, "l1_hit_rate": hit_rate, "icnt_flits": tot("slice_flits_in") +
                       tot("slice_flits_out"), "l2_hits": l2_hits, "l2_misses": l2_misses, "l2_atomics": atomics,
                       "dram_reads": t["dram_reads"], "dram_writes": t["dram_writes"],
                       "dram_activations": t["dram_activations"], "pcie_bytes": float(pcie_bytes)}}


def energy_table(runs: dict) -> str:
    """A table of energy by component (uJ, dynamic + static) for ``{label: gpu_energy(...)}``."""
    from ..report import format_table
    labels = list(runs)
    rows = []
    for c in COMPONENTS:
        rows.append([c] + [f"{1e6 * (runs[k]['components'][c]['dynamic_j'] + runs[k]['components'][c]['static_j']):.1f}"
                           for k in labels])
    rows.append(["dynamic"] + [f"{1e6 * runs[k]['dynamic_j']:.1f}" for k in labels])
    rows.append(["static"] + [f"{1e6 * runs[k]['static_j']:.1f}" for k in labels])
    rows.append(["total"] + [f"{1e6 * runs[k]['total_j']:.1f}" for k in labels])
    return format_table(["energy (uJ)"] + labels, rows)
