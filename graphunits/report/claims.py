"""Builders of the papers' claims in the units' report profiles
(``graphunits/<unit>/profile.py``): each returns ``f(RunSet) -> (value, how)``,
the model's figure over the runs of a report and how it was computed."""
from __future__ import annotations

from .units import RunSet, gmean, mean

__all__ = ["ENERGY_SETUP", "speedup", "factor", "best_speedup", "best_per_run", "workload_left", "ratio",
           "coalescing_gain", "share", "mean_over", "metric_of", "generic_coalescing"]

#: The known difference of every energy figure (docs/energy.md).
ENERGY_SETUP = ("GPU and memory energy from the GPU's energy preset (docs/energy.md: AccelWattch's or GPUWattch's set, "
           "GPUWattch's scaled to 28 nm for the GTX 980, Kepler and TX1); the unit's own SRAM arrays from CACTI, its "
           "logic not modelled yet")


def speedup(mode: str, gpu: str | None = None, algo: str | tuple | None = None):
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


def factor(metric: str, base_mode: str, mode: str, algo: str | None = None):
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
        return mean(vals), f"{metric} of {base_mode} / of {mode}, mean over {rs.describe(mode=mode)}"
    return f


def best_speedup(unit: str, algo: str | None = None):
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


def best_per_run(unit: str, reference: str):
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


def workload_left(mode: str, algo: str):
    def f(rs: RunSet):
        v = mean(rs.values("workload_left", mode=mode, algo=algo))
        return v, f"mean of {mode}, {rs.describe(mode=mode, algo=algo)}"
    return f


def ratio(metric: str, num_mode: str, den_mode: str, algo: str | None = None, minus_one: bool = False,
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
        return mean(vals), f"{metric}: {num_mode} / {den_mode}, mean over {rs.describe(**m)}"
    return f


def coalescing_gain(better_mode: str, base_mode: str, algo: str | None = None, metric: str = "sectors_per_request",
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
        return mean(vals), f"{metric} of {base_mode} / {better_mode} - 1, {rs.describe(**m)}"
    return f


def share(mode: str, size: int, unit: str = "emogi"):
    def f(rs: RunSet):
        v = mean(rs.values(f"{unit}_req_{size}B", mode=mode))
        return v, f"share of {size} B requests of {mode}, mean over {rs.describe(mode=mode)}"
    return f


def mean_over(metric: str, mode: str, algos: tuple):
    """Mean of ``metric`` over the runs of ``mode`` for the algorithms ``algos``."""
    def f(rs: RunSet):
        vals = [v for a in algos for v in rs.values(metric, mode=mode, algo=a)]
        runs = [r for a in algos for r in rs.select(mode=mode, algo=a)]
        graphs = sorted({r["graph"] for r in runs})
        return mean(vals), (f"mean {metric} of {mode} over {len(vals)} run{'s' if len(vals) != 1 else ''} "
                             f"({', '.join(algos)}) on {', '.join(graphs) or 'no graph'}")
    return f


def metric_of(metric: str, mode: str, agg=mean):
    def f(rs: RunSet):
        return agg(rs.values(metric, mode=mode)), f"{metric} of {mode}, {rs.describe(mode=mode)}"
    return f


def generic_coalescing(unit: str):
    def f(rs: RunSet):
        best, how = None, "no runs"
        for mode in sorted({r["mode"] for r in rs.select(unit=unit)}):
            v, h = coalescing_gain(mode, "baseline")(rs)
            if v is not None and (best is None or v > best):
                best, how = v, h
        return best, how
    return f
