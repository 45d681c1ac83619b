"""graphunits demo --quick on Icarus: every step runs and checks its unit, and the
report it writes lists the RTL-in-the-loop run of every unit registered in
sim/cosim.py (the steps' own runs, recorded by graphunits.demo.CosimLog)."""
import json
import re
import subprocess
import sys

from graphunits.demo import DEMO_OUT, TINY_GRAPH, CosimLog, demo_steps, other_cosim_units, unit_demos
from sim.toolchain import project_root


def test_demo_quick_on_icarus():
    r = subprocess.run([sys.executable, "-m", "graphunits", "demo", "--quick", "--sim", "icarus"], capture_output=True,
                       text=True)
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    assert "MISMATCH" not in out and "FAILED" not in out
    # every step announced itself, in order: the fetch engine, each unit's own (its
    # descriptor's demo), the other units' RTL in the loop, the report
    steps = demo_steps()
    assert steps == 2 + len(unit_demos()) + bool(other_cosim_units()) and len(unit_demos()) == 4
    assert [int(k) for k in re.findall(rf"\[demo\] step (\d+)/{steps} ", out)] == list(range(1, steps + 1))
    # each unit's step printed its table and its check
    for title in ("Fetch engine (ideal:", "SCU RTL against its TLM", "RTL in the loop (SCU tx1-sim)",
                  "RTL in the loop (MFF)", "IRU RTL (blocks/reply", "RTL in the loop (IRU small)",
                  "GraphPEG RTL against its TLM and the graph", "BFS with the GraphPEG RTL in the loop (icarus)"):
        assert title in out, title
        table = out.split(title, 1)[1].split("\n\n", 1)[0]
        assert "matches TLM" in table or "matches reference" in table, (title, table)
    # both IRU RTL runs (random operations, an edge frontier) hold the rules, not just one of them
    iru = out.split("IRU RTL (blocks/reply", 1)[1].split("\n\n", 1)[0]
    assert iru.count("rules hold, matches TLM") == 2, iru
    # the report holds one RTL-in-the-loop record per run of the steps, every registered unit included
    from sim.cosim import cosim_units
    res = json.loads((project_root() / DEMO_OUT / "results.json").read_text())
    cos = res["cosim"]
    assert {c["unit"] for c in cos} == set(cosim_units()) and all(c["ok"] for c in cos)
    by = {}
    for c in cos:
        by.setdefault(c["unit"], []).append(c)
    from graphunits.scu.demo import QUICK_GRAPH
    assert [(c["algo"], c["graph"]) for c in by["scu"]] == [("bfs", QUICK_GRAPH), ("sssp", QUICK_GRAPH)]
    assert [(c["algo"], c["preset"]) for c in by["mff"]] == [("pr", "default")]
    # the IRU and GraphPEG steps' own BFS runs (sim/iru/, sim/graphpeg/), not a rerun
    assert [(c["algo"], c["preset"], c["graph"]) for c in by["iru"]] == \
        [("bfs", "small", "kron:scale=7,edgefactor=8,seed=1")]
    assert [(c["algo"], c["preset"], c["graph"]) for c in by["graphpeg"]] == \
        [("bfs", "sim", "kron:scale=6,edgefactor=4,seed=1")]
    assert other_cosim_units() == ["coalescer"]
    for u in other_cosim_units():                       # units without a step of their own: a tiny graph
        assert [c["graph"] for c in by[u]] == [TINY_GRAPH]
        table = out.split(f"RTL in the loop, other units ({TINY_GRAPH})", 1)[1].split("\n\n", 1)[0]
        assert re.search(rf"^{u} .*matches reference$", table, re.M), table
    md = (project_root() / DEMO_OUT / "report.md").read_text()
    assert "## RTL in the loop" in md
    for c in cos:
        assert re.search(rf"\| {re.escape(c['graph'])} +\| {c['algo']} +\| {c['unit']} +\|", md), c
    assert "RTL in the loop in the report: " in out
    # the short fidelity table: the headlines the small runs measure, each with its verdict
    fid = out.split("The papers' headlines on this small graph", 1)[1].split("\n\n", 1)[0]
    rows = [ln for ln in fid.splitlines()[3:] if ln.strip()]
    assert rows and all(re.search(r"(reproduced|within 2x|direction right|more than 2x off|contradicted)\s*$", ln)
                        for ln in rows), fid


def test_cosim_log_records_and_restores(monkeypatch):
    """CosimLog records what sim.cosim hands to its observers (run_cosim calls
    cosim.notify last, with the preset it used; faked here), and nothing after."""
    import sim.cosim as cosim
    from types import SimpleNamespace

    def fake(graph, algo, *, unit="scu", preset=None, sim="verilator", **kw):
        # the SCU's time model runs at the testbench's latency, GraphPEG's engines at the GPU's
        r = SimpleNamespace(algo=algo, mode="m", ok=True, problems=[], wall_s=0.5,
                            rtl={"ops": 7, "cycles": 70.0, "memory": [{"requests": 3}, {"requests": 4}]},
                            tlm={"cycles": 140.0}, model_at_testbench_latency=unit == "scu")
        cosim.notify(r, unit=unit, preset=preset or cosim.cosim_units()[unit].default_preset, sim=sim, graph=graph)
        return r
    monkeypatch.setattr(cosim, "run_cosim", fake)
    with CosimLog() as log:
        from sim.cosim import run_cosim                # looked up when the step runs, as the steps do
        run_cosim("g", "bfs", unit="scu", sim="icarus")
        run_cosim("g", "bfs", unit="graphpeg", sim="icarus")
    assert cosim.run_cosim is fake and cosim._observers == []
    run_cosim("g", "bfs", unit="scu", sim="icarus")     # after the block: not recorded
    c, d = log.records
    assert (d["unit"], d["preset"], d["model_cycles"], d["model_over_rtl"]) == ("graphpeg", "sim", 140.0, None)
