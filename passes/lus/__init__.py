"""Analyses and transformations of the lus dialect."""
