"""The IRU's RTL with cocotb on Verilator and Icarus, P = 1, 2 and 4 partitions.

The order of the replies depends on timing, so the RTL is not compared reply by
reply with the TLM; every run checks (sim/iru/, golden/iru/checks.py):
every warp answered once with as many lanes as threads; conservation (every
position once without a filter; filtered/merged lanes accounted as disabled);
positions point back to the input; minima per index equal the input's and the
TLM's, float sums equal within (k - 1) * 2**-24 * sum|x|; replies all live or all
disabled except one final reply; no timeout reply before its timeout; the
timeout bound (every partition's held/tokens monitored each cycle: the repliers
never sit idle past timeout + slack while requests wait and a partition holds a
warp's worth of elements); the status counters equal the replies; the
memory-error flag equals the TLM's. Runs cross random operations (0, 1, around
the warp size, unaligned arrays, 4/8-byte targets, all filters) with memory
latency, random warp-request timing and back-pressure on every port; a serial
run with slow memory makes requests time out; kernel-like runs on a graph's edge
frontier check the reply quality (distinct key blocks per full reply) within
10 % of the TLM's; calibration runs (input that leaves the hash room, warps
asking once it is all in, fixed latency 1 and 150 cycles) check that the TLM's
time until all input is in the hashes is within FLUSH_TOLERANCE cycles of the
RTL's; a directed run puts index and secondary arrays past the top of the
address space (command errors: every lane disabled, status = TLM) between
ordinary operations and one that ends exactly at the top. Both simulators run
P = 1 (``small`` with one partition), P = 2 (``tiny``: warps of 8) and P = 4
(``small4``); Verilator also runs ``small``
(P = 2, warps of 32, twice the operations and larger inputs: the build RTL in
the loop uses); GRAPHUNITS_TEST_SCALE repeats the random runs with other seeds.
"""
import subprocess
import sys

import pytest

from golden.iru import IRUConfig
from sim.build import build_verilog
from sim.cosim import run_cosim
from sim.iru import QUALITY_TOLERANCE
from sim.runner import run_cocotb

from conftest import SCALE

GRAPH = "kron:scale=10,edgefactor=8,seed=1"
#: The TLM's time until all input is in the hashes may differ from the RTL's by this
#: many cycles on the calibration runs (docs/iru.md, "What must hold" 9).
FLUSH_TOLERANCE = 5


def iru_runs(cfg: IRUConfig, *, max_n: int, ops: int, serial_n: list, quality_n: int) -> list[dict]:
    E = cfg.entry_size
    runs = []
    for rep in range(SCALE):
        s = 10 * rep
        runs += [
            {"name": f"random, latency 1-30/{rep}", "seed": s + 1,
             "workload": {"seed": s + 1, "ops": ops, "max_n": max_n}, "policy": {"resident": 64},
             "timing": {"latency": [1, 30], "seed": s + 1}},
            {"name": f"jitter and back-pressure/{rep}", "seed": s + 2,
             "workload": {"seed": s + 2, "ops": ops, "max_n": max_n}, "policy": {"resident": 6, "think": 10},
             "jitter": {"gap": 40, "seed": s + 2},
             "timing": {"latency": [1, 60], "seed": s + 2, "req_ready": 0.7, "resp_gap": 0.8},
             "reply_ready": 0.6, "req_pause": 0.7, "cmd_pause": [1, 0], "status_ready": [0, 1]},
        ]
    runs += [
        {"name": "serial requests, slow memory (timeout)", "seed": 3,
         "workload": {"seed": 3, "ops": len(serial_n), "sizes": serial_n, "kinds": ["none", "min", "fadd"]},
         "policy": {"resident": 1}, "timing": {"latency": 80, "seed": 3}},
        {"name": "memory errors", "seed": 5, "workload": {"seed": 5, "ops": 4, "max_n": max_n},
         "policy": {"resident": 16}, "timing": {"latency": [1, 20], "seed": 5, "error_ranges": [[0x1000, 0x1400]]}},
    ]
    # every operation with a 1-cycle and a short-latency memory (functional coverage's
    # "operation x latency"; the runs above are long-latency)
    for lat in (1, [1, 12]):
        runs.append({"name": f"every operation, latency {lat}", "seed": 13,
                     "workload": {"seed": 13, "ops": 3, "max_n": max_n, "kinds": ["none", "min", "fadd"]},
                     "policy": {"resident": 16}, "timing": {"latency": lat, "seed": 13}})
    runs.append({"name": "arrays past the top of the address space", "seed": 11, "past_top": True,
                 "workload": {"kind": "ops", "seed": 11, "ops": past_top_ops(cfg)},
                 "policy": {"resident": 8, "think": 5}, "jitter": {"gap": 20, "seed": 11},
                 "timing": {"latency": [1, 30], "seed": 11, "req_ready": 0.8}, "reply_ready": 0.7})
    for op in ("none", "fadd"):
        runs.append({"name": f"quality, edge frontier, {op}", "seed": 7, "quality": True,
                     "workload": {"kind": "graph", "graph": GRAPH, "n": quality_n, "op": op, "seed": 1},
                     "policy": {"resident": 1024, "think": 50}, "timing": {"latency": 30}})
    # Calibration: input that leaves the hash room (a quarter and a half of its
    # slots, spread over many blocks), the warps asking once all of it is in (after
    # ``start`` cycles, twice the prefetch time): the prefetcher, the classifier and
    # the ring alone set the time until all input is in the hashes.
    room = cfg.partitions * cfg.sets * E
    per_part = room // 2 // cfg.partitions + 8
    rounds = -(-2 * (per_part // (cfg.block_bytes // 4) + 2) // cfg.prefetch_inflight)
    for lat in (1, 150):
        runs.append({"name": f"calibration, {lat}-cycle memory", "seed": 9, "calibration": True,
                     "workload": {"seed": 9 + lat, "ops": 2, "sizes": [room // 4 + 5, room // 2], "max_n": room,
                                  "id_range": 20000, "dist": "uniform"},
                     "policy": {"resident": 64, "start": rounds * (lat + 8) + 2 * per_part + 50},
                     "timing": {"latency": lat}})
    for run in runs:
        run["monitor"] = True           # held/tokens/flush every cycle: the timeout bound, the flush cycles
    return runs


def past_top_ops(cfg: IRUConfig) -> list[dict]:
    """Operations around the top of the address space, before and after ordinary
    ones; PAST_TOP says which are command errors (an array's last word past the top)."""
    top, E = 1 << cfg.addr_width, cfg.entry_size
    return [
        {"n": 3 * E + 5, "idx": 0x10000, "sec": 0x20000, "op": "min"},
        {"n": 2 * E + 3, "idx": top - 4 * 2 * E, "sec": None, "op": "none"},        # indices: 3 words past
        {"n": E + 5, "idx": 0x30000, "sec": top - 4 * E, "op": "fadd"},             # secondary: 5 words past
        {"n": E + 7, "idx": top - 4 * (E + 7), "sec": 0x40000, "op": "min"},        # ends exactly at the top
        {"n": 2, "idx": top - 4, "sec": None, "op": "none"},                        # 1 word past
        {"n": 3 * E, "idx": 0x50000, "sec": None, "op": "none"},
    ]


PAST_TOP = [False, True, True, False, True, False]


def check(res: dict, runs: list[dict], cfg: IRUConfig) -> None:
    assert len(res["runs"]) == len(runs)
    kinds = set()
    forwarded = 0
    for run, r in zip(runs, res["runs"]):
        assert r["mismatches"] == [], f"{run['name']}: {r['mismatches'][:4]}"
        assert r["ops"] == r["expected_ops"] > 0
        for st in r["statuses"]:
            kinds |= {k for k, v in st["kinds"].items() if v}
            forwarded += st["forwarded"]
        if run.get("quality"):
            rtl, tlm = r["quality"][0]
            assert tlm is not None and 1 <= tlm < 16            # reordered: a random order gives ~26
            assert abs(rtl - tlm) <= QUALITY_TOLERANCE * tlm, f"{run['name']}: RTL {rtl:.3f}, TLM {tlm:.3f}"
        if run.get("calibration"):
            assert len(r["flush"]) == len(r["tlm_flush"]) == 2 and min(r["sizes"]) > 0
            for n, rtl, tlm in zip(r["sizes"], r["flush"], r["tlm_flush"]):
                assert rtl is not None and rtl < run["policy"]["start"], (run["name"], n, rtl)   # before any request
                assert abs(rtl - tlm) <= FLUSH_TOLERANCE, \
                    f"{run['name']}, n={n}: all input in the hashes after {rtl} cycles on the RTL, {tlm} on the TLM"
        if run["name"] == "memory errors":
            assert any(st["mem_error"] for st in r["statuses"]) and r["statuses"][0]["n"] == 0
        if run.get("past_top"):
            # Every operation completed (no hang, the later ones as usual); the
            # command errors answered every lane disabled, as the TLM did.
            assert [bool(st["cmd_error"]) for st in r["statuses"]] == PAST_TOP
            assert [bool(st["cmd_error"]) for st in r["tlm"]] == PAST_TOP
            for st, bad in zip(r["statuses"], PAST_TOP):
                warps = -(-st["n"] // cfg.entry_size)
                assert not st["mem_error"]
                if bad:
                    assert st["live"] == 0 and st["disabled"] == st["n"] and st["replies"] == warps
                    assert st["kinds"]["disabled"] == warps and st["ring"] == 0
                else:
                    assert st["live"] > 0 and st["live"] + st["disabled"] == st["n"]
    # Every way of answering happened somewhere in the run set.
    assert kinds == {"entry", "disabled", "timeout", "flush", "final"}, kinds
    assert (forwarded > 0) == (cfg.partitions > 1)


CONFIGS = [
    ("P1", IRUConfig.preset("small", partitions=1)),
    ("P2", IRUConfig.preset("small")),
    ("P4", IRUConfig.preset("small4")),
    ("P2-warp8", IRUConfig.preset("tiny")),
]


def _runs(name: str, cfg: IRUConfig, sim: str) -> list[dict]:
    E = cfg.entry_size
    if sim == "verilator" and name == "P2":
        # The build RTL in the loop uses: longer operations, a larger frontier.
        return iru_runs(cfg, max_n=500, ops=8, serial_n=[400, 300, 399], quality_n=3000)
    return iru_runs(cfg, max_n=5 * E, ops=6, serial_n=[9 * E, 5 * E + 3, 4 * E], quality_n=800 if E == 32 else 300)


#: Simulator of each configuration's random set: Icarus runs every one but P2 (the mutation
#: campaigns use Icarus); Verilator P2 with longer operations (the preset RTL in the loop uses)
#: and P2-warp8, so that two configurations run on both (docs/verification.md, "Simulators").
VERILATOR = ("P2", "P2-warp8")


@pytest.mark.parametrize("name, cfg", [c for c in CONFIGS if c[0] in VERILATOR], ids=list(VERILATOR))
def test_iru_verilator(name, cfg):
    runs = _runs(name, cfg, "verilator")
    res = run_cocotb(build_verilog("iru", cfg), "sim.iru.tb", {"config": cfg.to_dict(), "runs": runs},
                     sim="verilator")
    check(res, runs, cfg)


@pytest.mark.parametrize("name, cfg", [c for c in CONFIGS if c[0] != "P2"], ids=[c[0] for c in CONFIGS if c[0] != "P2"])
def test_iru_icarus(name, cfg):
    runs = _runs(name, cfg, "icarus")
    res = run_cocotb(build_verilog("iru", cfg), "sim.iru.tb", {"config": cfg.to_dict(), "runs": runs}, sim="icarus")
    check(res, runs, cfg)


# ---------------------------------------------------------------------- RTL in the loop
@pytest.mark.parametrize("algo, memory", [("bfs", "design"), ("sssp", "python"), ("pr", "design"),
                                          ("pr", "python")])
def test_iru_cosim_matches_reference(algo, memory, tmp_path):
    """Both testbenches: the Python memory models and harness (cocotb every cycle),
    and a memory per partition, the warps and the reply recorders inside the design
    (sim/iru/, IRUDesignEnv: cocotb once per operation)."""
    r = run_cosim("kron:scale=6,edgefactor=4,seed=3", algo, unit="iru", sim="verilator", out_dir=tmp_path,
                  log=lambda *a: None, memory=memory)
    assert r.ok, r.problems
    assert r.rtl["memory_model"] == memory
    assert r.rtl["ops"] == r.tlm["ops"] >= 3 and r.rtl["problems"] == 0
    assert r.rtl["cycles_measured"] and r.rtl["cycles"] > 0 and r.rtl["sim_cycles"] >= r.rtl["cycles"]
    assert all(m["reads"] > 0 for m in r.rtl["memory"]) and len(r.rtl["memory"]) == 2
    if memory == "design":                                   # every partition's memory got the arrays
        assert all(m["loaded_blocks"] > 0 for m in r.rtl["memory"])
    if algo != "bfs":
        assert r.rtl["disabled"] > 0                         # duplicates merged on the RTL too


@pytest.mark.parametrize("memory", ["python", "design"])
def test_iru_cosim_on_icarus(memory, tmp_path):
    r = run_cosim("grid:4x5", "sssp", unit="iru", sim="icarus", out_dir=tmp_path, log=lambda *a: None,
                  memory=memory)
    assert r.ok, r.problems
    assert r.rtl["ops"] == r.tlm["ops"] >= 3 and r.rtl["problems"] == 0 and r.rtl["disabled"] > 0


def test_iru_cosim_in_design_timing_follows_the_python_memory(tmp_path):
    """Random latency up to 40 cycles, in order, request back-pressure and response
    gaps: with the warps and memories inside the design, the IRU's measured cycles
    are within 5 % of the Python testbench's (the memories' random draws differ),
    and above those of a 1-cycle memory."""
    hard = {"latency": [1, 40], "in_order": True, "req_ready": 0.5, "resp_gap": 0.6, "seed": 7}
    c = {}
    for name, memory, t in (("design", "design", hard), ("python", "python", hard),
                            ("fast", "design", {"latency": 1})):
        r = run_cosim("kron:scale=7,edgefactor=8,seed=1", "pr", unit="iru", sim="verilator", out_dir=tmp_path,
                      log=lambda *a: None, timing=t, memory=memory)
        assert r.ok, r.problems
        c[name] = r.rtl["cycles"]
    assert abs(c["design"] / c["python"] - 1) < 0.05, c
    assert c["design"] > 1.1 * c["fast"], c


@pytest.mark.parametrize("algo", ["bfs", "sssp", "pr"])
def test_iru_cosim_cli_prints_matches_reference(algo):
    p = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "iru", "--graph", "grid:5x6",
                        "--algo", algo], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{algo} with the IRU RTL in the loop matches reference" in p.stdout and "MISMATCH" not in p.stdout
    assert "IRU operations (RTL = TLM)" in p.stdout


# ---------------------------------------------------------------------- the fadd merge's adder
#: binary32 patterns that reach every branch of the adder: zeros, subnormals (flushed),
#: the smallest and largest normals, infinities, quiet and signalling NaNs of both signs,
#: and neighbours of 1.0 that make guard/round/sticky ties.
FADD_SPECIALS = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x80800000, 0x00800001,
                 0x3F800000, 0xBF800000, 0x3F800001, 0xBF7FFFFF, 0x33800000, 0xB3800000, 0x34400000,
                 0x4B800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x01000000, 0x00FFFFFF]


def _fadd_pairs(seed: int, n: int) -> list:
    import numpy as np
    rng = np.random.default_rng(seed)
    pairs = [[a, b] for a in FADD_SPECIALS for b in FADD_SPECIALS]
    raw = rng.integers(0, 1 << 32, size=(n, 2), dtype=np.uint64)
    pairs += raw.tolist()                                         # any bit patterns
    a = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
    e = rng.integers(-3, 4, size=n)                               # close exponents: cancellation, carries
    b = (a & 0x807FFFFF) | ((((a >> 23) & 0xFF).astype(np.int64) + e).clip(0, 255).astype(np.uint64) << 23)
    b ^= rng.integers(0, 2, size=n, dtype=np.uint64) << 31        # either sign
    pairs += np.stack([a, b], axis=1).tolist()
    return [[int(x), int(y)] for x, y in pairs]


@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_fadd32_rtl_is_bit_exact(sim, tmp_path):
    """hw.iru.FAdd32 on every pair of special patterns and on random patterns (any,
    and with close exponents: cancellation, carries, ties) gives the bit pattern
    of golden.iru.ops.fadd32 (round to nearest even, subnormals flushed, one quiet
    NaN): the merges of the IRU's fadd are compared exactly, not within a tolerance."""
    from amaranth.back import verilog

    from golden.fetch import FetchConfig
    from golden.iru.ops import fadd32
    from hw.iru import FAdd32
    from sim.build import Build
    from sim.runner import check_simulator
    try:
        check_simulator(sim)
    except Exception as e:                                        # a missing simulator: the setup's job
        pytest.skip(str(e))
    (tmp_path / "fadd.v").write_text(verilog.convert(FAdd32(), name="fadd", emit_src=False))
    pairs = _fadd_pairs(seed=11, n=1500 * SCALE)
    got = run_cocotb(Build("fadd", "fadd", FetchConfig(), tmp_path), "sim.iru.tb_fadd", {"pairs": pairs}, sim=sim)["sums"]
    want = [fadd32(a, b) for a, b in pairs]
    bad = [(hex(a), hex(b), hex(g), hex(w)) for (a, b), g, w in zip(pairs, got, want) if g != w]
    assert not bad, f"{len(bad)} of {len(pairs)} sums differ, first (a, b, rtl, model): {bad[:5]}"


def test_fadd32_under_amaranths_simulator():
    """The same adder under Amaranth's own simulator (no Verilog, seconds): the
    special pairs and random patterns, bit-exact against golden.iru.ops.fadd32."""
    from amaranth.sim import Simulator

    from golden.iru.ops import fadd32
    from hw.iru import FAdd32
    dut = FAdd32()
    pairs = _fadd_pairs(seed=5, n=300)
    got = []

    async def bench(ctx):
        for a, b in pairs:
            ctx.set(dut.a, a)
            ctx.set(dut.b, b)
            got.append(ctx.get(dut.o))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    bad = [(hex(a), hex(b), hex(g), hex(fadd32(a, b))) for (a, b), g in zip(pairs, got) if g != fadd32(a, b)]
    assert len(got) == len(pairs) and not bad, bad[:5]
