"""pytest configuration: the toolchain environment and shared helpers."""
import os
import sys

import pytest

from sim.toolchain import configure

configure()

#: Multiplies the number of random cases (GRAPHUNITS_TEST_SCALE=4 for a longer soak).
SCALE = max(1, int(os.environ.get("GRAPHUNITS_TEST_SCALE", "1")))

#: The seed of the builds whose memories start with random contents
#: (``build_verilog(..., random_init=RANDOM_INIT_SEED)``): verif/test_random_init.py,
#: and the Icarus runs of GraphPEG (``sim``) and of the MFF (``default``).
RANDOM_INIT_SEED = 11


@pytest.fixture
def scale():
    return SCALE


def load_script(relpath: str):
    """Import a script of the repository (``benchmarks/x.py``, ``scripts/x.py``) as a
    module, for the tests of its ``main``."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / relpath
    spec = importlib.util.spec_from_file_location(f"script_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod            # (dataclasses look their module up there)
    spec.loader.exec_module(mod)
    return mod


def simulate(dut, bench) -> None:
    """Run ``bench(ctx)`` (an async testbench) on ``dut`` under Amaranth's simulator
    with a clock (if it has registers; a combinational component's bench steps with
    ``ctx.delay``): the component tests' runner."""
    from amaranth.sim import Simulator
    sim = Simulator(dut)
    sim.add_clock(1e-8, if_exists=True)
    sim.add_testbench(bench)
    sim.run()
