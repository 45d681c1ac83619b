"""cocotb module: one batch of warps from a reproducer (sim/replay.py) through the
warp-coalescer RTL, with the run's input and output patterns. Case: ``{"config",
"warps", "in_pause", "out_ready", "seed"}``; result: the requests (``[addr, size,
last]``) and the cycles."""
import cocotb

from golden.emogi import CoalescerConfig
from sim.case import load_case, pattern, save_result
from sim.cocotb_loop import CocotbLoop
from sim.emogi import CoalescerHarness, request_tuples


@cocotb.test()
async def coalescer_replay(dut):
    case = load_case()
    cfg = CoalescerConfig.from_dict(case["config"])
    warps = [(list(a), m if m is None or isinstance(m, int) else list(m)) for a, m in case["warps"]]
    h = CoalescerHarness(cfg, warps, in_pause=pattern(case["in_pause"]), out_ready=pattern(case["out_ready"]),
                         seed=case["seed"])
    loop = CocotbLoop(dut, h.agents)
    await loop.start()
    cycles = await loop.run(h.done, stall_cycles=1000, what=f"{len(warps)} warps (replay)", watch=h.watchdog)
    await loop.idle(16)                     # requests after the last warp count too
    save_result({"requests": request_tuples(h.got), "cycles": cycles})
