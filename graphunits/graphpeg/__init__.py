"""The application's pieces of the graphpeg unit: its demo step (``demo``) and its report profile (``profile``)."""
