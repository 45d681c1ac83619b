#!/usr/bin/env python3
"""Fidelity: every headline of every paper against the model (issue "Units on the
shared memory system ... fidelity table").

For each unit, the paper's setup (its descriptor's ``fidelity``, ``PAPER_SETUPS`` in graphunits/report/fidelity.py: its
GPU presets, graphs resembling its datasets, its algorithms) runs the baseline
and every mode of the unit on the golden model, each result checked against
scipy/networkx; then every headline (the units' ``PaperClaim`` s in
graphunits/report/units.py) gets the model's value, ours / paper, a verdict
(reproduced, direction right, contradicted...) and the measured reason: the
runs behind it, with where their time goes (every bound's share of the cycles,
the unit's own time as ``unit``).

Writes docs/fidelity.md (``--doc``), build/fidelity/fidelity.json, and prints the
table.

``--keep FILE``: take the runs of the units not named by ``--units`` from an
earlier run's JSON (the table then covers every unit of both; the document
says which units were run when), so one unit can be re-run after a change to
it without re-running the others; ``--units , --keep FILE`` runs nothing and
re-renders the table from those runs with the current claims and notes.

``--size paper``: the datasets at the papers' sizes (``PAPER_SETUPS[unit]["paper"]``;
the SCU's: kron_g500-logn18, delaunay_n19 and the ca road network's size), for
the units that have them; ``--size quick`` (= ``--quick``) small graphs.

Usage: python benchmarks/fidelity.py [--size quick|default|paper] [--units scu,iru,...] [--keep FILE]
       [--doc docs/fidelity.md] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from golden.perf import tune_allocator
from golden.report import format_table
from graphunits.report import ReportSpec, collect
from graphunits.report.collect import paper_rows
from graphunits.report.fidelity import PAPER_SETUPS, VERDICT_ORDER, fidelity_markdown
from graphunits.report.metrics import normalise
from graphunits.report.units import profile, unit_modes

INTRO = ("Each unit runs on its paper's GPU preset over graphs that resemble the paper's datasets "
         "(docs/datasets.md), baseline and every mode, each result checked against scipy/networkx. "
         "Verdicts: *reproduced* = ours goes the paper's way (a speedup above 1, a reduction...) and "
         "ours / paper lies in [0.5, 2]; *direction right* = the same way, more than 2x off; *contradicted* = the "
         "other way; *within 2x* / *more than 2x off* for figures without a direction; *not measured* = the model "
         "does not measure it yet. \"Measured\" lists the runs behind a figure: their time and where it goes "
         "(each bound's share of the cycles, docs/golden.md \"Time model\"; `unit` = the unit's own time), beside "
         "the reference mode's; or the figure run by run. \"Setup\" names the known differences from the paper's "
         "setup.")


def _graphs_of(records: list, unit: str) -> list:
    """The graphs of a kept unit's runs, in order (its default or paper-size setup)."""
    return list(dict.fromkeys(r["graph"] for r in records if r.get("unit") == unit))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small graphs (a few minutes); = --size quick")
    ap.add_argument("--size", choices=("quick", "default", "paper"), default=None,
                    help="graph sizes: quick, default, or the papers' (units that have them; long)")
    ap.add_argument("--units", default=",".join(PAPER_SETUPS), help="units to run (default: all)")
    ap.add_argument("--doc", default=None, help="write the Markdown table here (e.g. docs/fidelity.md)")
    ap.add_argument("--json", default="build/fidelity/fidelity.json")
    ap.add_argument("--keep", default=None, metavar="FILE",
                    help="an earlier run's JSON: its runs of the units not in --units are kept")
    args = ap.parse_args(argv)
    tune_allocator()
    t0 = time.time()
    units = [u for u in args.units.split(",") if u]
    unknown = [u for u in units if u not in PAPER_SETUPS]
    if unknown:
        ap.error(f"unknown unit(s) {', '.join(unknown)}; units: {', '.join(PAPER_SETUPS)}")
    if not units and not args.keep:
        ap.error("no unit to run: give --units (or --units , with --keep FILE to re-render an earlier run)")
    if args.quick and args.size not in (None, "quick"):
        ap.error(f"--quick and --size {args.size} contradict each other")
    size = "quick" if args.quick else args.size or "default"
    key = {"quick": "quick", "default": "graphs", "paper": "paper"}[size]
    nopaper = [u for u in units if key not in PAPER_SETUPS[u]]
    if nopaper:
        ap.error(f"--size paper: no paper-size setup for {', '.join(nopaper)} (units that have one: "
                 f"{', '.join(u for u in PAPER_SETUPS if 'paper' in PAPER_SETUPS[u])})")
    records, bad, kept_from = [], [], {}
    if args.keep:
        try:
            old = json.loads(Path(args.keep).read_text())
            old_runs, old_meta = old["runs"], old.get("meta", {})
            if not isinstance(old_meta.get("kept_from", {}), dict):
                raise TypeError(f"meta.kept_from is {type(old_meta['kept_from']).__name__}, not unit -> date")
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"--keep {args.keep}: not an earlier fidelity JSON ({e})")
        kept = {r.get("unit") for r in old_runs if r.get("unit") in PAPER_SETUPS and r.get("unit") not in units}
        # the kept units' runs, and the baselines on their graphs and GPUs (a baseline's unit is "baseline")
        keys = {(r.get("graph"), r.get("gpu")) for r in old_runs if r.get("unit") in kept}
        records += [r for r in old_runs if r.get("unit") in kept or
                    (r.get("mode") == "baseline" and (r.get("graph"), r.get("gpu")) in keys)]
        # each kept unit's date: the one the earlier JSON kept it from, else its run's date
        kept_from = {u: old_meta.get("kept_from", {}).get(u, old_meta.get("date", "?")) for u in sorted(kept)}
    for u in units:
        st = PAPER_SETUPS[u]
        for gpu in st["gpus"]:
            spec = ReportSpec(graphs=st[key], algos=st["algos"], units=[u],
                              gpu=gpu, check=True)
            print(f"[fidelity] {u} on {gpu}: {', '.join(spec.graphs)} ({time.time() - t0:.0f} s)", file=sys.stderr,
                  flush=True)
            res = collect(spec, log=lambda m: None, bar=False)
            records += res["runs"]
            bad += [r for r in res["runs"] if r.get("ok") is False]
    # every run against its reference by today's profiles (a kept run too: a mode's reference may have
    # changed since, e.g. the MFF's mff-push against push)
    normalise(records, lambda u, m: profile(u).reference_for(m), workload_of=lambda u: "workload" in profile(u).figures)
    found = unit_modes()
    all_units = [u for u in PAPER_SETUPS if u in units or u in kept_from]
    rows = [p for p in paper_rows(all_units, found, records, None, None) if "area" not in p]
    table = [[i, p["unit"], p["figure"], p["paper"], p["ours_text"],
              "-" if p.get("ratio") is None else f"{p['ratio']:.2f}", p["verdict"]] for i, p in enumerate(rows, 1)]
    print(format_table(["#", "unit", "headline", "paper", "ours", "ours / paper", "verdict"], table, markdown=True,
                       title="Fidelity: the papers' headlines against the model"))
    counts = {v: sum(p["verdict"] == v for p in rows) for v in VERDICT_ORDER}
    print("verdicts: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n))
    if bad:
        print(f"{len(bad)} run(s) differ from the reference: " +
              "; ".join(f"{r['graph']} {r['algo']} {r['mode']}: {r['check']}" for r in bad))
    wall = time.time() - t0
    if not units and args.keep:
        # nothing run: the table re-rendered from the kept runs (with the current claims and notes)
        wall = float(old_meta.get("wall_s", 0.0))
        run_args = f" --units , --keep FILE (re-rendered from the runs of{old_meta.get('args', '') or ' a full run'})"
    else:
        run_args = (f" --size {size}" if size != "default" else "") + \
            (f" --units {args.units}" if args.units != ",".join(PAPER_SETUPS) else "")
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, Python {platform.python_version()}",
            "wall_s": wall, "args": run_args,
            "kept_from": {**kept_from, **{u: time.strftime("%Y-%m-%d") for u in units}},
            "intro": INTRO + " Setups: " + "; ".join(
                f"{u}: {', '.join(PAPER_SETUPS[u]['gpus'])} on "
                f"{', '.join(PAPER_SETUPS[u][key] if u in units else _graphs_of(records, u))}, "
                f"{', '.join(PAPER_SETUPS[u]['algos'])} ({profile(u).source})" for u in all_units) + "." +
            ("".join(f" The {u} runs are kept from the run of {d} (`--keep`)." for u, d in kept_from.items())
             if kept_from else "")}
    if args.doc:
        Path(args.doc).write_text(fidelity_markdown(rows, meta))
        print(f"(Markdown: {args.doc})")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "rows": rows, "runs": records}, indent=1, default=str))
    print(f"(JSON: {out}; {wall:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
