"""Tests of the graphpeg unit: its TLM, RTL, algorithms and RTL in the loop."""
