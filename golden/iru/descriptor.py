"""The IRU's descriptor (golden/units.py): Segura et al., J. Supercomputing."""
from golden.units import RTLBlock, UnitDescriptor

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
)
