"""cocotb module: drives the 4-bit counter of the logic-energy hand count
(verif/test_logic_energy.py): 2 cycles of reset, ``enable`` cycles counting,
then ``idle`` cycles with the count held. Case: ``{"enable": N, "idle": M}``;
result: the counter's final value."""
import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly

from sim.case import load_case, save_result


@cocotb.test()
async def count(dut):
    case = load_case()
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.en.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    dut.en.value = 1
    await ClockCycles(dut.clk, case["enable"])
    dut.en.value = 0
    await ClockCycles(dut.clk, case["idle"])
    await ReadOnly()
    save_result({"q": int(dut.q.value)})
