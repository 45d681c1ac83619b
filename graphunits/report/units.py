"""What the report and the sweeps know about each unit, and how they find the
units that exist.

Discovery is dynamic: a unit is *available* for an algorithm when its golden
model registers a mode for it (:func:`golden.algorithms.modes_for`); the mode's
class lives in ``golden/<unit>/algorithms.py``, which names the unit. So a new
unit appears in reports and sweeps as soon as its modes are registered, with a
generic profile (:func:`profile`); an entry in :data:`PROFILES` adds what only a
person can say: the paper's GPU and figures, the configuration that the
algorithms take, the RTL that implements it.

Conventions a unit's modes follow so that the generic report reads them
(docs/usage.md, "Adding a unit to the reports"):

* time: ``RunResult.extra["time"]["total_s"]`` or ``["total_cycles"]`` (GPU
  clock), or ``extra[unit]["time"]["total_s"]``; otherwise the GPU model's time;
* statistics: ``extra[unit]``, a dict; its numeric entries become columns
  ``<unit>_<name>``; a dict ``extra[unit]["requests"]`` of request size (bytes)
  to count is the unit's request-size histogram;
* configuration: ``run_algorithm(..., <option>=Config)`` (:attr:`UnitProfile.option`).
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field, replace
from typing import Callable

__all__ = ["known_units", "unit_names", "UnitProfile", "PaperClaim", "MetricFigure", "PROFILES", "profile", "available_units",
           "unit_of_mode", "unit_modes", "RunSet", "gmean", "FIGURE_KINDS"]

#: The figure kinds a profile names as strings (a :class:`MetricFigure` adds a unit's own).
FIGURE_KINDS = ("time", "coalescing", "workload", "requests")

#: The units of the project (README), in report order; others are added when discovered.
def known_units() -> list[str]:
    """The units' names in their descriptors' order (golden/units.py)."""
    from golden.units import units
    return list(units())


def unit_names(found: dict | None = None) -> list[str]:
    """Every unit a report may name: the descriptors' and, after them, any other
    unit with a registered mode (``found``: :func:`unit_modes`)."""
    known = known_units()
    found = unit_modes() if found is None else found
    return known + sorted(u for u in found if u not in known)


def gmean(values) -> float | None:
    vals = [v for v in values if v is not None and v > 0 and not math.isnan(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else None


class RunSet:
    """The run records of a report, with the selections the paper figures need."""

    def __init__(self, records: list[dict]):
        self.records = list(records)

    def select(self, **match) -> list[dict]:
        return [r for r in self.records if all(r.get(k) == v for k, v in match.items())]

    def values(self, metric: str, **match) -> list[float]:
        return [r[metric] for r in self.select(**match) if isinstance(r.get(metric), (int, float))]

    def describe(self, **match) -> str:
        rs = self.select(**match)
        if not rs:
            return "no runs"
        graphs = sorted({r["graph"] for r in rs})
        return f"{len(rs)} run{'s' if len(rs) != 1 else ''} on {', '.join(graphs)}"


@dataclass(frozen=True)
class PaperClaim:
    """One figure a paper states, and how ours is computed from the runs.

    Parameters
    ----------
    label : str
        What is measured.
    paper : str
        The paper's statement (as written, with its section).
    value : float or None
        The paper's number in the unit of ``kind`` (the low end of a range);
        None: a statement without a number (``direction`` says which way).
    ours : callable or None
        ``RunSet -> (value or None, how)``; None: the model does not measure it (yet).
    kind : str
        ``"share"`` (0..1, printed as %), ``"x"`` (a factor), ``"change"`` (a relative
        change, printed as %), ``"number"``.
    note : str
        Known differences of setup (graphs, scaled parameters) that make ours differ.
    value_hi : float or None
        The high end of a range (``value`` .. ``value_hi``): ours inside it counts as
        ratio 1.
    direction : int
        For a statement without a number: +1 (above 1 / positive), -1.
    select : dict or None
        The runs behind the figure (``RunSet.select`` keywords): their times and
        bounds are the row's measured reason (graphunits/report/fidelity.py).
    metric : str or None
        With ``select``: list this record column per run instead of the times.
    """

    label: str
    paper: str
    value: float | None
    ours: Callable | None = None
    kind: str = "number"
    note: str = ""
    value_hi: float | None = None
    direction: int = 0
    select: dict | None = None
    metric: str | None = None


@dataclass(frozen=True)
class MetricFigure:
    """A bar figure of one of the unit's own columns (``<unit>_<name>``), one bar
    per unit mode and graph/algorithm (the baseline has no unit columns).

    Parameters
    ----------
    name : str
        File name stem (``<name>_<unit>.png``).
    metric : str
        The record column plotted.
    title, ylabel : str
    hline : float or None
        A reference line (1.0 for a ratio, 0.0 for a change).
    """

    name: str
    metric: str
    title: str
    ylabel: str
    hline: float | None = None

    def to_dict(self) -> dict:
        return {"kind": "metric", "name": self.name, "metric": self.metric, "title": self.title,
                "ylabel": self.ylabel, "hline": self.hline}


@dataclass(frozen=True)
class UnitProfile:
    """What the report knows about a unit.

    Parameters
    ----------
    name, title, source : str
        Unit name (``golden/<name>``), a title, the paper.
    gpu : str
        The GPU preset of the paper's evaluation (used unless ``--gpu`` is given).
    reference : str
        The mode that the unit's times are normalised to (``baseline``, or e.g. ``uvm``).
    config : str or None
        ``"module:Class"`` of the configuration the algorithms take through ``option``.
    option : str or None
        The ``run_algorithm`` keyword that takes that configuration.
    presets : dict
        GPU preset -> configuration preset of the unit (default: ``default``).
    hw : tuple
        ``hw.registry`` units that implement it (area).
    area_preset : str or None
        The preset ``--area`` synthesizes when none is named (None: the GPU's
        preset), e.g. the IRU's ``default``, one memory partition, which the
        paper's area figure is for, while its runs use all four (``gtx980``).
    area_presets : dict
        Run preset -> the preset whose RTL ``--area`` synthesizes for it, for
        presets the RTL does not build (the SCU's hashes in memory: ``gtx980``
        is sized by ``gtx980-sim``, the same pipeline with on-chip hashes).
    figures : tuple
        Figures of the unit's section: ``time``, ``coalescing``, ``workload`` (GPU
        workload left: only for units whose modes count the GPU's node and edge
        frontier as the baseline does and shrink it, the SCU), ``requests``, or a
        :class:`MetricFigure` of one of the unit's columns.
    columns : tuple
        Extra table columns: (header, record key).
    claims : tuple of PaperClaim

    Whether a unit has RTL in the loop is not said here: ``sim.cosim.cosim_units()``
    is the registry (``graphunits report --cosim`` runs every unit it lists).
    """

    name: str
    title: str
    source: str = ""
    gpu: str = "gtx980"
    reference: str = "baseline"
    config: str | None = None
    option: str | None = None
    presets: dict = field(default_factory=dict)
    hw: tuple = ()
    area_preset: str | None = None
    area_presets: dict = field(default_factory=dict)
    figures: tuple = ("time", "coalescing", "workload", "requests")
    columns: tuple = ()
    claims: tuple = ()

    def config_class(self):
        """The configuration class, or None (unit without one, or not importable yet)."""
        if not self.config:
            return None
        mod, _, cls = self.config.partition(":")
        try:
            return getattr(importlib.import_module(mod), cls)
        except (ImportError, AttributeError):
            return None

    def preset_for(self, gpu: str) -> str:
        return self.presets.get(gpu, "default")

    def figure_specs(self) -> list:
        """``figures`` as JSON-able values (kind names, and dicts for :class:`MetricFigure`)."""
        return [f.to_dict() if isinstance(f, MetricFigure) else f for f in self.figures]


# ---------------------------------------------------------------------- paper figures
#: The known difference of every energy figure (docs/energy.md).
_ENERGY = ("GPU and memory energy from the GPU's energy preset (docs/energy.md: AccelWattch's or GPUWattch's set, "
           "GPUWattch's scaled to 28 nm for the GTX 980, Kepler and TX1); the unit's own SRAM arrays from CACTI, its "
           "logic not modelled yet")


def _speedup(mode: str, gpu: str | None = None, algo: str | tuple | None = None):
    """Geometric mean of ``mode``'s speedups over its reference (``algo``: one
    algorithm or several)."""
    algos = (algo,) if isinstance(algo, str) else algo

    def f(rs: RunSet):
        m = {"mode": mode}
        if gpu:
            m["gpu"] = gpu
        runs = [r for r in rs.select(**m) if algos is None or r["algo"] in algos]
        v = gmean([r["speedup"] for r in runs if isinstance(r.get("speedup"), (int, float))])
        graphs = sorted({r["graph"] for r in runs})
        return v, (f"geometric mean of {mode}'s speedups over its reference, {len(runs)} runs"
                   + (f" ({', '.join(algos)})" if algos else "") + f" on {', '.join(graphs) or 'no graph'}"
                   + (f", {gpu}" if gpu else ""))
    return f


def _factor(metric: str, base_mode: str, mode: str, algo: str | None = None):
    """Mean over matching runs of metric(base_mode) / metric(mode): how many times
    fewer (``sectors_per_request``: coalescing)."""
    def f(rs: RunSet):
        vals = []
        for r in rs.select(mode=mode):
            if algo and r["algo"] != algo:
                continue
            d = rs.select(mode=base_mode, graph=r["graph"], algo=r["algo"], gpu=r["gpu"])
            if d and r.get(metric) and isinstance(d[0].get(metric), (int, float)):
                vals.append(d[0][metric] / r[metric])
        return _mean(vals), f"{metric} of {base_mode} / of {mode}, mean over {rs.describe(mode=mode)}"
    return f


def _mff_example(rs: RunSet):
    """The slides' worked example (vertices 0-3): cache blocks the MFF reads over
    the GPU's requests, 128 B lines (the GTX 480's)."""
    from sim.mff import worked_example_counts
    n = worked_example_counts(128)
    return n["mff_blocks"] / n["gpu_requests"], (f"{n['gpu_requests']} GPU requests -> {n['mff_blocks']} MFF block "
                                                 f"reads (sim/mff/, worked_example_counts, 128 B lines)")


def _best_speedup(unit: str, algo: str | None = None):
    """Generic: the best mode of a unit (geometric mean of its speedups)."""
    def f(rs: RunSet):
        m = {"unit": unit} if algo is None else {"unit": unit, "algo": algo}
        best, how = None, "no runs"
        for mode in sorted({r["mode"] for r in rs.select(**m)}):
            v = gmean(rs.values("speedup", mode=mode, **{k: x for k, x in m.items() if k != "unit"}))
            if v is not None and (best is None or v > best):
                best, how = v, f"best mode {mode}: geometric mean, {rs.describe(mode=mode)}"
        return best, how
    return f


def _best_per_run(unit: str, reference: str):
    """The unit at its best mode for each (graph, algorithm, GPU), as a user would run
    it (e.g. GraphPEG's direction switching where the algorithm has it): geometric
    mean over every (graph, algorithm, GPU) the unit ran, of the best speedup there."""
    def f(rs: RunSet):
        best: dict = {}
        for r in rs.select(unit=unit):
            v = r.get("speedup")
            if r["mode"] == reference or not isinstance(v, (int, float)):
                continue
            k = (r["graph"], r["algo"], r["gpu"])
            if k not in best or v > best[k][0]:
                best[k] = (v, r["mode"])
        if not best:
            return None, "no runs"
        modes = sorted({m for _, m in best.values()})
        by = ", ".join(f"{m} on {sum(1 for _, x in best.values() if x == m)}" for m in modes)
        return gmean([v for v, _ in best.values()]), (f"geometric mean over {len(best)} (graph, algorithm) runs of "
                                                      f"the best mode of each ({by})")
    return f


def _workload_left(mode: str, algo: str):
    def f(rs: RunSet):
        v = _mean(rs.values("workload_left", mode=mode, algo=algo))
        return v, f"mean of {mode}, {rs.describe(mode=mode, algo=algo)}"
    return f


def _ratio(metric: str, num_mode: str, den_mode: str, algo: str | None = None, minus_one: bool = False,
           gpu: str | None = None):
    """Mean over (graph, algo, gpu) of metric(num_mode) / metric(den_mode) (- 1)."""
    def f(rs: RunSet):
        vals = []
        for r in rs.select(mode=num_mode):
            if algo and r["algo"] != algo or gpu and r["gpu"] != gpu:
                continue
            d = rs.select(mode=den_mode, graph=r["graph"], algo=r["algo"], gpu=r["gpu"])
            if d and isinstance(r.get(metric), (int, float)) and d[0].get(metric):
                vals.append(r[metric] / d[0][metric] - (1 if minus_one else 0))
        m = {"mode": num_mode} if algo is None else {"mode": num_mode, "algo": algo}
        return _mean(vals), f"{metric}: {num_mode} / {den_mode}, mean over {rs.describe(**m)}"
    return f


def _coalescing_gain(better_mode: str, base_mode: str, algo: str | None = None, metric: str = "sectors_per_request",
                     gpu: str | None = None):
    """Improvement of coalescing = sectors per request of base / of better - 1."""
    def f(rs: RunSet):
        vals = []
        for r in rs.select(mode=better_mode):
            if algo and r["algo"] != algo or gpu and r["gpu"] != gpu:
                continue
            d = rs.select(mode=base_mode, graph=r["graph"], algo=r["algo"], gpu=r["gpu"])
            if d and r.get(metric) and isinstance(d[0].get(metric), (int, float)):
                vals.append(d[0][metric] / r[metric] - 1)
        m = {"mode": better_mode} if algo is None else {"mode": better_mode, "algo": algo}
        return _mean(vals), f"{metric} of {base_mode} / {better_mode} - 1, {rs.describe(**m)}"
    return f


def _share(mode: str, size: int, unit: str = "emogi"):
    def f(rs: RunSet):
        v = _mean(rs.values(f"{unit}_req_{size}B", mode=mode))
        return v, f"share of {size} B requests of {mode}, mean over {rs.describe(mode=mode)}"
    return f


def _mean_over(metric: str, mode: str, algos: tuple):
    """Mean of ``metric`` over the runs of ``mode`` for the algorithms ``algos``."""
    def f(rs: RunSet):
        vals = [v for a in algos for v in rs.values(metric, mode=mode, algo=a)]
        runs = [r for a in algos for r in rs.select(mode=mode, algo=a)]
        graphs = sorted({r["graph"] for r in runs})
        return _mean(vals), (f"mean {metric} of {mode} over {len(vals)} run{'s' if len(vals) != 1 else ''} "
                             f"({', '.join(algos)}) on {', '.join(graphs) or 'no graph'}")
    return f


def _metric(metric: str, mode: str, agg=_mean):
    def f(rs: RunSet):
        return agg(rs.values(metric, mode=mode)), f"{metric} of {mode}, {rs.describe(mode=mode)}"
    return f


def _generic_coalescing(unit: str):
    def f(rs: RunSet):
        best, how = None, "no runs"
        for mode in sorted({r["mode"] for r in rs.select(unit=unit)}):
            v, h = _coalescing_gain(mode, "baseline")(rs)
            if v is not None and (best is None or v > best):
                best, how = v, h
        return best, how
    return f


_SCU_SCALED = ("Table 2's hashes in memory (gtx980: 16 384 x 16 BFS filter entries, tx1: 2112 x 16); the paper's "
               "graphs (Table 5) are replaced by kron, delaunay and road-like generators (docs/datasets.md)")
_SCU_TIME = ("the SCU on the GPU's memory system at Table 1/2 parameters (docs/scu.md, Paper parameters); "
             "the fused filtering passes of Algorithms 4 and 5 are modelled (SSSP's grouping runs as a separate "
             "group and gathers of the kept edges); a hash probe reads its whole 16-way set from the L2 (64 B for "
             "BFS, 128 B for SSSP: 2 or 4 flits on the unit's `width` interconnect ports, docs/scu.md), which is "
             "where the unit's time goes when it is bound by its ports; the paper's graphs are replaced by smaller ones "
             "(docs/datasets.md), whose arrays fit the L2 more often: the baseline's random accesses hit where the "
             "paper's went to DRAM")

_IRU_TIME = ("the IRU's time is its fast model, checked against the cycle-level TLM (docs/iru.md, \"Fast "
             "model\": 0.83-1.04 of its cycles on whole algorithms); prefetches at the L2's latency from the "
             "partition, Table 1's 8 requests in flight; its replier sends two lanes a cycle, its unidirectional "
             "ring (the paper's Fig. 5d: a partition receives from the neighbour partition; docs/iru.md, \"Ring\") "
             "carries at most 2.67 elements a cycle for 4 partitions (a bidirectional ring, measured on the fast "
             "model: 0.57 / 0.56 / 1.70x on kron:scale=15 BFS / PR / SSSP); its prefetches go through the L2 slices (docs/iru.md); "
             "the paper's graphs are replaced (docs/datasets.md)")
_IRU_FILTER = ("higher on large graphs too (docs/benchmarks.md, IRU (b): kron:scale=16 SSSP 90.4 %, PR 91.1 %; "
               "grid:256x256 SSSP 43.4 %, PR 37.5 %): the edge frontiers of a Kronecker graph repeat its hub "
               "vertices many times, and every repeat that meets its first copy in the hash is merged")

PROFILES: dict[str, UnitProfile] = {
    "scu": UnitProfile(
        "scu", "SCU: stream compaction unit", "Segura et al., ISCA 2019", gpu="gtx980",
        presets={"gtx980": "gtx980", "tx1": "tx1"},
        area_presets={"gtx980": "gtx980-sim", "tx1": "tx1-sim"}, figures=("time", "coalescing", "workload"),
        columns=(("SCU ops", "scu_ops"), ("SCU requests", "scu_requests"), ("SCU cycles", "scu_cycles"),
                 ("contract sect/req", "contract_sectors_per_request")),
        claims=(
            PaperClaim("GPU workload left after filtering, BFS", "14 % (§4.4)", 0.14,
                       _workload_left("scu-enhanced", "bfs"), "share", _SCU_SCALED,
                       select={"mode": "scu-enhanced", "algo": "bfs"}, metric="workload_left"),
            PaperClaim("GPU workload left after filtering, SSSP", "22 % (§4.5)", 0.22,
                       _workload_left("scu-enhanced", "sssp"), "share", _SCU_SCALED,
                       select={"mode": "scu-enhanced", "algo": "sssp"}, metric="workload_left"),
            PaperClaim("GPU instructions, enhanced vs basic SCU, BFS (TX1)", "-71 % (§6.3)", -0.71,
                       _ratio("warp_instructions", "scu-enhanced", "scu", "bfs", minus_one=True, gpu="tx1"),
                       "change", _SCU_SCALED, select={"mode": "scu-enhanced", "algo": "bfs", "gpu": "tx1"},
                       metric="warp_instructions"),
            PaperClaim("GPU instructions, enhanced vs basic SCU, SSSP (TX1)", "-76 % (§6.3)", -0.76,
                       _ratio("warp_instructions", "scu-enhanced", "scu", "sssp", minus_one=True, gpu="tx1"),
                       "change", _SCU_SCALED, select={"mode": "scu-enhanced", "algo": "sssp", "gpu": "tx1"},
                       metric="warp_instructions"),
            PaperClaim("coalescing improvement of grouping over filtering only, SSSP (TX1)",
                       "+27 % (§6.3, Fig. 12)", 0.27,
                       _coalescing_gain("scu-enhanced", "scu-filter", "sssp", "contract_sectors_per_request",
                                        gpu="tx1"), "change",
                       "Table 2's grouping hash (tx1: 288 x 16 groups of 8 positions) in memory; graphs replaced "
                       "(docs/datasets.md)",
                       select={"mode": "scu-enhanced", "algo": "sssp", "gpu": "tx1"},
                       metric="contract_sectors_per_request"),
            PaperClaim("speedup of the enhanced SCU, GTX 980 (BFS, SSSP, PR)", "1.37x (§6.2)", 1.37,
                       _speedup("scu-enhanced", "gtx980"), "x", _SCU_TIME,
                       select={"mode": "scu-enhanced", "gpu": "gtx980"}),
            PaperClaim("speedup of the enhanced SCU, Tegra X1 (BFS, SSSP, PR)", "2.32x (§6.2)", 2.32,
                       _speedup("scu-enhanced", "tx1"), "x", _SCU_TIME, select={"mode": "scu-enhanced", "gpu": "tx1"}),
            PaperClaim("speedup, BFS, GTX 980", "1.41x (§6.2)", 1.41, _speedup("scu-enhanced", "gtx980", "bfs"), "x",
                       _SCU_TIME, select={"mode": "scu-enhanced", "gpu": "gtx980", "algo": "bfs"}),
            PaperClaim("speedup, SSSP, GTX 980", "1.65x (§6.2)", 1.65, _speedup("scu-enhanced", "gtx980", "sssp"),
                       "x", _SCU_TIME, select={"mode": "scu-enhanced", "gpu": "gtx980", "algo": "sssp"}),
            PaperClaim("speedup, PR, GTX 980", "a small slowdown (§6.2)", None, _speedup("scu-enhanced", "gtx980", "pr"),
                       "x", _SCU_TIME, direction=-1, select={"mode": "scu-enhanced", "gpu": "gtx980", "algo": "pr"}),
            PaperClaim("speedup, BFS, Tegra X1", "3.83x (§6.2)", 3.83, _speedup("scu-enhanced", "tx1", "bfs"), "x",
                       _SCU_TIME, select={"mode": "scu-enhanced", "gpu": "tx1", "algo": "bfs"}),
            PaperClaim("speedup, SSSP, Tegra X1", "3.24x (§6.2)", 3.24, _speedup("scu-enhanced", "tx1", "sssp"), "x",
                       _SCU_TIME, select={"mode": "scu-enhanced", "gpu": "tx1", "algo": "sssp"}),
            PaperClaim("speedup, PR, Tegra X1", "1.05x (§6.2)", 1.05, _speedup("scu-enhanced", "tx1", "pr"), "x",
                       _SCU_TIME, select={"mode": "scu-enhanced", "gpu": "tx1", "algo": "pr"}),
            PaperClaim("speedup of the basic SCU, BFS and SSSP", "around 1.5x on both GPUs (§6.3)", 1.5,
                       _speedup("scu", None, ("bfs", "sssp")), "x", _SCU_TIME, select={"mode": "scu"}),
            PaperClaim("energy, enhanced SCU vs the GPU, GTX 980", "-84.7 % (§6.2)", -0.847,
                       _ratio("energy_uj", "scu-enhanced", "baseline", minus_one=True, gpu="gtx980"), "change",
                       _ENERGY, select={"mode": "scu-enhanced", "gpu": "gtx980"}, metric="energy_uj"),
            PaperClaim("energy, enhanced SCU vs the GPU, Tegra X1", "-69 % (§6.2)", -0.69,
                       _ratio("energy_uj", "scu-enhanced", "baseline", minus_one=True, gpu="tx1"), "change",
                       _ENERGY, select={"mode": "scu-enhanced", "gpu": "tx1"}, metric="energy_uj"),
        )),
    "emogi": UnitProfile(
        "emogi", "EMOGI: zero-copy edge lists over PCIe", "Min et al., PVLDB 2021", gpu="v100", reference="uvm",
        figures=("time", "coalescing", "requests"),
        columns=(("PCIe requests", "emogi_request_count"), ("32 B share", "emogi_req_32B"),
                 ("128 B share", "emogi_req_128B"), ("PCIe GB/s", "emogi_bandwidth_gbps"),
                 ("I/O ampl.", "emogi_io_amplification")),
        claims=(
            PaperClaim("naive: share of 32 B PCIe requests", "nearly all (FS 98.7 %, §5.3)", 0.987,
                       _share("emogi-naive", 32), "share"),
            PaperClaim("merged: share of 128 B PCIe requests", "about 40 % (ML 46.7 %, §5.3)", 0.40,
                       _share("emogi-merged", 128), "share"),
            PaperClaim("aligned / merged share of 128 B requests", "GK 1.86x, GU 1.25x (§5.3)", 1.25,
                       _ratio("emogi_req_128B", "emogi-aligned", "emogi-merged"), "x",
                       "small graphs have short adjacency lists: little to align", value_hi=1.86,
                       select={"mode": "emogi-aligned"}, metric="emogi_req_128B"),
            PaperClaim("PCIe requests, merged vs naive", "up to -83.3 % (§5.3)", -0.833,
                       _ratio("emogi_request_count", "emogi-merged", "emogi-naive", minus_one=True), "change"),
            PaperClaim("PCIe requests, aligned vs merged", "up to -28.8 % (§5.3)", -0.288,
                       _ratio("emogi_request_count", "emogi-aligned", "emogi-merged", minus_one=True), "change"),
            PaperClaim("PCIe bandwidth, naive (GB/s)", "4.7 GB/s (§5.3.2)", 4.7,
                       _metric("emogi_bandwidth_gbps", "emogi-naive"), "number"),
            PaperClaim("PCIe bandwidth, merged (GB/s)", "up to 11 GB/s (§5.3.2)", 11.0,
                       _metric("emogi_bandwidth_gbps", "emogi-merged", max), "number"),
            PaperClaim("speedup over UVM, aligned", "3.56x BFS (§5.4); 2.60x average over BFS, SSSP, CC, PR", 2.60,
                       _speedup("emogi-aligned"), "x",
                       "tiny graphs fit in a few pages: UVM migrates little and PCIe latency dominates",
                       select={"mode": "emogi-aligned"}),
        )),
    "iru": UnitProfile(
        "iru", "IRU: irregular accesses reorder unit", "Segura et al., J. Supercomputing", gpu="gtx980",
        presets={"gtx980": "gtx980"}, area_preset="default",
        figures=("time", "coalescing",
                 MetricFigure("filtered", "iru_filtered_share", "IRU: elements filtered out or merged",
                              "share of the IRU's elements")),
        columns=(("IRU filtered share", "iru_filtered_share"), ("IRU ops", "iru_ops"), ("IRU elements", "iru_elements"),
                 ("IRU cycles", "iru_cycles"), ("blocks/reply", "iru_blocks_per_reply")),
        claims=(
            PaperClaim("coalescing: accesses per warp request, baseline / IRU", "4 -> 3 (1.32x, §6)", 1.32,
                       _factor("sectors_per_request", "baseline", "iru"), "x",
                       select={"mode": "iru"}, metric="sectors_per_request"),
            PaperClaim("L1 accesses, IRU / baseline", "67 % (§6, Fig. 12)", 0.67,
                       _ratio("l1_accesses", "iru", "baseline"), "share", select={"mode": "iru"},
                       metric="l1_accesses"),
            PaperClaim("L2 accesses, IRU / baseline", "56 % (§6, Fig. 12)", 0.56,
                       _ratio("l2_accesses", "iru", "baseline"), "share", select={"mode": "iru"},
                       metric="l2_accesses"),
            PaperClaim("interconnect traffic SMs <-> memory partitions, IRU / baseline", "54 % (§6, Fig. 13)", 0.54,
                       _ratio("icnt_flits", "iru", "baseline"), "share", select={"mode": "iru"},
                       metric="icnt_flits"),
            PaperClaim("DRAM accesses, IRU vs baseline", "-4 % (§6)", -0.04,
                       _ratio("dram_sectors", "iru", "baseline", minus_one=True), "change", select={"mode": "iru"},
                       metric="dram_sectors"),
            PaperClaim("speedup, all algorithms", "1.33x (§6)", 1.33, _speedup("iru"), "x", _IRU_TIME,
                       select={"mode": "iru"}),
            PaperClaim("speedup, BFS", "1.16x (§6)", 1.16, _speedup("iru", algo="bfs"), "x", _IRU_TIME,
                       select={"mode": "iru", "algo": "bfs"}),
            PaperClaim("speedup, SSSP", "1.14x (§6)", 1.14, _speedup("iru", algo="sssp"), "x", _IRU_TIME,
                       select={"mode": "iru", "algo": "sssp"}),
            PaperClaim("speedup, PR", "1.40x (§6)", 1.40, _speedup("iru", algo="pr"), "x", _IRU_TIME,
                       select={"mode": "iru", "algo": "pr"}),
            PaperClaim("elements filtered out or merged, SSSP", "23 % (Fig. 15)", 0.23,
                       _mean_over("iru_filtered_share", "iru", ("sssp",)), "share", _IRU_FILTER,
                       select={"mode": "iru", "algo": "sssp"}, metric="iru_filtered_share"),
            PaperClaim("elements filtered out or merged, PR", "79 % (Fig. 15)", 0.79,
                       _mean_over("iru_filtered_share", "iru", ("pr",)), "share", _IRU_FILTER,
                       select={"mode": "iru", "algo": "pr"}, metric="iru_filtered_share"),
            PaperClaim("elements filtered out or merged, average of SSSP and PR", "48.5 % (Fig. 15)", 0.485,
                       _mean_over("iru_filtered_share", "iru", ("sssp", "pr")), "share", _IRU_FILTER),
            PaperClaim("energy", "-13 % (§6)", -0.13, _ratio("energy_uj", "iru", "baseline", minus_one=True), "change",
                       _ENERGY, select={"mode": "iru"}, metric="energy_uj"),
        )),
    "graphpeg": UnitProfile(
        "graphpeg", "GraphPEG: edge gathering per SM", "TACO 2021", gpu="kepler", reference="lb",
        presets={"kepler": "default"},
        figures=("time", "coalescing",
                 MetricFigure("memreq", "graphpeg_memory_request_change",
                              "GraphPEG: memory requests (GPU sectors + engine requests) vs the baseline's",
                              "relative change of memory requests", 0.0)),
        columns=(("engine requests", "graphpeg_engine_requests"), ("engine cycles", "graphpeg_engine_cycles"),
                 ("mem. req. change", "graphpeg_memory_request_change"),
                 ("load imbalance", "graphpeg_load_imbalance"), ("ALWT entries", "graphpeg_alwt_entries"),
                 ("EF exchanges", "graphpeg_exchanges")),
        claims=(
            PaperClaim("speedup over the load-balanced baseline", "2.8x over Gunrock, up to 7.3x (§5.3)", 2.8,
                       _best_per_run("graphpeg", "lb"), "x",
                       "ours is over the golden model's baseline with Gunrock's load-balanced advance (mode lb: "
                       "its scan kernel and searches, docs/golden.md); the engines' requests go through their SM's "
                       "memory path at the previous launch's latency (docs/graphpeg.md); graphs replaced "
                       "(docs/datasets.md)",
                       select={"mode": "graphpeg"}),
            PaperClaim("speedup over SEP-Graph", "2.5x, up to 7.0x (§5.3)", 2.5, None, "x"),
            PaperClaim("executed instructions vs the baseline", "about 1/8 of Gunrock's (§5.3)", 0.125,
                       _ratio("warp_instructions", "graphpeg", "lb"), "share",
                       "ours is against mode lb (the baseline with Gunrock's load-balanced advance); Gunrock's "
                       "other kernels (filter, the frontier's bookkeeping) are the baseline's",
                       select={"mode": "graphpeg"}, metric="warp_instructions"),
            PaperClaim("memory requests (GPU sectors + engine requests) vs the baseline's, push mode",
                       "-27.39 % on average, over Gunrock (§5.3)", -0.2739,
                       _mean_over("graphpeg_memory_request_change", "graphpeg", ("bfs", "sssp", "bc", "kcore")),
                       "change", "against mode lb (the baseline with Gunrock's load-balanced advance)",
                       select={"mode": "graphpeg"}, metric="graphpeg_memory_request_change"),
            PaperClaim("energy vs the load-balanced baseline", "52.6 % of Gunrock's (§5.3)", 0.526,
                       _ratio("energy_uj", "graphpeg", "lb"), "share", _ENERGY + "; against mode lb",
                       select={"mode": "graphpeg"}, metric="energy_uj"),
        )),
    "mff": UnitProfile(
        "mff", "MFF: memory fast forward", "slides (GPGPU-Sim, GTX 480)", gpu="gtx480", reference="pull",
        presets={"gtx480": "gtx480"},
        figures=("time", "coalescing"),
        columns=(("MFF requests", "mff_requests"), ("MFF commands", "mff_commands")),
        claims=(
            PaperClaim("requests of the slides' example, MFF blocks / GPU requests", "11 requests -> 4 cache blocks",
                       4 / 11, _mff_example, "share"),
            PaperClaim("speedup of mff over the pull-style GPU code", "1.75-5.22x (PR, BFS, SSSP, WCC)", 1.75,
                       _speedup("mff"), "x", "the slides' figures come from GPGPU-Sim on five real graphs",
                       value_hi=5.22, select={"mode": "mff"}),
            PaperClaim("energy", "-41 % to -71 % (average -54.6 %)", -0.546,
                       _ratio("energy_uj", "mff", "pull", minus_one=True), "change", _ENERGY,
                       select={"mode": "mff"}, metric="energy_uj"),
        )),
}


def profile(unit: str) -> UnitProfile:
    """The profile of ``unit``: its entry in :data:`PROFILES` (the report's own:
    figures, claims, presets per GPU) with what its descriptor declares
    (golden/units.py: configuration, option, RTL blocks), or a generic one."""
    from golden.units import units
    d = units().get(unit)
    p = PROFILES.get(unit)
    if p is None:
        title, source = (f"{d.title}", d.paper) if d is not None else (unit.upper(), "")
        p = UnitProfile(unit, title, source,
                        claims=(PaperClaim("speedup (best mode)", "see the paper", None, _best_speedup(unit), "x"),
                                PaperClaim("coalescing improvement (best mode)", "see the paper", None,
                                           _generic_coalescing(unit), "change")))
    if d is not None:
        return replace(p, config=p.config or d.config, option=p.option or d.preset_option,
                       hw=p.hw or tuple(b.name for b in d.rtl))
    return p


# ---------------------------------------------------------------------- discovery
def unit_of_mode(algo: str, mode: str) -> str:
    """The unit whose golden model implements ``mode`` (``"baseline"`` for the
    baseline algorithms): the package ``golden/<unit>/`` of the mode's class."""
    from golden.algorithms import MODES
    from golden.units import units
    cls = MODES[(algo, mode)]
    for d in units().values():          # the unit whose descriptor's golden model defines it
        if d.implements(cls):
            return d.name
    parts = cls.__module__.split(".")
    if len(parts) >= 2 and parts[0] == "golden" and parts[1] != "algorithms":
        return parts[1]
    return "baseline" if mode == "baseline" else mode.split("-")[0]


def unit_modes() -> dict[str, dict[str, list[str]]]:
    """``{unit: {algo: [modes]}}`` for every registered mode (baseline excluded)."""
    from golden.algorithms import ALGORITHMS, MODES, modes_for
    for algo in ALGORITHMS:
        modes_for(algo)                 # imports the units' golden models (they register their modes)
    out: dict[str, dict[str, list[str]]] = {}
    for (algo, mode) in list(MODES):    # registration order: a unit's modes as its author listed them
        u = unit_of_mode(algo, mode)
        if u != "baseline":
            out.setdefault(u, {}).setdefault(algo, []).append(mode)
    return out


def available_units() -> list[str]:
    """Units with at least one registered mode: the known ones in order, then others."""
    found = unit_modes()
    return [u for u in unit_names(found) if u in found]
