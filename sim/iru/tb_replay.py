"""cocotb module: one IRU operation from a reproducer (sim/replay.py) on the RTL,
every partition's memory the Python model with the run's timing; its replies
checked against the IRU's rules for its inputs (:func:`golden.iru.check_result`;
``perturb_inputs``: the run's seeded divergence). Case: ``{"config", "op",
"policy", "timing", "image", "addr_bits", "regions", "perturb_inputs"}``; result:
the problems (the testbench's own first), the cycles."""
import cocotb

from golden.iru import IRUConfig, IRUOp, RequestPolicy, check_result
from sim.case import load_case, save_result
from sim.cocotb_loop import CocotbLoop
from sim.iru import IRUHarness, perturb_inputs
from sim.memory import timing_from_dict
from sim.replay import load_image


@cocotb.test()
async def iru_replay(dut):
    case = load_case()
    cfg = IRUConfig.from_dict(case["config"])
    op = IRUOp(**case["op"])
    h = IRUHarness(cfg, load_image(case), [op], policy=RequestPolicy(**case["policy"]),
                   timing=timing_from_dict(case["timing"]), expect=False)
    loop = CocotbLoop(dut, h.agents)
    await loop.start()
    cycles = await loop.run(h.done, stall_cycles=20_000 + 4 * cfg.timeout,
                            what=f"IRU operation {op.op} of {op.n} elements (replay)", watch=h.watchdog)
    idx_in, sec_in = h.inputs[0]
    if case.get("perturb_inputs"):
        idx_in, sec_in = perturb_inputs(idx_in, sec_in)
    save_result({"problems": list(h.problems) + check_result(cfg, idx_in, sec_in, h.results[0]), "cycles": cycles})
