"""Passes and analyses of the step dialect (shape inference, metrics)."""
