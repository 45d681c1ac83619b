"""Tests of the iru unit: its TLM, RTL, algorithms and RTL in the loop."""
