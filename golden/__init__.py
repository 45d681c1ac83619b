"""graphunits golden model: pure Python/numpy, never imports Amaranth or cocotb.

Holds the unit configurations (the single source of truth for every parameter),
the transaction-level models (TLMs) of the units, the memory address space, the
GPU model and the graph algorithms.
"""
