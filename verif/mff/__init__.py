"""Tests of the mff unit: its TLM, RTL, algorithms and RTL in the loop."""
