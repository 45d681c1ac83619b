"""cocotb module: one GraphPEG kernel from a reproducer (sim/replay.py) on the RTL,
served by the Python memory model with the run's timing: a setup, each SM's input
list pushed, the kernel. Case: ``{"config", "kernel", "lists", "setup", "timing",
"image", "addr_bits", "regions"}``; result: the items handed out (``[src, dst, wt,
idx]``), the kernel's cycles and the testbench's own problems (the engines'
stream rules)."""
import cocotb

from golden.graphpeg import GraphPEGConfig, GraphPEGKernel
from sim.case import load_case, save_result
from sim.cocotb_loop import CocotbLoop
from sim.graphpeg import GraphPEGHarness, Push, Run, Setup
from sim.memory import timing_from_dict
from sim.replay import load_image


@cocotb.test()
async def graphpeg_replay(dut):
    case = load_case()
    cfg = GraphPEGConfig.from_dict(case["config"])
    kernel = GraphPEGKernel(**case["kernel"])
    steps = ([Setup(*case["setup"])] + [Push(sm, tuple(vs)) for sm, vs in enumerate(case["lists"]) if vs]
             + [Run(kernel)])
    h = GraphPEGHarness(cfg, load_image(case), steps, timing=timing_from_dict(case["timing"]), expect=False)
    loop = CocotbLoop(dut, h.agents)
    await loop.start()
    cycles = await loop.run(h.done, stall_cycles=20_000, what=f"GraphPEG {kernel.mode} kernel (replay)",
                            watch=h.watchdog)
    res = h.kernel_result(-1)
    items = [[int(x) for x in t] for b in res.batches for t in zip(b.src, b.dst, b.wt, b.idx)]
    save_result({"items": items, "cycles": cycles, "kernel_cycles": res.cycles, "problems": list(h.problems)})
