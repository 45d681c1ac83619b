"""The graphunits command line: Verilog export, lint, help and error messages."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphunits.cli import main
from graphunits.cli.common import fmt as _fmt


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "graphunits", *args], capture_output=True, text=True)


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


def test_verilog_comes_from_the_build_cache_and_may_be_written_into_it(tmp_path):
    """`graphunits verilog` copies the simulations' cached build (build/rtl): the same
    text as sim.build.build_verilog's; -o naming the cache's own folder is fine."""
    from hw.registry import UNITS
    from sim.build import build_verilog
    b = build_verilog("coalescer", UNITS["coalescer"].config("default"))
    assert main(["verilog", "--unit", "coalescer", "-o", str(tmp_path)]) == 0
    assert (tmp_path / "coalescer.v").read_text() == b.verilog.read_text()
    assert main(["verilog", "--unit", "coalescer", "-o", str(b.dir)]) == 0
    assert b.verilog.read_text() == (tmp_path / "coalescer.v").read_text()


@pytest.mark.parametrize("unit, preset", [("fetch", "default"), ("fetch", "tx1"), ("fetch", "deep"),
                                          ("scu", "tx1-sim"), ("scu", "gtx980-sim"), ("mff", "default"),
                                          ("mff", "gtx480"), ("coalescer", "default"), ("iru", "default"),
                                          ("iru", "small"), ("graphpeg", "default"), ("axi_bridge", "default")])
def test_verilator_lint_accepts_generated_verilog(tmp_path, unit, preset):
    """Every preset passes -Wall (every warning the default lint reports and the
    style ones); the default lint (`verilog --lint`) on one preset of each unit."""
    from sim.lint import lint
    main(["verilog", "--unit", unit, "--preset", preset, "-o", str(tmp_path)])
    for wall in (True, False) if preset in ("default", "tx1-sim") else (True,):
        ok, msgs = lint(tmp_path / f"{unit}.v", wall=wall)
        assert ok, (wall, msgs)


def test_lint_fetch_without_merge_window(tmp_path):
    # merge_window=0 once gave zero-width counters (ASCRANGE) and constant compares.
    from sim.lint import lint
    main(["verilog", "--unit", "fetch", "--set", "merge_window=0", "-o", str(tmp_path)])
    ok, msgs = lint(tmp_path / "fetch.v", wall=True)
    assert ok, msgs


@pytest.mark.parametrize("args, message", [
    (["verilog", "--unit", "scuu"], "no unit named 'scuu'"),
    (["verilog", "--unit", "fetch", "--preset", "huge"], "FetchConfig has no preset 'huge'"),
    (["verilog", "--unit", "scu", "--preset", "gtx980"], "the SCU's RTL implements the on-chip hash variant"),
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


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "a FetchConfig JSON must be an object with \"type\" and \"params\", not a list"),
    ("null", "must be an object"),
    ('{"type": "FetchConfig"}', "needs a \"params\" object"),
    ('{"type": "FetchConfig", "params": [1]}', "needs a \"params\" object"),
    ('{"type": "FetchConfig", "params": {"width": 4.0}}', "FetchConfig.width must be one of 1, 2, 4, 8, not 4.0"),
    ('{"type": "FetchConfig", "params": {"width": true}}', "FetchConfig.width must be one of 1, 2, 4, 8, not True"),
    ('{"type": "SCUConfig", "params": {}}', "JSON holds a 'SCUConfig', not a FetchConfig"),
])
def test_config_json_problems_name_the_file(tmp_path, text, message):
    """A configuration file that is JSON but not a configuration: one line naming
    the file and the problem, never a traceback from inside Amaranth."""
    f = tmp_path / "c.json"
    f.write_text(text)
    for cmd in ("verilog", "area"):
        r = run_cli(cmd, "--unit", "fetch", "--config", str(f))
        assert r.returncode == 2 and f"{f}: " in r.stderr and message in r.stderr, (cmd, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


def test_config_file_that_is_not_text(tmp_path):
    f = tmp_path / "c.json"
    f.write_bytes(bytes(range(128, 256)))
    r = run_cli("verilog", "--unit", "fetch", "--config", str(f))
    assert r.returncode == 2 and f"{f}: not a text (UTF-8) JSON file" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("verilog", "--unit", "fetch", "--config", str(tmp_path))
    assert r.returncode == 2 and f"configuration file {tmp_path} is not a file" in r.stderr


@pytest.mark.parametrize("name", ["../../escape", "bad name", "1abc", "module", "a$b", ""])
def test_verilog_name_must_be_a_plain_module_name(tmp_path, capsys, name):
    rc, out, err = run_main(capsys, "verilog", "--unit", "fetch", "-o", str(tmp_path / "v"), "--name", name)
    if name == "":               # an empty --name means the unit's own name
        assert rc == 0 and (tmp_path / "v" / "fetch.v").exists()
        return
    assert rc == 2 and "--name must be a plain Verilog module name" in err and repr(name) in err
    assert not list(tmp_path.rglob("*.v")) and not (tmp_path.parent / "escape.v").exists()


def test_verilog_output_must_not_be_empty(capsys):
    rc, out, err = run_main(capsys, "verilog", "--unit", "fetch", "-o", "")
    assert rc == 2 and "-o/--output must name a folder" in err
    f = Path(__file__)
    rc, out, err = run_main(capsys, "verilog", "--unit", "fetch", "-o", str(f))
    assert rc == 2 and f"-o/--output {f}: is a file, not a folder" in err


def test_preset_and_config_are_exclusive(tmp_path, capsys):
    """A configuration file holds every parameter: --preset beside it would be
    silently ignored, so it is an error; --set still changes the file's values."""
    assert main(["verilog", "--unit", "fetch", "--preset", "tx1", "-o", str(tmp_path)]) == 0
    cfg = tmp_path / "fetch.json"
    rc, out, err = run_main(capsys, "verilog", "--unit", "fetch", "--preset", "tx1", "--config", str(cfg),
                            "-o", str(tmp_path / "b"))
    assert rc == 2 and "give --preset tx1 or --config" in err and "not both" in err
    rc, out, err = run_main(capsys, "config", "--unit", "fetch", "--config", str(cfg), "--set", "width=8")
    assert rc == 0, err
    doc = json.loads(out[out.index("{"):])
    tx1 = json.loads(cfg.read_text())["params"]
    assert doc["params"] == {**tx1, "width": 8} and tx1["width"] != 8


def test_simulation_failure_and_memory_error_are_one_line(capsys, monkeypatch):
    """A failed cocotb run (SimulationError is an AssertionError) and running out
    of memory end with one error line and a non-zero status, not a traceback."""
    import graphunits.cli.rtl
    from sim.runner import SimulationError

    def fail(args):
        raise SimulationError("verilator: 1 of 1 cocotb tests failed (log /x/sim.log)")
    monkeypatch.setattr(graphunits.cli.rtl, "cmd_units", fail)
    rc, out, err = run_main(capsys, "units")
    assert rc == 1 and err == "graphunits units: error: simulation failed: verilator: 1 of 1 cocotb tests " \
        "failed (log /x/sim.log)\n"

    def oom(args):
        raise MemoryError()
    monkeypatch.setattr(graphunits.cli.rtl, "cmd_units", oom)
    rc, out, err = run_main(capsys, "units")
    assert rc == 2 and "error: out of memory" in err and err.count("\n") == 1


def test_mff_modes_on_an_empty_graph(tmp_path, capsys):
    """No vertices: the MFF modes report zero work and no speedup (nothing to compare)."""
    f = tmp_path / "empty.el"
    f.write_text("")
    for algo in ("pr", "cc"):
        rc, out, err = run_main(capsys, "run", "--graph", str(f), "--algo", algo, "--mode", "mff")
        assert rc == 0, err
        assert table_value(out, "MFF commands / values") == "0 / 0"


def test_every_command_has_help(capsys):
    from graphunits.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"verilog", "demo", "units", "config", "doctor"} <= set(sub.choices)
    for name in sub.choices:                    # in this process (the entry point itself: below)
        with pytest.raises(SystemExit) as e:
            main([name, "--help"])
        assert e.value.code == 0 and "usage: graphunits " + name in capsys.readouterr().out
    r = run_cli("verilog", "--help")
    assert r.returncode == 0 and "usage: graphunits verilog" in r.stdout


def test_units_and_config(capsys):
    assert main(["units"]) == 0
    assert "fetch" in capsys.readouterr().out
    assert main(["config", "--unit", "fetch", "--preset", "tx1"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["width"] == 1


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


# ---------------------------------------------------------------------- run: options checked against the registries
def run_main(capsys, *args):
    """``graphunits ARGS`` in this process: (exit status, stdout, stderr)."""
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("args, message", [
    (["--functional", "--kernels"], "--kernels applies to the GPU model, which --functional does not run"),
    (["--functional", "--gpu-set", "l1_mshrs=4"], "--gpu-set applies to the GPU model, which --functional does not run"),
    (["--functional", "--no-caches"], "--no-caches applies to the GPU model, which --functional does not run"),
    (["--functional", "--cache-model", "exact"], "--cache-model exact applies to the GPU model"),
    (["--no-caches", "--cache-model", "exact"], "--cache-model exact models the caches that --no-caches leaves out"),
    (["--functional", "--save", "{tmp}/r.npz", "--json", "{tmp}/r.npz"], "--save and --json both name {tmp}/r.npz"),
    # (--save adds .npz: the same file again)
    (["--functional", "--save", "{tmp}/r", "--json", "{tmp}/r.npz"], "--save and --json both name {tmp}/r.npz"),
])
def test_run_refuses_options_that_would_have_no_effect_or_overwrite(capsys, tmp_path, args, message):
    """Options another one makes meaningless are refused, not ignored (the run's
    result is not silently different from what was asked); two outputs never
    share a file (the second would overwrite the first)."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    rc, out, err = run_main(capsys, "run", "--graph", "grid:4x4", "--algo", "bfs", *args)
    assert rc == 2 and message.replace("{tmp}", str(tmp_path)) in err and not list(tmp_path.iterdir())


@pytest.mark.parametrize("algo", ["pr", "cc", "kcore"])
def test_run_rejects_source_without_a_source_vertex(capsys, algo):
    rc, out, err = run_main(capsys, "run", "--graph", "kron:scale=5", "--algo", algo, "--source", "3")
    assert rc == 2 and out == ""
    assert err == f"graphunits run: error: --source applies to bfs, sssp, bc; {algo} has no source vertex\n"


@pytest.mark.parametrize("args, message", [
    (["--algo", "bfs", "--tol", "1e-3"], "--tol applies to pr, not bfs"),
    (["--algo", "cc", "--max-iter", "3"], "--max-iter applies to pr, not cc"),
    (["--algo", "bfs", "--delta", "2"], "--delta applies to sssp, not bfs"),
    (["--algo", "bfs", "--mode", "graphpeg", "--direction", "pull"],
     "--direction applies to --mode graphpeg-pull, not graphpeg"),
])
def test_run_rejects_options_of_other_algorithms(capsys, args, message):
    rc, _, err = run_main(capsys, "run", "--graph", "kron:scale=5", *args)
    assert rc == 2 and err == f"graphunits run: error: {message}\n"


def test_save_without_suffix_reports_the_file_written(tmp_path, capsys):
    import numpy as np
    from golden.graphs import load_graph
    from sim.reference import ref_bfs
    g = load_graph("grid:5x6", cache=False)
    rc, out, _ = run_main(capsys, "run", "--graph", "grid:5x6", "--algo", "bfs", "--source", "7",
                          "--save", str(tmp_path / "depths"))
    assert rc == 0
    written = tmp_path / "depths.npz"
    assert f"saved depth to {written} (.npz added to the name given)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["depths.npz"]
    assert np.array_equal(np.load(written)["depth"], ref_bfs(g, 7))
    rc, out, _ = run_main(capsys, "run", "--graph", "grid:5x6", "--algo", "bfs", "--save", str(tmp_path / "x.npz"))
    assert rc == 0 and f"saved depth to {tmp_path / 'x.npz'}\n" in out


@pytest.mark.parametrize("name", ["x.NPZ", "x.Npz"])
def test_save_with_an_upper_case_suffix_writes_the_name_given(tmp_path, capsys, name):
    # numpy's own check for ".npz" is case-sensitive: given a path it would write x.NPZ.npz.
    import numpy as np
    from golden.graphs import load_graph
    from sim.reference import ref_bfs
    rc, out, _ = run_main(capsys, "run", "--graph", "grid:5x6", "--algo", "bfs", "--source", "7",
                          "--save", str(tmp_path / name))
    assert rc == 0 and f"saved depth to {tmp_path / name}\n" in out
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert np.array_equal(np.load(tmp_path / name)["depth"], ref_bfs(load_graph("grid:5x6", cache=False), 7))


@pytest.mark.parametrize("option, value, message", [
    ("--save", "{dir}", "--save {dir}: is a directory; give a file name"),
    ("--json", "{dir}", "--json {dir}: is a directory; give a file name"),
    ("--save", "{dir}/", "--save {dir}/: is a directory; give a file name"),
    ("--save", "{dir}/sub", "--save {dir}/sub: {dir}/sub.npz is a directory; give a file name"),
    ("--save", "{file}/x.npz", "--save {file}/x.npz: {file} is a file, not a folder"),
    ("--json", "{file}/deeper/s.json", "--json {file}/deeper/s.json: {file} is a file, not a folder"),
    ("--save", "", "--save needs a file name, not ''"),
    ("--json", "", "--json needs a file name, not ''"),
    ("--json", "  ", "--json needs a file name, not '  '"),
    # a place where no file can be made (Linux's /proc): before the run, not after it
    pytest.param("--json", "/proc/graphunits-none/s.json", "--json /proc/graphunits-none/s.json: cannot write in /proc",
                 marks=pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs Linux's /proc")),
])
def test_bad_output_paths_are_one_line_errors_before_the_run(tmp_path, capsys, option, value, message):
    d, f = tmp_path / "d", tmp_path / "g.el"
    d.mkdir()
    (d / "sub.npz").mkdir()
    f.write_text("0 1\n")
    value, message = (t.format(dir=d, file=f) for t in (value, message))
    before = sorted(tmp_path.rglob("*"))
    rc, out, err = run_main(capsys, "run", "--graph", "grid:4x4", "--algo", "bfs", option, value)
    assert (rc, out) == (2, "")              # nothing ran: no table
    assert err.startswith(f"graphunits run: error: {message}") and len(err.splitlines()) == 1
    assert sorted(tmp_path.rglob("*")) == before


def test_output_paths_are_tried_before_the_run_and_left_as_they_were(tmp_path, capsys):
    """The probe changes nothing: no folder made, no file left, an existing file,
    a symbolic link (dangling too) and a pipe untouched; --save probes the name
    it writes (.npz added)."""
    import os
    from golden.report import output_path
    new, old = tmp_path / "a" / "b" / "s.json", tmp_path / "old.json"
    old.write_text("kept")
    link, pipe = tmp_path / "link.json", tmp_path / "pipe"
    link.symlink_to(tmp_path / "target.json")
    os.mkfifo(pipe)
    before = sorted(tmp_path.rglob("*"))
    for p in (new, old, link, pipe):
        assert output_path("--json", str(p)) == p
    assert sorted(tmp_path.rglob("*")) == before and old.read_text() == "kept" and link.is_symlink()
    # a result written through a link goes to its target
    assert main(["run", "--graph", "grid:4x4", "--algo", "bfs", "--functional", "--json", str(link)]) == 0
    assert link.is_symlink() and json.loads((tmp_path / "target.json").read_text())["algo"] == "bfs"
    capsys.readouterr()
    # --save NAME writes NAME.npz: that is the path tried (here a link to a folder that does not exist)
    (tmp_path / "out.npz").symlink_to(tmp_path / "nowhere" / "x.npz")
    rc, out, err = run_main(capsys, "run", "--graph", "grid:4x4", "--algo", "bfs", "--functional", "--save",
                            str(tmp_path / "out"))
    assert rc == 2 and out == "" and "x.npz, in a folder that does not exist" in err


def test_cosim_json_path_is_checked_before_the_run(tmp_path, capsys):
    rc, out, err = run_main(capsys, "cosim", "--graph", "grid:4x4", "--algo", "bfs", "--json", str(tmp_path))
    assert (rc, out) == (2, "") and err == f"graphunits cosim: error: --json {tmp_path}: is a directory; give a file name\n"


def test_write_errors_are_one_line(tmp_path, capsys, monkeypatch):
    import errno
    import numpy as np

    def full(*_, **__):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(np, "savez_compressed", full)
    path = tmp_path / "new" / "d.npz"
    rc, out, err = run_main(capsys, "run", "--graph", "grid:4x4", "--algo", "bfs", "--save", str(path))
    assert rc == 2 and "saved" not in out
    assert err == f"graphunits run: error: --save {path}: cannot write (No space left on device)\n"
    # Any other OSError reaching main is one line too, "path: reason" (here: a folder over a file).
    (tmp_path / "f").write_text("")
    rc, out, err = run_main(capsys, "verilog", "--unit", "fetch", "-o", str(tmp_path / "f" / "sub"))
    assert rc == 2 and err == f"graphunits verilog: error: {tmp_path / 'f' / 'sub'}: Not a directory\n"


@pytest.mark.parametrize("args, message", [
    (["--algo", "pr", "--tol", "nan"], "tol must be a positive finite number, not nan"),
    (["--algo", "pr", "--tol", "inf"], "tol must be a positive finite number, not inf"),
    (["--algo", "pr", "--damping", "nan"], r"damping must be in (0, 1), not nan"),
    (["--algo", "sssp", "--delta", "nan"], "delta must be a positive finite number, not nan"),
])
def test_nan_options_are_rejected(capsys, args, message):
    rc, out, err = run_main(capsys, "run", "--graph", "grid:4x4", *args)
    assert (rc, out) == (2, "") and err == f"graphunits run: error: {message}\n"


def test_pagerank_that_stops_at_max_iter_warns(tmp_path, capsys):
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    js = tmp_path / "pr.json"
    rc, out, err = run_main(capsys, "run", "--graph", "kron:scale=7", "--algo", "pr", "--max-iter", "2",
                            "--json", str(js))
    assert rc == 0
    # Independent of the CLI: two iterations leave an L1 change far above 1e-6.
    change = run_algorithm(load_graph("kron:scale=7", cache=False), "pr", max_iter=2, stats=False).extra["final_change"]
    assert change > 1e-3
    msg = f"PageRank stopped at --max-iter 2 without converging: L1 change {change:.3g} >= --tol 1e-06"
    assert f"warning: {msg}" in err
    assert json.loads(js.read_text())["warnings"] == [msg + " (raise --max-iter or --tol)"]
    rc, out, err = run_main(capsys, "run", "--graph", "kron:scale=7", "--algo", "pr", "--tol", "1e-4",
                            "--json", str(js))
    assert rc == 0 and "warning" not in err and json.loads(js.read_text())["warnings"] == []


# ---------------------------------------------------------------------- progress
def test_progress_line_is_shown_when_forced(capsys):
    rc, out, err = run_main(capsys, "run", "--graph", "grid:6x6", "--algo", "bfs", "--source", "0", "--progress")
    assert rc == 0
    assert err.startswith("\rbfs on grid:6x6,seed=1: iteration 0, 1 active, ") and err.endswith("\n")
    rc, out, err = run_main(capsys, "run", "--graph", "grid:6x6", "--algo", "bfs", "--source", "0")
    assert rc == 0 and err == ""        # not a terminal, not forced: quiet


def test_iteration_progress_rules(capsys, monkeypatch):
    from sim import progress
    p = progress.IterationProgress("job", force=True, delay=0.0)
    p(0, 5)
    p(1, 3)                               # within 0.2 s of the last line: not shown
    p.close()
    assert capsys.readouterr().err.count("\rjob: iteration") == 1
    q = progress.IterationProgress("job", force=False)   # stderr is not a terminal under pytest
    q(0, 5)
    q.close()
    assert capsys.readouterr().err == ""
    t = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: t[0])
    r = progress.IterationProgress("slow", force=True, delay=1.0)
    r(0, 9)                               # before the delay: nothing
    t[0] = 101.5
    r(1, 8)
    t[0] = 101.6
    r(2, 7)                               # 0.1 s after the last line: skipped
    t[0] = 102.0
    r(3, 6)
    r.close()
    assert capsys.readouterr().err == ("\rslow: iteration 1, 8 active, 1.5 s   "
                                       "\rslow: iteration 3, 6 active, 2.0 s   \n")


# ---------------------------------------------------------------------- help generated from the registries
def help_text(*args):
    import os
    env = dict(os.environ, COLUMNS="2000")      # no line wrapping
    r = subprocess.run([sys.executable, "-m", "graphunits", *args, "--help"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def option_help(text, option):
    """The help of ``option`` (argparse puts it on the next line after a long option)."""
    lines = text.splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.strip() == option or ln.strip().startswith(option + " "))
    block = [lines[i]]
    for ln in lines[i + 1:]:
        if ln.lstrip().startswith("-"):
            break
        block.append(ln)
    return " ".join(" ".join(block).split())


def test_run_and_cosim_help_list_every_registered_name():
    from golden.algorithms import ALGORITHMS, MODES, modes_for
    from golden.emogi.config import PCIeConfig
    from golden.gpu import GPUConfig
    from golden.graphpeg.config import GraphPEGConfig
    from golden.iru.config import IRUConfig
    from golden.mff.config import MFFConfig
    from golden.scu.config import SCUConfig
    from sim.cosim import cosim_units
    for a in ALGORITHMS:
        modes_for(a)
    text = help_text("run")
    algo = option_help(text, "--algo ALGO")
    assert all(f" {a}," in algo or f" {a} " in algo for a in ALGORITHMS) and "kcore" in algo
    mode = option_help(text, "--mode MODE")
    modes = {m for _, m in MODES}
    assert {"baseline", "iru", "graphpeg", "graphpeg-pull", "pull", "mff", "emogi-naive", "emogi-merged",
            "emogi-aligned", "uvm", "scu", "scu-enhanced"} <= modes
    assert all(m in mode.replace(",", " ").replace("(", " ").split() for m in modes)
    for flag, cls in (("--scu-preset", SCUConfig), ("--iru-preset", IRUConfig), ("--graphpeg-preset", GraphPEGConfig),
                      ("--mff-preset", MFFConfig), ("--pcie", PCIeConfig), ("--gpu", GPUConfig)):
        line = option_help(text, flag + (" GPU" if flag == "--gpu" else " PRESET"))
        assert all(p in line for p in cls.preset_names()), (flag, line)
    text = help_text("cosim")
    unit = option_help(text, "--unit UNIT")
    units = cosim_units()
    assert {"scu", "mff", "iru", "graphpeg"} <= set(units)
    assert all(f"{n} (algorithms {', '.join(u.algos)}" in unit for n, u in units.items())
    # --memory names exactly the units whose testbench memory can sit inside the design
    memory = option_help(text, "--memory {design,python}")
    inside = memory.split("units that have it: ", 1)[1].split(")", 1)[0].split(", ")
    assert inside == [n for n, u in units.items() if u.in_design_memory]
    assert {"scu", "iru", "graphpeg", "mff"} <= set(inside)


def test_help_follows_the_registries(capsys, monkeypatch):
    # A mode or cosim unit registered later shows up in the help: nothing is listed by hand.
    from golden.algorithms import MODES, BFS
    from sim import cosim
    from graphunits.cli import build_parser
    monkeypatch.setitem(MODES, ("bfs", "brand-new-mode"), BFS)
    some = next(iter(cosim.cosim_units().values()))
    monkeypatch.setitem(cosim._COSIM, "brand-new-unit", some)
    monkeypatch.setenv("COLUMNS", "2000")
    for cmd, word in (("run", "brand-new-mode"), ("cosim", "brand-new-unit")):
        with pytest.raises(SystemExit):
            build_parser().parse_args([cmd, "--help"])
        assert word in capsys.readouterr().out


# ---------------------------------------------------------------------- unit presets and EMOGI options
def run_json(tmp_path, capsys, *args):
    js = tmp_path / "r.json"
    rc, out, err = run_main(capsys, "run", *args, "--json", str(js))
    assert rc == 0, err
    return out, json.loads(js.read_text())


def table_value(out, label):
    """The value column of the row ``label`` of the run table."""
    line = next(ln for ln in out.splitlines() if ln.startswith(label + "  "))
    return line[len(label):].strip()


def test_iru_preset_and_statistics(tmp_path, capsys):
    from golden.iru.config import IRUConfig
    out, doc = run_json(tmp_path, capsys, "--graph", "kron:scale=7", "--algo", "pr", "--mode", "iru",
                        "--iru-preset", "small", "--max-iter", "3")
    iru = doc["extra"]["iru"]
    assert iru["config"] == IRUConfig.preset("small").to_dict() != IRUConfig.preset("gtx980").to_dict()
    assert table_value(out, "iru preset") == "small"
    assert table_value(out, "IRU operations / elements") == f"{iru['ops']} / {iru['elements']}"
    assert table_value(out, "IRU elements filtered or merged") == \
        f"{iru['disabled']} ({100 * iru['disabled'] / iru['elements']:.1f} %)"
    assert iru["disabled"] > 0           # PR merges contributions to one target
    assert table_value(out, "IRU blocks per full reply") == f"{iru['blocks_per_reply']:.3g}"
    tm = doc["extra"]["time"]
    assert table_value(out, "IRU / GPU cycles (est.)") == f"{tm['iru_cycles']:.0f} / {tm['gpu_cycles']:.0f}"
    assert table_value(out, "accesses per warp request") == str(round(doc["gpu"]["total"]["accesses_per_request"], 3))


def test_graphpeg_preset_and_statistics(tmp_path, capsys):
    from golden.graphpeg.config import GraphPEGConfig
    out, doc = run_json(tmp_path, capsys, "--graph", "kron:scale=7", "--algo", "bfs", "--mode", "graphpeg",
                        "--gpu", "kepler", "--graphpeg-preset", "sim")
    st = doc["extra"]["graphpeg"]
    assert st["alwt_entries"] == GraphPEGConfig.preset("sim").alwt_entries != GraphPEGConfig.preset("default").alwt_entries
    assert table_value(out, "GraphPEG kernels / items (edges)") == f"{st['kernels']} / {st['items']}"
    assert table_value(out, "load imbalance (with / without EF)") == \
        f"{st['load_imbalance']:.3g} / {st['load_imbalance_no_ef']:.3g}"
    assert table_value(out, "EF exchanges / moved edges") == f"{st['exchanges']} / {st['moved_edges']}"
    assert table_value(out, "engine memory requests") == str(st["engine_requests"])
    assert table_value(out, "warp utilisation") == f"{st['warp_utilisation']:.3g}"
    assert table_value(out, "baseline cycles / speedup (est.)").endswith(f" / {st['speedup']:.3g}")


def test_mff_preset_and_statistics(tmp_path, capsys):
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    g = load_graph("kron:scale=7", cache=False)
    reads = {}
    for preset in ("sector", "gtx480"):
        out, doc = run_json(tmp_path, capsys, "--graph", "kron:scale=7", "--algo", "pr", "--mode", "mff",
                            "--gpu", "gtx480", "--mff-preset", preset, "--max-iter", "2")
        mf = doc["extra"]["mff"]
        lib = run_algorithm(g, "pr", "mff", gpu="gtx480", mff=preset, max_iter=2).extra["mff"]
        assert mf["requests"] == lib["requests"]
        reads[preset] = mf["requests"]
        assert mf["reads"] == mf["requests"] and mf["writes"] == 0    # a gather only reads
        assert table_value(out, "MFF commands / values") == f"{mf['commands']} / {mf['values']}"
        assert table_value(out, "MFF requests: reads / writes (total)") == \
            f"{mf['reads']} / 0 ({mf['requests']})"
        assert table_value(out, "MFF requests per edge") == f"{mf['requests_per_edge']:.3g}"
        assert table_value(out, "MFF blocks (distinct per command)") == str(mf["blocks"])
    assert reads["sector"] != reads["gtx480"]    # 32 B against 128 B blocks


def test_mff_baseline_and_speedup_rows(tmp_path, capsys):
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    g = load_graph("kron:scale=7", cache=False)
    out, doc = run_json(tmp_path, capsys, "--graph", "kron:scale=7", "--algo", "pr", "--mode", "mff",
                        "--gpu", "gtx480", "--max-iter", "2")
    mf = doc["extra"]["mff"]
    assert "speedup" in mf and "baseline_requests" in mf       # golden/mff/algorithms.py compares by default
    assert table_value(out, "pull (GPU alone) / total requests") == \
        f"{mf['baseline_requests']} / {mf['total_requests']}"
    assert table_value(out, "pull cycles / speedup (est.)") == \
        f"{_fmt(mf['baseline_cycles'])} / {mf['speedup']:.3g}"
    # The baseline is the pull mode on the GPU alone: its 128 B line requests (GTX 480) and cycles.
    pull = run_algorithm(g, "pr", "pull", gpu="gtx480", max_iter=2).gpu["total"]
    assert mf["baseline_requests"] == pull["lines"] and mf["speedup"] == pytest.approx(pull["cycles"] / mf["cycles"])
    assert table_value(out, "GPU / total memory requests (GPU + MFF)") == \
        f"{mf['gpu_requests']} / {mf['gpu_requests'] + mf['reads']}"
    rc, out, _ = run_main(capsys, "run", "--graph", "kron:scale=7", "--algo", "pr", "--mode", "mff", "--functional",
                          "--max-iter", "2")
    assert rc == 0 and "MFF commands" in out and "speedup" not in out    # no baseline without statistics


def test_mff_push_rows(tmp_path, capsys):
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    g = load_graph("kron:scale=7", cache=False)
    out, doc = run_json(tmp_path, capsys, "--graph", "kron:scale=7", "--algo", "bfs", "--mode", "mff-push",
                        "--gpu", "gtx480", "--source", "3")
    mf = doc["extra"]["mff"]
    assert mf["requests"] == mf["reads"] + mf["writes"] and mf["writes"] > 0
    assert table_value(out, "MFF scatter commands / bits set") == f"{mf['scatter_commands']} / {mf['bits']}"
    assert table_value(out, "MFF requests: reads / writes (total)") == \
        f"{mf['reads']} / {mf['writes']} ({mf['reads'] + mf['writes']})"
    # The atomics replaced are those of the push mode (atomicOr per bit), counted by that run.
    push = run_algorithm(g, "bfs", "push", gpu="gtx480", source=3).extra["mff"]
    assert table_value(out, "atomics replaced (one per bit set)") == str(push["atomics"]) != "0"
    assert "MFF commands / values" not in out
    if "speedup" in mf:
        assert table_value(out, "push cycles / speedup (est.)").endswith(f" / {mf['speedup']:.3g}")
    out, doc = run_json(tmp_path, capsys, "--graph", "kron:scale=7", "--algo", "bfs", "--mode", "push",
                        "--gpu", "gtx480", "--source", "3")
    assert table_value(out, "GPU atomics / their memory requests") == \
        f"{push['atomics']} / {push['atomic_requests']}"
    assert "MFF" not in out and "speedup" not in out


def test_mff_rows_tolerate_missing_keys():
    from types import SimpleNamespace
    from graphunits.cli.run import _unit_rows
    rows = _unit_rows(SimpleNamespace(extra={"mff": {"commands": 3}}, mode="mff"))
    assert rows == [["MFF commands / values", "3 / -"]]
    rows = dict(_unit_rows(SimpleNamespace(extra={"mff": {"scatter_commands": 2, "reads": 1}}, mode="mff-push")))
    assert rows == {"MFF scatter commands / bits set": "2 / -", "MFF requests: reads / writes (total)": "1 / - (-)"}
    assert _unit_rows(SimpleNamespace(extra={"mff": {}}, mode="pull")) == []
    assert _unit_rows(SimpleNamespace(extra={"mff": {"speedup": 2.0}}, mode="pull")) == []


def test_emogi_options(tmp_path, capsys):
    base = ("--graph", "kron:scale=8", "--algo", "bfs", "--source", "3")
    _, doc = run_json(tmp_path, capsys, *base, "--mode", "emogi-merged", "--pcie", "pcie4-x16", "--edge-bytes", "4")
    em = doc["extra"]["emogi"]
    assert em["pcie"] == "pcie4-x16" and em["arrays"]["host:col"] == 4
    _, doc = run_json(tmp_path, capsys, *base, "--mode", "emogi-merged")
    assert doc["extra"]["emogi"]["pcie"] == "pcie3-x16" and doc["extra"]["emogi"]["arrays"]["host:col"] == 8
    pages = {}
    for ratio in ("0.25", "2"):
        _, doc = run_json(tmp_path, capsys, *base, "--mode", "uvm", "--uvm-capacity", ratio)
        em = doc["extra"]["emogi"]
        pages[ratio] = em["capacity_pages"], em["evictions"], em["data_pages"]
        assert doc["options"]["uvm_capacity"] == ratio
    (cap, ev, data), (cap2, ev2, data2) = pages["0.25"], pages["2"]
    assert data == data2 and cap == int(0.25 * data) and cap2 == data    # docs/emogi.md: the ratio of the data pages
    assert ev > 10 * ev2                 # a quarter of the edge list thrashes
    _, doc = run_json(tmp_path, capsys, *base, "--mode", "uvm", "--uvm-capacity", "8KiB")
    assert doc["extra"]["emogi"]["capacity_pages"] == 2    # 8 KiB of 4 KiB pages


@pytest.mark.parametrize("unit, graph, cycles, bounds", [
    ("iru", "kron:scale=7", "cycles", (0.75, 1.25)),            # docs/iru.md, "Fast model"
    ("graphpeg", "kron:scale=8", "engine_cycles", (0.85, 1.15)),  # docs/graphpeg.md, "Fast model"
])
def test_unit_model_option(tmp_path, capsys, unit, graph, cycles, bounds):
    """--iru-model / --graphpeg-model pick the unit's fast or cycle-level model;
    fast is the default, and the two agree within the unit's stated bounds."""
    base = ("--graph", graph, "--algo", "bfs", "--source", "3", "--mode", unit)
    got = {}
    for m in ("fast", "cycle"):
        out, doc = run_json(tmp_path, capsys, *base, f"--{unit}-model", m)
        assert doc["extra"][unit]["model"] == m and doc["options"][f"{unit}_model"] == m
        assert any(ln.split()[:3] == [unit, "model", m] for ln in out.splitlines())
        got[m] = doc["extra"][unit][cycles]
    _, doc = run_json(tmp_path, capsys, *base)
    assert doc["extra"][unit]["model"] == "fast"
    assert bounds[0] <= got["fast"] / got["cycle"] <= bounds[1]


def modes_of(unit):
    from graphunits.cli import unit_modes
    return " or ".join(unit_modes(unit))


def presets_of(cls_name):
    import importlib
    module = {"IRUConfig": "golden.iru.config", "GraphPEGConfig": "golden.graphpeg.config",
              "MFFConfig": "golden.mff.config", "SCUConfig": "golden.scu.config", "PCIeConfig": "golden.emogi.config"}
    return ", ".join(getattr(importlib.import_module(module[cls_name]), cls_name).preset_names())


def test_unit_modes_come_from_the_registry():
    from graphunits.cli import unit_modes
    assert {"scu", "scu-enhanced"} <= set(unit_modes("scu")) and unit_modes("iru") == ["iru"]
    assert {"graphpeg", "graphpeg-pull"} <= set(unit_modes("graphpeg"))
    assert "mff" in unit_modes("mff") and "pull" not in unit_modes("mff")
    assert {"emogi-naive", "emogi-merged", "emogi-aligned", "uvm"} <= set(unit_modes("emogi"))


@pytest.mark.parametrize("args, message", [
    (["--algo", "bfs", "--mode", "iru", "--iru-preset", "huge"],
     lambda: f"--iru-preset must be one of {presets_of('IRUConfig')}, not 'huge'"),
    (["--algo", "bfs", "--iru-preset", "small"], lambda: f"--iru-preset applies to --mode {modes_of('iru')}, not baseline"),
    (["--algo", "bfs", "--mode", "graphpeg", "--graphpeg-preset", "big"],
     lambda: f"--graphpeg-preset must be one of {presets_of('GraphPEGConfig')}, not 'big'"),
    (["--algo", "bfs", "--mode", "iru", "--graphpeg-preset", "sim"],
     lambda: f"--graphpeg-preset applies to --mode {modes_of('graphpeg')}, not iru"),
    (["--algo", "pr", "--mode", "mff", "--mff-preset", "x"],
     lambda: f"--mff-preset must be one of {presets_of('MFFConfig')}, not 'x'"),
    (["--algo", "pr", "--mode", "pull", "--mff-preset", "tiny"],
     lambda: f"--mff-preset applies to --mode {modes_of('mff')}, not pull"),
    (["--algo", "bfs", "--mode", "scu", "--scu-preset", "nope"],
     lambda: f"--scu-preset must be one of {presets_of('SCUConfig')}, not 'nope'"),
    (["--algo", "bfs", "--mode", "emogi-merged", "--pcie", "pcie5"],
     lambda: f"--pcie must be one of {presets_of('PCIeConfig')}, not 'pcie5'"),
    (["--algo", "bfs", "--pcie", "pcie4-x16"], lambda: f"--pcie applies to --mode {modes_of('emogi')}, not baseline"),
    (["--algo", "bfs", "--mode", "uvm", "--uvm-capacity", "0"], lambda: "a UVM capacity ratio must be a finite number above 0, not '0'"),
    (["--algo", "bfs", "--mode", "uvm", "--uvm-capacity", "nan"],
     lambda: "a UVM capacity ratio must be a finite number above 0, not 'nan'"),
    (["--algo", "bfs", "--mode", "uvm", "--uvm-capacity", "3XB"],
     lambda: "a UVM capacity is a ratio of the host data (e.g. 0.5) or a size with a unit"),
    (["--algo", "bfs", "--uvm-capacity", "0.5"], lambda: "--uvm-capacity applies to --mode uvm, not baseline"),
    (["--algo", "bfs", "--mode", "emogi-naive", "--uvm-capacity", "0.5"],
     lambda: "--uvm-capacity applies to --mode uvm, not emogi-naive"),
    (["--algo", "bfs", "--mode", "iru", "--edge-bytes", "4"],
     lambda: f"--edge-bytes applies to --mode {modes_of('emogi')}, not iru"),
    (["--algo", "bfs", "--mode", "scu", "--iru-model", "cycle"],
     lambda: f"--iru-model applies to --mode {modes_of('iru')}, not scu"),
    (["--algo", "bfs", "--mode", "iru", "--graphpeg-model", "cycle"],
     lambda: f"--graphpeg-model applies to --mode {modes_of('graphpeg')}, not iru"),
])
def test_unit_option_errors(capsys, args, message):
    rc, out, err = run_main(capsys, "run", "--graph", "kron:scale=5", *args)
    assert rc == 2 and out == "" and err.startswith(f"graphunits run: error: {message()}") and err.count("\n") == 1
    name = next((a for a in args[1::2] if a in ("huge", "big", "x", "nope", "pcie5")), None)
    if name is not None:                 # the list of allowed presets is not empty
        assert "must be one of " in err and ", " in err.split("must be one of ")[1]


def test_edge_bytes_must_be_4_or_8():
    r = run_cli("run", "--graph", "kron:scale=5", "--algo", "bfs", "--mode", "emogi-merged", "--edge-bytes", "3")
    assert r.returncode == 2 and "argument --edge-bytes: invalid choice: 3 (choose from 4, 8)" in r.stderr
    assert "Traceback" not in r.stderr


def test_kernel_table_shows_work_per_kernel(tmp_path, capsys):
    out, doc = run_json(tmp_path, capsys, "--graph", "grid:4x4", "--algo", "bfs", "--source", "0", "--kernels")
    rows = {}                                       # the first table (work); the second lists the bounds
    for ln in out.splitlines():
        if ln.startswith(("bfs_", "total ")):
            rows.setdefault(ln.split()[0], ln.split())
    bounds = next(ln.split() for ln in out.splitlines() if ln.startswith("kernel ") and "binds" in ln)
    assert bounds[2:] == ["issue", "lsu", "mshr", "icnt", "l2", "atomics", "dram", "pcie", "unit", "latency", "cycles",
                          "binds"]
    assert {k["name"]: k["bound"] for k in doc["gpu"]["kernels"]}.keys() == {"bfs_expand", "bfs_contract"}
    header = next(ln.split() for ln in out.splitlines() if ln.startswith("kernel "))
    assert header[:4] == ["kernel", "launches", "edges", "vertices"]
    # A 4x4 grid from a corner: every vertex expanded once, its 48 arcs inspected once
    # (each edge frontier fits in one warp, whose culling removes the duplicates).
    assert rows["bfs_expand"][1:4] == ["7", "48", "16"]
    assert rows["bfs_contract"][2:4] == ["0", "0"]
    assert rows["total"][2:4] == ["48", "16"]
    assert doc["counters"]["edges"] == 48 and doc["counters"]["frontier_vertices"] == 16
    assert [k["edges"] for k in doc["gpu"]["kernels"]] == [48, 0]


def test_verilog_behind_axi4(tmp_path, capsys):
    assert main(["verilog", "--unit", "coalescer", "--preset", "small", "--axi", "-o", str(tmp_path)]) == 0
    text = (tmp_path / "coalescer_axi.v").read_text()
    assert "s_axis_i_tvalid" in text and "m_axis_o_tdata" in text and "behind AXI4" in text
    assert main(["verilog", "--unit", "fetch", "--preset", "tx1", "--axi", "8", "-o", str(tmp_path), "--lint", "wall"]) == 0
    text = (tmp_path / "fetch_axi.v").read_text()
    assert "output [63:0] m_axi_wdata" in text and "s_axis_cmd_tdata" in text
    capsys.readouterr()
    for unit, bad, msg in (("fetch", "5", "--axi must be the AXI4 data bus in bytes"),
                           ("fetch", "64", "--axi 64: AXIBridgeConfig.data_bytes must be at most block_bytes (32), "
                                           "not 64"),
                           # the bridge serves its memory port: there is no master to make AXI4
                           ("axi_bridge", "16", "--axi 16: MemToAXI4 serves memory requests on 'mem'")):
        r = run_cli("verilog", "--unit", unit, "--axi", bad, "-o", str(tmp_path))
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_run_gpu_set_changes_the_preset_for_the_run_and_its_baseline(capsys, tmp_path):
    """--gpu-set NAME=VALUE: the run's GPU is the preset with those fields changed (the
    table says which, the JSON has the values), the MFF's baseline runs on the same
    GPU; a bad assignment is a one-line error naming the option and the parameter."""
    import json
    out = tmp_path / "r.json"
    rc, text, err = run_main(capsys, "run", "--graph", "kron:scale=8", "--algo", "pr", "--mode", "mff",
                             "--gpu", "gtx480", "--gpu-set", "l2_latency=100", "--gpu-set", "l1_mshrs=8",
                             "--json", str(out))
    assert rc == 0, err
    assert "gtx480 (l2_latency=100, l1_mshrs=8)" in text
    d = json.loads(out.read_text())
    assert d["gpu"]["gpu"]["l2_latency"] == 100 and d["gpu"]["gpu"]["l1_mshrs"] == 8
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    from golden.gpu import GPUConfig
    g = load_graph("kron:scale=8")
    same = run_algorithm(g, "pr", "pull", gpu=GPUConfig.preset("gtx480", l2_latency=100, l1_mshrs=8))
    plain = run_algorithm(g, "pr", "pull", gpu=GPUConfig.preset("gtx480"))
    # the speedup's baseline (pull) ran on the changed GPU, not on the preset
    assert d["extra"]["mff"]["baseline_cycles"] == pytest.approx(same.gpu["total"]["cycles"])
    assert same.gpu["total"]["cycles"] != plain.gpu["total"]["cycles"]
    for bad, msg in [("l1_mshrs", "--gpu-set expects KEY=VALUE, not 'l1_mshrs'"),
                     ("l1_mshrs=many", "--gpu-set: GPUConfig.l1_mshrs: cannot read 'many' as int"),
                     ("mshrs=8", "--gpu-set: GPUConfig has no parameter 'mshrs'; parameters: atomic_per_cycle"),
                     ("name=big", "--gpu-set cannot change the GPU's name: choose the preset with --gpu"),
                     ("l1_mshrs=-1", "--gpu gtx980 --gpu-set l1_mshrs=-1: GPUConfig.l1_mshrs must be in the range "
                                     "[0, 1048576], not -1")]:
        rc, text, err = run_main(capsys, "run", "--graph", "kron:scale=5", "--algo", "bfs", "--gpu-set", bad)
        assert rc == 2 and text == "" and err.startswith(f"graphunits run: error: {msg}") and err.count("\n") == 1, err


def test_gpu_command_prints_the_presets_and_one_with_its_changes(capsys):
    """graphunits gpu: every preset's parameters side by side (the values of
    GPUConfig's presets), or one GPU as JSON with the --gpu-set changes; errors
    are one line."""
    import json
    from golden.gpu import GPUConfig
    rc, out, err = run_main(capsys, "gpu")
    assert rc == 0 and err == ""
    header = next(line for line in out.splitlines() if line.startswith("parameter"))
    assert header.split() == ["parameter"] + GPUConfig.preset_names()
    mshrs = next(line for line in out.splitlines() if line.startswith("l1_mshrs "))
    assert mshrs.split()[1:] == [str(GPUConfig.preset(n).l1_mshrs) for n in GPUConfig.preset_names()]
    rc, out, err = run_main(capsys, "gpu", "--gpu", "gtx480", "--gpu-set", "l1_mshrs=16")
    doc = json.loads(out)
    assert rc == 0 and doc["params"] == GPUConfig.preset("gtx480", l1_mshrs=16).to_dict()
    for args, msg in [(["--gpu-set", "l1_mshrs=16"], "--gpu-set changes the preset named by --gpu: give --gpu"),
                      (["--gpu", "gtx9"], "--gpu gtx9: GPUConfig has no preset 'gtx9'")]:
        rc, out, err = run_main(capsys, "gpu", *args)
        assert rc == 2 and out == "" and err.startswith(f"graphunits gpu: error: {msg}") and err.count("\n") == 1
