"""The SCU's descriptor (golden/units.py): Segura et al., ISCA 2019."""
from golden.units import RTLBlock, UnitDescriptor

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
)
