"""pytest configuration: the toolchain environment and shared helpers."""
import os

import pytest

from sim.toolchain import configure

configure()

#: Multiplies the number of random cases (GRAPHUNITS_TEST_SCALE=4 for a longer soak).
SCALE = max(1, int(os.environ.get("GRAPHUNITS_TEST_SCALE", "1")))


@pytest.fixture
def scale():
    return SCALE
