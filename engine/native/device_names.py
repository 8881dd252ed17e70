"""The device kinds and dtype names the engine accepts, torch-free so the CLI checks its flags against them."""
from __future__ import annotations

DEVICE_KINDS = ("cpu", "cuda", "npu")  # each may carry an index, e.g. cuda:1
# name -> torch dtype attribute; device.py maps them to torch dtypes
DTYPE_NAMES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
               "fp32": "float32", "float32": "float32"}
