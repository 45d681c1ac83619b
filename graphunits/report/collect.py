"""Running what a report shows: baseline and every available unit mode on the
golden model (checked against the independent references), optionally the
unit's RTL in the loop and the area flow; then the paper comparison.

:func:`collect` returns a plain, JSON-able dict (the report's ``results.json``);
:mod:`.render` turns it into Markdown, HTML, CSV and figures.
"""
from __future__ import annotations

import datetime
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .fidelity import fidelity_rows, metric_reasons, run_reasons
from .metrics import normalise, record, request_histogram
from .progress import Progress
from .units import RunSet, unit_names, available_units, profile, unit_modes

__all__ = ["ReportSpec", "ReportError", "collect", "cosim_record", "COSIM_FIELDS", "SCHEMA"]

SCHEMA = "graphunits.report/1"


class ReportError(ValueError):
    """A bad report request (unknown algorithm, unit, GPU, preset)."""


@dataclass
class ReportSpec:
    """What to run.

    Parameters
    ----------
    graphs : list of str
        Graph specs (``kron:scale=6``, a file...).
    algos : list of str
    units : list of str or None
        Units to show (None: every known and discovered unit); missing ones are
        shown as "not available".
    gpu : str or None
        GPU preset for every run (None: each unit's paper GPU, units.py).
    presets : dict
        Unit -> configuration preset for its runs (default: the preset of its GPU).
    cosim : bool
        Also run the RTL in the loop on ``sim`` for every requested unit that
        :func:`sim.cosim.cosim_units` registers (SCU, MFF, IRU, GraphPEG, ...), for
        the algorithms and modes it supports.
    area : bool
        Also run the area flow (liberty, 32 nm) on the units' RTL.
    area_preset : str or None
        Preset synthesized (None: the preset of each unit's GPU; ``"default"``...).
    area_units : list of str or None
        ``hw.registry`` units to synthesize (None: those of the requested units).
    check : bool
        Compare every result with the independent reference (sim/reference.py).
    cosim_records : list of dict
        RTL-in-the-loop results already measured (the demo's), shown as they are.
    gpu_params : dict
        GPUConfig fields changed for every golden-model run (``--gpu-set``: a
        sensitivity report; the references run on the same changed GPU). Not with
        ``cosim`` (RTL in the loop runs on the presets).
    """

    graphs: list
    algos: list = field(default_factory=lambda: ["bfs", "sssp", "pr"])
    units: list | None = None
    gpu: str | None = None
    presets: dict = field(default_factory=dict)
    cosim: bool = False
    sim: str = "verilator"
    area: bool = False
    area_preset: str | None = None
    area_units: list | None = None
    check: bool = True
    cosim_records: list = field(default_factory=list)
    gpu_params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"graphs": list(self.graphs), "algos": list(self.algos), "units": self.units, "gpu": self.gpu,
                "presets": dict(self.presets), "cosim": self.cosim, "sim": self.sim, "area": self.area,
                "area_preset": self.area_preset, "area_units": self.area_units, "check": self.check,
                "gpu_params": dict(self.gpu_params)}


# ---------------------------------------------------------------------- validation
def _validate(spec: ReportSpec) -> tuple[list[str], dict]:
    from golden.algorithms import ALGORITHMS
    from golden.config import ConfigError
    from golden.gpu import GPUConfig
    if not spec.graphs:
        raise ReportError("give at least one graph (--graph SPEC)")
    for a in spec.algos:
        if a not in ALGORITHMS:
            raise ReportError(f"unknown algorithm {a!r}; algorithms: {', '.join(ALGORITHMS)}")
    found = unit_modes()
    names = unit_names(found)
    units = names if spec.units is None else list(dict.fromkeys(spec.units))
    for u in units:
        if u not in names:
            raise ReportError(f"unknown unit {u!r}; units: {', '.join(names)}")
    if spec.gpu is not None:
        try:
            GPUConfig.preset(spec.gpu)
        except ConfigError as e:
            raise ReportError(str(e)) from None
    if spec.gpu_params:
        if "name" in spec.gpu_params:
            raise ReportError("--gpu-set cannot change the GPU's name: choose the preset with --gpu")
        if spec.cosim:
            raise ReportError("--gpu-set changes the golden model's GPU; RTL in the loop (--cosim) runs on the "
                              "presets: give one or the other")
        for g in dict.fromkeys([spec.gpu] if spec.gpu else [profile(u).gpu for u in units]):
            try:
                GPUConfig.preset(g, **spec.gpu_params)
            except ConfigError as e:
                raise ReportError(f"--gpu-set on GPU {g}: {e}") from None
    for u, p in spec.presets.items():
        if u not in units:
            _validate_cosim_preset(spec, units, u, p)
            continue
        cls = profile(u).config_class()
        if cls is None:
            raise ReportError(f"--preset {u}={p}: unit {u!r} has no configuration the algorithms take")
        try:
            cls.preset(p)
        except ConfigError as e:
            raise ReportError(f"--preset {u}={p}: {e}") from None
    return units, found


def _validate_cosim_preset(spec: ReportSpec, units: list[str], u: str, p: str) -> None:
    """``--preset NAME=PRESET`` for a name that is not a unit of the report: with
    ``--cosim`` it may name a unit with RTL in the loop (the EMOGI ``coalescer``),
    whose preset :func:`_cosim_plan` uses; it must then be one of its RTL's presets."""
    from sim.cosim import cosim_units
    reg = cosim_units()
    if not spec.cosim:
        hint = (f"; with --cosim, --preset also takes the units with RTL in the loop ({', '.join(reg)})"
                if u in reg else "")
        raise ReportError(f"--preset {u}={p}: unit {u!r} is not in the report (units: {', '.join(units)}){hint}")
    if u not in reg:
        raise ReportError(f"--preset {u}={p}: {u!r} is neither a unit of the report ({', '.join(units)}) nor a unit "
                          f"with RTL in the loop ({', '.join(reg)})")
    from hw.registry import unit as hw_unit
    cls = hw_unit(u).config_class
    if p not in cls.PRESETS:
        raise ReportError(f"--preset {u}={p}: {cls.__name__} has no preset {p!r}; allowed: "
                          f"{', '.join(sorted(cls.PRESETS))}")


def _unit_options(u: str, gpu: str, spec: ReportSpec) -> tuple[dict, str]:
    """run_algorithm keywords that configure unit ``u``, and the preset's name."""
    prof = profile(u)
    preset = spec.presets.get(u) or prof.presets.get(gpu)
    cls = prof.config_class()
    if preset is None or cls is None or prof.option is None:
        return {}, ""
    return {prof.option: cls.preset(preset)}, preset


# ---------------------------------------------------------------------- the runs
def _run_golden(spec: ReportSpec, units: list[str], found: dict, prog: Progress) -> tuple[list, list, dict]:
    from golden.algorithms import AlgorithmError, run_algorithm
    from golden.graphs import load_graph
    from golden.gpu import GPUConfig

    from sim.reference import compare, reference

    avail = [u for u in units if u in found]
    records, notes, hists = [], [], {}
    for gspec in spec.graphs:
        graphs = {}
        for algo in spec.algos:
            weighted = algo == "sssp"
            if weighted not in graphs:
                graphs[weighted] = load_graph(gspec, weighted=weighted)
            g = graphs[weighted]
            gsum = g.summary()
            plan = []                    # (unit, mode, gpu)
            for u in avail:
                modes = found[u].get(algo, [])
                if not modes:
                    notes.append(f"{u}: no mode for {algo}")
                gpu = spec.gpu or profile(u).gpu
                plan += [(u, m, gpu) for m in modes]
            gpus = list(dict.fromkeys(p[2] for p in plan)) or [spec.gpu or "gtx980"]
            plan = [("baseline", "baseline", gp) for gp in gpus] + plan
            ref, src = None, None
            for u, mode, gpu in plan:
                prog.start(f"{algo} {mode} on {gspec} ({gpu})")
                gcfg = GPUConfig.preset(gpu, **spec.gpu_params)
                # the baseline and a unit's reference mode (GraphPEG's lb, the MFF's pull...) run
                # without the unit's configuration unless the mode takes it
                opts, preset = ({}, "") if u == "baseline" else _unit_options(u, gpu, spec)
                if opts and mode in profile(u).reference_modes():
                    from golden.algorithms import MODES
                    taken = MODES[(algo, mode)].accepted_options()
                    opts = {k: v for k, v in opts.items() if k in taken}
                try:
                    r = run_algorithm(g, algo, mode, gpu=gcfg, **opts)
                except AlgorithmError as e:
                    records.append({"graph": gspec, "graph_name": gsum["name"], "algo": algo, "unit": u, "mode": mode,
                                    "gpu": gpu, "preset": preset, "check": f"error: {e}", "ok": False})
                    prog.step(f"{algo} {mode} on {gspec} ({gpu}): error: {e}", important=True)
                    continue
                check = None
                if spec.check:
                    if ref is None or src != r.extra.get("source"):
                        src = r.extra.get("source")
                        ref = reference(g, algo, source=src)
                    why = compare(algo, r.values, ref)
                    check = "ok" if why is None else f"mismatch: {why}"
                rec = record(r, graph=gspec, graph_summary=gsum, unit=u, gpu_config=gcfg, preset=preset, check=check)
                records.append(rec)
                h = request_histogram(u, r.extra)
                if h:
                    hists[f"{gspec}|{algo}|{gpu}|{mode}"] = h
                prog.step(f"{algo} {mode} on {gspec} ({gpu}): {rec['check']}", important=rec["ok"] is False)
    normalise(records, lambda u, m: profile(u).reference_for(m),
              workload_of=lambda u: "workload" in profile(u).figures)
    return records, list(dict.fromkeys(notes)), hists


def _planned_golden(spec: ReportSpec, units: list[str], found: dict) -> int:
    n = 0
    for _ in spec.graphs:
        for algo in spec.algos:
            gpus, k = set(), 0
            for u in units:
                if u in found and found[u].get(algo):
                    gpus.add(spec.gpu or profile(u).gpu)
                    k += len(found[u][algo])
            n += k + max(len(gpus), 1)
    return n


def _cosim_plan(spec: ReportSpec, units: list[str], found: dict) -> list[tuple]:
    """(cosim unit, graph, algo, mode, preset, gpu) of every RTL-in-the-loop run:
    each unit that :func:`sim.cosim.cosim_units` registers whose modes belong to a
    requested unit (the SCU's to ``scu``; the EMOGI ``coalescer``'s to ``emogi``),
    for the report's algorithms and the modes its cosim supports, with its
    simulation-size preset (``CosimUnit.default_preset``) unless ``--preset``
    names one for a unit of the same name (``scu=tiny``)."""
    from golden.algorithms import MODES

    from sim.cosim import cosim_units
    from .units import unit_of_mode
    reg = cosim_units()
    plan = []
    for u in units:
        if u not in found:
            continue
        gpu = spec.gpu or profile(u).gpu
        for name, cu in reg.items():
            preset = spec.presets.get(name) or cu.default_preset
            for gspec in spec.graphs:
                for algo in spec.algos:
                    if algo not in cu.algos:
                        continue
                    plan += [(name, gspec, algo, m, preset, gpu) for m in found[u].get(algo, [])
                             if m in cu.modes and (algo, m) in MODES and unit_of_mode(algo, m) == u]
    return plan


def _run_cosim(plan, spec: ReportSpec, prog: Progress) -> list[dict]:
    from sim.cosim import run_cosim
    out = []
    for u, gspec, algo, mode, preset, gpu in plan:
        prog.start(f"RTL in the loop: {u} {algo} {mode} on {gspec} ({spec.sim})")
        r = run_cosim(gspec, algo, unit=u, mode=mode, preset=preset, sim=spec.sim, gpu=gpu, log=lambda *a: None)
        out.append(cosim_record(r, unit=u, preset=preset, sim=spec.sim, graph=gspec))
        prog.step(f"RTL in the loop: {u} {algo} {mode} on {gspec}: {'matches reference' if r.ok else 'MISMATCH'}",
                  important=True)
    return out


#: Where each column of a cosim record is found in a unit's RTL (``CosimResult.rtl``)
#: and TLM (``CosimResult.tlm``) statistics: the first key present wins (``a.b``: key
#: ``b`` of the dict ``a``, or the sum of ``b`` over a list of dicts ``a`` such as the
#: IRU's per-partition memory statistics; ``a+b``: the sum of those present). ``ops``: the unit's
#: operations (SCU and IRU operations, MFF PC_gather + PC_scatter_set commands, GraphPEG
#: items handed to warps, EMOGI coalescer warp instructions); ``requests``: its
#: memory (or PCIe) requests; cycles: measured on
#: the RTL, and the TLM time model's.
COSIM_FIELDS = {
    "ops": ("ops", "commands+scatter_commands", "items", "coalescer.instructions"),
    "requests": ("request_count", "requests", "engine_requests", "memory.requests", "memory.reads"),
    "cycles": ("cycles", "engine_cycles"),
    #: Model cycles measured inside the testbench (in ``CosimResult.rtl``): a structural
    #: TLM run in lock step with the RTL on the same memory (the MFF's); found first.
    "lockstep_cycles": ("tlm_cycles",),
}


def _get(d: dict, key: str):
    """``d[a][b]...`` for ``key`` = ``a.b...``; a list of dicts on the way (one per
    memory partition) gives the sum of the counts found in its dicts (None if none
    of them has the key)."""
    v = d
    parts = key.split(".")
    for i, part in enumerate(parts):
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            vals = [_count(_get(x, ".".join(parts[i:]))) for x in v]
            vals = [x for x in vals if x is not None]
            return sum(vals) if vals else None
        v = v.get(part) if isinstance(v, dict) else None
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return sum(v)
    return v


def _lookup(d: dict, keys) -> tuple[str | None, object]:
    """The first of ``keys`` that ``d`` has, and its value (``a.b`` looks into a nested
    dict; ``a+b`` sums the counts of those of ``a``, ``b`` present)."""
    for k in keys:
        if "+" in k:
            parts = [_count(_get(d, p)) for p in k.split("+")]
            v = sum(x for x in parts if x is not None) if any(x is not None for x in parts) else None
        else:
            v = _get(d, k)
        if v is not None:
            return k, v
    return None, None


def _count(v) -> int | float | None:
    """A count: a number as it is; a dict of counts (e.g. the SCU's operations by kind)
    or a list of counts summed."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, dict) and all(isinstance(x, (int, float)) for x in v.values()):
        return sum(v.values())
    if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
        return sum(v)
    return None


def cosim_record(r, *, unit: str, preset: str, sim: str, graph: str) -> dict:
    """The report's record of one :class:`sim.cosim.CosimResult` of any registered
    unit (the keys are looked up as :data:`COSIM_FIELDS` says; ``ops_key`` says
    which one a unit's ``ops`` came from). ``model_cycles``: those of a TLM run in
    lock step inside the testbench (MFF), else the TLM run's. ``model_over_rtl``
    (model cycles / RTL cycles) only where the model ran at the testbench memory's
    latency (a lock-step TLM, or ``CosimUnit.model_at_testbench_latency``);
    otherwise the ratio would compare two different memories and is left empty."""
    rtl, tlm = r.rtl, r.tlm
    comparable = bool(getattr(r, "model_at_testbench_latency", False))
    ops_key, ops = _lookup(rtl, COSIM_FIELDS["ops"])
    _, req = _lookup(rtl, COSIM_FIELDS["requests"])
    _, rc = _lookup(rtl, COSIM_FIELDS["cycles"])
    _, mc = _lookup(rtl, COSIM_FIELDS["lockstep_cycles"])
    if mc is not None:                  # a lock-step TLM on the testbench's own memory: comparable
        comparable = True
    else:
        _, mc = _lookup(tlm, COSIM_FIELDS["cycles"])
    ops, req, rc, mc = _count(ops), _count(req), _count(rc), _count(mc)
    return {"graph": graph, "algo": r.algo, "unit": unit, "mode": r.mode, "preset": preset, "sim": sim,
            "ok": r.ok, "check": "matches reference" if r.ok else "MISMATCH: " + "; ".join(r.problems),
            "ops": ops, "ops_key": ops_key, "requests": req, "rtl_cycles": rc, "model_cycles": mc,
            "model_at_testbench_latency": comparable,
            "model_over_rtl": mc / rc if comparable and isinstance(mc, (int, float)) and rc else None,
            "wall_s": round(r.wall_s, 2)}


def _area_plan(spec: ReportSpec, units: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(hw unit, preset) of every synthesis, and the units left out with the reason
    (no such preset). Each unit's preset: ``--area-preset``, else its ``--preset``,
    else its profile's area preset (the IRU's ``default``), else the preset of its
    GPU, else ``default``. A :class:`ReportError` when ``--area-preset`` leaves
    nothing to synthesize, or ``area_units`` names a unit hw.registry lacks."""
    from hw.registry import UNITS
    if spec.area_units is not None:
        bad = [u for u in spec.area_units if u not in UNITS]
        if bad:
            raise ReportError(f"area units {', '.join(map(repr, bad))} are not in hw.registry; units: "
                              f"{', '.join(UNITS)}")
        items = [(u, spec.area_preset or "default") for u in spec.area_units]
    else:
        items = []
        for u in units:
            prof = profile(u)
            gpu = spec.gpu or prof.gpu
            for hw in prof.hw:
                if hw in UNITS:
                    preset = (spec.area_preset or spec.presets.get(u) or prof.area_preset
                              or prof.presets.get(gpu, "default"))
                    # a preset the RTL does not build (the SCU's hashes in memory) is sized by its RTL variant
                    items.append((hw, prof.area_presets.get(preset, preset)))
    plan, skipped = [], []
    for hw, preset in dict.fromkeys(items):
        cls = UNITS[hw].config_class
        if preset in cls.PRESETS:
            plan.append((hw, preset))
        else:
            skipped.append(f"{hw} (no preset {preset!r}; {cls.__name__} presets: {', '.join(sorted(cls.PRESETS))})")
    if spec.area_preset is not None and skipped and not plan:
        raise ReportError(f"--area-preset {spec.area_preset}: no unit of the report has that preset: "
                          + "; ".join(skipped))
    return plan, skipped


def _run_area(plan, prog: Progress) -> tuple[list[dict], list[dict], str | None]:
    from .area import area_summary, area_unavailable, cached_area
    why = area_unavailable()
    if why:
        prog.note(f"area skipped: {why}")
        prog.step("area skipped", len(plan))
        return [], [], why
    docs, sums, failed = [], [], []

    def one(item):
        return cached_area(*item)
    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as ex:
        futs = [(item, ex.submit(one, item)) for item in plan]
        for item, f in futs:
            prog.start(f"area of {item[0]} ({item[1]})")
            try:
                doc = f.result()
            except Exception as e:      # area is optional: a failing tool skips that unit, with the reason
                failed.append(f"{item[0]} ({item[1]}): {e}")
                prog.step(f"area of {item[0]} ({item[1]}) skipped: {e}", important=True)
                continue
            docs.append(doc)
            sums.append(area_summary(doc))
            prog.step(f"area of {item[0]} ({item[1]}): {sums[-1]['area_mm2']:.4f} mm2 at 32 nm", important=True)
    return docs, sums, "; ".join(failed) or None


# ---------------------------------------------------------------------- paper comparison
def _fmt_claim(v, kind: str) -> str:
    from golden.report import fmt
    if v is None:
        return "-"
    if kind == "share":
        return f"{100 * v:.1f} %"
    if kind == "change":
        return f"{100 * v:+.1f} %"
    if kind == "x":
        return f"{v:.2f}x"
    return fmt(float(v))


def paper_rows(units: list[str], found: dict, records: list[dict], area_docs: list[dict] | None,
               area_why: str | None) -> list[dict]:
    """The "paper vs ours" rows of every unit."""
    rs = RunSet(records)
    rows = []
    for u in units:
        prof = profile(u)
        avail = u in found
        for c in prof.claims:
            if not avail:
                ours, how = None, f"not available: no golden model registers {u} modes yet"
            elif c.ours is None:
                ours, how = None, "not measured by the model yet"
            else:
                ours, how = c.ours(rs)
            ratio = ours / c.value if ours is not None and c.value not in (None, 0) and c.kind != "change" else None
            reason = ""
            if avail and c.select is not None:
                reason = metric_reasons(rs, c.select, c.metric) if c.metric else \
                    run_reasons(rs, c.select, floor=prof.time_floor)
            rows.append({"unit": u, "figure": c.label, "paper": c.paper, "paper_value": c.value,
                         "paper_hi": c.value_hi, "direction": c.direction,
                         "ours": ours, "ours_text": _fmt_claim(ours, c.kind) if ours is not None else
                         ("not available" if not avail else "-"), "ours_over_paper": ratio, "kind": c.kind,
                         "how": how, "note": c.note, "reason": reason})
        rows += _area_claims(u, prof, area_docs, area_why)
    return fidelity_rows(rows)


def _area_claims(u, prof, docs, why) -> list[dict]:
    try:
        from synth.compare import PAPER_FIGURES, ours as area_ours
    except ImportError:
        return []
    rows = []
    for f in PAPER_FIGURES:
        if f.unit not in prof.hw or f.value is None:
            continue
        doc = next((d for d in docs or [] if d.get("unit") == f.unit and d.get("preset") == f.preset
                    and d.get("flow") == "liberty"), None)
        if doc is not None:
            v = area_ours(f, doc)
            how = f"liberty flow, {f.unit} preset {f.preset}" + (f", {f.node} nm" if f.node else "")
        else:
            v = None
            how = (f"area flow unavailable: {why}" if why else
                   f"run with --area (--area-preset {f.preset}) to compute it" if docs is None else
                   f"preset {f.preset} was not synthesized (--area-preset {f.preset})")
        rows.append({"unit": u, "area": True, "figure": f.label + f" ({f.units})",
                     "paper": f"{f.value:g} {f.units} ({f.source})",
                     "paper_value": f.value, "ours": v, "ours_text": "-" if v is None else f"{v:.4g} {f.units}",
                     "ours_over_paper": v / f.value if v is not None and f.value else None, "kind": "number",
                     "how": how, "note": "see docs/area.md: paper storage in memory/CACTI vs our on-chip macros"})
    return rows


# ---------------------------------------------------------------------- entry
def collect(spec: ReportSpec, *, log=print, bar: bool | None = None) -> dict:
    """Run everything ``spec`` asks for and return the report's data."""
    t0 = time.time()
    units, found = _validate(spec)
    cos_plan = _cosim_plan(spec, units, found) if spec.cosim else []
    area_plan, area_left_out = _area_plan(spec, units) if spec.area else ([], [])
    total = _planned_golden(spec, units, found) + len(cos_plan) + len(area_plan)
    with Progress("report", total, log=log, bar=bar, interval=2.0) as prog:
        records, notes, hists = _run_golden(spec, units, found, prog)
        cosim = list(spec.cosim_records) + _run_cosim(cos_plan, spec, prog)
        area_docs, area_sums, area_why = _run_area(area_plan, prog) if spec.area else (None, [], None)
    unit_info = {}
    for u in units:
        prof = profile(u)
        unit_info[u] = {"available": u in found, "title": prof.title, "source": prof.source,
                        "gpu": spec.gpu or prof.gpu, "reference": prof.reference,
                        "gpu_params": dict(spec.gpu_params),
                        # what the unit's times are normalised to, modes with their own reference named
                        "reference_text": prof.reference + (" (" + ", ".join(
                            f"{m}: {r}" for m, r in prof.mode_references.items()) + ")" if prof.mode_references
                                                            else ""),
                        "modes": {a: m for a, m in found.get(u, {}).items() if a in spec.algos},
                        "all_modes": found.get(u, {}), "figures": prof.figure_specs(),
                        "columns": [list(c) for c in prof.columns]}
    return {
        "schema": SCHEMA,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "spec": spec.to_dict(),
        "units": unit_info,
        "available_units": available_units(),
        "notes": notes,
        "runs": records,
        "request_histograms": hists,
        "cosim": cosim,
        "area": area_sums,
        "area_skipped": "; ".join([area_why] * bool(area_why) + area_left_out) or None,
        "paper": paper_rows(units, found, records, area_docs, area_why),
        "wall_s": round(time.time() - t0, 2),
    }
