"""cocotb module: a unit behind its AXI4 wrapper (hw/axi/wrapper.py), driven
through AXI4-Stream by the unit's own testbench, whose ports are renamed to the
wrapper's (:func:`hw.axi.wrapper.axi_names`), with cocotbext-axi's ``AxiRam`` on
its memory port instead of the testbench's memory agent. The RAM starts with the
workload's memory; the blocks it reads and writes are recorded for the
testbench's checks, and before the final comparison its contents go back to the
testbench, which compares the unit's results and the memory with the TLM's as
for the bare unit. Units: the SCU, the fetch engine, the EMOGI coalescer
(which has no memory port) and the MFF (against its functional model: its
cycle-exact TLM knows the bare port's timing, not the bridge's).

Case: ``{"unit", "config", "runs": [{"name", "workload", "seed", "pause", and the
unit's patterns (SCU: cmd_pause, status_ready; fetch: out_ready, cmd_pause;
coalescer: in_pause, out_ready; MFF: cmd_pause, spad_ready, done_ready), "memory", "timing"}]}``;
``pause``: the chance that
an AXI channel of the RAM pauses in a cycle; ``memory: "one-cycle"``: instead of the
RAM, the testbench's own memory model (its ``timing``) behind an AXI4 slave agent
that answers one-beat bursts (:class:`sim.axi.AXIMemoryAgent`; every run of the
case alike). Result per run: the problems, cycles, the count of
the unit's results, the blocks read on each memory port and (the SCU) its statuses."""
from typing import NamedTuple

import cocotb
from cocotbext.axi import AxiBus, AxiRam

from golden.units import resolve
from hw.axi.wrapper import axi_names
from hw.registry import unit as get_unit
from sim.case import harness_options, load_case, run_cases
from sim.cocotb_loop import run_harness

from sim.axi import AXIMemoryAgent
from sim.axi.tb import set_pauses

class Wrapped(NamedTuple):
    """How a unit's own testbench runs behind the wrapper."""

    harness: str                  # the harness class
    workload: str                 # the workload maker
    patterns: tuple               # the harness's pattern options
    results: str                  # its results' attribute (counted)
    memory: bool = True           # a memory port (the run's timing applies)
    options: dict = {}            # more harness options (the MFF: no cycle-exact TLM behind the bridge)
    done: str = "done"            # the harness's "everything done" method
    keywords: tuple = ()          # the workload's last values, passed by these names (GraphPEG's graph)


UNITS = {
    "scu": Wrapped("sim.scu:SCUHarness", "sim.scu:make_workload", ("cmd_pause", "status_ready"), "statuses"),
    "fetch": Wrapped("sim.fetch:FetchHarness", "sim.fetch:make_workload", ("out_ready", "cmd_pause"), "ops"),
    "coalescer": Wrapped("sim.emogi:CoalescerHarness", "sim.emogi:make_warps", ("in_pause", "out_ready"), "got",
                         memory=False),
    "mff": Wrapped("sim.mff:MFFHarness", "sim.mff:make_workload", ("cmd_pause", "spad_ready", "done_ready"),
                   "results", options={"lockstep": False}, done="done_all"),
    # GraphPEG's checks do not depend on the memory's timing (items against the graph and
    # the TLM, statuses, requests by kind); its balancer's decisions are not compared
    "graphpeg": Wrapped("sim.graphpeg:GraphPEGHarness", "sim.graphpeg:make_workload",
                        ("cmd_pause", "push_pause", "pop_ready", "status_ready"), "statuses", keywords=("graph",)),
    # the IRU: two memory ports per partition pair, each behind its own RAM (one memory);
    # its checks are the reply rules, the statuses and the TLM's aggregates
    "iru": Wrapped("sim.iru:IRUHarness", "sim.iru:make_workload",
                   ("reply_ready", "req_pause", "cmd_pause", "status_ready"), "results"),
}

_state = {}


class Renamed:
    """The wrapped design seen under the bare unit's port names."""

    def __init__(self, dut, names: dict):
        self._dut, self._names = dut, names

    def __getattr__(self, name):
        return getattr(self._dut, self._names.get(name, name))


def _recording(ram, block_bytes: int, log: dict) -> None:
    """Record the blocks the RAM reads and writes (a burst's first beat, at a block
    boundary), in order: the testbench's memory statistics."""
    def wrap(op, key):
        async def access(address, *args):
            if address % block_bytes == 0:
                log[key].append(address)
            return await op(address, *args)
        return access
    ram.read_if._read = wrap(ram.read_if._read, "read_blocks")
    ram.write_if._write = wrap(ram.write_if._write, "write_blocks")


def _memory_ports(h) -> list:
    """The harness's (memory agent, memory model) pairs, in port order (``mem``, or
    ``mem0``, ``mem1``... as the IRU's partitions)."""
    if hasattr(h, "mems"):
        return list(zip(h.mems, h.models))
    return [(h.mem, h.model)] if hasattr(h, "mem") else []


def over_axi(harness_cls):
    """``harness_cls`` with the AXI RAMs ``rams`` (one per memory port, sharing one
    memory; none: the unit has no memory port) for its memory agents, or with
    ``one_cycle``, the testbench's own memory models behind AXI4 slave agents
    (:class:`sim.axi.AXIMemoryAgent`) on the ports ``prefixes``."""

    class OverAXI(harness_cls):
        def __init__(self, *args, rams=(), logs=(), one_cycle=False, prefixes=(), **kw):
            super().__init__(*args, **kw)
            ports = _memory_ports(self)
            self.ram = rams[0] if rams else None
            self._agents_replaced = {id(a) for a, _ in ports} if (rams or one_cycle) else set()
            self.axi_mems = [AXIMemoryAgent(m, f"{p}_") for (_, m), p in zip(ports, prefixes)] if one_cycle else []
            if self.ram is not None:
                space = ports[0][1].space
                for reg in space.regions.values():
                    self.ram.write(reg.base, space.read(reg.base, reg.nbytes).tobytes())
                for (_, m), log in zip(ports, logs):  # the RAMs' accesses are the memories' statistics, as they come
                    m.stats.read_blocks = log["read_blocks"]
                    m.stats.write_blocks = log["write_blocks"]

        @property
        def agents(self):
            return self.axi_mems + [a for a in super().agents if id(a) not in self._agents_replaced]

        def poke_memory(self, addr, data):          # the testbench writes memory itself (MFF pokes)
            super().poke_memory(addr, data)
            if self.ram is not None:
                self.ram.write(addr, bytes(data))

        def mismatches(self):
            if self.ram is not None:
                space = _memory_ports(self)[0][1].space
                for reg in space.regions.values():          # what the unit left in the RAM
                    space.write(reg.base, bytearray(self.ram.read(reg.base, reg.nbytes)))
            return super().mismatches()

    return OverAXI


async def unit_axi_run(dut, cfg, run):
    name = _state["unit"]
    u = UNITS[name]
    has_memory = u.memory
    one_cycle = run.get("memory") == "one-cycle"
    if "names" not in _state:
        inner = get_unit(name).build(cfg)
        _state["names"] = axi_names(inner)
        # the memory ports' AXI prefixes: mem -> m_axi, mem0 -> m_axi_mem0...
        _state["prefixes"] = ["m_axi" if k == "mem" else f"m_axi_{k}" for k in inner.signature.members
                              if k == "mem" or (k.startswith("mem") and k[3:].isdigit())]
        _state["one_cycle"] = one_cycle
        _state["rams"], _state["logs"] = [], []
        if has_memory and not one_cycle:
            for prefix in _state["prefixes"]:
                first = _state["rams"][0] if _state["rams"] else None
                ram = AxiRam(AxiBus.from_prefix(dut, prefix), dut.clk, dut.rst, size=1 << cfg.addr_width,
                             mem=first.mem if first is not None else None)
                log = {"read_blocks": [], "write_blocks": []}
                _recording(ram, cfg.block_bytes, log)
                _state["rams"].append(ram)
                _state["logs"].append(log)
    if one_cycle != _state["one_cycle"]:
        raise ValueError("a case's runs all use the AXI RAM or all the one-cycle memory (both drive the bus)")
    for k, (ram, log) in enumerate(zip(_state["rams"], _state["logs"])):
        set_pauses(ram, run.get("seed", 0) + 1000 * k, run.get("pause", 0))
        for v in log.values():
            v.clear()
    made = resolve(u.workload)(cfg, run["workload"])
    args = made if isinstance(made, tuple) else (made,)
    kw = dict(zip(u.keywords, args[len(args) - len(u.keywords):]))
    args = args[:len(args) - len(u.keywords)]
    h = over_axi(resolve(u.harness))(cfg, *args, rams=_state["rams"], logs=_state["logs"],
                                     one_cycle=one_cycle and has_memory, prefixes=_state["prefixes"],
                                     **harness_options(run, *u.patterns, timing=has_memory), **u.options, **kw)
    # the py clock: cocotbext-axi's models sample their signals on the edge at time 0
    cycles, problems = await run_harness(Renamed(dut, _state["names"]), h, run, done=getattr(h, u.done),
                                         clock_impl="py")
    out = {"results": len(getattr(h, u.results)),
           "reads": [len(m.stats.read_blocks) for _, m in _memory_ports(h)]}     # per memory port
    if name == "scu":                             # benchmarks/axi.py: each operation's cycles
        out["statuses"] = [st.as_dict() for st in h.statuses]
    return cycles, problems, out


@cocotb.test()
async def unit_axi_cases(dut):
    _state["unit"] = load_case()["unit"]
    await run_cases(dut, get_unit(_state["unit"]).config_class, unit_axi_run)
