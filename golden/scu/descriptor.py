"""The SCU's descriptor (golden/units.py): Segura et al., ISCA 2019."""
from golden.units import AreaClaim, RTLBlock, UnitDescriptor

_SCU_WHY = ("paper: the whole enhanced SCU with {paper_kb:g} KB of buffers (Table 1: 5 KB vector buffering, 38 KB "
            "request FIFO, 18 KB hash request buffer) from CACTI plus Synopsys DC 32 nm low-power cells at 0.78 V "
            "({paper_kb:g} KB would be {paper_sram_mm2:.3f} mm2 in our SRAM model); ours: {ours_kb:.1f} KB of SRAM "
            "macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 of ideally scaled OSU 0.18 um logic")


UNIT = UnitDescriptor(
    "scu", "SCU", "Segura et al., ISCA 2019", order=10,
    config="golden.scu:SCUConfig", tlm="golden.scu:SCUModel",
    algorithms="golden.scu.algorithms", options={"_SCUMode": ("backend", "scu", "group")},
    preset_option="scu", default_preset="tx1 on --gpu tx1, else gtx980",
    rtl=(RTLBlock("scu", "golden.scu:SCUConfig", "hw.scu:SCU",
                  "stream compaction unit with filtering and grouping (SCU, ISCA 2019)"),),
    cosim="sim.scu.cosim:COSIM",
    demo="graphunits.scu.demo:demo",
    profile="graphunits.scu.profile:PROFILE",
    area_claims=(AreaClaim("SCU, Tegra X1 (width 1)", "tx1-sim", "area_mm2", 3.65, "mm2", "SCU paper §6.4", _SCU_WHY,
                           node=32, paper_kb=61),
                 AreaClaim("SCU, GTX 980 (width 4)", "gtx980-sim", "area_mm2", 13.27, "mm2", "SCU paper §6.4", _SCU_WHY,
                           node=32, paper_kb=61)),
    fidelity={"gpus": ["gtx980", "tx1"], "graphs": ["kron:scale=16", "delaunay:scale=16", "road:256x256"],
              "quick": ["kron:scale=10", "delaunay:scale=10", "road:32x32"],
              "paper": ["kron:scale=18,edgefactor=48", "delaunay:scale=19", "road:843x843"],
              "algos": ["bfs", "sssp", "pr"]},
    run_rows="graphunits.scu.summary:rows",
)
