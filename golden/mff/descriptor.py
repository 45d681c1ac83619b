"""MFF's descriptor (golden/units.py): memory fast forward (slides, GPGPU-Sim GTX 480; DATE 2015)."""
from golden.units import RTLBlock, UnitDescriptor

UNIT = UnitDescriptor(
    "mff", "MFF", "slides (GPGPU-Sim, GTX 480)", order=40,
    config="golden.mff:MFFConfig", tlm="golden.mff:MFFModel",
    algorithms="golden.mff.algorithms",
    options={"_Pull": ("backend", "mff", "pc_size", "mff_rate", "mff_units", "compare_baseline"),
             # reads PageRank's options through PageRank.parameters()
             "PullPageRank": ("damping", "tol", "max_iter", "variant")},
    preset_option="mff", default_preset="gtx480",
    unit_attr="use_mff",                 # the pull modes run without the unit
    rtl=(RTLBlock("mff", "golden.mff:MFFConfig", "hw.mff:MFF",
                  "memory fast forward: pointer chasing with coalescing work registers (MFF, DATE 2015)"),),
    cosim="sim.mff.cosim:COSIM",
    demo="graphunits.mff.demo:demo",
    profile="graphunits.mff.profile:PROFILE",
    fidelity={"gpus": ["gtx480"], "graphs": ["kron:scale=16", "grid:256x256"],
              "quick": ["kron:scale=10", "grid:32x32"], "algos": ["pr", "bfs", "sssp", "cc"]},
    run_rows="graphunits.mff.summary:rows",
)
