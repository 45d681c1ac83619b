"""Tests of the emogi unit: its TLM, RTL, algorithms and RTL in the loop."""
