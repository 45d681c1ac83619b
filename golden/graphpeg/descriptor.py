"""GraphPEG's descriptor (golden/units.py): TACO 2021."""
from golden.units import AreaClaim, RTLBlock, UnitDescriptor

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
    area_claims=(
        AreaClaim("GraphPEG ALWT storage, per SM", "default", "storage_bytes", 294, "B",
                  "GraphPEG paper §4.6 (24 entries x 98 bits)",
                  "ours: the memory bits and flip-flops of the submodules named '{scope}'", scope="alwt"),
        AreaClaim("GraphPEG, per SM", "default", "area_mm2", 0.051, "mm2", "GraphPEG paper §4.6",
                  "paper: McPAT 28 nm for about {paper_kb:g} KB of storage and its control ({paper_kb:g} KB would be "
                  "{paper_sram_mm2:.4f} mm2 in our SRAM model); ours: {ours_kb:.2f} KB of SRAM macros "
                  "({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 of logic, of which {aside_kb:.1f} KB "
                  "({aside_mm2:.4f} mm2) is the vertex list that the paper keeps in the SM's shared memory (not in "
                  "its figure): {without_mm2:.4f} mm2 without it", node=28, paper_kb=1, aside="vlist")),
    fidelity={"gpus": ["kepler"], "graphs": ["kron:scale=16", "grid:256x256"],
              "quick": ["kron:scale=10", "grid:32x32"], "algos": ["bfs", "sssp", "bc", "kcore"]},
    run_rows="graphunits.graphpeg.summary:rows",
)
