"""RTL in the loop: whole algorithms in SCU mode where every SCU operation runs
on the RTL under cocotb; the result must equal the TLM run and the independent
reference, with the same operations and memory requests (sim/cosim.py)."""
import re
import subprocess
import sys

import numpy as np
import pytest

from sim.cosim import run_cosim


@pytest.mark.parametrize("algo, mode, sim, preset, memory", [
    ("bfs", "scu", "verilator", "tx1-sim", "design"),
    ("sssp", "scu-enhanced", "verilator", "tx1-sim", "design"),
    ("sssp", "scu-enhanced", "verilator", "tiny", "python"),
    ("pr", "scu", "verilator", "gtx980-sim", "python"),
    ("bfs", "scu-enhanced", "icarus", "tiny", "python"),
    ("bfs", "scu", "icarus", "tiny", "design"),
])
def test_cosim_matches_reference(algo, mode, sim, preset, memory, tmp_path):
    """Both testbench memories: the Python model (cocotb every cycle) and the memory
    inside the design (sim/simmem.py: cocotb once per operation)."""
    graph = "kron:scale=7,edgefactor=8,seed=2" if algo != "pr" else "kron:scale=6,edgefactor=4,seed=2"
    r = run_cosim(graph, algo, mode=mode, preset=preset, sim=sim, out_dir=tmp_path, log=lambda *a: None,
                  options={"tol": 1e-10} if algo == "pr" else None, memory=memory)
    assert r.ok, r.problems
    assert r.rtl["ops"] == r.tlm["ops"] and sum(r.rtl["ops"].values()) > 3
    assert r.rtl["memory"]["requests"] == r.tlm["requests"]
    assert r.rtl["cycles"] > 0 and r.rtl["sim_cycles"] > 0
    assert r.rtl["memory_model"] == memory
    if memory == "design":              # what the algorithm wrote went in, what the unit wrote came back
        assert r.rtl["memory"]["loaded_blocks"] > 0
        assert r.rtl["memory"]["read_back_blocks"] == r.rtl["memory"]["writes"] > 0


def test_cosim_in_design_memory_under_hard_timing(tmp_path):
    """The memory inside the design with random latency up to 40 cycles, in-order
    responses, request back-pressure and response gaps: the same result, operations
    and requests as the TLM run; the cycles within 5 % of the Python memory model's
    under the same timing (their random draws differ), and above a 1-cycle memory's."""
    timing = {"latency": [1, 40], "in_order": True, "req_ready": 0.5, "resp_gap": 0.6, "seed": 7}
    runs = {}
    for memory, t in (("design", timing), ("python", timing), ("design", {"latency": 1})):
        r = runs[memory, t["latency"] == 1] = run_cosim(
            "kron:scale=7,edgefactor=8,seed=2", "bfs", mode="scu", preset="tx1-sim", sim="verilator",
            out_dir=tmp_path, log=lambda *a: None, timing=t, memory=memory)
        assert r.ok, r.problems
        assert r.rtl["memory"]["requests"] == r.tlm["requests"]
    design, python, fast = runs["design", False], runs["python", False], runs["design", True]
    assert abs(design.rtl["sim_cycles"] / python.rtl["sim_cycles"] - 1) < 0.05
    assert design.rtl["sim_cycles"] > 1.05 * fast.rtl["sim_cycles"]


def test_cosim_memory_choice_errors():
    with pytest.raises(ValueError, match="memory must be 'design' or 'python'"):
        run_cosim("grid:4x4", "bfs", memory="dram", log=lambda *a: None)
    with pytest.raises(ValueError, match="no memory inside the design yet"):
        run_cosim("grid:4x4", "bfs", unit="coalescer", memory="design", log=lambda *a: None)
    with pytest.raises(ValueError, match="toggle counts need the Python memory"):
        run_cosim("grid:4x4", "bfs", memory="design", toggles=True, log=lambda *a: None)


def test_cosim_memory_defaults():
    """The testbench inside the design on Verilator where a unit has it; the Python
    one on Icarus, for units without it, and for toggle counts (logic energy: the
    counted design must be the unit alone)."""
    from sim.cosim import cosim_memory, cosim_units
    u = cosim_units()
    for name in ("scu", "iru", "graphpeg", "mff"):
        assert cosim_memory(u[name], "verilator") == "design"
        assert cosim_memory(u[name], "icarus") == "python"
        assert cosim_memory(u[name], "verilator", toggles=True) == "python"
        assert cosim_memory(u[name], "icarus", "design") == "design"
    assert cosim_memory(u["coalescer"], "verilator") == "python"


@pytest.mark.parametrize("algo, mode, sim, preset, memory", [
    ("pr", "mff", "verilator", "default", "design"), ("bfs", "mff", "verilator", "tiny", "python"),
    ("cc", "mff", "icarus", "default", "python"), ("cc", "mff", "icarus", "tiny", "design"),
    ("bfs", "mff-push", "verilator", "default", "design")])
def test_mff_cosim_matches_reference(algo, mode, sim, preset, memory, tmp_path):
    """The Python memory model with the structural TLM in lock step (values, block
    reads, write-backs and cycles equal), and the memory, command sequencer and
    output recorders inside the design (sim/mff/, MFFDesignEnv) with the
    functional model in lock step."""
    r = run_cosim("kron:scale=6,edgefactor=4,seed=3", algo, unit="mff", mode=mode, preset=preset, sim=sim,
                  out_dir=tmp_path, log=lambda *a: None, options={"tol": 1e-10} if algo == "pr" else None,
                  memory=memory)
    assert r.ok, r.problems
    assert r.rtl["memory_model"] == memory
    if mode == "mff":
        assert r.rtl["values"] == r.tlm["values"] > 100 and r.rtl["memory"]["reads"] > 0
    else:                                 # PC_scatter_set: the bitmaps the unit wrote came back
        assert r.rtl["bits"] == r.tlm["bits"] > 50 and r.rtl["memory"]["writes"] > 0
        assert r.rtl["memory"]["read_back_blocks"] > 0
    if memory == "python":
        assert r.rtl["cycles"] == r.rtl["tlm_cycles"] and r.rtl["memory"]["reads"] == r.rtl["tlm_reads"]
    else:
        # every clock cycle simulated is a batch's, or the edge of a batch's read-back
        m = r.rtl["memory"]
        assert r.rtl["cycles"] + m["transfer_edges"] == r.rtl["sim_cycles"] > 0 and m["loaded_blocks"] > 0
        assert 0 < m["transfer_edges"] < r.rtl["cycles"] / 20


def test_mff_cosim_in_design_timing_follows_the_python_memory(tmp_path):
    """Hard timing (random latency up to 40 cycles, in order, back-pressure, response
    gaps): with everything inside the design, the cycles are within 5 % of the Python
    memory model's (their random draws differ); a 100-cycle memory takes well over a
    1-cycle one's cycles (at this size the unit's own one event per cycle binds short
    latencies: the hard timing gives about the 1-cycle memory's time, in both paths)."""
    hard = {"latency": [1, 40], "in_order": True, "req_ready": 0.5, "resp_gap": 0.6, "seed": 7}
    runs = {}
    for name, memory, t in (("design", "design", hard), ("python", "python", hard),
                            ("slow", "design", {"latency": 100}), ("fast", "design", {"latency": 1})):
        r = runs[name] = run_cosim("kron:scale=6,edgefactor=4,seed=3", "pr", unit="mff", sim="verilator",
                                   out_dir=tmp_path, log=lambda *a: None, timing=t, memory=memory)
        assert r.ok, r.problems
    c = {k: r.rtl["cycles"] for k, r in runs.items()}
    assert abs(c["design"] / c["python"] - 1) < 0.05, c
    assert c["slow"] > 1.5 * c["fast"], c


def test_mff_in_design_outputs_go_to_the_right_commands():
    """The recorded scratchpad writes and completions (cycle-stamped) are given to
    each warp's commands in order; a write in the cycle of its command's completion
    belongs to it; every way the logs can break the harness's rules is reported."""
    from types import SimpleNamespace as C

    from sim.mff import MFFInDesign
    cmds = [C(warp=1), C(warp=2), C(warp=1)]

    def w(warp, addr, data, e8=0):
        return {"warp": warp, "addr": addr, "data": data, "e8": e8}
    spad = [(5, w(1, 0, 7)), (6, w(2, 4, 0x1_0000_0009)), (9, w(1, 0, 8)), (9, w(1, 4, 10, 1))]
    done = [(6, {"warp": 1, "error": 0}), (7, {"warp": 2, "error": 1}), (9, {"warp": 1, "error": 0})]
    out = MFFInDesign._assign(cmds, spad, done)
    assert out == [[{0: 7}, False], [{4: 9}, True], [{0: 8, 4: 10}, False]]
    with pytest.raises(AssertionError, match="written twice"):
        MFFInDesign._assign(cmds, spad + [(5, w(1, 0, 7))], done)
    with pytest.raises(AssertionError, match="warp 3, which has no command in flight"):
        MFFInDesign._assign(cmds, spad + [(8, w(3, 0, 1))], done)
    with pytest.raises(AssertionError, match="1 of 3 commands never completed"):
        MFFInDesign._assign(cmds, spad, done[:2])


def test_cosim_cli_prints_matches_reference():
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--graph", "grid:6x7", "--algo", "sssp"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "matches reference" in r.stdout and "MISMATCH" not in r.stdout


def test_cosim_reads_a_graph_file_given_by_a_relative_path(tmp_path):
    """The testbench runs in its own folder: a relative graph file path still works."""
    lines = [f"{i} {(i * 7 + 3) % 40}" for i in range(40)] + [f"{i} {i + 1}" for i in range(39)]
    (tmp_path / "g.el").write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--graph", "g.el", "--algo", "bfs"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "matches reference" in r.stdout and "MISMATCH" not in r.stdout


def test_cosim_cli_errors():
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "nounit", "--graph", "grid:4x4",
                        "--algo", "bfs"], capture_output=True, text=True)
    assert r.returncode == 2 and "not 'nounit'" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "iru", "--graph", "grid:4x4",
                        "--algo", "cc"], capture_output=True, text=True)
    assert r.returncode == 2 and "cosim with the iru runs bfs, sssp, pr, not 'cc'" in r.stderr
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--graph", "kron:scale=5", "--algo", "bfs",
                        "--preset", "huge"], capture_output=True, text=True)
    assert r.returncode == 2 and "SCUConfig has no preset 'huge'" in r.stderr


def test_scu_model_assumes_the_testbench_latency(tmp_path):
    """The SCU's TLM time model runs at the latency of the testbench memory that
    run_cosim(timing=...) sets (the middle of its range), not a fixed 10 cycles: at a
    fixed 60-cycle memory its cycles are within 2 % of the RTL's (the model is
    within 1 % on 87 of 90 single operations, docs/benchmarks.md SCU (a))."""
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    from golden.scu import SCUConfig
    from golden.scu.algorithms import TLMBackend
    from sim.cosim import DEFAULT_TIMING, _tlm_backend, cosim_units, testbench_latency
    from graphunits.report.collect import cosim_record
    assert testbench_latency(DEFAULT_TIMING) == 10 and testbench_latency({"latency": [30, 51]}) == 40
    assert testbench_latency({"latency": 60}) == 60 and testbench_latency({}) == 1     # MemoryTiming's default
    units = cosim_units()
    assert _tlm_backend(units["scu"], SCUConfig.preset("tiny"), {"latency": [30, 50]}).latency == 40
    assert _tlm_backend(units["scu"], SCUConfig.preset("tiny"), DEFAULT_TIMING).latency == 10

    # The Python memory: the RTL build the SCU's random tests use (the memory inside
    # the design would be one more Verilator build for its fixed latency).
    r = run_cosim("grid:6x6", "bfs", preset="tiny", sim="verilator", timing={"latency": 60, "seed": 1},
                  out_dir=tmp_path, log=lambda *a: None, memory="python")
    assert r.ok, r.problems
    g = load_graph("grid:6x6")
    ref = run_algorithm(g, "bfs", "scu", gpu="gtx980", source=r.source,
                        backend=TLMBackend(SCUConfig.preset("tiny"), latency=60))
    assert r.tlm["cycles"] == ref.extra["scu"]["cycles"]
    assert abs(r.tlm["cycles"] / r.rtl["cycles"] - 1) < 0.02, (r.tlm["cycles"], r.rtl["cycles"])
    c = cosim_record(r, unit="scu", preset="tiny", sim="verilator", graph="grid:6x6")
    assert c["model_at_testbench_latency"] and c["model_over_rtl"] == r.tlm["cycles"] / r.rtl["cycles"]


@pytest.mark.parametrize("unit, algo", [("scu", "pr"), ("mff", "cc")])
def test_cosim_rejects_a_source_for_an_algorithm_without_one(unit, algo):
    with pytest.raises(ValueError, match=f"{algo} has no source vertex: it runs on every vertex"):
        run_cosim("grid:4x4", algo, unit=unit, source=3, log=lambda *a: None)
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", unit, "--graph", "grid:4x4", "--algo",
                        algo, "--source", "3"], capture_output=True, text=True)
    assert r.returncode == 2 and f"{algo} has no source vertex" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_cosim_rejects_a_bad_timing():
    with pytest.raises(ValueError, match=r"cosim timing .*latency must be an int >= 1 or a range"):
        run_cosim("grid:4x4", "bfs", timing={"latency": [20, 1]}, log=lambda *a: None)


# Verilator's traced build is of the EMOGI coalescer (its ports are the top's; a build
# in 5-15 s), Icarus's of the SCU with the memory inside (the unit's scope below the top):
# a traced Verilator build of that SCU took 49 s of the suite.
@pytest.mark.parametrize("sim, suffix, unit, name, scope, ports", [
    ("verilator", ".vcd", "coalescer", "coalescer-default-bfs-emogi-aligned", "coalescer",
     {"i__valid", "i__ready", "i__payload", "o__valid", "o__ready", "o__payload"}),
    ("icarus", ".fst", "scu", "scu-tx1-sim-bfs-scu", None, None)], ids=["verilator-vcd", "icarus-fst"])
def test_cosim_writes_the_waveform_when_asked(sim, suffix, unit, name, scope, ports, tmp_path):
    """--waves (run_cosim(waves=True)): the RTL run's waveform is copied under
    out_dir/waves/, named after unit, preset, algorithm, mode, graph and simulator."""
    r = run_cosim("kron:scale=5,edgefactor=4,seed=1", "bfs", unit=unit, sim=sim, out_dir=tmp_path, waves=True,
                  log=lambda *a: None)
    assert r.ok, r.problems
    w = tmp_path / "waves" / f"{name}-kron_scale=5,edgefactor=4,seed=1-{sim}{suffix}"
    assert r.rtl["waves"] == str(w) and w.stat().st_size > 1000
    head = w.read_bytes()[:4096]
    if suffix == ".vcd":
        assert b"$timescale" in head and b"$scope" in head
        # the unit's top-level ports are in the unit's scope (the declarations, up to $enddefinitions)
        scopes, found = [], set()
        with open(w, "rb") as f:
            for line in f:
                t = line.split()
                if t[:1] == [b"$scope"]:
                    scopes.append(t[2].decode())
                elif t[:1] == [b"$upscope"]:
                    scopes.pop()
                elif t[:1] == [b"$var"] and scopes and scopes[-1] == scope:
                    found.add(t[4].decode())
                elif t[:1] == [b"$enddefinitions"]:
                    break
        assert ports <= found, found
    else:
        assert head[0] == 0                       # an FST file starts with its header block (type 0)
    # without --waves: nothing written
    r2 = run_cosim("kron:scale=5,edgefactor=4,seed=1", "bfs", unit=unit, sim=sim, out_dir=tmp_path / "x",
                   log=lambda *a: None)
    assert "waves" not in r2.rtl and not (tmp_path / "x" / "waves").exists()


def test_in_design_memory_watchdog_stops_a_stalled_run(tmp_path):
    """A memory that answers only after 60,000 cycles: the unit fills its requests in
    flight and waits; with the memory inside the design the testbench wakes every
    20,000 cycles and stops the run when no request came meanwhile (as the Python
    model's loop stops after 20,000 cycles without a transfer)."""
    from sim.runner import SimulationError
    with pytest.raises(SimulationError, match="no memory request for 20000 cycles at cycle"):
        run_cosim("kron:scale=5,edgefactor=4,seed=1", "bfs", mode="scu", preset="tx1-sim", sim="verilator",
                  out_dir=tmp_path, log=lambda *a: None, timing={"latency": 60000}, memory="design")


def _seeded_divergence(graph: str, checked: str, least: int, pattern: str, **kw) -> re.Match:
    """BFS on ``graph`` with the RTL in the loop (Verilator): clean (nothing reported,
    at least ``least`` operations checked, ``rtl[checked]``), then with a divergence
    seeded into operation 1: it fails, its first problem is the triage report, which
    must match ``pattern`` (returned)."""
    kw |= {"sim": "verilator", "log": lambda *a: None}
    clean = run_cosim(graph, "bfs", **kw)
    assert clean.ok and clean.rtl["first_mismatch"] is None and clean.rtl[checked] >= least
    r = run_cosim(graph, "bfs", perturb_check_op=1, **kw)
    assert not r.ok and r.problems[0] == r.rtl["first_mismatch"]
    m = re.fullmatch(pattern, r.problems[0])
    assert m, r.problems[0]
    return m


def _replays(path: str, head: str, what: str) -> None:
    """``graphunits replay path`` re-runs the reproducer alone: exit 1, its report
    names the operation (``head``) and the same difference (``what``)."""
    out = subprocess.run([sys.executable, "-m", "graphunits", "replay", path], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert head in out.stdout and f"reproduced: {what}" in out.stdout, out.stdout


@pytest.mark.parametrize("memory", ["design", "python"])
def test_first_differing_operation_is_reported(memory, tmp_path):
    """Lock step: the TLM runs every SCU operation on a copy of the memory before the
    RTL's; a divergence seeded into the TLM's output of operation 3 is reported as
    the first difference, with the operation, its sizes, the element, both values and
    the cycle; every operation was checked."""
    kw = dict(mode="scu", preset="tx1-sim", sim="verilator", out_dir=tmp_path, log=lambda *a: None, memory=memory)
    clean = run_cosim("kron:scale=6,edgefactor=4,seed=2", "bfs", **kw)
    assert clean.ok and clean.rtl["first_mismatch"] is None
    assert clean.rtl["ops_checked"] == sum(clean.rtl["ops"].values()) > 4
    r = run_cosim("kron:scale=6,edgefactor=4,seed=2", "bfs", perturb_check_op=3, **kw)
    assert not r.ok and len(r.problems) == 1
    m = re.fullmatch(r"first difference at SCU operation 3 \((\w+), n=\d+, \d+ elements in, \d+ out; started "
                     r"at RTL cycle \d+\): (output element 0 \(address 0x[0-9a-f]+\) is 0x[0-9a-f]+, the TLM's "
                     r"0x[0-9a-f]+); reproducer (\S+) \(graphunits replay \S+\)", r.problems[0])
    assert m, r.problems[0]
    # the reproducer re-runs that operation alone and shows the same difference
    _replays(m.group(3), f"SCU operation 3 of the run ({m.group(1)}, ", m.group(2))


def test_replay_rejects_what_is_not_a_reproducer(tmp_path):
    import json
    from golden.memory import AddressSpace
    from golden.scu import SCUConfig
    from sim.replay import save_reproducer
    (tmp_path / "emogi.json").write_text('{"unit": "emogi"}')
    (tmp_path / "mff.json").write_text('{"unit": "mff", "config": {}}')
    # an SCU reproducer whole but for its timing (every field is checked before anything runs)
    space = AddressSpace(addr_bits=20)
    space.alloc("a", np.arange(4, dtype=np.uint32))
    doc = {"unit": "scu", "config": SCUConfig.preset("tiny").to_dict(), "op": {}, "op_index": 0, "report": ""}
    no_timing = save_reproducer(tmp_path, "scu-op0", space, doc)
    d = json.loads(no_timing.read_text())
    del d["timing"]
    no_timing.write_text(json.dumps(d))
    # a memory image whose arrays are not the reproducer's pages, or pages of another size
    bad = {}
    for name, arrays in (("badkey", {"foo": np.zeros(8, np.uint8)}), ("badpage", {"page_0": np.zeros(4096, np.uint8)}),
                         ("farpage", {"page_99": np.zeros(1 << 16, np.uint8)})):
        np.savez(tmp_path / f"{name}.npz", **arrays)
        bad[name] = tmp_path / f"{name}.json"
        bad[name].write_text(json.dumps({**d, "timing": {}, "image": f"{name}.npz", "op": {"op": "nope"}}))
    for path, why in ((tmp_path / "none.json", "No such file"),
                      (tmp_path / "emogi.json", "runs those of scu, mff, graphpeg, iru, coalescer"),
                      (tmp_path / "mff.json", "no field 'commands'"),
                      (no_timing, "no field 'timing'")):
        r = subprocess.run([sys.executable, "-m", "graphunits", "replay", str(path)], capture_output=True, text=True)
        assert r.returncode == 2 and "not a graphunits reproducer" in r.stderr and why in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    from sim.replay import load_image
    for name, why in (("badkey", "array 'foo' is not a page (page_N, N < 16)"),
                      ("badpage", "page 'page_0' holds 4096 uint8 values, not 65536 bytes"),
                      ("farpage", "array 'page_99' is not a page (page_N, N < 16)")):
        with pytest.raises(ValueError, match=re.escape(why)):
            load_image({**json.loads(bad[name].read_text()), "_dir": str(tmp_path)})


class _Val:
    def __init__(self, v):
        self.value = v


def test_in_design_log_read_back_and_its_errors():
    """A recorder's dump splits into (cycle, payload), a memory dump into distinct
    words and their bytes (least significant first); unknown bits in either, an
    overflowed log, a batch of MFF command entries or GraphPEG pushes larger than
    the in-design arrays are one-line errors, not lost beats or a hang."""
    import asyncio
    from types import SimpleNamespace as NS

    from golden.graphpeg import GraphPEGConfig
    from golden.mff import MFFCommand, MFFConfig, ThreadRequest
    from sim.graphpeg import GraphPEGInDesign
    from sim.mff import MFFInDesign
    from sim.simmem import log_records, parse_dump, read_logs
    assert log_records("000000ab00000007\n00000005ffffffff\n", "f") == [(7, 0xAB), (0xFFFFFFFF, 5)]
    assert log_records("", "f") == []
    with pytest.raises(RuntimeError, match="f: unknown bits in a stream recorder's log"):
        log_records("0000x0ab00000007\n", "f")
    words, raw = parse_dump("0003 0a0b0c0d\n0001 01020304\n0003 0a0b0c0d\n", 4, "d")
    assert words.tolist() == [1, 3] and raw.tolist() == [[4, 3, 2, 1], [13, 12, 11, 10]]
    for text, why in (("0001 0a0b0c0d 0002\n", "not a dump of 4-byte blocks"), ("0001 0a0b0c\n", "not a dump"),
                      ("0001 0a0bxc0d\n", "unknown bits in the memory dump")):
        with pytest.raises(RuntimeError, match=f"d: {why}"):
            parse_dump(text, 4, "d")
    with pytest.raises(RuntimeError, match="stream recorder inside the design overflowed"):
        asyncio.run(read_logs(None, [NS(full=_Val(1), n=_Val(0), log=[])]))
    cfg = MFFConfig.preset("default")
    cmd = MFFCommand("gather", 0, tuple(ThreadRequest(lane=k, cidx=k, size=1, target=4 * k) for k in range(3)))
    seq = NS(ents=[_Val(0)] * 2, n=_Val(0), head=_Val(0))
    run = MFFInDesign(NS(seq=seq), cfg, None, depth_log2=1).run([cmd])
    with pytest.raises(ValueError, match="3 command entries exceed the sequencer's 2"):
        asyncio.run(run)
    gp = GraphPEGInDesign(NS(pushplay0=NS(ents=[], n=_Val(0), head=_Val(0))), GraphPEGConfig.preset("sim"), None)
    with pytest.raises(ValueError, match=f"{(1 << 18) + 1} pushes exceed the in-design player's"):
        asyncio.run(gp.push({0: range((1 << 18) + 1)}))


def test_mff_first_differing_command_is_reported_and_replayed(tmp_path):
    """The MFF with the Python memory: the structural TLM runs every batch of commands
    in lock step; a divergence seeded into its output of batch 1 is reported as the
    first difference, with the batch, the command, its size, the scratchpad address
    and both values, and a reproducer that `graphunits replay` re-runs alone (the
    batch on the TLM and on the RTL, both starting empty) shows the same difference."""
    m = _seeded_divergence("kron:scale=5,edgefactor=4,seed=3", "batches_checked", 3,
                           r"first difference at MFF batch 1 \((\d+) commands, started at RTL cycle \d+\): (command \d+ "
                           r"\(gather, warp \d+, \d+ elements\): scratchpad address 0x[0-9a-f]+ is 0x[0-9a-f]+, the "
                           r"TLM's 0x[0-9a-f]+); reproducer (\S+) \(graphunits replay \S+\)",
                           unit="mff", preset="tiny", memory="python", out_dir=tmp_path)
    _replays(m.group(3), f"MFF batch 1 of the run ({m.group(1)} commands)", m.group(2))


@pytest.mark.parametrize("memory", ["design", "python"])
def test_graphpeg_first_differing_kernel_is_reported_and_replayed(memory, tmp_path):
    """Every kernel's items are checked against what its input lists hold in memory
    (all SMs together: EF moves items); a divergence seeded into kernel 1's expected
    items is reported as the first difference, with the kernel, its lists, the item
    and both counts, and a reproducer that `graphunits replay` re-runs alone (a
    setup, the lists pushed, the kernel, on the RTL with the Python memory) shows
    the same difference."""
    m = _seeded_divergence("kron:scale=6,edgefactor=4,seed=2", "kernels_checked", 3,
                           r"first difference at GraphPEG kernel 1 \(edge, lists of ([\d, ]+) vertices; started at "
                           r"RTL cycle \d+\): (item \(src, dst, weight, edge\) \(\d+, \d+, \d+, \d+\) handed out 1 "
                           r"times, expected 0 \((\d+) items handed out, (\d+) expected\)); reproducer (\S+) "
                           r"\(graphunits replay \S+\)", unit="graphpeg", memory=memory, out_dir=tmp_path)
    assert int(m.group(3)) == int(m.group(4)) + 1
    _replays(m.group(5), f"GraphPEG kernel 1 of the run (edge, lists of {m.group(1)} vertices)", m.group(2))


@pytest.mark.parametrize("memory", ["design", "python"])
def test_iru_first_rule_break_is_reported_and_replayed(memory, tmp_path):
    """Every IRU operation's replies are checked against the rules for its inputs in
    memory as it ends; a divergence seeded into the inputs the check of operation 1
    reads is reported as the first difference, with the operation, its size and the
    first problem, and a reproducer that `graphunits replay` re-runs alone shows the
    same problem."""
    m = _seeded_divergence("kron:scale=6,edgefactor=4,seed=2", "ops_checked", 3,
                           r"first difference at IRU operation 1 \((\w+), n=(\d+); started at RTL cycle \d+\): (.+); "
                           r"reproducer (\S+) \(graphunits replay \S+\)", unit="iru", memory=memory, out_dir=tmp_path)
    assert "position 0" in m.group(3) or "never delivered" in m.group(3), m.group(3)
    _replays(m.group(4), f"IRU operation 1 of the run ({m.group(1)}, n={m.group(2)})", m.group(3))


def test_coalescer_first_differing_request_is_reported_and_replayed(tmp_path):
    """Every batch of warps through the EMOGI coalescer's RTL is checked against the
    golden model's requests as it ends; a divergence seeded into batch 1's is
    reported as the first difference (the warp, the request, both values) with a
    reproducer (the warps and the patterns: no memory) that `graphunits replay`
    re-runs alone."""
    m = _seeded_divergence("kron:scale=5,edgefactor=4,seed=1", "calls", 3,
                           r"first difference at coalescer call 1 \((\d+) warps; started at RTL cycle \d+\): (warp \d+'s "
                           r"request 0 \(request \d+ of the batch\) is addr=0x[0-9a-f]+ size=\d+ last=\d, the golden "
                           r"model's addr=0x[0-9a-f]+ size=\d+ last=\d); reproducer (\S+) \(graphunits replay \S+\)",
                           unit="coalescer", out_dir=tmp_path)
    _replays(m.group(3), f"EMOGI coalescer call 1 of the run ({m.group(1)} warps)", m.group(2))
