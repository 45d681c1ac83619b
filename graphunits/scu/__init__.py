"""The application's pieces of the scu unit: its demo step (``demo``) and its report profile (``profile``)."""
