"""RTL in the loop for the warp coalescer (docs/emogi.md, "RTL in the loop"):
whole algorithms in a zero-copy EMOGI mode where every host-memory warp
instruction goes through the coalescer RTL under cocotb and the lanes take the
edge list (and weights) from the payloads of the RTL's requests. The result must
equal the independent reference (scipy/networkx) and the TLM run, with the
golden model's request-size histogram (sim/emogi/, sim/emogi/tb_cosim.py)."""
import subprocess
import sys

import pytest

from sim.cosim import run_cosim
from sim.emogi import cosim_check

GRAPH = "kron:scale=6,edgefactor=4,seed=3"


@pytest.mark.parametrize("algo, mode", [
    ("bfs", "emogi-aligned"),
    ("sssp", "emogi-merged"),
    ("cc", "emogi-naive"),
    ("pr", "emogi-merged"),
])
def test_coalescer_cosim_matches_reference(algo, mode, tmp_path):
    r = run_cosim(GRAPH, algo, unit="coalescer", mode=mode, sim="verilator", out_dir=tmp_path, log=lambda *a: None)
    assert r.ok, r.problems
    c = r.rtl["coalescer"]
    hist = {int(k): v for k, v in c["requests"].items()}
    # The RTL's requests are the golden model's, and they delivered every lane's data.
    assert hist == r.tlm["requests"] and sum(hist.values()) == r.rtl["request_count"] > 20
    assert c["backend"] == "rtl-verilator" and c["instructions"] == r.tlm["coalescer"]["instructions"] > 10
    assert c["lanes"] == r.tlm["lanes"] and r.rtl["extra_requests"] == 0
    assert r.rtl["warps"] == c["instructions"] and r.rtl["calls"] == c["calls"] > 1
    assert r.rtl["cycles"] >= sum(hist.values())                # at most one request per cycle
    if mode != "emogi-aligned":
        assert c["cache_hits"] > 0


def test_coalescer_cosim_cli_on_icarus():
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "coalescer", "--graph", "grid:5x6",
                        "--algo", "sssp", "--mode", "emogi-naive", "--sim", "icarus"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "coalescer preset / simulator" in r.stdout and "default / icarus" in r.stdout
    assert "matches reference" in r.stdout and "MISMATCH" not in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--algo", "bc"], "cosim with the coalescer runs bfs, sssp, cc, pr, not 'bc'"),
    (["--algo", "bfs", "--mode", "uvm"], "the coalescer's modes are emogi-aligned, emogi-merged, emogi-naive, "
                                         "not 'uvm'"),
    (["--algo", "bfs", "--preset", "small"], "the coalescer has 8 lanes, the GPU model's warps 32"),
])
def test_coalescer_cosim_cli_errors(args, message):
    r = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "coalescer", "--graph", "grid:4x4"] + args,
                       capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_cosim_check_catches_what_the_result_does_not():
    hist = {"32": 5, "64": 1, "96": 0, "128": 2}
    tlm = {"requests": {32: 5, 64: 1, 96: 0, 128: 2}, "coalescer": {"instructions": 7}}
    rtl = {"coalescer": {"requests": hist, "instructions": 7}, "requests": hist, "extra_requests": 0}
    assert cosim_check(rtl, tlm) == []
    over = dict(rtl, coalescer={"requests": {"32": 0, "64": 0, "96": 0, "128": 8}, "instructions": 7})
    assert cosim_check(over, tlm) == [
        "RTL requests by size {32: 0, 64: 0, 96: 0, 128: 8}, the golden model's {32: 5, 64: 1, 96: 0, 128: 2}",
        "RTL requests by size {32: 0, 64: 0, 96: 0, 128: 8}, the golden model's in the same run "
        "{32: 5, 64: 1, 96: 0, 128: 2}"]
    assert cosim_check(dict(rtl, extra_requests=2), tlm) == ["the RTL sent 2 requests after the last warp"]
    fewer = dict(rtl, coalescer={"requests": hist, "instructions": 6})
    assert cosim_check(fewer, tlm) == ["the RTL run sent 6 warp instructions, the TLM run 7"]
    assert cosim_check({"error": "HangError: no progress"}, tlm) == [
        "the run with the RTL coalescer stopped: HangError: no progress"]
