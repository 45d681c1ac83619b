"""GraphPEG's descriptor (golden/units.py): TACO 2021."""
from golden.units import RTLBlock, UnitDescriptor

UNIT = UnitDescriptor(
    "graphpeg", "GraphPEG", "TACO 2021", order=30,
    config="golden.graphpeg:GraphPEGConfig", tlm="golden.graphpeg:GraphPEGModel",
    algorithms="golden.graphpeg.algorithms",
    options={"_GraphPEGMode": ("backend", "graphpeg", "graphpeg_model", "latency", "compare_baseline")},
    preset_option="graphpeg", default_preset="default",
    rtl=(RTLBlock("graphpeg", "golden.graphpeg:GraphPEGConfig", "hw.graphpeg:GraphPEG",
                  "graph processing engine per SM: ALWT edge gathering, EF balancing (GraphPEG, TACO 2021)"),),
    cosim="sim.graphpeg:COSIM",
    demo="graphunits.graphpeg.demo:demo",
    profile="graphunits.graphpeg.profile:PROFILE",
)
