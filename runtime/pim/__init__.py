"""Simulation support for the PIM mesh of :mod:`steplus.passes.allspark` (link-level NoC)."""
