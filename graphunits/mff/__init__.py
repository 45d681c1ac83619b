"""The application's pieces of the mff unit: its demo step (``demo``) and its report profile (``profile``)."""
