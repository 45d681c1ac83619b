"""The MFF's RTL with cocotb on Icarus and Verilator against the structural TLM
(cycle-exact: every scratchpad value, the completion cycle of every command, the
sequence of block reads and write-backs, the cycle count and the final memory
must be the TLM's; the values must also be the functional model's and memory's):
the slides' worked example with 32 B sectors and with 128 B lines, scatter-set
followed by gathers of the same words (no stale line), random gathers and
scatters over several warps with sizes 0, small and large (far more elements
than work registers: the pool runs dry), host writes with invalidation, random
memory latency and back-pressure on every stream, memory errors and failed
write-backs (sim/mff/); the harness's command watchdog."""
import random

import numpy as np
import pytest

from golden.memory import AddressSpace
from golden.mff import MFFCommand, MFFConfig, ThreadRequest
from sim.build import build_verilog
from sim.memory import MemoryTiming
from sim.mff import MFFHarness, make_workload
from sim.runner import run_cocotb

from conftest import RANDOM_INIT_SEED, SCALE
from .test_mff_tlm import slides_example_counts


def mff_runs(cfg: MFFConfig | None = None):
    """The random runs' large commands hold up to 15 times the work registers (300
    elements at most: the default preset's 32 registers): far more than the pool, so
    it runs dry, without the tiny preset's 4 registers walking 300-element commands
    for hundreds of thousands of cycles."""
    large = min(300, 15 * (cfg or MFFConfig.preset("default")).work_registers)
    runs = [{"name": "worked example", "workload": {"kind": "example"}, "timing": {"latency": [1, 30], "seed": 1}},
            {"name": "worked example, latency 100", "workload": {"kind": "example"}, "timing": {"latency": 100}},
            {"name": "scatter then gather", "workload": {"kind": "stale", "seed": 3},
             "timing": {"latency": [1, 30], "seed": 2}}]
    patterns = [({"latency": 1}, {}),
                ({"latency": [1, 80], "req_ready": [1, 1, 0]}, {"cmd_pause": [1, 0], "spad_ready": [1, 1, 0]}),
                ({"latency": [1, 40], "req_ready": 0.7, "resp_gap": 0.6},
                 {"cmd_pause": 0.6, "spad_ready": 0.5, "done_ready": 0.5}),
                # long stretches without accepting a request: the read queue fills and an
                # allocation waits for room (port_stalls)
                ({"latency": [1, 20], "req_ready": [0] * 60 + [1] * 3}, {})]
    for k, (timing, agents) in enumerate(patterns):
        for rep in range(SCALE):
            seed = 10 * k + rep + 1
            runs.append({"name": f"random {k}/{rep}", "seed": seed,
                         "workload": {"seed": seed, "commands": 12, "max_size": 30, "large": 0.1,
                                      "large_size": large},
                         "timing": dict(timing, seed=seed), **agents})
    # C, V and the bitmap in mid-block (functional coverage's "command x alignment")
    runs.append({"name": "arrays in mid-block", "seed": 41,
                 "workload": {"seed": 41, "commands": 12, "scatter": 0.4, "offset": 8},
                 "timing": {"latency": [1, 20], "seed": 41}})
    # gathers, scatters and host writes with invalidations at a 1-cycle and a short
    # latency (functional coverage's "command x latency"; the random runs' pokes are rare)
    for lat in (1, [1, 12]):
        runs.append({"name": f"every command, latency {lat}", "seed": 31,
                     "workload": {"seed": 31, "commands": 16, "scatter": 0.5, "poke_rate": 0.3},
                     "timing": {"latency": lat, "seed": 31}})
    # errors in C (the neighbour indices) and in V (the values: a walk that finds its
    # V block in the tag unit delivers the error too)
    v4 = make_workload(MFFConfig.preset("tiny"), {"seed": 9, "commands": 12})[0].regions["V4"]
    runs.append({"name": "memory errors", "seed": 9, "workload": {"seed": 9, "commands": 12},
                 "timing": {"latency": [1, 20], "seed": 9, "error_ranges": [[0x1000 + 4096, 0x1000 + 4096 + 256],
                                                                          [v4.base + 256, v4.base + 768]]}})
    # scatters into an error range (the second half of their bitmap): the commands that
    # touch it report the error; the others, and the gathers, do not
    wl = {"seed": 21, "commands": 16, "scatter": 0.6}
    bm = make_workload(MFFConfig.preset("tiny"), wl)[0].regions["bitmap"]
    runs.append({"name": "scatter errors", "seed": 21, "workload": wl,
                 "timing": {"latency": [1, 20], "seed": 21, "error_ranges": [[bm.base + bm.nbytes // 2,
                                                                              bm.base + bm.nbytes]]}})
    return runs


def check_runs(res):
    for r in res["runs"]:
        assert r["mismatches"] == [], f"{r['name']}: {r['mismatches'][:4]}"
        assert r["errors"] == r["expected_errors"]
        assert r["memory"]["reads"] == r["tlm_reads"] and r["cycles"] == r["tlm_cycles"]
    return {r["name"]: r for r in res["runs"]}


@pytest.mark.parametrize("sim, preset", [("icarus", "tiny"), ("icarus", "default"), ("verilator", "default")])
def test_mff_cocotb(sim, preset):
    """Icarus runs both presets (the mutation campaigns use Icarus), Verilator the
    default, which its RTL in the loop builds (docs/verification.md, "Simulators").
    The default preset on Icarus starts its memories with random contents (as an
    SRAM powers up; docs/verification.md, "Random initial memory contents"): the
    same runs pass as on Verilator's zeroed build."""
    cfg = MFFConfig.preset(preset)
    build = build_verilog("mff", cfg, random_init=RANDOM_INIT_SEED if (sim, preset) == ("icarus", "default") else None)
    res = run_cocotb(build, "sim.mff.tb", {"config": cfg.to_dict(), "runs": mff_runs(cfg)}, sim=sim)
    by = check_runs(res)
    for name in ("worked example", "worked example, latency 100"):
        ex = by[name]
        assert ex["values"] == 7
        if preset == "default":     # 16 tag entries: each block read once (32 B: 3 of C, 1 of V)
            assert ex["memory"]["reads"] == slides_example_counts(32)["mff_reads"] == 4
    assert by["scatter then gather"]["memory"]["writes"] > 0
    assert by["memory errors"]["expected_errors"] > 0 and by["memory errors"]["memory"]["errors"] > 0
    se = by["scatter errors"]
    assert 0 < se["expected_errors"] < se["items"] and se["memory"]["errors"] > 0 and se["memory"]["writes"] > 0
    rnd = [r for r in res["runs"] if r["name"].startswith("random")]
    assert sum(r["values"] for r in rnd) > 1000
    # The pool ran dry (the issue engine waited for a register) and registers were
    # linked to outstanding blocks; with 2 tag entries some had to retry.
    assert max(r["tlm_stats"]["peak_registers"] for r in rnd) == cfg.work_registers
    assert sum(r["tlm_stats"]["pool_stalls"] for r in rnd) > 0
    assert all(r["tlm_stats"]["links"] > 0 for r in rnd)
    if preset == "tiny":
        assert sum(r["tlm_stats"]["retries"] for r in rnd) > 0
        # the read queue full while the memory refused requests: allocations waited
        # (and a write-back latched meanwhile waited behind the offered read)
        assert sum(r["tlm_stats"]["port_stalls"] for r in rnd) > 0


@pytest.mark.parametrize("sim", ["icarus"])           # Verilator builds the default preset only
def test_mff_cocotb_128B_lines(sim):
    # The gtx480 preset (the slides' GPU's 128 B lines): the worked example reads one
    # C line and one V line.
    cfg = MFFConfig.preset("gtx480")
    runs = [r for r in mff_runs() if r["name"] in ("worked example", "worked example, latency 100",
                                                     "scatter then gather", "random 2/0")]
    res = run_cocotb(build_verilog("mff", cfg), "sim.mff.tb", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
    by = check_runs(res)
    for name in ("worked example", "worked example, latency 100"):
        assert by[name]["values"] == 7
        assert by[name]["memory"]["reads"] == slides_example_counts(128)["mff_reads"] == 2
    assert by["random 2/0"]["values"] > 300


# ---------------------------------------------------------------------- failed write-backs
def write_back_runs(cfg: MFFConfig) -> list[dict]:
    """Scatters whose write-backs fail (their blocks in an error range) while other
    warps' commands are in flight: the directed workload, then random scatter-heavy
    ones with two failing bitmap blocks, random latency and back-pressure (the
    completion port always ready: test_mff_held_completion_keeps_its_error_flag)."""
    bad = make_workload(cfg, {"kind": "failed write-back"})[0].regions["bad"]
    runs = [{"name": "failed write-back beside a clean scatter", "workload": {"kind": "failed write-back"},
             "timing": {"latency": [1, 20], "seed": 4, "error_ranges": [[bad.base, bad.base + bad.nbytes]]}}]
    for k in range(3 * SCALE):
        seed = 40 + k
        wl = {"seed": seed, "commands": 16, "scatter": 0.7, "warps": 4}
        bm = make_workload(cfg, wl)[0].regions["bitmap"]
        lo = bm.base + random.Random(seed).randrange(bm.nbytes // 64) * 64
        timing = {"latency": [1, 20 + 30 * (k % 3)], "seed": seed, "req_ready": [1, 1, 0],
                  "error_ranges": [[lo, lo + 64]]}
        runs.append({"name": f"failed write-backs {k}", "seed": seed, "workload": wl, "cmd_pause": 0.7,
                     "spad_ready": 0.6, "timing": timing})
    return runs


@pytest.mark.parametrize("sim, preset", [("icarus", "tiny"), ("icarus", "default"), ("verilator", "default")])
def test_mff_cocotb_failed_write_backs(sim, preset):
    """A failed write-back sets the error of every scatter command in flight
    (docs/mff.md, "Errors"): the RTL equals the TLM (flags, cycles, reads,
    write-backs, memory), and each flag is the functional model's unless a
    write-back's error response came while the scatter was in flight."""
    cfg = MFFConfig.preset(preset)
    res = run_cocotb(build_verilog("mff", cfg), "sim.mff.tb", {"config": cfg.to_dict(), "runs": write_back_runs(cfg)},
                     sim=sim)
    by = check_runs(res)
    # the directed run: the clean 32-lane scatter (command 1) was in flight when the
    # failing one's write-back came back; the gathers never take a write-back's error
    d = by["failed write-back beside a clean scatter"]
    assert d["failed_write_backs"] >= 2 and 1 in d["write_back_flagged"]
    assert not {2, 6} & set(d["write_back_flagged"])
    assert all(r["failed_write_backs"] > 0 and r["memory"]["writes"] > r["failed_write_backs"] for r in by.values())
    assert sum(len(r["write_back_flagged"]) for r in by.values()) > 2


@pytest.mark.parametrize("sim", ["icarus"])           # the tiny preset: Icarus (docs/verification.md)
def test_mff_held_completion_keeps_its_error_flag(sim):
    """The stream rule on ``done`` while write-backs fail: with the completion
    port refusing 60 cycles in 61, the clean scatter's completion (error 0) is
    held when the failing scatter's write-back comes back with an error; a failed
    write-back spares a scatter whose completion is offered (docs/mff.md,
    "Errors"), so the held payload does not change (it did before: found by this
    test), and the RTL still equals the TLM."""
    cfg = MFFConfig.preset("tiny")
    run = dict(write_back_runs(cfg)[0], done_ready=[0] * 60 + [1])
    res = run_cocotb(build_verilog("mff", cfg), "sim.mff.tb", {"config": cfg.to_dict(), "runs": [run]}, sim=sim)
    assert res["runs"][0]["mismatches"] == []
    assert res["runs"][0].get("failed_write_backs", 0) >= 1


# ---------------------------------------------------------------------- watchdog
def test_watchdog_bounds_the_oldest_command_by_the_work_in_flight():
    cfg = MFFConfig.preset("default")
    space = AddressSpace(addr_bits=cfg.addr_width)
    cb = space.alloc("C", np.arange(1024, dtype=np.uint32) % 64, align=256)
    vb = space.alloc("V", np.arange(64, dtype=np.uint32), align=256)

    def gather(warp, size):
        return MFFCommand("gather", warp, (ThreadRequest(lane=0, cidx=0, size=size),), cbase=cb, vbase=vb)

    def bound(items, **kw):
        h = MFFHarness(cfg, space, items, expect=False, **kw)
        assert h.watchdog()[1] == 0           # (its first entry not yet accepted: from the queueing)
        h.cmd.drive()
        h.cycle = 3
        h.cmd.clock(lambda path: 1)           # the first entry accepted at cycle 3
        what, start, b = h.watchdog()
        assert start == 3 and what.startswith("MFF command 0 (gather, warp 0, 1 entries")
        return b

    assert MFFHarness(cfg, space, [], expect=False).watchdog() is None
    sizes = [bound([gather(0, n)]) for n in (1, 10, 100)]
    assert sizes[0] < sizes[1] < sizes[2]
    # commands of other warps in flight beside it, a slower memory, back-pressure: more time
    assert bound([gather(0, 10), gather(1, 100)]) > sizes[1]
    assert bound([gather(0, 10)], timing=MemoryTiming(latency=50)) > sizes[1]
    assert bound([gather(0, 10)], spad_ready=[1, 0, 0]) > sizes[1]


def test_mff_watchdog_stops_a_command_past_its_bound():
    """A short Icarus run with the watchdog's bound cut to 40 cycles: the worked
    example's gather (7 elements, 100-cycle memory) passes it and the run stops
    with a HangError naming the command."""
    cfg = MFFConfig.preset("default")
    runs = [{"name": "example", "workload": {"kind": "example"}, "timing": {"latency": 100}, "watch": [40, 0]}]
    res = run_cocotb(build_verilog("mff", cfg), "sim.mff.tb", {"config": cfg.to_dict(), "runs": runs}, sim="icarus")
    r = res["runs"][0]
    assert r["mismatches"][0].startswith("HangError: MFF command 0 (gather, warp 0, 4 entries, 7 elements) not "
                                         "complete 41 cycles after it was accepted"), r["mismatches"]
    assert r["cycles"] < r["tlm_cycles"]


def test_mff_workload_offset_places_every_array_mid_block():
    """The workload's ``offset``: C, V and the bitmap start that many bytes into their
    regions (the "arrays in mid-block" run); one that breaks V's 8-byte alignment is refused."""
    cfg = MFFConfig.preset("tiny")
    space, items = make_workload(cfg, {"seed": 41, "commands": 12, "scatter": 0.4, "offset": 8})
    cmds = [it for it in items if isinstance(it, MFFCommand) and it.op != "invalidate"]
    assert {it.op for it in cmds} == {"gather", "scatter"}
    assert all(it.cbase % cfg.block_bytes == 8 and it.vbase % cfg.block_bytes == 8 for it in cmds)
    assert all(it.cbase == space.regions["C"].base + 8 for it in cmds)
    for bad in (4, -8):
        with pytest.raises(ValueError, match=f"multiple of 8 bytes >= 0, not {bad}"):
            make_workload(cfg, {"seed": 1, "offset": bad})
