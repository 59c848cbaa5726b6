"""The reference workloads, importable as `steplus.examples.workloads`.

- `graphs`: the STeP reference graphs (SwiGLU §8.1, MoE §8.2, time-multiplexed MoE §8.3);
  `attention`: GQA decode attention (§8.4); both write the committed examples/step/*.mlir
  through `generated`;
- `torch_modules`, `moe`, `attention_torch`, `decoder_torch`, `decoder`: the same workloads
  written as PyTorch modules (the convert-linalg-to-step / recognition inputs);
- `sn40l`, `coe`, `fftconv`: the SN40L seed's experiments.
"""
