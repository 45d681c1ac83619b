#!/usr/bin/env python3
"""Energy per unit and GPU (issue "Energy"; docs/energy.md): for each unit on its
paper's GPU (graphunits/report/fidelity.py ``PAPER_SETUPS``), every mode and its
reference mode, the energy by component (SM, L1, interconnect, L2, DRAM, PCIe,
unit; static included in SM and DRAM), the static share, and the unit mode's
energy and time relative to its reference.

The runs come from a fidelity run's JSON (``--from build/fidelity/fidelity.json``:
its records carry the energy columns) or are run here (``--size quick`` small
graphs, a few minutes; ``--size default`` the fidelity setups).

Usage: python benchmarks/energy.py [--from FILE | --size quick|default] [--units scu,iru,...] [--json FILE]
"""
import argparse
import json
import sys
import time
from pathlib import Path

from golden.perf import tune_allocator
from golden.report import format_table
from graphunits.report import ReportSpec, collect
from graphunits.report.fidelity import PAPER_SETUPS
from graphunits.report.units import profile

COMPONENTS = ("sm", "l1", "icnt", "l2", "dram", "pcie", "unit")


def rows_of(records: list[dict], units: list[str]) -> tuple[list, list]:
    """Table rows (people) and records (JSON): one per (unit, gpu, graph, algo, mode)."""
    index = {(r.get("graph"), r.get("algo"), r.get("gpu"), r.get("mode")): r for r in records}
    rows, out = [], []
    for u in units:
        ref_mode = profile(u).reference
        for r in records:
            if r.get("unit") != u or r.get("energy_uj") is None:
                continue
            ref = index.get((r["graph"], r["algo"], r["gpu"], ref_mode))
            for m, rec in ((ref_mode, ref), (r["mode"], r)):
                if rec is None or rec.get("energy_uj") is None:
                    continue
                key = (u, rec["gpu"], rec["graph"], rec["algo"], m)
                if any(tuple(o[k] for k in ("unit", "gpu", "graph", "algo", "mode")) == key for o in out):
                    continue
                e = rec["energy_uj"]
                rel = e / ref["energy_uj"] if ref is not None and ref.get("energy_uj") else None
                trel = rec["time_us"] / ref["time_us"] if ref is not None and ref.get("time_us") else None
                out.append({"unit": u, "gpu": rec["gpu"], "graph": rec["graph"], "algo": rec["algo"], "mode": m,
                            "reference": ref_mode, "time_us": rec["time_us"], "energy_uj": e,
                            "static_share": rec["energy_static_uj"] / e if e else None,
                            **{f"energy_{c}_uj": rec.get(f"energy_{c}_uj") for c in COMPONENTS},
                            "energy_vs_reference": rel, "time_vs_reference": trel})
    for o in out:
        rows.append([o["unit"], o["gpu"], o["graph"], o["algo"], o["mode"], round(o["time_us"], 1),
                     round(o["energy_uj"], 1), f"{100 * o['static_share']:.0f}%" if o["static_share"] is not None
                     else "-"] + [f"{100 * (o[f'energy_{c}_uj'] or 0) / o['energy_uj']:.0f}%" for c in COMPONENTS if c != "unit"] +
                    ["-" if o["energy_vs_reference"] is None else round(o["energy_vs_reference"], 3),
                     "-" if o["time_vs_reference"] is None else round(o["time_vs_reference"], 3)])
    return rows, out


HEADER = ["unit", "GPU", "graph", "algo", "mode", "time (us)", "energy (uJ)", "static", "SM", "L1", "icnt", "L2",
          "DRAM", "PCIe", "energy / ref", "time / ref"]
SUMMARY = ["unit", "GPU", "mode", "reference", "runs", "energy / reference: geometric mean (range)",
           "time / reference", "static share, mode / reference", "DRAM share of the mode's energy"]


def summary_rows(out: list[dict]) -> list[list]:
    """Per unit, GPU and mode (not the reference): the geometric means over the
    unit's graphs and algorithms of energy and time relative to the reference, the
    mean static shares of the mode's and the reference's runs, the mean DRAM share."""
    import math

    def gm(v):
        return math.exp(sum(math.log(x) for x in v) / len(v))
    ref = {(o["unit"], o["gpu"], o["graph"], o["algo"]): o for o in out if o["mode"] == o["reference"]}
    groups: dict = {}
    for o in out:
        if o["mode"] != o["reference"] and o["energy_vs_reference"]:
            groups.setdefault((o["unit"], o["gpu"], o["mode"], o["reference"]), []).append(o)
    rows = []
    for (u, g, m, r), runs in groups.items():
        e = [o["energy_vs_reference"] for o in runs]
        t = [o["time_vs_reference"] for o in runs if o["time_vs_reference"]]
        refs = [ref[(u, g, o["graph"], o["algo"])] for o in runs if (u, g, o["graph"], o["algo"]) in ref]
        st_m = sum(o["static_share"] for o in runs) / len(runs)
        st_r = sum(o["static_share"] for o in refs) / len(refs) if refs else None
        dram = sum((o["energy_dram_uj"] or 0) / o["energy_uj"] for o in runs) / len(runs)
        rows.append([u, g, m, r, len(runs), f"{gm(e):.2f} ({min(e):.2f}-{max(e):.2f})",
                     f"{gm(t):.2f}" if t else "-",
                     f"{100 * st_m:.0f} % / {100 * st_r:.0f} %" if st_r is not None else f"{100 * st_m:.0f} % / -",
                     f"{100 * dram:.0f} %"])
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", metavar="FILE", help="a fidelity run's JSON (its runs)")
    ap.add_argument("--size", choices=("quick", "default"), default="quick", help="graphs when running here")
    ap.add_argument("--units", default=",".join(PAPER_SETUPS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    units = [u for u in args.units.split(",") if u]
    bad = [u for u in units if u not in PAPER_SETUPS]
    if bad:
        ap.error(f"unknown unit(s) {', '.join(bad)}; units: {', '.join(PAPER_SETUPS)}")
    t0 = time.time()
    if args.src:
        try:
            records = json.loads(Path(args.src).read_text())["runs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"--from {args.src}: not a fidelity JSON ({e})")
        if not any("energy_uj" in r for r in records):
            ap.error(f"--from {args.src}: its runs have no energy columns (a run from before the energy model)")
    else:
        tune_allocator()
        records = []
        for u in units:
            st = PAPER_SETUPS[u]
            for gpu in st["gpus"]:
                spec = ReportSpec(graphs=st["quick" if args.size == "quick" else "graphs"], algos=st["algos"],
                                  units=[u], gpu=gpu, check=True)
                print(f"[energy] {u} on {gpu} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
                records += collect(spec, log=lambda m: None, bar=False)["runs"]
    rows, out = rows_of(records, units)
    print(format_table(HEADER, rows, markdown=True,
                       title="Energy by component (static included in SM and DRAM; shares of the run's energy)"))
    print(format_table(SUMMARY, summary_rows(out), markdown=True,
                       title="Means over each unit's graphs and algorithms, relative to its reference mode"))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
        print(f"(JSON: {args.json})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
