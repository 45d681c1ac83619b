"""The application's pieces of the EMOGI unit: its report profile (``profile``; its RTL in the loop runs in the demo's "other units" step)."""
