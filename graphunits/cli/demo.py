"""``graphunits demo``: the built-in example (:mod:`graphunits.demo`)."""
from __future__ import annotations


def cmd_demo(args) -> int:
    from graphunits.demo import run_demo
    return run_demo(sims=args.sim, quick=args.quick)


def add_parsers(sub) -> None:
    sp = sub.add_parser("demo", help="the built-in example: every available unit, RTL against the golden model",
                        description="Run the built-in example and print its tables.")
    sp.add_argument("--sim", action="append", choices=["icarus", "verilator"],
                    help="simulator(s) to use (default: both)")
    sp.add_argument("--quick", action="store_true", help="smaller runs")
    sp.set_defaults(func=cmd_demo)
