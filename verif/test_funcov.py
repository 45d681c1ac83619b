"""Functional coverage (sim.funcov; docs/verification.md, "Functional coverage"):
the models refuse misspelt bins, records merge across runs, exclusions count as
neither hit nor missed; the counters the bins are sampled from (memory model,
agents, the SCU's hashes) against hand-computed cases; and a fetch-engine run
under Amaranth's simulator reaches exactly the bins its ranges and memory
timing call for."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from golden.fetch import FetchConfig, FetchRange
from golden.memory import AddressSpace
from golden.scu.hashes import FilterHash, GroupHash
from hw.fetch.engine import FetchCommand, FetchEngine
from sim import funcov
from sim.agents import StreamSink, StreamSource
from sim.amaranth_loop import run_amaranth
from sim.codec import Codec
from sim.fetch import FetchHarness
from sim.memory import MemoryModel, MemoryTiming

ROOT = Path(__file__).resolve().parents[1]
TOY = funcov.CoverModel("toy", (funcov.CoverPoint("a", ("x", "y", "z"), excluded={"z": "never built"}),
                                funcov.CoverPoint("b", ("p", "q"))))


def test_models_refuse_what_they_do_not_define():
    with pytest.raises(ValueError, match="names a bin twice"):
        funcov.CoverPoint("c", ("x", "x"))
    with pytest.raises(ValueError, match="excludes bins it does not have"):
        funcov.CoverPoint("c", ("x",), excluded={"w": "?"})
    with pytest.raises(ValueError, match=r"cover point 'a' has no bins \['w'\]"):
        TOY.check({"a": {"x", "w"}})
    with pytest.raises(KeyError, match="no cover point 'c'"):
        TOY.check({"c": {"x"}})
    assert TOY.check({"a": {"y", "x"}}) == {"a": ["x", "y"]} and TOY.bins_total() == 4


class _ToyHarness:
    COVERAGE = TOY

    def __init__(self, hits):
        self.hits = hits

    def coverage(self):
        return self.hits


def test_records_merge_and_exclusions_count_as_neither(tmp_path, monkeypatch):
    monkeypatch.delenv(funcov.ENV, raising=False)
    assert funcov.record(_ToyHarness({"a": {"x"}})) is None            # no folder: nothing written
    monkeypatch.setenv(funcov.ENV, str(tmp_path))
    monkeypatch.setitem(funcov.MODELS, "toy", TOY)
    for hits in ({"a": {"x"}, "b": {"p"}}, {"a": {"x"}}, {"b": set()}):
        assert funcov.record(_ToyHarness(hits), "run").exists()
    assert funcov.load(tmp_path) == {"toy": {"a": {"x": 2}, "b": {"p": 1}}}
    rep = funcov.report(tmp_path, ["toy"])["toy"]
    a, b = rep["points"]
    assert (a["hit"], a["total"], a["missed"], a["excluded"]) == (1, 2, ["y"], {"z": "never built"})
    assert (b["hit"], b["total"], b["missed"]) == (1, 2, ["q"])
    assert (rep["hit"], rep["total"], rep["runs"], rep["percent"]) == (2, 4, 3, 50.0)
    (tmp_path / "toy" / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="bad.json: not a functional-coverage record"):
        funcov.load(tmp_path)


def test_every_unit_has_a_model():
    assert set(funcov.models()) == {"fetch", "scu", "iru", "graphpeg", "mff", "emogi"}
    for m in funcov.models().values():
        assert m.bins_total() > 0


def test_memory_model_counts_reordering_refusals_and_errors():
    """Four requests: two reads with latencies 5 and 1 (the second answered first:
    one response out of order), a write and a read into an error block."""
    sp = AddressSpace()
    base = sp.alloc("a", np.arange(64, dtype=np.uint32), align=4096)
    bad = base + 128
    m = MemoryModel(sp, 32, MemoryTiming(latency=(1, 1), error_ranges=((bad, bad + 32),)))
    m._lat = (5, 5)
    m.accept(base, 0, 0, 0, tag=0)                       # ready at cycle 5
    m._lat = (1, 1)
    m.accept(base + 32, 0, 0, 0, tag=1)                  # ready at cycle 1: overtakes
    m.accept(bad, 1, 0, 0xF, tag=2)                      # a write into the error block
    m.accept(bad, 0, 0, 0, tag=3)                        # a read of it
    taken = []
    for _ in range(12):
        r = m.response()
        if r is not None:
            taken.append(r[0])
            m.response_taken()
        m.tick()
    assert taken[0] == 1 and sorted(taken) == [0, 1, 2, 3]
    st = m.stats
    # tag 1, then 2 and 3 (at cycle 1) came before tag 0 (cycle 5): three out of order
    assert (st.reordered, st.read_errors, st.write_errors, st.max_outstanding) == (3, 1, 1, 4)


def test_stream_agents_count_pauses_waits_and_stalls():
    codec = Codec(FetchCommand(FetchConfig()))
    src = StreamSource(("cmd",), codec, [{"base": 0, "count": 1, "esize8": 0, "last": 1}] * 2, pause=[0, 1])
    sink = StreamSink(("o",), codec, ready=[0, 0, 1])
    ready = iter([0, 0, 1, 1])
    for _ in range(4):
        src.drive()
        sink.drive()
        r = next(ready)
        src.clock(lambda path, r=r: r)
        sink.clock(lambda path: {("o", "valid"): 1, ("o", "payload"): 5}[path])
    # pause pattern 0,1,0,...: held back in cycle 0, offered in 1 (not taken: a wait),
    # taken in 2, held back again in 3
    assert (src.paused, src.waits, src.sent) == (2, 1, 1)
    assert (sink.stalls, sink.count) == (3, 1)          # ready 0, 0, 1, 0


def test_scu_hash_events_hand_computed():
    f = FilterHash(1, 2)
    f.probe_all([7, 7, 8, 9, 9])                          # new, duplicate, new, evict (7), duplicate
    assert dict(f.events) == {"new": 2, "duplicate": 2, "evict": 1, "better": 0}
    f.clear()
    f.probe_all([4, 4, 4], [10, 5, 6], best=True)         # new, better, worse
    assert (f.events["better"], f.events["worse"], f.events["new"]) == (1, 1, 3)
    g = GroupHash(1, 2, size=2)
    out: list = []
    for pos, blk in enumerate([1, 1, 2, 3, 4]):           # new, join (full), new, new, evict (2)
        g.add(blk, pos, out)
    g.flush(out)
    g.flush(out)
    assert dict(g.events) == {"new": 3, "join": 1, "full": 1, "evict": 1, "flushed": 2, "empty_flush": 1}
    assert sorted(out) == [0, 1, 2, 3, 4]


def test_a_fetch_run_reaches_the_bins_its_workload_calls_for():
    """Ranges chosen by hand (8-byte blocks, 4-byte elements, width 1, a merge
    window of one block): an empty range, one element, two in one block, a range
    across blocks, two ranges in one operation; random latency (responses out of
    order), refused requests, a paused command stream and a slow output."""
    cfg = FetchConfig(addr_width=16, block_bytes=8, width=1, max_elem_bytes=4, max_inflight=4, merge_window=1,
                      count_width=6)
    sp = AddressSpace(addr_bits=16, base=0x100)
    base = sp.alloc("a", np.arange(256, dtype=np.uint32), align=256)
    ranges = [FetchRange(base, 0), FetchRange(base + 4, 1), FetchRange(base + 8, 2, last=False),
              FetchRange(base + 12, 5)]
    timing = MemoryTiming(latency=(1, 9), seed=3, req_ready=[1, 0, 1])
    h = FetchHarness(cfg, sp, ranges, timing=timing, cmd_pause=[0, 1], out_ready=[1, 0])
    run_amaranth(FetchEngine(cfg), h.agents, h.done, max_cycles=5000)
    assert h.mismatches() == []
    hits = FetchHarness.COVERAGE.check(h.coverage())
    assert hits["range"] == ["across blocks", "empty", "one element", "within a block"]
    assert hits["operation"] == ["one range", "several ranges"]
    # operation 2 reads its one segment; operation 3's four segments (its first range's
    # block, then the second range's three blocks, the first of them the same) need three reads
    assert [e.requests for e in h.expected] == [[], [base], [base + 8, base + 16, base + 24]]
    assert hits["merge window"] == ["every segment read", "shared read"]
    # width 1: every element a full beat, each operation's last beat empty
    assert hits["beats"] == ["empty last", "full"] and hits["errors"] == []
    assert hits["memory"] == ["out of order", "refused", "several in flight"]
    assert hits["streams"] == ["command paused", "output back-pressure"]


def test_funcov_script_reports_and_fails_under(tmp_path):
    d = tmp_path / "fc"
    (d / "emogi").mkdir(parents=True)
    (d / "emogi" / "r.json").write_text(json.dumps({"unit": "emogi", "run": "x",
                                                    "hits": {"request size": ["32 B"]}}))
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, "scripts/funcov.py", "--dir", str(d), "--units", "emogi", "--json", str(out),
                        "--fail-under", "50"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and "below 50.0 %: emogi" in r.stderr
    rep = json.loads(out.read_text())["emogi"]
    assert rep["hit"] == 1 and rep["runs"] == 1 and "64 B" in rep["points"][0]["missed"]
    r = subprocess.run([sys.executable, "scripts/funcov.py", "--dir", str(d), "--units", "nope"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no coverage model for 'nope'" in r.stderr
    (d / "emogi" / "broken.json").write_text("[1, 2")
    r = subprocess.run([sys.executable, "scripts/funcov.py", "--dir", str(d)], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 2 and "broken.json: not a functional-coverage record" in r.stderr
    assert "Traceback" not in r.stderr


def test_every_harness_samples_its_model_before_a_run():
    """Each unit's ``coverage()`` on a harness just built from a random workload
    (no simulation: no memory traffic yet): only its model's bins, and the bins its
    operations name, computed here from the workload."""
    from golden.emogi.config import CoalescerConfig
    from golden.graphpeg import GraphPEGConfig
    from golden.iru import IRUConfig
    from golden.mff import MFFCommand, MFFConfig
    from golden.scu import SCUConfig, SCUOp
    from sim.emogi import CoalescerHarness, make_warps
    from sim.graphpeg import GraphPEGHarness, Run
    from sim.graphpeg import make_workload as gp_workload
    from sim.iru import IRUHarness
    from sim.iru import make_workload as iru_workload
    from sim.mff import MFFHarness
    from sim.mff import make_workload as mff_workload
    from sim.scu import SCUHarness
    from sim.scu import make_workload as scu_workload

    cfg = SCUConfig.preset("tiny")
    space, ops = scu_workload(cfg, {"seed": 3, "ops": 10})
    h = SCUHarness(cfg, space, ops)
    hits = h.COVERAGE.check(h.coverage())
    assert set(hits["op"]) == {op.op if isinstance(op, SCUOp) else "unknown" for op in ops}
    assert hits["memory"] == [] and hits["streams"] == []

    cfg = IRUConfig.preset("tiny")
    space, ops = iru_workload(cfg, {"seed": 2, "ops": 3})
    h = IRUHarness(cfg, space, ops)
    hits = h.COVERAGE.check(h.coverage())
    assert set(hits["operation"]) == {op.op for op in ops} and hits["reply"] == []
    # the crosses: every operation with the default 1-cycle memory, no back-pressure yet
    assert set(hits["operation x latency"]) == {f"{op.op} 1 cycle" for op in ops}
    assert set(hits["operation x back-pressure"]) == {f"{op.op} none" for op in ops}
    assert set(hits["operation x element size"]) == {f"{op.op} {op.esize}-byte" for op in ops}

    cfg = GraphPEGConfig.preset("sim")
    space, steps, graph = gp_workload(cfg, {"seed": 4, "graph": {"vertices": 30},
                                            "kernels": [{"lists": [5, 5]}, {"lists": [3, 0], "mode": "vertex"}]})
    h = GraphPEGHarness(cfg, space, steps, graph=graph)
    hits = h.COVERAGE.check(h.coverage())
    assert {"edge push", "with weights", "vertex"} <= set(hits["kernel"]) and hits["configuration"] == ["several SMs"]
    assert set(hits["kernel x configuration"]) == {"edge push several SMs", "vertex several SMs"}
    assert set(hits["kernel x latency"]) == {"edge push 1 cycle", "vertex 1 cycle"}
    assert len([s for s in steps if isinstance(s, Run)]) == 2

    cfg = MFFConfig.preset("tiny")
    space, items = mff_workload(cfg, {"seed": 5, "commands": 4})
    h = MFFHarness(cfg, space, items)
    hits = h.COVERAGE.check(h.coverage())
    assert set(hits["command"]) == {it.op if isinstance(it, MFFCommand) else "poke" for it in items}
    assert set(hits["command x latency"]) == {f"{it.op} 1 cycle" for it in items if isinstance(it, MFFCommand)}

    cfg = CoalescerConfig()
    warps = make_warps(cfg, {"kind": "random", "seed": 1, "count": 20})
    h = CoalescerHarness(cfg, warps)
    hits = h.COVERAGE.check(h.coverage())
    assert hits["request size"] and hits["streams"] == []
    # no output stalls before a run: every request size the warps need, crossed with "none"
    assert set(hits["request size x back-pressure"]) == {f"{r.size} B none" for r in h.expected}


def test_crosses_latency_bands_and_the_scus_cross_points_by_hand():
    """cross() names every combination; latency bands from the memory's longest
    latency; the SCU's crosses from hand-placed operations: lengths, bases in or
    off block boundaries, the run's band, no back-pressure before a run."""
    from golden.memory import AddressSpace
    from golden.scu import SCUConfig, SCUOp
    from sim.memory import MemoryTiming
    from sim.scu import SCUHarness
    assert funcov.cross(("a", "b"), ("x", "y z")) == ("a x", "a y z", "b x", "b y z")
    assert [funcov.latency_band(MemoryTiming(latency=x)) for x in (1, (1, 16), 17, (2, 40))] == \
        ["1 cycle", "short", "long", "long"]
    cfg = SCUConfig.preset("tiny")
    B = cfg.block_bytes
    space = AddressSpace()
    d = space.alloc("d", np.arange(B, dtype=np.uint32), align=B)
    o = space.alloc_empty("o", B, np.uint32, align=B)
    ops = [SCUOp("data", n=0, out=o, data=d),                                    # 0, aligned
           SCUOp("data", n=1, out=o + 4, data=d),                                # 1, output mid-block
           SCUOp("bitmask", n=cfg.width * (B // 4) * 2, out=o, data=d + B)]     # two blocks, aligned
    hits = SCUHarness(cfg, space, ops, timing=MemoryTiming(latency=(1, 40))).coverage()
    assert hits["op x length"] == {"data 0", "data 1", "bitmask blocks"}
    assert hits["op x alignment"] == {"data aligned", "data unaligned", "bitmask aligned"}
    assert hits["op x latency"] == {"data long", "bitmask long"}
    assert hits["op x back-pressure"] == {"data none", "bitmask none"}
    assert hits["op x memory error"] == set()
    # the data read answers with an error: the operation's status (from the TLM) reports it
    h = SCUHarness(cfg, space, [SCUOp("data", n=4, out=o, data=d)],
                   timing=MemoryTiming(latency=1, error_ranges=[(d, d + B)]))
    hits = h.coverage()
    assert hits["op x latency"] == {"data 1 cycle"} and hits["op x memory error"] == {"data"}


def test_coverage_scripts_run_tests_into_a_folder(tmp_path, capsys):
    """scripts/coverage.py's run_tests (shared by scripts/funcov.py --run): a missing
    test file is an error; otherwise the earlier run's files matching the pattern go,
    and the tests run with the variable naming the folder."""
    sys.path.insert(0, str(ROOT))
    from scripts.coverage import run_tests
    folder = tmp_path / "cov"
    (folder / "u").mkdir(parents=True)
    (folder / "u" / "old.json").write_text("{}")
    (folder / "u" / "keep.dat").write_text("")
    assert not run_tests(folder, "GRAPHUNITS_TOY", [str(tmp_path / "nope.py")], "*.json")
    assert "no test file" in capsys.readouterr().err
    assert (folder / "u" / "old.json").exists()
    t = tmp_path / "test_toy_cov.py"
    # the test writes from another folder, as a simulator does from its build folder
    (tmp_path / "elsewhere").mkdir()
    t.write_text("import os, pathlib\n\ndef test_a():\n"
                 f"    os.chdir({str(tmp_path / 'elsewhere')!r})\n"
                 "    pathlib.Path(os.environ['GRAPHUNITS_TOY'], 'ran.txt').write_text('a')\n\n"
                 "def test_b():\n    raise AssertionError('deselected')\n")
    # a folder relative to where the script runs names the same folder for the tests
    rel = Path(os.path.relpath(folder))
    assert run_tests(rel, "GRAPHUNITS_TOY", [str(t)], "*.json", select="test_a")
    assert not (folder / "u" / "old.json").exists() and (folder / "u" / "keep.dat").exists()
    assert (folder / "ran.txt").read_text() == "a"
