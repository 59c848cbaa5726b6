"""The torch zoo: twenty-two small PyTorch modules written the way public code writes them.

Each is a module in this folder, in the style of the PyTorch docs/examples,
torchvision or HuggingFace transformers (written from memory; small shapes;
random weights; nothing is downloaded). `ZOO[name].build()` gives the module
in eval mode and its example inputs, seeded, so every run exports the same
program. `test/unit/lowering/test_torch_zoo.py` takes each through
`torch.export` -> `lower_exported` -> the fabric's functional mode (compared
with torch) -> cycles; `bench/torch_zoo.py` prints the table.

Example::

    import sys; sys.path.insert(0, "examples")
    from torch_zoo import ZOO
    module, args = ZOO["llama_mlp"].build()
    ep = torch.export.export(module, args)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class ZooModel:
    """A zoo entry: `kind` says which path lowers it ("dense", "moe", "attention");
    `options` are its `lower_exported` options (tiles that divide its small shapes)."""

    name: str
    style: str
    kind: str
    make: Callable[[], tuple[torch.nn.Module, tuple]]
    options: dict = field(default_factory=dict)

    def build(self, seed: int = 0) -> tuple[torch.nn.Module, tuple]:
        torch.manual_seed(seed)
        module, args = self.make()
        return module.eval(), args


def _lstm():
    from .lstm_lm import RNNModel

    lm = RNNModel(ntoken=64, ninp=16, nhid=32, nlayers=2)
    return lm, (torch.randint(0, 64, (6, 2)), lm.init_hidden(2))


def _gru():
    from .gru_classifier import GRUClassifier

    return GRUClassifier(40, 16, 32, 5), (torch.randint(0, 40, (2, 7)),)


def _resnet():
    from .resnet_block import BasicBlock, randomize_bn

    return randomize_bn(BasicBlock(8, 16, stride=2)), (torch.randn(1, 8, 8, 8),)


def _mobilenet():
    from .mobilenet_v2 import InvertedResidual
    from .resnet_block import randomize_bn

    return randomize_bn(InvertedResidual(8, 8, 1, 4)), (torch.randn(1, 8, 8, 8),)


def _encoder():
    from .transformer_encoder import EncoderLayer

    return EncoderLayer(32, 4, 64), (torch.randn(2, 6, 32),)


def _llama_mlp():
    from .llama_mlp import LlamaMLPBlock

    return LlamaMLPBlock(32, 64), (torch.randn(2, 4, 32),)


def _mixtral():
    from .mixtral_moe import MixtralSparseMoeBlock

    return MixtralSparseMoeBlock(32, 64, 4, 2), (torch.randn(2, 4, 32),)


def _gqa():
    from .gqa_decode import LlamaDecodeAttention, decode_inputs

    attn = LlamaDecodeAttention(64, 4, 2)
    return attn, decode_inputs(attn, batch=2, cached=40)


def _bert():
    from .bert_layer import BertConfig, BertEncoderLayer

    layer = BertEncoderLayer(BertConfig(hidden_size=32, num_attention_heads=4,
                                        intermediate_size=64))
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0  # the second sequence's last two tokens are padding
    return layer, (torch.randn(2, 6, 32), mask)


def _gpt2():
    from .gpt2_block import GPT2Block, GPT2Config

    return GPT2Block(GPT2Config(n_embd=32, n_head=4, n_positions=16)), (torch.randn(2, 6, 32),)


def _vit():
    from .vit import ViTBlock, ViTConfig

    return ViTBlock(ViTConfig(image_size=8, patch_size=4, num_channels=3, hidden_size=32,
                              num_attention_heads=4, intermediate_size=64)), \
        (torch.randn(2, 3, 8, 8),)


def _convnext():
    from .convnext_block import CNBlock

    return CNBlock(8, layer_scale=0.5, stochastic_depth_prob=0.1), (torch.randn(1, 8, 8, 8),)


def _mobilenet_v3():
    from .mobilenet_v3 import InvertedResidual, InvertedResidualConfig
    from .resnet_block import randomize_bn

    cnf = InvertedResidualConfig(8, 3, 32, 8, use_se=True, activation="HS", stride=1,
                                 dilation=1, width_mult=1.0)
    return randomize_bn(InvertedResidual(cnf)), (torch.randn(1, 8, 8, 8),)


def _t5():
    from .t5_ff import T5Config, T5LayerFF

    return T5LayerFF(T5Config(d_model=32, d_ff=64, feed_forward_proj="gated-gelu")), \
        (torch.randn(2, 4, 32),)


def _nanogpt():
    from .nanogpt_block import Block, GPTConfig

    return Block(GPTConfig(block_size=16, n_head=4, n_embd=32)), (torch.randn(2, 6, 32),)


def _distilbert():
    from .distilbert_block import DistilBertConfig, TransformerBlock

    block = TransformerBlock(DistilBertConfig(dim=32, n_heads=4, hidden_dim=64))
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0  # the second sequence's last two tokens are padding
    return block, (torch.randn(2, 6, 32), mask)


def _llama_prefill():
    from .llama_prefill import LlamaConfig, LlamaPrefill, prefill_inputs

    cfg = LlamaConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=2)
    return LlamaPrefill(cfg), prefill_inputs(cfg, batch=2, seq=6)


def _qwen2_moe():
    from .qwen2_moe import Qwen2MoeConfig, Qwen2MoeSparseMoeBlock

    cfg = Qwen2MoeConfig(hidden_size=32, moe_intermediate_size=64,
                         shared_expert_intermediate_size=128, num_experts=4,
                         num_experts_per_tok=2)
    return Qwen2MoeSparseMoeBlock(cfg), (torch.randn(2, 4, 32),)


def _mistral():
    from .llama_prefill import prefill_inputs
    from .mistral_layer import MistralConfig, MistralPrefill

    cfg = MistralConfig(hidden_size=32, intermediate_size=64, num_attention_heads=4,
                        num_key_value_heads=2, sliding_window=3)
    return MistralPrefill(cfg), prefill_inputs(cfg, batch=2, seq=6)


def _whisper():
    from .whisper_encoder import WhisperConfig, WhisperEncoder

    cfg = WhisperConfig(num_mel_bins=4, d_model=32, encoder_attention_heads=4,
                        encoder_ffn_dim=64, max_source_positions=4)
    return WhisperEncoder(cfg), (torch.randn(2, 4, 8),)  # 8 frames -> 4 positions


def _swin():
    from .swin_layer import SwinConfig, SwinLayer

    layer = SwinLayer(SwinConfig(window_size=2), dim=32, input_resolution=(4, 4), num_heads=4,
                      drop_path_rate=0.1)
    with torch.no_grad():  # HF initializes the table with a truncated normal (std 0.02)
        layer.attention.self.relative_position_bias_table.normal_(std=0.5)
    return _SwinBlock(layer), (torch.randn(2, 16, 32),)


def _bloom():
    from .bloom_block import BloomConfig, BloomPrefill

    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, 4:] = 0  # the second sequence's last two tokens are padding
    return BloomPrefill(BloomConfig(hidden_size=32, n_head=4)), (torch.randn(2, 6, 32), mask)


class _SwinBlock(torch.nn.Module):
    """`SwinLayer(x, (4, 4))[0]`: the block on a 4x4 feature map (the dimensions are the
    stage's, not an input)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, hidden_states):
        return self.layer(hidden_states, (4, 4))[0]


ZOO = {m.name: m for m in (
    ZooModel("lstm_lm", "PyTorch word_language_model: Embedding + 2-layer nn.LSTM + Linear",
             "dense", _lstm, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("gru_classifier", "tutorial: Embedding + nn.GRU(batch_first) + Linear", "dense",
             _gru, {"dense": "tile=2x32x16 schedule=mnk"}),
    ZooModel("resnet_basic_block", "torchvision BasicBlock (conv3x3, BatchNorm, downsample)",
             "dense", _resnet, {"dense": "tile=4x16x8 schedule=mnk"}),
    ZooModel("mobilenet_v2_block", "torchvision InvertedResidual (1x1, depthwise, ReLU6)",
             "dense", _mobilenet, {"dense": "tile=4x8x8 schedule=mnk"}),
    ZooModel("transformer_encoder", "nn.TransformerEncoderLayer(batch_first=True)", "dense",
             _encoder, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("llama_mlp", "HF LlamaRMSNorm + LlamaMLP + residual", "dense", _llama_mlp,
             {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("mixtral_moe", "HF MixtralSparseMoeBlock (one_hot mask, ModuleList experts)",
             "moe", _mixtral, {"dense": "tile=4x32x32 schedule=mnk", "tile_n": 4, "tile_f": 16}),
    ZooModel("gqa_decode", "HF Llama eager attention, repeat_kv, KV cache, decode step",
             "attention", _gqa, {"dense": "tile=2x32x32 schedule=mnk"}),
    ZooModel("bert_layer", "HF BertLayer, extended additive attention mask (1 - m) * -10000",
             "dense", _bert, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("gpt2_block", "HF GPT2Block: Conv1D addmm, c_attn.split, causal bias buffer, "
             "gelu_new", "dense", _gpt2, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("vit_block", "HF ViTEmbeddings (Conv2d patches, cls token cat, positions) + "
             "ViTLayer", "dense", _vit, {"dense": "tile=5x32x32 schedule=mnk"}),
    ZooModel("convnext_block", "torchvision CNBlock: depthwise 7x7, channels-last LayerNorm, "
             "layer scale", "dense", _convnext, {"dense": "tile=4x8x8 schedule=mnk"}),
    ZooModel("mobilenet_v3_block", "torchvision MobileNetV3 InvertedResidual: Hardswish, "
             "SqueezeExcitation (Hardsigmoid)", "dense", _mobilenet_v3,
             {"dense": "tile=4x8x8 schedule=mnk"}),
    ZooModel("t5_ff", "HF T5LayerFF: T5LayerNorm (RMS, f32 variance), gated gelu_new FFN",
             "dense", _t5, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("nanogpt_block", "nanoGPT Block: c_attn split, manual causal "
             "masked_fill(self.bias[:, :, :T, :T] == 0, -inf), nn.GELU MLP", "dense", _nanogpt,
             {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("distilbert_block", "HF DistilBERT TransformerBlock: q / sqrt(d), "
             "masked_fill((mask == 0).view().expand_as(), torch.tensor(finfo.min))", "dense",
             _distilbert, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("llama_prefill", "HF LlamaAttention prefill: RoPE (rotate_half), repeat_kv, "
             "the causal mask torch.full((T, T), finfo.min).triu(1) added", "dense",
             _llama_prefill, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("qwen2_moe", "HF Qwen2MoeSparseMoeBlock: softmax, topk without renormalization, "
             "one_hot mask, shared expert behind a sigmoid gate", "moe", _qwen2_moe,
             {"dense": "tile=4x32x32 schedule=mnk", "tile_n": 4, "tile_f": 16}),
    ZooModel("mistral_layer", "HF MistralDecoderLayer prefill: RMSNorm, RoPE, repeat_kv, the "
             "sliding-window mask log(triu(tril(full(1)), -w)), SwiGLU MLP", "dense", _mistral,
             {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("whisper_encoder", "HF WhisperEncoder: Conv1d + GELU stem (stride 2), sinusoidal "
             "positions, pre-LN WhisperEncoderLayer (q scaled after q_proj), final LayerNorm",
             "dense", _whisper, {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("swin_layer", "HF SwinLayer: window_partition/reverse, relative position bias "
             "table[index_buffer.view(-1)] added to the scores", "dense", _swin,
             {"dense": "tile=4x32x32 schedule=mnk"}),
    ZooModel("bloom_block", "HF BloomModel prologue + BloomBlock: build_alibi_tensor (arange "
             "slopes, cumsum of the mask), fused qkv view(.., 3, head_dim), alibi.baddbmm, "
             "masked_fill(bool mask, finfo.min), bmm, _merge_heads, dropout_add", "dense",
             _bloom, {"dense": "tile=4x32x32 schedule=mnk"}),
)}
