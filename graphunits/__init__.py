"""graphunits, the application: the ``graphunits`` command line (:mod:`.cli`, one
module per group of commands), the built-in demo (:mod:`.demo`), reports,
figures and sweeps (:mod:`.report`).

Layering (docs/architecture.md): this package sits on top and imports ``sim``,
``synth``, ``hw`` and ``golden``; none of them imports it.
"""
