"""Behaviour unchanged? Record, then compare, the full statistics of a fixed set of
golden-model runs (every mode of every unit on small graphs, several GPUs): the
GPU report (every kernel's counts, bounds and time) and each unit's statistics,
as a SHA-256 digest per run.

    python scripts/same_statistics.py record build/stats-before.json
    ... change the code ...
    python scripts/same_statistics.py compare build/stats-before.json

``--rtl icarus|verilator`` adds the RTL in the loop (``sim.cosim.run_cosim``) of every
unit that has it, on small graphs with each memory model the simulator offers: the
RTL's cycles, operation counts, memory statistics and values, and the lock-step
TLM's statistics beside them (a few minutes; for a change of the RTL or its
testbench). ``compare`` lists the runs whose statistics differ and exits 1 when
there is one.
Used for refactorings and speed-ups that must not move any figure (issue
"One unit, one place": "behaviour is unchanged").
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

#: (graph, algorithm, mode[, GPU preset]): baselines on three GPUs, a deep graph, every unit.
RUNS = [("kron:scale=12", "bfs", "baseline"), ("kron:scale=12", "sssp", "baseline"), ("kron:scale=12", "pr", "baseline"),
        ("grid:2x256", "bfs", "baseline"), ("grid:32x32", "sssp", "scu-enhanced"), ("kron:scale=10", "bfs", "graphpeg"),
        ("kron:scale=10", "pr", "iru"), ("grid:16x16", "bfs", "mff"), ("kron:scale=11", "cc", "emogi-merged"),
        ("kron:scale=11", "bfs", "scu"), ("kron:scale=11", "bfs", "baseline", "gtx480"),
        ("kron:scale=11", "sssp", "baseline", "v100"), ("kron:scale=11", "sssp", "pull"),
        ("kron:scale=10", "pr", "mff"), ("grid:16x16", "sssp", "mff"), ("kron:scale=11", "pr", "baseline", "gtx480")]


#: (unit, graph, algorithm, memory model) of ``--rtl``: every unit's RTL in the loop; ``design``
#: (the memory inside the simulated design) is Verilator's only.
RTL_RUNS = [("scu", "kron:scale=8", "bfs", "python"), ("scu", "kron:scale=8", "bfs", "design"),
            ("iru", "kron:scale=8", "pr", "python"), ("iru", "kron:scale=8", "bfs", "design"),
            ("graphpeg", "kron:scale=8", "bfs", "python"), ("graphpeg", "kron:scale=8", "sssp", "design"),
            ("mff", "grid:8x8", "sssp", "python"), ("mff", "kron:scale=7", "pr", "design"),
            ("coalescer", "kron:scale=8", "cc", "python")]


def _timeless(x):
    """``x`` without its wall-clock fields (keys ending in ``_s``) and file paths (``waves``)."""
    if isinstance(x, dict):
        return {k: _timeless(v) for k, v in x.items() if not str(k).endswith("_s") and k != "waves"}
    if isinstance(x, (list, tuple)):
        return [_timeless(v) for v in x]
    return x


def rtl_digest(run: tuple, sim: str) -> str:
    """The SHA-256 of one RTL-in-the-loop run: the RTL's statistics (cycles, operations,
    memory), the values it computed, the lock-step TLM's statistics and any problem."""
    import numpy as np

    from sim.cosim import run_cosim
    unit, spec, algo, memory = run
    r = run_cosim(spec, algo, unit=unit, sim=sim, memory=memory, log=lambda *a: None)
    text = json.dumps({"rtl": _timeless(r.rtl), "tlm": _timeless(r.tlm), "problems": r.problems,
                       "values": hashlib.sha256(np.ascontiguousarray(r.values).tobytes()).hexdigest()},
                      sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def rtl_runs(sim: str) -> list:
    return [r for r in RTL_RUNS if r[3] == "python" or sim == "verilator"]


def digest(run: tuple) -> str:
    """The SHA-256 of one run's GPU report and unit statistics (JSON, keys sorted)."""
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    spec, algo, mode = run[:3]
    gpu = run[3] if len(run) > 3 else None
    g = load_graph(spec, weighted=algo == "sssp")
    opts = {"source": default_source(g)} if algo in ("bfs", "sssp") else {}
    r = run_algorithm(g, algo, mode, gpu=gpu, **opts)
    text = json.dumps({"gpu": r.gpu, "extra": r.extra, "iterations": r.iterations}, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def digests(runs=RUNS, log=print, rtl: str | None = None) -> dict:
    """Each run's digest by its name; with ``rtl`` (a simulator) also :data:`RTL_RUNS`."""
    out = {}
    jobs = [("/".join(map(str, run)), digest, (run,)) for run in runs]
    if rtl:
        jobs += [("rtl/" + "/".join(run) + f"/{rtl}", rtl_digest, (run, rtl)) for run in rtl_runs(rtl)]
    for key, fn, args in jobs:
        out[key] = fn(*args)
        log(f"{key}: {out[key][:16]}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["record", "compare"])
    ap.add_argument("file", help="the recorded digests (JSON)")
    ap.add_argument("--rtl", choices=["icarus", "verilator"],
                    help="also every unit's RTL in the loop on this simulator (RTL_RUNS)")
    args = ap.parse_args(argv)
    path = Path(args.file)
    if args.action == "compare" and not path.is_file():
        ap.error(f"{path}: no such file (record it first: same_statistics.py record {path})")
    ref = None
    if args.action == "compare":                  # checked before any run
        try:
            ref = json.loads(path.read_text())
            if not isinstance(ref, dict) or not all(isinstance(v, str) for v in ref.values()):
                raise ValueError("not a {run: digest} object")
        except (OSError, ValueError) as e:
            print(f"same_statistics.py: error: {path}: not a file of recorded digests ({e})", file=sys.stderr)
            return 2
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from golden.perf import tune_allocator
    tune_allocator()
    got = digests(rtl=args.rtl)
    if args.action == "record":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1))
        print(f"recorded {len(got)} runs in {path}")
        return 0
    bad = [k for k in ref if k in got and got[k] != ref[k]]
    unrun = [k for k in ref if k not in got]
    for k in bad:
        print(f"DIFFERENT: {k}")
    for k in (k for k in got if k not in ref):
        print(f"not recorded: {k}")
    for k in unrun:
        print(f"recorded but not run: {k}" + (" (give --rtl as when it was recorded)" if k.startswith("rtl/") else ""))
    print(f"{len(ref) - len(bad) - len(unrun)} of {len(ref)} runs have the same statistics")
    return 1 if bad or unrun else 0


if __name__ == "__main__":
    sys.exit(main())
