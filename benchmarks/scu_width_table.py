#!/usr/bin/env python3
"""The SCU width sweep's summary table (docs/benchmarks.md, "SCU pipeline width"):
from the normalised table of ``graphunits sweep examples/sweeps/scu-width.toml``
(``build/sweeps/scu-width-summary.csv``, column ``time_rel`` = time at width W /
time at width 8 with the same requests in flight), the geometric mean of
``time_rel`` per GPU, in-flight setting (data / parameter requests), graph class
(kron, grid, both) and width, over the non-baseline points; the largest value in
brackets.

Usage: python benchmarks/scu_width_table.py [build/sweeps/scu-width-summary.csv]
"""
import csv
import math
import sys
from collections import defaultdict

WIDTHS = (1, 2, 4, 8)


def table(path: str) -> str:
    rows = [r for r in csv.DictReader(open(path)) if r.get("time_rel") not in (None, "", "nan")]
    groups = defaultdict(list)
    for r in rows:
        if r["mode"] == "baseline":
            continue
        infl = f'{r["param.max_inflight"]}/{r["param.param_inflight"]}'
        cls = "kron" if r["graph"].startswith("kron") else "grid"
        for c in (cls, "both"):
            groups[(r["gpu"], infl, c, int(float(r["param.width"])))].append(float(r["time_rel"]))
    if not groups:
        raise SystemExit(f"{path}: no points with time_rel")

    def gm(v):
        return math.exp(sum(math.log(x) for x in v) / len(v))
    out = ["| GPU    | in flight | graphs | width 1       | width 2       | width 4       | width 8 |",
           "|--------|-----------|--------|---------------|---------------|---------------|---------|"]
    keys = sorted({k[:3] for k in groups}, key=lambda k: ("32/8" in k[1], k[0] != "tx1",
                                                          ["kron", "grid", "both"].index(k[2])))
    for g, i, c in keys:
        cells = []
        for w in WIDTHS:
            v = groups.get((g, i, c, w))
            cells.append("-" if not v else "1" if w == 8 and abs(gm(v) - 1) < 5e-4 else
                         f"{gm(v):.3f}" + ("" if c == "both" or w == 8 else f" ({max(v):.3f})"))
        out.append(f"| {g:6s} | {i:9s} | {c:6s} | " +
                   " | ".join(f"{x:13s}" if k < 3 else f"{x:7s}" for k, x in enumerate(cells)) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    print(table(sys.argv[1] if len(sys.argv) > 1 else "build/sweeps/scu-width-summary.csv"))
