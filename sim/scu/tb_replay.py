"""cocotb module: one SCU operation from a reproducer (sim/replay.py) on the RTL,
served by the Python memory model. Case: ``{"config", "op", "timing", "image",
"addr_bits", "regions", "blocks"}``; result: the status and the bytes (hex) of
``blocks`` after the operation, and the cycles."""
import cocotb

from golden.scu import SCUConfig
from sim.case import load_case, save_result
from sim.cocotb_loop import CocotbLoop
from sim.memory import timing_from_dict
from sim.replay import load_image, op_from_dict
from sim.scu import SCUHarness


@cocotb.test()
async def scu_replay(dut):
    case = load_case()
    cfg = SCUConfig.from_dict(case["config"])
    space = load_image(case)
    op = op_from_dict(case["op"])
    h = SCUHarness(cfg, space, [op], timing=timing_from_dict(case["timing"]), expect=False)
    loop = CocotbLoop(dut, h.agents)
    await loop.start()
    cycles = await loop.run(h.done, stall_cycles=20_000, what=f"SCU {op.op} of {op.n} elements (replay)")
    save_result({"status": h.statuses[0].as_dict(), "cycles": cycles,
                 "blocks": {str(a): space.read(a, cfg.block_bytes).tobytes().hex() for a in case["blocks"]}})
