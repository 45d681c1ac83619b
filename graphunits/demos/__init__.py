"""The units' steps of ``graphunits demo``, one module per unit; each unit's
descriptor names its step (``demo``, golden/units.py): ``demo(sims, quick,
step) -> failures`` announces itself once with ``step(msg)`` (sub-steps with
``new=False``), prints its tables and returns the number of failed checks. Its
RTL-in-the-loop runs are recorded for the report by :class:`graphunits.demo.CosimLog`."""
