#!/usr/bin/env python3
"""Area and Fmax sweeps of a unit's parameters with the Yosys flow (issue 5), and the
comparison with the papers' figures.

Every point runs the ``liberty`` flow (OSU 0.18 um cells, estimate at 32 and
28 nm, SRAM macros by the model of docs/area.md) and the ``ecp5`` flow with
nextpnr (LUTs, flip-flops, Fmax). A sweep changes one parameter of a preset at
a time (:data:`SWEEPS`); adding a unit's sweep is one entry there. Results are
cached in ``build/benchmarks/area/`` by configuration and source digest.

Usage: python benchmarks/area.py [--unit fetch] [--fpga ecp5|ice40|none] [--fmax-for PARAM]
                                 [--jobs 2] [--compare] [--no-cache] [--json FILE]

``--fmax-for width`` runs nextpnr only on the points that change ``width`` (the
other points get the FPGA synthesis without place and route): on the SCU one
nextpnr run takes about 15 minutes on this machine.
"""
import argparse
import hashlib
import json
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from golden.report import format_table
from hw.registry import UNITS
from synth.compare import PAPER_FIGURES, comparison_table
from synth.flow import run_area
from synth.tools import project_root

#: Per unit: the preset the sweeps start from, the parameters shown, and the points
#: (changes to the preset), one table row each; equal configurations run once.
SWEEPS = {
    # Fetch engine: pipeline width at 32 in flight (SCU Table 1), then slots in flight at width 4.
    "fetch": {"preset": "default", "columns": ["width", "max_inflight"],
              "points": [{"width": w} for w in (1, 2, 4, 8)] + [{"max_inflight": m} for m in (8, 32, 128)]},
    # SCU (issue 5): pipeline width 1, 2, 4, 8, then the filter and grouping hash sizes
    # (field names of golden/scu/config.py).
    "scu": {"preset": "tx1", "columns": ["width", "filter_sets", "group_sets"],
            "points": [{"width": w} for w in (1, 2, 4, 8)] +
                      [{"filter_sets": s} for s in (64, 256, 1024, 4096)] + [{"group_sets": s} for s in (16, 64, 256)]},
}


#: synth/ files that do not change a synthesis result (tables, text, the CLI).
_NOT_RESULTS = {"compare.py", "report.py", "cli.py"}


def _digest() -> str:
    h = hashlib.sha256()
    root = project_root()
    for pkg in ("golden", "hw", "synth"):
        for f in sorted((root / pkg).rglob("*.py")):
            if pkg == "synth" and f.name in _NOT_RESULTS:
                continue
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cached_area(unit, preset, overrides, flow, fmax, cache: Path | None) -> dict:
    spec = UNITS[unit]
    cfg = spec.config(preset, overrides)
    key = hashlib.sha256(json.dumps([unit, cfg.to_json(), flow, fmax, _digest()]).encode()).hexdigest()[:16]
    path = cache / f"{unit}-{flow}{'-fmax' if fmax else ''}-{key}.json" if cache else None
    if path and path.exists():
        # Same configuration, maybe reached through another preset: name it as asked.
        return dict(json.loads(path.read_text()), preset=preset, overrides=dict(overrides))
    doc = run_area(unit, cfg, preset=preset, overrides=overrides, flow=flow, fmax=fmax)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2) + "\n")
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unit", default="fetch", help=f"unit to sweep ({', '.join(SWEEPS)})")
    ap.add_argument("--fpga", default="ecp5", choices=["ecp5", "ice40", "none"],
                    help="FPGA flow with nextpnr Fmax (default: %(default)s)")
    ap.add_argument("--fmax-for", metavar="PARAM",
                    help="run nextpnr (Fmax) only on the points that change PARAM (default: every point)")
    ap.add_argument("--jobs", type=int, default=2, help="tool runs at once (default: %(default)s)")
    ap.add_argument("--compare", action="store_true", help="also print the comparison with the papers")
    ap.add_argument("--no-cache", action="store_true", help="ignore build/benchmarks/area/")
    ap.add_argument("--json", default="build/benchmarks/area.json")
    args = ap.parse_args(argv)
    if args.unit not in SWEEPS:
        ap.error(f"no sweep for unit {args.unit!r}; sweeps: {', '.join(SWEEPS)}")
    if args.unit not in UNITS:
        ap.error(f"unit {args.unit!r} is not registered in hw/registry.py yet")
    sweep = SWEEPS[args.unit]
    if args.fmax_for and args.fmax_for not in sweep["columns"]:
        ap.error(f"--fmax-for {args.fmax_for!r}: the {args.unit} sweep changes {', '.join(sweep['columns'])}")
    cache = None if args.no_cache else project_root() / "build" / "benchmarks" / "area"
    points = sweep["points"]
    spec = UNITS[args.unit]
    key = lambda p: spec.config(sweep["preset"], p).to_json()          # noqa: E731
    distinct, seen = [], set()
    for p in points:
        if key(p) not in seen:
            seen.add(key(p))
            distinct.append(p)
    jobs = [(p, "liberty", False) for p in distinct]
    if args.fpga != "none":
        jobs += [(p, args.fpga, not args.fmax_for or args.fmax_for in p) for p in distinct]
    t0 = time.time()

    def one(job):
        p, flow, fmax = job
        doc = cached_area(args.unit, sweep["preset"], p, flow, fmax, cache)
        print(f"[bench] {args.unit} {p or 'baseline'} {flow}{' --fmax' if fmax else ''}: "
              f"{doc['runtime_s']['total']} s ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        return doc
    with ThreadPoolExecutor(args.jobs) as pool:
        docs = list(pool.map(one, jobs))

    by_config = {}
    for (p, flow, _), doc in zip(jobs, docs):
        by_config.setdefault(key(p), {})[flow] = doc
    rows, records = [], []
    for p in points:
        d = by_config[key(p)]
        lib = d["liberty"]
        t, n = lib["total"], lib["estimate"]["nodes"]
        params = lib["config"]["params"]
        row = [params[c] for c in sweep["columns"]]
        row += [t["flip_flops"], t["memory_bits"], round(t["std_cell_area_um2"]), round(t["gate_equivalents"]),
                f"{n['32']['logic_mm2']:.4f}", f"{n['32']['memory_mm2']:.4f}", f"{n['32']['total_mm2']:.4f}",
                f"{n['28']['total_mm2']:.4f}"]
        rec = {"unit": args.unit, "preset": sweep["preset"], "overrides": p, "params": params,
               "liberty": {"flip_flops": t["flip_flops"], "memory_bits": t["memory_bits"],
                           "std_cell_area_um2": t["std_cell_area_um2"], "gate_equivalents": t["gate_equivalents"],
                           "nodes": n}}
        if args.fpga != "none":
            f = d[args.fpga]
            ft, fm = f["total"], f["fpga"]["fmax"] or {"mhz": None, "device": None}
            mem = f"{ft['block_rams']} / {ft['lut_rams']}"
            row += [ft["luts"], ft["flip_flops"], mem, fm["mhz"] if fm["mhz"] is not None else "-"]
            rec[args.fpga] = {"luts": ft["luts"], "flip_flops": ft["flip_flops"], "block_rams": ft["block_rams"],
                              "lut_rams": ft["lut_rams"], "fmax_mhz": fm["mhz"], "device": fm["device"],
                              "warnings": f["warnings"]}
        rows.append(row)
        records.append(rec)
    headers = list(sweep["columns"]) + ["FFs", "SRAM bits", "std cells um2 @180", "NAND2 eq.",
                                        "logic mm2 @32", "SRAM mm2 @32", "total mm2 @32", "total mm2 @28"]
    if args.fpga != "none":
        headers += [f"{args.fpga} LUTs", f"{args.fpga} FFs", "BRAM / LUT RAM", "Fmax MHz"]
    print(format_table(headers, rows, markdown=True,
                       title=f"Area of `{args.unit}` (preset {sweep['preset']}; one parameter changed per row)"))
    warnings = sorted({w for d in docs for w in d["warnings"]})
    for w in warnings:
        print(f"\nwarning: {w}")

    if args.compare:
        cmp_docs = []
        for fig in PAPER_FIGURES:
            if fig.unit in UNITS and fig.preset in UNITS[fig.unit].config_class.preset_names():
                print(f"[bench] paper comparison: {fig.unit} {fig.preset}", file=sys.stderr, flush=True)
                cmp_docs.append(cached_area(fig.unit, fig.preset, {}, "liberty", False, cache))
        print()
        print(comparison_table(cmp_docs))

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": platform.machine(), "python": platform.python_version(),
                               "yosys": docs[0]["tools"]["yosys"], "nextpnr": docs[-1]["tools"].get("nextpnr"),
                               "results": records}, indent=2) + "\n")
    print(f"\nwrote {out} ({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
