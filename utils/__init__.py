"""steplus' lowest layer: helpers every other layer may use (diagnostics, attribute
helpers, tensor layouts). It imports nothing from steplus above it."""
