"""``graphunits demo``: the README's main job on built-in examples.

1. The fetch engine (a shared block) is generated, simulated on Icarus and
   Verilator against the testbench memory model, and every operation is
   compared with its TLM.
2. Each unit's own step, in the descriptors' order (golden/units.py, ``demo``:
   ``graphunits/<unit>/demo.py``): its RTL on the simulators against its TLM
   and an algorithm with its RTL in the loop, checked against scipy/networkx
   and the TLM (SCU: random operations, BFS and SSSP; IRU: random operations and
   an edge frontier, BFS; GraphPEG: random kernels, BFS; MFF: pull PageRank).
3. Every other unit that ``sim.cosim.cosim_units()`` lists, with no step of its
   own, runs its first algorithm on :data:`TINY_GRAPH` with its RTL in the loop.
4. A small built-in graph, the baseline against every unit mode available
   (discovered from the registered modes), and the area of every unit's default
   preset (Yosys; skipped with a note when the area flow is unavailable, and in
   ``--quick``): a report in ``build/demo/`` (``report.html``, ``report.md``, JSON,
   CSV, figures) whose "RTL in the loop" table lists every RTL-in-the-loop run of
   the steps before (:class:`CosimLog` records them).

The area synthesis starts in a background process with the demo (the
simulations leave the second core mostly idle), a second worker joins when the
simulations are done, and the report waits for them.
238 s on a 2-core machine after ``make setup`` on a fresh clone, 29 s warm (the
area and the Verilator builds are cached under ``build/``; README, measured
2026-11-28); ``--quick --sim icarus`` about a minute.
"""
from __future__ import annotations

import time

from golden.fetch import FetchConfig
from golden.report import format_table

from sim.build import build_verilog
from sim.runner import SIMULATORS, run_cocotb

__all__ = ["run_demo", "fetch_demo_runs", "unit_demos", "other_cosim_units", "demo_steps", "other_units_demo",
           "report_demo", "CosimLog", "DEMO_GRAPHS", "DEMO_OUT", "TINY_GRAPH"]

#: The built-in graph of the demo (quick, full).
DEMO_GRAPHS = ("kron:scale=7,edgefactor=8,seed=1", "kron:scale=9,edgefactor=16,seed=1")
#: Where the demo's report goes (relative to the project folder).
DEMO_OUT = "build/demo"
TINY_GRAPH = "kron:scale=5,edgefactor=4,seed=1"


class CosimLog:
    """Records every RTL-in-the-loop run made while it is active, as the report's
    records (:func:`graphunits.report.collect.cosim_record`).

    The units' demo steps (``graphunits/<unit>/demo.py``, and those of units still
    to come) call ``sim.cosim.run_cosim`` and print their
    own tables; inside ``with CosimLog() as log`` every result is also handed to
    ``log`` through :func:`sim.cosim.observe`, so the report lists them all
    without each step having to hand its results back."""

    def __init__(self):
        self.records: list[dict] = []
        self._observing = None

    def _record(self, r, *, unit, preset, sim, graph) -> None:
        from .report.collect import cosim_record
        self.records.append(cosim_record(r, unit=unit, preset=preset, sim=sim, graph=graph))

    def __enter__(self) -> "CosimLog":
        from sim import cosim
        self._observing = cosim.observe(self._record)
        self._observing.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._observing.__exit__(*exc)

    def units(self) -> list[str]:
        return list(dict.fromkeys(r["unit"] for r in self.records))


def fetch_demo_runs(quick: bool = False) -> list[dict]:
    n = 1024 if quick else 4096
    return [
        {"name": "linear, 1-cycle memory", "workload": {"kind": "linear", "count": n}, "timing": {"latency": 1}},
        {"name": "linear, 100-cycle memory", "workload": {"kind": "linear", "count": n},
         "timing": {"latency": 100}},
        {"name": "random ranges, latency 1-200, back-pressure", "seed": 1,
         "workload": {"kind": "random", "seed": 1, "ops": 8},
         "timing": {"latency": [1, 200], "seed": 1, "req_ready": [1, 1, 1, 0]}, "out_ready": [1, 1, 0]},
    ]


class _Steps:
    def __init__(self, total: int):
        self.t0 = time.time()
        self.k = 0
        self.total = total

    def __call__(self, msg: str, new: bool = True) -> None:
        if new:
            self.k += 1
            print(f"[demo] step {self.k}/{self.total} ({time.time() - self.t0:.0f} s): {msg}", flush=True)
        else:
            print(f"[demo] {msg}", flush=True)


def unit_demos() -> list[tuple[str, str]]:
    """``(unit, "module:function")`` of every unit's own demo step, in the
    descriptors' order."""
    from golden.units import units
    return [(d.name, d.demo) for d in units().values() if d.demo]


def other_cosim_units() -> list[str]:
    """The units with RTL in the loop (``sim.cosim.cosim_units()``) that no unit's
    own demo step runs: step 3 runs them on :data:`TINY_GRAPH`."""
    from golden.units import resolve, units
    from sim.cosim import cosim_units
    own = {resolve(d.cosim).name for d in units().values() if d.demo and d.cosim}
    return [u for u in cosim_units() if u not in own]


def demo_steps() -> int:
    """How many steps the demo announces: the fetch engine, each unit's own, the
    other units' RTL in the loop (when there are any), the report."""
    return 2 + len(unit_demos()) + bool(other_cosim_units())


def run_demo(sims=None, quick: bool = False) -> int:
    from golden.units import resolve
    sims = list(sims or SIMULATORS)
    step = _Steps(demo_steps())
    workers = []
    start = _start_area(quick)
    try:
        if start is not None:
            workers.append(start())
        with CosimLog() as log:
            failures = fetch_demo(sims, quick, step)
            for _, path in unit_demos():
                failures += resolve(path)(sims, quick, step)
            failures += other_units_demo(sims[-1], quick, step)
        if workers and workers[0].poll() is None:
            step("waiting for the area synthesis (started with the demo; a second worker joins now)", new=False)
            workers.append(start(reverse=True))
        for w in workers:
            w.wait()
    finally:
        for w in workers:
            if w.poll() is None:        # interrupted: do not leave them running
                w.kill()
                w.wait()
    failures += report_demo(log.records, quick, step)
    step(f"done in {time.time() - step.t0:.0f} s" + ("" if not failures else f", {failures} FAILED"), new=False)
    return 1 if failures else 0


def _start_area(quick: bool):
    """A function that starts a worker synthesizing the area of every unit's default
    preset in a background process (the report of the last step finds it cached;
    ``reverse``: the second worker, which starts with the fastest); None in
    ``--quick`` or when the area flow is unavailable."""
    import shutil

    from .report.area import area_unavailable, start_area_prefetch
    if quick or area_unavailable():
        return None
    from hw.registry import unit_names
    from sim.toolchain import project_root
    out = project_root() / DEMO_OUT
    claims = out / "area-claims"
    shutil.rmtree(claims, ignore_errors=True)          # this run's claims only

    def start(reverse: bool = False):
        return start_area_prefetch(unit_names(), "default", out / f"area-prefetch{'-2' if reverse else ''}.log",
                                   claims, reverse=reverse)
    return start


def fetch_demo(sims, quick: bool, step) -> int:
    failures = 0
    cfg = FetchConfig.preset("deep")
    step(f"fetch engine, preset 'deep' (width {cfg.width}, {cfg.max_inflight} requests in flight, "
         f"merge window {cfg.merge_window}): generating Verilog, simulating on {', '.join(sims)}")
    build = build_verilog("fetch", cfg)
    rows = []
    for sim in sims:
        res = run_cocotb(build, "sim.tb.fetch", {"config": cfg.to_dict(), "runs": fetch_demo_runs(quick)}, sim=sim)
        for r in res["runs"]:
            ok = not r["mismatches"]
            failures += not ok
            rows.append([sim, r["name"], r["elements"], r["cycles"], round(r["elements"] / max(r["cycles"], 1), 2),
                         r["memory"]["reads"], "matches TLM" if ok else "MISMATCH: " + r["mismatches"][0]])
    print()
    print(format_table(["simulator", "run", "elements", "cycles", "elem/cycle", "mem reads", "check"], rows,
                       title=f"Fetch engine (ideal: {cfg.width} elements/cycle)"))
    print()
    return failures


def other_units_demo(sim: str, quick: bool, step) -> int:
    """Every unit with RTL in the loop and no demo step of its own
    (:func:`other_cosim_units`): its first algorithm on :data:`TINY_GRAPH`;
    returns the number of failures (an active :class:`CosimLog` records the runs)."""
    from sim import cosim

    from .report.collect import cosim_record
    others = other_cosim_units()
    if not others:
        return 0
    units = cosim.cosim_units()
    step(f"RTL in the loop of the other units ({', '.join(others)}) on {TINY_GRAPH}, {sim}")
    rows, failures = [], 0
    for u in others:
        cu = units[u]
        algo = cu.algos[0]
        step(f"{algo}: {sim} runs every {u} operation on {TINY_GRAPH} (preset {cu.default_preset})", new=False)
        r = cosim.run_cosim(TINY_GRAPH, algo, unit=u, sim=sim, log=lambda *a: None)
        failures += not r.ok
        c = cosim_record(r, unit=u, preset=cu.default_preset, sim=sim, graph=TINY_GRAPH)
        rows.append([u, algo, c["preset"], c["ops"], c["requests"], c["rtl_cycles"], c["check"]])
    print(format_table(["unit", "algorithm", "preset", "operations", "memory requests", "RTL cycles", "check"],
                       rows, title=f"RTL in the loop, other units ({TINY_GRAPH})"))
    print()
    return failures


def report_demo(cosim: list[dict], quick: bool, step) -> int:
    """Baseline vs every available unit mode, area of the default presets, the report
    (with ``cosim``, the records of the RTL-in-the-loop runs of the earlier steps)."""
    from .report import ReportSpec, build_report
    from .report.area import area_unavailable
    from .report.render import mm2
    from sim.toolchain import project_root
    graph = DEMO_GRAPHS[0 if quick else 1]
    area_why = "skipped in --quick" if quick else area_unavailable()
    area_units = None
    if not area_why:
        from hw.registry import unit_names
        area_units = unit_names()
    step(f"baseline vs every unit mode on {graph}" + ("" if area_why else f", area of {', '.join(area_units)} "
                                                                            f"(default presets, cached in build/area)")
         + f"; report in {DEMO_OUT}/")
    out = project_root() / DEMO_OUT
    spec = ReportSpec(graphs=[graph], algos=["bfs", "sssp", "pr"], area=not area_why, area_preset="default",
                      area_units=area_units, cosim_records=cosim)
    res = build_report(spec, out, log=print)
    runs = res["runs"]
    rows = [[r["algo"], r["gpu"], r["unit"], r["mode"], r.get("workload_left"), r.get("time_us"), r.get("speedup"),
             r.get("sectors_per_request"), r["check"]] for r in runs]
    print()
    print(format_table(["algorithm", "GPU", "unit", "mode", "workload left", "est. time (us)", "speedup",
                        "sectors/req", "check"], rows,
                       title=f"Golden model, {graph}: baseline vs every unit mode (speedup over the unit's "
                             f"reference mode; check against scipy/networkx)"))
    missing = [u for u, i in res["units"].items() if not i["available"]]
    if missing:
        print(f"not available yet: {', '.join(missing)}")
    print()
    fid = [p for p in res["paper"] if "area" not in p and p.get("ours") is not None]
    print(format_table(["unit", "headline", "paper", "ours", "verdict"],
                       [[p["unit"], p["figure"], p["paper"], p["ours_text"], p["verdict"]] for p in fid],
                       title="The papers' headlines on this small graph (the full setups: python "
                             "benchmarks/fidelity.py, docs/fidelity.md)"))
    print()
    if res["area"]:
        print(format_table(["unit", "preset", "logic (mm2)", "SRAM (mm2)", "total (mm2)", "SRAM (KB)", "flip-flops"],
                           [[a["unit"], a["preset"], mm2(a["logic_mm2"]), mm2(a["memory_mm2"]), mm2(a["area_mm2"]),
                             a["memory_kb"], a["flip_flops"]] for a in res["area"]],
                           title="Area at 32 nm (Yosys liberty flow, docs/area.md)"))
    if area_why or res["area_skipped"]:
        print(f"area skipped: {area_why or res['area_skipped']}")
    print()
    if res["cosim"]:
        print("RTL in the loop in the report: " + ", ".join(f"{c['unit']} {c['algo']} ({c['check']})"
                                                             for c in res["cosim"]))
    print(f"report: {out / 'report.html'} (and report.md, results.json, CSV tables, {len(res['figures'])} figures)")
    print()
    return sum(r.get("ok") is False for r in runs)
