"""cocotb module: one batch of MFF commands from a reproducer (sim/replay.py) on the
RTL, served by the Python memory model with the run's timing. Case: ``{"config",
"commands", "timing", "image", "addr_bits", "regions"}``; result: each command's
scratchpad values (``[address, value]`` pairs) and error flag, the cycles and the
testbench's own problems (the MFF's rules: a value written twice, a completion
before its values...)."""
import cocotb

from golden.mff import MFFConfig
from sim.case import load_case, save_result
from sim.cocotb_loop import CocotbLoop
from sim.memory import timing_from_dict
from sim.mff import MFFHarness
from sim.mff.cosim import command_from_dict
from sim.replay import load_image


@cocotb.test()
async def mff_replay(dut):
    case = load_case()
    cfg = MFFConfig.from_dict(case["config"])
    cmds = [command_from_dict(c) for c in case["commands"]]
    h = MFFHarness(cfg, load_image(case), cmds, timing=timing_from_dict(case["timing"]), expect=False)
    loop = CocotbLoop(dut, h.agents)
    await loop.start()
    cycles = await loop.run(h.done_all, stall_cycles=20_000, what=f"{len(cmds)} MFF commands (replay)",
                            watch=h.watchdog)
    save_result({"results": [{"values": sorted(h.results[k]["values"].items()), "error": h.results[k]["error"]}
                             for k in range(len(cmds))], "cycles": cycles, "problems": list(h.problems)})
