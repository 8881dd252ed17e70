"""Native-engine flags shared by the generate and serve commands (kept free of torch imports)."""
from __future__ import annotations

import argparse


def add_int4_argument(p: argparse.ArgumentParser, prefix: str = "") -> None:
    p.add_argument("--int4", choices=["auto", "on", "off"], default="auto",
                   help=f"{prefix}multiply small batches with the model file's own 4-bit codes (Q4_0/Q4_1 GGUF, CPU, "
                        "bf16); auto = whenever possible")


def add_nextn_argument(p: argparse.ArgumentParser, prefix: str = "") -> None:
    p.add_argument("--nextn", type=int, default=0,
                   help=f"{prefix}draft tokens per step for MTP speculative decoding (DeepSeek-V3-style checkpoints "
                        "with MTP modules; default 0 = off)")


def native_extra(args: argparse.Namespace) -> dict:
    """`--int4` and `--nextn` -> EngineOptions.extra entries (nothing for the defaults)."""
    extra: dict = {} if args.int4 == "auto" else {"int4": args.int4 == "on"}
    if args.nextn:
        extra["nextn"] = args.nextn
    return extra
