"""EMOGI's descriptor (golden/units.py): Min et al., PVLDB 2021. Its runs take a
PCIe link preset through the ``run`` command's own ``--pcie`` option."""
from golden.units import RTLBlock, UnitDescriptor

UNIT = UnitDescriptor(
    "emogi", "EMOGI", "Min et al., PVLDB 2021", order=50,
    config="golden.emogi:PCIeConfig", tlm="golden.emogi:CoalescerTLM",
    algorithms="golden.emogi.algorithms",
    options={"_EMOGIMode": ("backend", "pcie", "edge_bytes", "uvm", "uvm_capacity")},
    preset_option="pcie", preset_flag=False, default_preset="pcie3-x16",
    rtl=(RTLBlock("coalescer", "golden.emogi:CoalescerConfig", "hw.emogi:WarpCoalescer",
                  "warp coalescer: lane addresses to 32-128 B PCIe read requests (EMOGI, VLDB 2021)"),),
    cosim="sim.emogi:COSIM",
    profile="graphunits.emogi.profile:PROFILE",
    fidelity={"gpus": ["v100"], "graphs": ["kron:scale=18", "urand:scale=18"],
              "quick": ["kron:scale=12", "urand:scale=12"], "algos": ["bfs", "sssp", "cc", "pr"]},
    run_rows="graphunits.emogi.summary:rows",
)
