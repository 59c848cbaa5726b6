"""Simulation support for the PIM mesh of :mod:`steplus.passes.pim` (link-level NoC)."""
