#!/usr/bin/env python3
"""Functional coverage of the RTL tests (issue "Verification"; docs/verification.md,
"Functional coverage"): `make funcov`.

With ``--run``, the RTL tests run with ``GRAPHUNITS_FUNCOV=DIR`` (every passing
run of a unit's testbench harness writes the cover bins it reached,
:mod:`sim.funcov`); then, or on an earlier ``DIR``, the runs are merged and the
script prints, per unit, the bins hit of its model's bins (excluded bins, each
with its reason, count as neither) and, per cover point, the bins no run
reached.

Usage: python scripts/funcov.py [--run] [--tests FILE ...] [-k EXPR] [--dir build/funcov] [--units scu,...]
       [--json FILE] [--fail-under PERCENT]
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.coverage import RTL_TESTS, run_tests  # noqa: E402  (the same RTL test files and runner)


def main(argv=None) -> int:
    from golden.report import format_table
    from sim.funcov import models, report
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true", help="run the RTL tests with functional coverage first")
    ap.add_argument("--tests", nargs="*", default=RTL_TESTS, help="test files for --run (default: the RTL tests)")
    ap.add_argument("-k", dest="select", help="pytest -k expression for --run (e.g. 'not verilator')")
    ap.add_argument("--dir", default=str(ROOT / "build" / "funcov"), help="coverage folder (default build/funcov)")
    ap.add_argument("--units", help="units to report (default: every unit with a model)")
    ap.add_argument("--json", help="write the report as JSON")
    ap.add_argument("--fail-under", type=float, help="exit 1 when a unit's coverage is below this percentage")
    args = ap.parse_args(argv)
    folder = Path(args.dir)
    known = models()
    units = None
    if args.units:
        units = [u.strip() for u in args.units.split(",") if u.strip()]
        bad = [u for u in units if u not in known]
        if bad:
            print(f"error: no coverage model for {bad[0]!r}; units: {', '.join(known)}", file=sys.stderr)
            return 2
    if args.run and not run_tests(folder, "GRAPHUNITS_FUNCOV", args.tests, "*.json", select=args.select):
        return 2
    if not folder.is_dir() or not any(folder.glob("*/*.json")):
        print(f"error: no functional coverage records in {folder} (run with --run)", file=sys.stderr)
        return 2
    try:
        rep = report(folder, units)
    except ValueError as e:                 # a record that is not one (names its file)
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_table(["unit", "runs", "bins hit", "coverage", "excluded"],
                       [[u, r["runs"], f"{r['hit']} / {r['total']}", f"{r['percent']:.1f} %",
                         sum(len(p["excluded"]) for p in r["points"])] for u, r in rep.items()]))
    for u, r in rep.items():
        rows = [[p["name"], f"{p['hit']} / {p['total']}", ", ".join(p["missed"]) or "-"] for p in r["points"]]
        print(f"\n{u}")
        print(format_table(["cover point", "hit", "missed"], rows))
        for p in r["points"]:
            for b, why in p["excluded"].items():
                print(f"  excluded: {p['name']} / {b}: {why}")
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    if args.fail_under is not None:
        low = [u for u, r in rep.items() if r["percent"] < args.fail_under]
        if low:
            print(f"functional coverage below {args.fail_under} %: {', '.join(low)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
