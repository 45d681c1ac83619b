"""One flat record of numbers per algorithm run (a row of ``runs.csv`` and of a
sweep's table), and the normalisation against the reference runs.

Every record has the columns of :data:`COMMON`; a unit's statistics
(``RunResult.extra[unit]``) add ``<unit>_<name>`` columns (units.py explains the
conventions).
"""
from __future__ import annotations

import math

__all__ = ["COMMON", "record", "normalise", "time_seconds", "request_histogram", "run_energy"]

#: Columns every record has, in table order.
COMMON = ("graph", "graph_name", "vertices", "edges", "algo", "unit", "mode", "gpu", "preset", "check", "ok",
          "iterations", "wall_s", "time_us", "reference_mode", "time_norm", "speedup", "sectors_per_request",
          "contract_sectors_per_request", "mem_instructions", "sectors", "warp_instructions", "gpu_workload",
          "workload_left", "l1_accesses", "l2_accesses", "dram_sectors", "icnt_flits", "energy_uj",
          "energy_norm", "energy_dram_share", "energy_static_uj", "energy_sm_uj", "energy_l1_uj", "energy_icnt_uj", "energy_l2_uj",
          "energy_dram_uj", "energy_pcie_uj", "energy_unit_uj", "bound", "unit_share", "bound_mix", "unit_mix")


#: Energy components (golden.gpu.energy.COMPONENTS), each a record column ``energy_<c>_uj``.
_COMPONENTS = ("sm", "l1", "icnt", "l2", "dram", "pcie", "unit")


def time_seconds(r, gpu_config) -> float | None:
    """Estimated run time of ``r`` (seconds) by the unit's convention, else the GPU model's."""
    hz = gpu_config.clock_mhz * 1e6
    t = r.extra.get("time")
    if isinstance(t, dict):
        if isinstance(t.get("total_s"), (int, float)):
            return float(t["total_s"])
        if isinstance(t.get("total_cycles"), (int, float)):
            return float(t["total_cycles"]) / hz
    for v in r.extra.values():
        if isinstance(v, dict) and isinstance(v.get("time"), dict) and isinstance(v["time"].get("total_s"),
                                                                                   (int, float)):
            return float(v["time"]["total_s"])
    if r.gpu is not None:
        return float(r.gpu["total"]["cycles"]) / hz
    return None


def run_energy(r, gpu_config, energy_config=None) -> dict | None:
    """Energy of run ``r`` by component (golden.gpu.energy.gpu_energy): its GPU
    model's counts, its estimated time (:func:`time_seconds`: static energy) and
    the bytes it moved over PCIe (EMOGI: the zero-copy wire bytes; UVM: the
    migrated pages). ``None`` for a functional run (no statistics)."""
    from golden.gpu.energy import EnergyConfig, gpu_energy
    if r.gpu is None:
        return None
    import importlib
    e = energy_config or EnergyConfig.for_gpu(gpu_config.name)
    em = r.extra.get("emogi") if isinstance(r.extra.get("emogi"), dict) else {}
    pcie = float(em.get("wire_bytes", em.get("migrated_bytes", 0.0)) or 0.0)
    seconds = time_seconds(r, gpu_config) or 0.0
    units = {}
    for u in UNIT_ENERGY:
        st = r.extra.get(u)
        if isinstance(st, dict):
            units[u] = importlib.import_module(f"golden.{u}.energy").unit_energy(st, seconds)
    out = gpu_energy(r.gpu, gpu_config, e, seconds, pcie_bytes=pcie,
                     unit_j=sum(x["dynamic_j"] for x in units.values()) if units else None)
    if units:
        # the units' leakage is static energy of the unit component
        out["components"]["unit"]["static_j"] = sum(x["static_j"] for x in units.values())
        out["static_j"] += out["components"]["unit"]["static_j"]
        out["total_j"] = out["dynamic_j"] + out["static_j"]
        out["units"] = units
    return out


#: Units whose own energy golden/<unit>/energy.py models (docs/energy.md, "Units").
UNIT_ENERGY = ("scu", "iru", "graphpeg", "mff", "emogi")


def _energy_or_none(r, gpu_config):
    from golden.config import ConfigError
    try:
        return run_energy(r, gpu_config)
    except ConfigError:          # a GPU without an energy preset (e.g. a sweep's own GPU)
        return None


def request_histogram(unit: str, extra: dict) -> dict[int, int] | None:
    """``{size in bytes: count}`` when the unit reports its requests by size."""
    d = extra.get(unit)
    h = d.get("requests") if isinstance(d, dict) else None
    if not isinstance(h, dict) or not h:
        return None
    try:
        return {int(k): int(v) for k, v in sorted(h.items(), key=lambda kv: int(kv[0]))}
    except (TypeError, ValueError):
        return None


def _unit_columns(unit: str, extra: dict) -> dict:
    out = {}
    d = extra.get(unit)
    if isinstance(d, dict):
        for k, v in d.items():
            if isinstance(v, bool):
                out[f"{unit}_{k}"] = int(v)
            elif isinstance(v, (int, float)):
                out[f"{unit}_{k}"] = v
            elif k == "ops" and isinstance(v, dict):
                out[f"{unit}_ops"] = sum(int(x) for x in v.values())
        hist = request_histogram(unit, extra)
        if hist:
            total = sum(hist.values())
            for size, n in hist.items():
                out[f"{unit}_req_{size}B"] = n / total if total else 0.0
    t = extra.get("time")
    if isinstance(t, dict):
        for k, v in t.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[f"time_{k}"] = v
    return out


def _memory_columns(tot: dict, extra: dict, kernels=None) -> dict:
    """Accesses per level of the memory system, the interconnect flits between the
    SMs and the memory partitions, and where the time goes: the bound of most
    cycles and every bound's share of the run's time (the unit's own time, when
    the GPU waits for it outside the kernels, as ``unit``)."""
    res = tot.get("resources") or {}
    flits = sum((res.get(k) or {}).get("total", 0) for k in ("sm_flits_out", "sm_flits_in"))
    out = {"l1_accesses": tot["l1"]["accesses"], "l2_accesses": tot["l2"]["accesses"],
           "dram_sectors": tot["dram_sectors"], "icnt_flits": flits, "bound": tot.get("bound")}
    binding = dict(tot.get("binding") or {})
    # a unit's own operations on the memory system (kernels without a launch, e.g. "scu.expand")
    # are the unit's time, whatever bound them
    ucyc = 0.0
    for k in kernels or ():
        if k.get("launches") == 0:
            for b, v in (k.get("binding") or {}).items():
                binding[b] = binding.get(b, 0.0) - v
            ucyc += float(k.get("cycles", 0.0))
    binding = {k: v for k, v in binding.items() if v > 1e-9}
    gpu_cycles = sum(binding.values())
    t = extra.get("time") if isinstance(extra.get("time"), dict) else {}
    total = t.get("total_cycles") if isinstance(t.get("total_cycles"), (int, float)) else None
    unit = max(0.0, float(total) - gpu_cycles) if total else ucyc
    whole = gpu_cycles + unit
    if whole > 0:
        mix = {k: v / whole for k, v in binding.items()}
        if unit > 0:
            mix["unit"] = mix.get("unit", 0.0) + unit / whole
        out["unit_share"] = mix.get("unit", 0.0)
        top = sorted(mix.items(), key=lambda kv: -kv[1])
        out["bound_mix"] = ", ".join(f"{k} {100 * v:.0f} %" for k, v in top if v >= 0.005)
        out["bound"] = top[0][0]
    # where the unit's own time goes: its operations' shares and what bound them
    for d in extra.values():
        if isinstance(d, dict) and isinstance(d.get("cycles_by_op"), dict) and d.get("cycles"):
            tot_u = float(d["cycles"])
            ops = sorted(d["cycles_by_op"].items(), key=lambda kv: -kv[1])
            s = ", ".join(f"{k} {100 * v / tot_u:.0f} %" for k, v in ops if v / tot_u >= 0.005)
            if isinstance(d.get("bound"), dict) and d["bound"]:
                b = sorted(d["bound"].items(), key=lambda kv: -kv[1])
                s += "; bound by " + ", ".join(f"{k} {100 * v / tot_u:.0f} %" for k, v in b if v / tot_u >= 0.005)
            if isinstance(d.get("unit_bound"), dict) and d["unit_bound"]:
                # of the operations the unit itself bound: which of its terms (elements, ports, Little)
                ub = sorted(d["unit_bound"].items(), key=lambda kv: -kv[1])
                tot_b = float(sum(v for _, v in ub)) or 1.0
                s += "; unit's own bound: " + ", ".join(f"{k} {100 * v / tot_b:.0f} %" for k, v in ub
                                                       if v / tot_b >= 0.005)
            out["unit_mix"] = s
            break
    return out


def _spr(kernels) -> float | None:
    mem = sum(k["mem_instructions"] for k in kernels)
    return sum(k["sectors"] for k in kernels) / mem if mem else None


def record(r, *, graph: str, graph_summary: dict, unit: str, gpu_config, preset: str | None = None,
           check: str | None = None) -> dict:
    """The record of one run ``r`` (a :class:`golden.algorithms.RunResult`)."""
    t = time_seconds(r, gpu_config)
    rec = {"graph": graph, "graph_name": graph_summary.get("name", graph),
           "vertices": graph_summary.get("vertices"), "edges": graph_summary.get("edges"),
           "algo": r.algo, "unit": unit, "mode": r.mode, "gpu": gpu_config.name, "preset": preset or "",
           "check": check if check is not None else "not checked", "ok": None if check is None else check == "ok",
           "iterations": r.iterations, "wall_s": round(r.wall_s, 4), "time_us": None if t is None else t * 1e6,
           "reference_mode": None, "time_norm": None, "speedup": None, "sectors_per_request": None,
           "contract_sectors_per_request": None, "mem_instructions": None, "sectors": None,
           "warp_instructions": None, "gpu_workload": None, "workload_left": None, "l1_accesses": None,
           "l2_accesses": None, "dram_sectors": None, "icnt_flits": None, "energy_uj": None,
           "energy_norm": None, "energy_dram_share": None, "energy_static_uj": None, **{f"energy_{c}_uj": None for c in _COMPONENTS},
           "bound": None, "unit_share": None, "bound_mix": None, "unit_mix": None}
    if r.gpu is not None:
        tot = r.gpu["total"]
        rec.update({"sectors_per_request": tot["accesses_per_request"], "mem_instructions": tot["mem_instructions"],
                    "sectors": tot["sectors"], "warp_instructions": tot["warp_instructions"],
                    "contract_sectors_per_request": _spr([k for k in r.gpu["kernels"] if "contract" in k["name"]])})
        rec.update(_memory_columns(tot, r.extra, r.gpu.get("kernels")))
        e = _energy_or_none(r, gpu_config)
        if e is not None and e["total_j"] > 0:
            d = e["components"]["dram"]
            rec["energy_uj"] = e["total_j"] * 1e6
            rec["energy_dram_share"] = (d["dynamic_j"] + d["static_j"]) / e["total_j"]
            rec["energy_static_uj"] = e["static_j"] * 1e6
            for c, v in e["components"].items():
                rec[f"energy_{c}_uj"] = (v["dynamic_j"] + v["static_j"]) * 1e6
    c = r.counters
    if "gpu_nodes" in c or "gpu_edges" in c:
        rec["gpu_workload"] = int(c.get("gpu_nodes", 0)) + int(c.get("gpu_edges", 0))
    if unit != "baseline":
        rec.update(_unit_columns(unit, r.extra))
    return rec


def normalise(records: list[dict], reference_of, key_fields=("graph", "algo", "gpu"), workload_of=None,
              loose_fields=()) -> None:
    """Fill ``reference_mode``, ``time_norm`` (time / the reference mode's time),
    ``speedup`` (its inverse), ``energy_norm`` (energy / the reference mode's; and
    each component's ``energy_<c>_norm``, over the reference's total) and ``workload_left`` (GPU workload / the baseline's,
    for the units where ``workload_of(unit)`` is true: those whose modes count the
    GPU workload as the baseline does), matching runs on ``key_fields``;
    ``reference_of(unit, mode)`` names the reference mode. ``loose_fields``: key
    fields that a reference run may lack (a sweep's reference that runs once
    whatever the unit's parameters, GraphPEG's ``lb``; one without the unit's own
    options, the MFF's ``pull``): a run without a reference of equal values is
    matched with one whose other fields are equal and that lacks (None) the rest.
    Figures a record had before are recomputed (None where its reference is missing)."""
    from collections import defaultdict
    index = {}
    strict = [k for k in key_fields if k not in loose_fields]
    by_strict = defaultdict(list)
    for r in records:
        index[tuple(r.get(k) for k in key_fields) + (r["mode"],)] = r
        by_strict[tuple(r.get(k) for k in strict) + (r["mode"],)].append(r)

    def find(r, mode):
        hit = index.get(tuple(r.get(k) for k in key_fields) + (mode,))
        if hit is not None or not loose_fields:
            return hit
        for c in by_strict.get(tuple(r.get(k) for k in strict) + (mode,), ()):
            if all(c.get(k) is None or c.get(k) == r.get(k) for k in loose_fields):
                return c
        return None

    derived = ("time_norm", "speedup", "energy_norm", "workload_left") + tuple(f"energy_{c}_norm" for c in _COMPONENTS)
    for r in records:
        for k in derived:
            if k in r:
                r[k] = None
        ref_mode = "baseline" if r["unit"] == "baseline" else reference_of(r["unit"], r["mode"])
        r["reference_mode"] = ref_mode
        ref = find(r, ref_mode)
        t, t0 = r.get("time_us"), ref.get("time_us") if ref else None
        if _num(t) and _num(t0) and t > 0:
            r["time_norm"] = t / t0
            r["speedup"] = t0 / t
        e, e0 = r.get("energy_uj"), ref.get("energy_uj") if ref else None
        if _num(e) and _num(e0) and e0 > 0:
            r["energy_norm"] = e / e0
            for c in _COMPONENTS:            # the report's normalised energy-breakdown bars
                v = r.get(f"energy_{c}_uj")
                r[f"energy_{c}_norm"] = v / e0 if _num(v) else None
        if workload_of is not None and r["unit"] != "baseline" and not workload_of(r["unit"]):
            continue
        base = find(r, "baseline")
        w, w0 = r.get("gpu_workload"), base.get("gpu_workload") if base else None
        if _num(w) and _num(w0) and w0 > 0:
            r["workload_left"] = w / w0


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)
