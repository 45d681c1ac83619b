"""cocotb test modules run by :func:`sim.runner.run_cocotb` (tests, demo, benchmarks)."""
