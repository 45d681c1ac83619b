"""The application's pieces of the iru unit: its demo step (``demo``) and its report profile (``profile``)."""
