"""graphunits simulation flow: toolchain set-up, Verilog builds, cocotb runners for
Icarus and Verilator, the testbench memory model and agents, RTL-in-the-loop runs
and the ``graphunits`` command line."""
