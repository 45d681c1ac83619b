"""The graphunits command line: Verilog export, lint, help and error messages."""
import json
import subprocess
import sys

import pytest

from sim.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True, text=True)


def test_verilog_writes_verilog_and_json(tmp_path):
    assert main(["verilog", "--unit", "fetch", "--preset", "default", "-o", str(tmp_path)]) == 0
    v = (tmp_path / "fetch.v").read_text()
    assert "module fetch(" in v and "mem__req__valid" in v
    doc = json.loads((tmp_path / "fetch.json").read_text())
    assert doc["type"] == "FetchConfig" and doc["params"]["width"] == 4


def test_verilog_with_overrides_and_config_file(tmp_path):
    assert main(["verilog", "--unit", "fetch", "--set", "width=8", "--set", "max_inflight=64",
                 "-o", str(tmp_path), "--name", "fetch_w8"]) == 0
    doc = json.loads((tmp_path / "fetch_w8.json").read_text())
    assert doc["params"]["width"] == 8 and doc["params"]["max_inflight"] == 64
    # The JSON written next to the Verilog rebuilds the same design.
    out2 = tmp_path / "again"
    assert main(["verilog", "--unit", "fetch", "--config", str(tmp_path / "fetch_w8.json"),
                 "-o", str(out2), "--name", "fetch_w8"]) == 0
    assert (out2 / "fetch_w8.v").read_text() == (tmp_path / "fetch_w8.v").read_text()


@pytest.mark.parametrize("unit, preset", [("fetch", "default"), ("fetch", "tx1"), ("fetch", "deep"),
                                          ("scu", "tx1"), ("scu", "gtx980"), ("mff", "default"),
                                          ("mff", "gtx480"), ("coalescer", "default"), ("iru", "default"),
                                          ("iru", "small"), ("graphpeg", "default")])
@pytest.mark.parametrize("wall", [False, True])
def test_verilator_lint_accepts_generated_verilog(tmp_path, unit, preset, wall):
    from sim.lint import lint
    main(["verilog", "--unit", unit, "--preset", preset, "-o", str(tmp_path)])
    ok, msgs = lint(tmp_path / f"{unit}.v", wall=wall)
    assert ok, msgs


def test_lint_fetch_without_merge_window(tmp_path):
    # merge_window=0 once gave zero-width counters (ASCRANGE) and constant compares.
    from sim.lint import lint
    main(["verilog", "--unit", "fetch", "--set", "merge_window=0", "-o", str(tmp_path)])
    ok, msgs = lint(tmp_path / "fetch.v", wall=True)
    assert ok, msgs


@pytest.mark.parametrize("args, message", [
    (["verilog", "--unit", "scuu"], "no unit named 'scuu'"),
    (["verilog", "--unit", "fetch", "--preset", "huge"], "FetchConfig has no preset 'huge'"),
    (["verilog", "--unit", "fetch", "--set", "width=3"], "FetchConfig.width must be one of 1, 2, 4, 8, not 3"),
    (["verilog", "--unit", "fetch", "--set", "width"], "--set expects KEY=VALUE"),
    (["verilog", "--unit", "fetch", "--config", "/nonexistent.json"], "configuration file /nonexistent.json does not exist"),
])
def test_errors_are_one_line(args, message):
    r = run_cli(*args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_config_json(tmp_path):
    f = tmp_path / "c.json"
    f.write_text("{ not json")
    r = run_cli("verilog", "--unit", "fetch", "--config", str(f))
    assert r.returncode == 2 and "not valid JSON (line 1" in r.stderr and "Traceback" not in r.stderr


def test_every_command_has_help():
    from sim.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"verilog", "demo", "units", "config", "doctor"} <= set(sub.choices)
    for name in sub.choices:
        r = run_cli(name, "--help")
        assert r.returncode == 0 and "usage: graphunits " + name in r.stdout


def test_units_and_config(capsys):
    assert main(["units"]) == 0
    assert "fetch" in capsys.readouterr().out
    assert main(["config", "--unit", "fetch", "--preset", "tx1"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["width"] == 1


def test_demo_quick_on_icarus():
    r = run_cli("demo", "--quick", "--sim", "icarus")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "matches TLM" in r.stdout and "MISMATCH" not in r.stdout


def test_run_saves_result_that_matches_scipy(tmp_path):
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse import csgraph
    from golden.graphs import load_graph
    out, js = tmp_path / "d.npz", tmp_path / "s.json"
    r = run_cli("run", "--graph", "grid:12x9,seed=3", "--algo", "sssp", "--source", "5",
                "--save", str(out), "--json", str(js), "--kernels")
    assert r.returncode == 0, r.stderr
    assert "sssp_contract" in r.stdout and "estimated GPU time" in r.stdout
    g = load_graph("grid:12x9,seed=3", cache=False)
    A = sp.csr_matrix((g.weight, g.col, g.row_ptr), shape=(g.num_vertices,) * 2)
    assert np.allclose(np.load(out)["dist"], csgraph.dijkstra(A, indices=5))
    doc = json.loads(js.read_text())
    assert doc["graph"]["vertices"] == 108 and doc["gpu"]["total"]["sectors"] > 0
    assert doc["extra"]["source"] == 5


def test_run_on_a_file_with_options(tmp_path):
    import numpy as np
    f = tmp_path / "g.el"
    f.write_text("0 1\n1 2\n")
    out = tmp_path / "b.npz"
    r = run_cli("run", "--graph", str(f), "--algo", "bfs", "--source", "2", "--undirected", "--vertices", "5",
                "--functional", "--save", str(out))
    assert r.returncode == 0, r.stderr
    assert np.load(out)["depth"].tolist() == [2, 1, 0, -1, -1]


@pytest.mark.parametrize("args, message", [
    (["run", "--graph", "kron:scale=6", "--algo", "dfs"], "unknown algorithm 'dfs'"),
    (["run", "--graph", "kron:scale=6", "--algo", "bfs", "--mode", "magic"], "bfs has no mode 'magic'"),
    (["run", "--graph", "kron:scale=99", "--algo", "bfs"], r"kron scale must be an integer in [1, 28], not 99"),
    (["run", "--graph", "missing.mtx", "--algo", "bfs"], "graph file missing.mtx does not exist"),
    (["run", "--graph", "kron:scale=6", "--algo", "bfs", "--source", "64"], "source must be a vertex id in [0, 63]"),
    (["run", "--graph", "kron:scale=6", "--algo", "bfs", "--gpu", "rtx"], "GPUConfig has no preset 'rtx'"),
])
def test_run_errors_are_one_line(args, message):
    r = run_cli(*args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_run_malformed_file_names_the_line(tmp_path):
    f = tmp_path / "bad.mtx"
    f.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 zz\n")
    r = run_cli("run", "--graph", str(f), "--algo", "bfs")
    assert r.returncode == 2 and f"{f}:4: expected 'ROW COL'" in r.stderr and "Traceback" not in r.stderr
