"""ILA models and simulators of the FlexASR, HLSCNN and VTA accelerators.

`core` is the modelling library (state, instructions, simulator, z3 rendering);
`adpfloat` the AdaptivFloat numerics; `flexasr`, `hlscnn`, `vta` the models and
`*_driver` modules the program fragments that run tensor operations on them.
"""
