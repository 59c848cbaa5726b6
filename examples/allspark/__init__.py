"""PyTorch vision transformers written as timm writes them, for the Allspark frontend."""
