"""RTL in the loop: whole algorithms in SCU mode where every SCU operation runs
on the RTL under cocotb; the result must equal the TLM run and the independent
reference, with the same operations and memory requests (sim/cosim.py)."""
import subprocess
import sys

import pytest

from sim.cosim import run_cosim


@pytest.mark.parametrize("algo, mode, sim, preset", [
    ("bfs", "scu", "verilator", "tx1"),
    ("sssp", "scu", "verilator", "tx1"),
    ("sssp", "scu-enhanced", "verilator", "tiny"),
    ("pr", "scu", "verilator", "gtx980"),
    ("bfs", "scu-enhanced", "icarus", "tiny"),
])
def test_cosim_matches_reference(algo, mode, sim, preset, tmp_path):
    graph = "kron:scale=7,edgefactor=8,seed=2" if algo != "pr" else "kron:scale=6,edgefactor=4,seed=2"
    r = run_cosim(graph, algo, mode=mode, preset=preset, sim=sim, out_dir=tmp_path, log=lambda *a: None,
                  options={"tol": 1e-10} if algo == "pr" else None)
    assert r.ok, r.problems
    assert r.rtl["ops"] == r.tlm["ops"] and sum(r.rtl["ops"].values()) > 3
    assert r.rtl["memory"]["requests"] == r.tlm["requests"]
    assert r.rtl["cycles"] > 0 and r.rtl["sim_cycles"] > 0


@pytest.mark.parametrize("algo, sim, preset", [("pr", "verilator", "default"), ("bfs", "verilator", "tiny"),
                                               ("cc", "icarus", "default")])
def test_mff_cosim_matches_reference(algo, sim, preset, tmp_path):
    r = run_cosim("kron:scale=6,edgefactor=4,seed=3", algo, unit="mff", preset=preset, sim=sim, out_dir=tmp_path,
                  log=lambda *a: None, options={"tol": 1e-10} if algo == "pr" else None)
    assert r.ok, r.problems
    assert r.rtl["values"] == r.tlm["values"] > 100 and r.rtl["memory"]["reads"] > 0


def test_cosim_cli_prints_matches_reference():
    r = subprocess.run([sys.executable, "-m", "sim.cli", "cosim", "--graph", "grid:6x7", "--algo", "sssp"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "matches reference" in r.stdout and "MISMATCH" not in r.stdout


def test_cosim_cli_errors():
    r = subprocess.run([sys.executable, "-m", "sim.cli", "cosim", "--unit", "nounit", "--graph", "grid:4x4",
                        "--algo", "bfs"], capture_output=True, text=True)
    assert r.returncode == 2 and "not 'nounit'" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "sim.cli", "cosim", "--unit", "iru", "--graph", "grid:4x4",
                        "--algo", "cc"], capture_output=True, text=True)
    assert r.returncode == 2 and "cosim with the iru runs bfs, sssp, pr, not 'cc'" in r.stderr
    r = subprocess.run([sys.executable, "-m", "sim.cli", "cosim", "--graph", "kron:scale=5", "--algo", "bfs",
                        "--preset", "huge"], capture_output=True, text=True)
    assert r.returncode == 2 and "SCUConfig has no preset 'huge'" in r.stderr
