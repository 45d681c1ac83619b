"""Tests of the scu unit: its TLM, RTL, algorithms and RTL in the loop."""
