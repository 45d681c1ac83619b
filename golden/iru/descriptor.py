"""The IRU's descriptor (golden/units.py): Segura et al., J. Supercomputing."""
from golden.units import AreaClaim, RTLBlock, UnitDescriptor

UNIT = UnitDescriptor(
    "iru", "IRU", "Segura et al., J. Supercomputing", order=20,
    config="golden.iru:IRUConfig", tlm="golden.iru:IRUModel",
    algorithms="golden.iru.algorithms",
    options={"_IRUMode": ("backend", "iru", "iru_latency", "iru_policy", "iru_check", "iru_model", "iru_exact")},
    preset_option="iru", default_preset="gtx980",
    rtl=(RTLBlock("iru", "golden.iru:IRUConfig", "hw.iru:IRU",
                  "irregular accesses reorder unit: partitioned reorder hash joined by a ring "
                  "(IRU, J. Supercomput. 2023)"),),
    cosim="sim.iru:COSIM",
    demo="graphunits.iru.demo:demo",
    profile="graphunits.iru.profile:PROFILE",
    area_claims=(AreaClaim(
        "IRU, one memory partition", "default", "area_mm2", 5.98, "mm2", "IRU paper §6.4",
        "paper: CACTI 32 nm only (23.9 mm2 for 4 partitions, 5.6 % of the GPU), a partition's hash of 256 "
        "sets x 32 elements x 80 bits (index 24 + secondary 32 + position 24 = 80 KB; the text's '80 KB of "
        "total storage' read per partition, as only this fits its geometry) plus 7.7 KB of FIFOs and ring "
        "buffers ({paper_kb:g} KB would be {paper_sram_mm2:.3f} mm2 in our SRAM model); ours: {ours_kb:.1f} KB "
        "of SRAM macros ({ours_sram_mm2:.4f} mm2) + {ours_logic_mm2:.4f} mm2 of logic: about the same "
        "storage, so the gap is not in what both count; the paper does not break its 5.98 mm2 down, so "
        "which part of it CACTI's periphery, ports or wiring make up cannot be told", node=32, paper_kb=87.7),),
    fidelity={"gpus": ["gtx980"], "graphs": ["kron:scale=15", "grid:128x128"],
              "quick": ["kron:scale=9", "grid:24x24"], "algos": ["bfs", "sssp", "pr"]},
    run_rows="graphunits.iru.summary:rows",
)
