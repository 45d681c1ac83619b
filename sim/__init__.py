"""graphunits simulation flow: Verilog builds, cocotb runners for Icarus and
Verilator, the testbench memory model and agents, the units' harnesses and
RTL-in-the-loop runs. The command line, the demo and the reports are the
application's (:mod:`graphunits`); sim/ never imports it."""
