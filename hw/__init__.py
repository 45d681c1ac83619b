"""graphunits RTL: the units in Amaranth HDL 0.5, built from golden's configs."""
