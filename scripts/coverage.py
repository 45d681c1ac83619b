#!/usr/bin/env python3
"""Code coverage of the generated Verilog (issue "Verification"; docs/verification.md,
"Code coverage"): `make coverage`.

With ``--run``, the RTL tests run on Verilator with line, branch and toggle
coverage (``GRAPHUNITS_COVERAGE=DIR``: every Verilator run of ``sim.runner``
builds with ``--coverage-line --coverage-toggle`` and leaves its
``coverage.dat`` and the Verilog in ``DIR/<unit>/``); then, or on an earlier
``DIR``, the runs are summed per design (a unit's Verilog for one
configuration) and the script prints, per design, the line, branch and toggle
points hit, and the line and branch points no test reached, with their Verilog
text.

Usage: python scripts/coverage.py [--run] [--tests FILE ...] [--dir build/coverage] [--show 8] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The RTL test files (their Icarus runs add no coverage and are left out).
RTL_TESTS = ["verif/test_fetch_rtl.py", "verif/scu/test_scu_rtl.py", "verif/iru/test_iru_rtl.py", "verif/mff/test_mff_rtl.py",
             "verif/graphpeg/test_graphpeg_rtl.py", "verif/emogi/test_emogi_rtl.py"]

_FIELD = re.compile("\x01([^\x02]+)\x02([^\x01]*)")


def read_points(path: Path) -> dict:
    """``{(type, verilog file, line, module, object, n): count}`` of one coverage.dat."""
    out = {}
    for line in path.read_text(errors="replace").splitlines():
        if not line.startswith("C '"):
            continue
        key, count = line[3:].rsplit("' ", 1)
        f = dict(_FIELD.findall(key))
        out[(f.get("t", ""), Path(f.get("f", "")).name, int(f.get("l", 0) or 0), f.get("page", "").split("/")[-1],
             f.get("o", ""), f.get("n", ""))] = int(count)
    return out


def summarise(cov_dir: Path, show: int = 8) -> list[dict]:
    """Per design: points and hits by type, and the unreached line/branch points."""
    designs: dict = defaultdict(lambda: defaultdict(int))
    sources: dict = {}
    for unit_dir in sorted(p for p in cov_dir.iterdir() if p.is_dir()):
        for dat in sorted(unit_dir.glob("*.dat")):
            design = dat.name.split("-verilator-")[0].split("-icarus-")[0]
            for k, v in read_points(dat).items():
                designs[(unit_dir.name, design)][k] += v
            v_file = unit_dir / f"{design}.v"
            if v_file.exists():
                sources[(unit_dir.name, design)] = v_file.read_text(errors="replace").splitlines()
    out = []
    for (unit, design), pts in sorted(designs.items()):
        row = {"unit": unit, "design": design, "runs": len(list((cov_dir / unit).glob(f"{design}-*.dat")))}
        text = sources.get((unit, design), [])
        # Yosys's Verilog wakes each `always @*` with an `if (\$auto$verilog_backend...dump_module$N)`
        # on a register that is 1 only at time 0: not design logic, left out.
        pts = {k: c for k, c in pts.items()
               if not (k[0] == "branch" and 0 < k[2] <= len(text) and "dump_module$" in text[k[2] - 1])}
        for t in ("line", "branch", "toggle"):
            sel = [c for k, c in pts.items() if k[0] == t]
            row[f"{t}_points"] = len(sel)
            row[f"{t}_hit"] = sum(1 for c in sel if c > 0)
        missed = sorted({(k[3], k[2], k[0]) for k, c in pts.items() if k[0] in ("line", "branch") and c == 0})
        row["unreached"] = [{"module": mod, "line": ln, "type": t,
                             "verilog": text[ln - 1].strip() if 0 < ln <= len(text) else ""}
                            for mod, ln, t in missed]
        row["shown"] = show
        out.append(row)
    return out


def _pct(hit: int, total: int) -> str:
    return f"{100 * hit / total:.1f} % ({hit}/{total})" if total else "-"


def run_tests(folder: Path, env_var: str, tests: list[str], stale: str, *, select: str | None = None) -> bool:
    """Run the pytest files ``tests`` (``-k select``) with ``env_var=folder``, so that
    every run records its coverage there, after removing the folder's files that
    match ``stale`` (an earlier run's). False, after an error message, when a test
    file is missing; a failing test only warns (the runs that finished count)."""
    missing = [t for t in tests if not (ROOT / t).exists()]
    if missing:
        print(f"error: no test file {missing[0]}", file=sys.stderr)
        return False
    if folder.exists():
        for p in folder.rglob(stale):
            if p.is_file():
                p.unlink()
    env = dict(os.environ, **{env_var: str(Path(folder).resolve())})   # the simulators run elsewhere
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", *tests] + (["-k", select] if select else []),
                       cwd=ROOT, env=env)
    if r.returncode not in (0, 5):
        print(f"warning: the tests exited with status {r.returncode}; coverage of the runs that finished",
              file=sys.stderr)
    return True


def main(argv=None) -> int:
    from golden.report import format_table
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true", help="run the RTL tests with coverage first")
    ap.add_argument("--tests", nargs="*", default=RTL_TESTS, help="test files for --run (default: the RTL tests)")
    ap.add_argument("--dir", default=str(ROOT / "build" / "coverage"), help="coverage folder (default build/coverage)")
    ap.add_argument("--show", type=int, default=8, help="unreached points listed per design (default 8)")
    ap.add_argument("--json", help="write the summary as JSON")
    args = ap.parse_args(argv)
    cov_dir = Path(args.dir)
    if args.run and not run_tests(cov_dir, "GRAPHUNITS_COVERAGE", args.tests, "*", select="not icarus"):
        return 2
    if not cov_dir.is_dir() or not any(cov_dir.rglob("*.dat")):
        print(f"error: no coverage data in {cov_dir} (run with --run)", file=sys.stderr)
        return 2
    rows = summarise(cov_dir, args.show)
    print(format_table(["unit", "design", "runs", "lines", "branches", "toggle points"],
                       [[r["unit"], r["design"], r["runs"], _pct(r["line_hit"], r["line_points"]),
                         _pct(r["branch_hit"], r["branch_points"]), _pct(r["toggle_hit"], r["toggle_points"])]
                        for r in rows]))
    for r in rows:
        if r["unreached"]:
            print(f"\n{r['design']}: {len(r['unreached'])} line/branch points never reached"
                  + (f" (first {args.show})" if len(r["unreached"]) > args.show else ""))
            for u in r["unreached"][:args.show]:
                print(f"  {u['module']}:{u['line']} ({u['type']}): {u['verilog'][:100]}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
