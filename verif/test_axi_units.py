"""Units behind their AXI4 wrappers (hw/axi/wrapper.py): every unit's wrapper
elaborates with the documented port names; the SCU, the fetch engine, the EMOGI
coalescer, the MFF, GraphPEG and the IRU, driven through AXI4-Stream by their own testbenches with
cocotbext-axi's AXI RAM as their memory (sim/axi/tb_unit.py), pass those
testbenches' checks on Icarus, the fetch engine, the coalescer and the MFF on
Verilator too (`benchmarks/axi.py --sim verilator` runs every unit behind it on
Verilator, recording its cycles against the bare unit's with a 1-cycle memory)."""
import gc
import warnings

import pytest
from amaranth.hdl import Shape, UnusedElaboratable

from hw.axi.wrapper import AXI4Wrapper, axi_names
from hw.registry import UNITS
from sim.build import build_verilog
from sim.runner import run_cocotb

SMALL = {"fetch": "default", "scu": "tiny", "iru": "tiny", "graphpeg": "sim", "mff": "tiny", "coalescer": "small"}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_unit_has_an_axi4_wrapper(name):
    spec = UNITS[name]
    inner = spec.build(spec.config(SMALL[name]))
    w = AXI4Wrapper(inner)
    ports = set(w.signature.members)
    for kind, member in ((k, v) for k, v in inner.signature.members.items()):
        sig = member.signature if member.is_signature else None
        if sig is None:
            assert kind in ports                       # plain ports pass through
        elif kind.startswith("mem"):
            prefix = "m_axi_" if kind == "mem" else f"m_axi_{kind}_"
            assert {prefix + s for s in ("araddr", "arid", "rdata", "rresp", "awaddr", "wdata", "wstrb", "bresp")} <= ports
        else:
            side = "s_axis" if member.flow.name == "In" else "m_axis"
            assert {f"{side}_{kind}_{s}" for s in ("tvalid", "tready", "tdata")} <= ports
            assert Shape.cast(w.signature.members[f"{side}_{kind}_tdata"].shape).width % 8 == 0
    names = axi_names(inner)
    assert all(v in ports for v in names.values())
    with warnings.catch_warnings():             # built to read the ports, never elaborated
        warnings.simplefilter("ignore", UnusedElaboratable)
        del w, inner
        gc.collect()


#: unit -> (preset, workload of the random runs, extra run options)
WRAPPED = {
    "scu": ("tiny", lambda seed: {"seed": seed, "ops": 14, "max_n": 60}, {"cmd_pause": [1, 0], "status_ready": 0.7}),
    "fetch": ("default", lambda seed: {"kind": "random", "seed": seed, "ops": 10},
              {"out_ready": 0.7, "cmd_pause": [1, 0]}),
    "coalescer": ("small", lambda seed: {"kind": "random", "seed": seed, "count": 40},
                  {"in_pause": [1, 0], "out_ready": 0.6}),
    # the MFF's checks behind the bridge: values, error flags and memory against its
    # functional model (its cycle-exact TLM does not know the bridge's cycles)
    "mff": ("tiny", lambda seed: {"seed": seed, "commands": 16},
            {"cmd_pause": [1, 0], "spad_ready": 0.7, "done_ready": 0.7}),
    # GraphPEG's checks do not depend on timing: items against the graph and the TLM,
    # statuses, refills, requests by kind (edge lists, EF, CSC, vertex lists)
    "graphpeg": ("sim", lambda seed: {"seed": seed, "graph": {"vertices": 48, "big": [100], "zero": 0.1},
                                      "kernels": [{"lists": [20, 16], "ef": False},
                                                  {"lists": [12, 12], "ef": True, "skew": True},
                                                  {"lists": [10, 10], "csc": True, "ef": False},
                                                  {"lists": [8, 8], "mode": "vertex"}]},
                 {"cmd_pause": [1, 0], "push_pause": [1, 0], "pop_ready": 0.7, "status_ready": 0.7}),
    # the IRU: a RAM on each partition's memory port (one memory); reply rules, statuses,
    # the TLM's aggregates
    "iru": ("tiny", lambda seed: {"seed": seed, "ops": 10, "max_n": 120},
            {"reply_ready": 0.7, "req_pause": [1, 0], "cmd_pause": [1, 0], "status_ready": 0.7}),
}
#: results a run must have (statuses, operations, requests...): GraphPEG's are its 5 steps' statuses
MIN_RESULTS = {"graphpeg": 5}


#: The units behind AXI4 on Verilator too: the wrapper's code (hw/axi/) is the same for
#: every unit, and these three build in seconds; the SCU, GraphPEG and the IRU behind
#: it run on Icarus (their bare RTL runs on both simulators in its own tests;
#: a Verilator build of their wrapped Verilog takes 10-40 s of compiler time).
AXI_ON_VERILATOR = ("coalescer", "fetch", "mff")


@pytest.mark.parametrize("name, sim", [(n, "icarus") for n in sorted(WRAPPED)] +
                         [(n, "verilator") for n in AXI_ON_VERILATOR])
def test_unit_behind_axi4_matches_its_tlm(name, sim):
    """The unit's own testbench through its wrapper: with the RAM's channels paused at
    random and the unit's streams held back, and with nothing paused."""
    preset, workload, agents = WRAPPED[name]
    cfg = UNITS[name].config(preset)
    if name == "mff":               # the host's pokes must reach the AXI RAM (a run with one)
        from sim.mff import Poke, make_workload
        assert any(isinstance(it, Poke) for it in make_workload(cfg, workload(4))[1])
    runs = [{"name": "random, paused", "seed": 3, "workload": workload(3), "pause": 0.3, **agents},
            {"name": "random, nothing paused", "seed": 4, "workload": workload(4), "pause": 0}]
    res = run_cocotb(build_verilog(name, cfg, axi=0), "sim.axi.tb_unit",
                     {"unit": name, "config": cfg.to_dict(), "runs": runs}, sim=sim)
    for r in res["runs"]:
        assert r["mismatches"] == [], (r["name"], r["mismatches"][:3])
        assert r["results"] >= MIN_RESULTS.get(name, 10), r
        assert all(n > 0 for n in r["reads"]), r          # every memory port served reads


@pytest.mark.parametrize("name", ["fetch", "scu", "mff", "graphpeg", "iru"])
def test_unit_behind_axi4_with_the_testbench_memory_as_an_axi_slave(name):
    """The testbench's own memory model (latency 1 to 30, requests refused at random)
    behind the AXI4 slave agent (sim.axi.AXIMemoryAgent): its statistics are the
    memory's own, so every check of the bare unit's testbench applies (the fetch
    engine's: the blocks read, in order)."""
    preset, workload, agents = WRAPPED[name]
    cfg = UNITS[name].config(preset)
    runs = [{"name": "one-cycle", "seed": 5, "workload": workload(5), "memory": "one-cycle",
             "timing": {"latency": 1}},
            {"name": "slow", "seed": 6, "workload": workload(6), "memory": "one-cycle",
             "timing": {"latency": [1, 30], "seed": 6, "req_ready": 0.6}, **agents}]
    res = run_cocotb(build_verilog(name, cfg, axi=0), "sim.axi.tb_unit",
                     {"unit": name, "config": cfg.to_dict(), "runs": runs}, sim="icarus")
    for r in res["runs"]:
        assert r["mismatches"] == [], (r["name"], r["mismatches"][:3])
        assert r["results"] >= MIN_RESULTS.get(name, 10), r
        assert all(n > 0 for n in r["reads"]), r          # every memory port served reads
