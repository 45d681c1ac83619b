"""cocotb module: a unit behind its AXI4 wrapper (hw/axi/wrapper.py) with
cocotbext-axi's ``AxiRam`` on its memory port, driven through AXI4-Stream by the
unit's own testbench (the SCU's: sim/scu/), whose ports are renamed to the
wrapper's (:func:`hw.axi.wrapper.axi_names`). The RAM starts with the workload's
memory; at the end its contents go back to the testbench, which compares every
status and the memory with the TLM's as for the bare unit.

Case: ``{"config": SCUConfig params, "runs": [{"name", "workload", "seed",
"cmd_pause", "status_ready", "pause"}]}`` (``pause``: the chance that an AXI
channel of the RAM pauses in a cycle). Result per run: the problems, cycles and
the statuses."""
import cocotb
from cocotbext.axi import AxiBus, AxiRam

from golden.scu import SCUConfig
from hw.axi.wrapper import axi_names
from hw.registry import unit
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.scu import SCUHarness, make_workload

from sim.axi.tb import set_pauses

_ram = {}


class Renamed:
    """The wrapped design seen under the bare unit's port names."""

    def __init__(self, dut, names: dict):
        self._dut, self._names = dut, names

    def __getattr__(self, name):
        return getattr(self._dut, self._names.get(name, name))


class SCUOverAXI(SCUHarness):
    """The SCU's testbench without its memory agent: the memory is the AXI RAM
    ``ram``, loaded with the workload's regions now and read back before the
    final comparison."""

    def __init__(self, *args, ram, **kw):
        super().__init__(*args, **kw)
        self.ram = ram
        for reg in self.space.regions.values():
            ram.write(reg.base, self.space.read(reg.base, reg.nbytes).tobytes())

    @property
    def agents(self):
        return [a for a in super().agents if a is not self.mem]

    def mismatches(self):
        for reg in self.space.regions.values():          # what the unit left in the RAM
            self.space.write(reg.base, bytearray(self.ram.read(reg.base, reg.nbytes)))
        return super().mismatches()


async def scu_axi_run(dut, cfg, run):
    if "ram" not in _ram:
        _ram["ram"] = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=1 << cfg.addr_width)
        _ram["names"] = axi_names(unit("scu").build(cfg))
    ram = _ram["ram"]
    set_pauses(ram, run.get("seed", 0), run.get("pause", 0))
    space, ops = make_workload(cfg, run["workload"])
    h = SCUOverAXI(cfg, space, ops, ram=ram, **harness_options(run, "cmd_pause", "status_ready"))
    cycles, problems = await run_harness(Renamed(dut, _ram["names"]), h, run)
    return cycles, problems, {"statuses": [s.as_dict() for s in h.statuses], "ops": len(h.ops)}


@cocotb.test()
async def scu_axi_cases(dut):
    await run_cases(dut, SCUConfig, scu_axi_run)
