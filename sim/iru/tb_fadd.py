"""cocotb module: the IRU's binary32 adder (``hw.iru.FAdd32``, combinational) on a
list of operand pairs. Case: ``{"pairs": [[a, b], ...]}`` (bit patterns);
result: ``{"sums": [...]}``, the adder's output for each pair."""
import cocotb
from cocotb.triggers import Timer

from sim.case import load_case, save_result


@cocotb.test()
async def fadd(dut):
    case = load_case()
    sums = []
    for a, b in case["pairs"]:
        dut.a.value = a
        dut.b.value = b
        await Timer(1, unit="ns")
        sums.append(int(dut.o.value))
    save_result({"sums": sums})
