#!/usr/bin/env python3
"""Formal checks at their full depths, timed (issue "Verification": "a longer run
is a benchmark-like script with its times recorded"; docs/verification.md,
"Formal").

``make test`` runs every harness's BMC and covers at a quick depth
(verif/test_formal.py); this script runs, for every target of ``graphunits
prove`` (synth/prove.py ``TARGETS``), the bounded model check at the target's
``bmc`` default depth, the covers at its cover depth (one full operation of the
small configuration) and, for the harnesses whose properties are inductive,
k-induction (``prove``) at the depth that proves them. It prints a table of
status and seconds per check and writes it as JSON; a check that fails prints
its first failing property and its counterexample's folder.

Usage: python benchmarks/formal.py [--targets a,b] [--modes bmc,cover,prove]
       [--timeout S] [--json FILE] [--markdown] [--solver yices|z3]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from datetime import date
from pathlib import Path

from golden.report import format_table
from synth.prove import MODES, SOLVERS, TARGETS, default_solver, prove

#: The k-induction depth of each harness whose properties are inductive (their
#: strengthening invariants: docs/verification.md, "k-induction").
PROVE_DEPTHS = {"arbiter": 4, "writer": 4, "fetch": 4, "coalescer": 4, "alwt": 4, "scu_filter": 4, "scu_group": 2}


def checks(targets: list[str], modes: list[str]) -> list[tuple[str, str, int]]:
    """(target, mode, depth) of every check to run, in ``TARGETS`` order."""
    out = []
    for name in targets:
        t = TARGETS[name]
        for mode in modes:
            if mode == "prove":
                if name in PROVE_DEPTHS:
                    out.append((name, mode, PROVE_DEPTHS[name]))
            else:
                out.append((name, mode, t.default_depth(mode)))
    return out


def parse_list(text: str, allowed, what: str) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in items if s not in allowed]
    if bad or not items:
        raise ValueError(f"--{what}: {', '.join(bad) or 'nothing given'} not among {', '.join(allowed)}")
    return items


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated harnesses (default: all)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated modes (default: bmc,prove,cover)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per check (default 1800)")
    ap.add_argument("--json", default="build/benchmarks/formal.json")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--solver", choices=list(SOLVERS), help="SMT solver (default: yices where installed, else z3)")
    args = ap.parse_args(argv)
    solver = args.solver or default_solver()
    try:
        targets = parse_list(args.targets, list(TARGETS), "targets")
        modes = parse_list(args.modes, MODES, "modes")
        if not args.timeout > 0:
            raise ValueError(f"--timeout must be positive, not {args.timeout}")
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    todo = checks(targets, modes)
    rows, records, t0 = [], [], time.time()
    for k, (name, mode, depth) in enumerate(todo, 1):
        print(f"[{k}/{len(todo)}] {name} {mode} depth {depth} ({solver}) ...", file=sys.stderr, flush=True)
        r = prove(name, depth=depth, mode=mode, timeout=args.timeout, solver=solver)
        records.append(r)
        why = r["failures"][0] if r["failures"] else ""
        rows.append([name, mode, depth, r["status"], f"{r['seconds']:.1f}", why[:70]])
        if r["status"] != "PASS":
            print(f"  {r['status']}: {why} (work folder: {r['workdir']})", file=sys.stderr)
    print(format_table(["target", "mode", "depth", "status", "seconds", "first failure"], rows,
                       markdown=args.markdown))
    total = time.time() - t0
    print(f"{sum(r['status'] == 'PASS' for r in records)} of {len(records)} checks passed in {total:.0f} s "
          f"with {solver} ({platform.machine()}, Python {platform.python_version()}, {date.today()})")
    try:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"date": str(date.today()), "machine": platform.machine(),
                                               "python": platform.python_version(), "solver": solver,
                                               "seconds": round(total, 1),
                                               "checks": records}, indent=1))
    except OSError as e:
        print(f"error: --json {args.json}: cannot write it ({e.strerror})", file=sys.stderr)
        return 2
    print(f"(JSON: {args.json})")
    return 0 if all(r["status"] == "PASS" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
