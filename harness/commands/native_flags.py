"""Native-engine flags shared by the generate and serve commands (kept free of torch imports)."""
from __future__ import annotations

import argparse
import os


def add_int4_argument(p: argparse.ArgumentParser, prefix: str = "") -> None:
    p.add_argument("--int4", choices=["auto", "on", "off"], default="auto",
                   help=f"{prefix}multiply small batches with the model file's own 4-bit codes (Q4_0/Q4_1 GGUF, CPU, "
                        "bf16); auto = whenever possible")


def add_nextn_argument(p: argparse.ArgumentParser, prefix: str = "") -> None:
    p.add_argument("--nextn", type=int, default=0,
                   help=f"{prefix}draft tokens per step for MTP speculative decoding (DeepSeek-V3-style checkpoints "
                        "with MTP modules; default 0 = off)")


def add_chat_template_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chat-template-kwargs", metavar="JSON",
                   help="extra variables for the model's chat template, e.g. '{\"enable_thinking\": false}' "
                        "(Qwen3); native engine: rendered with them; openai engine: sent as chat_template_kwargs "
                        "(vLLM, SGLang); recorded in run.json")


def chat_template_kwargs(args: argparse.Namespace) -> dict:
    """--chat-template-kwargs as a dict ({} when absent); a clear error for anything but a JSON object."""
    from engine.native.chat_template import parse_template_kwargs  # jinja2 and json only, no torch
    return parse_template_kwargs(getattr(args, "chat_template_kwargs", None))


def add_parallel_arguments(p: argparse.ArgumentParser, prefix: str = "") -> None:
    p.add_argument("--tp", type=int, default=1,
                   help=f"{prefix}tensor-parallel ranks (Llama-family models); launch with "
                        "`torchrun --nproc-per-node N -m harness ... --tp N` (default: 1)")
    p.add_argument("--ep", type=int, default=1,
                   help=f"{prefix}expert-parallel ranks (DeepSeek-V3 routed experts; attention replicated unless "
                        "--dp-attention); launch "
                        "with `torchrun --nproc-per-node N -m harness ... --ep N` (default: 1; one of --tp/--ep)")
    p.add_argument("--dp-attention", action="store_true",
                   help=f"{prefix}with --ep: each rank runs attention for its own requests (rank 0 assigns them); "
                        "the experts still see every rank's tokens")
    p.add_argument("--dist-timeout", type=float, default=300.0,
                   help=f"{prefix}seconds a collective may wait for a peer before the ranks stop with an error "
                        "(default: %(default)s)")


def parallel_size(args: argparse.Namespace) -> int:
    """The number of ranks --tp / --ep ask for (1 without them); the rules are engine.native.ranks.check_parallel's."""
    from engine.native.ranks import check_parallel  # no torch at import
    return check_parallel(getattr(args, "tp", 1), getattr(args, "ep", 1), getattr(args, "dp_attention", False))[0]


def native_extra(args: argparse.Namespace) -> dict:
    """`--int4`, `--nextn`, `--tp` and `--ep` -> EngineOptions.extra entries (nothing for the defaults)."""
    extra: dict = {} if args.int4 == "auto" else {"int4": args.int4 == "on"}
    if args.nextn:
        extra["nextn"] = args.nextn
    if parallel_size(args) > 1:
        flag = "tp" if getattr(args, "tp", 1) > 1 else "ep"
        extra[flag], extra["dist_timeout_s"] = getattr(args, flag), args.dist_timeout
        if getattr(args, "dp_attention", False):
            extra["dp_attention"] = True
    return extra


def run_tp_worker(args: argparse.Namespace) -> int | None:
    """Under torchrun with --tp N or --ep N, ranks other than 0 only run model shards for rank 0 and write
    nothing; returns their exit code, or None on rank 0 (and without either flag)."""
    if parallel_size(args) <= 1:
        return None
    from engine.native.rank_worker import serve_if_worker
    code = serve_if_worker(device=args.device, threads=args.threads, timeout_s=args.dist_timeout)
    if code is None:
        announce_rank_zero(args)
    return code


def announce_rank_zero(args: argparse.Namespace) -> None:
    """Say on stderr which host and node became rank 0 and what it writes: the rendezvous decides, not the user."""
    import socket
    import sys
    from pathlib import Path

    from engine.native.ranks import launched

    if getattr(args, "out", None):
        what = f"writes the run to {Path(args.out).resolve()}"
    elif getattr(args, "port", None):
        what = f"serves HTTP on {args.host}:{args.port}"
    else:
        what = "runs the scheduler and writes the results"
    print(f"rank 0 of {launched().world_size} is on host {socket.gethostname()} "
          f"(node rank {os.environ.get('GROUP_RANK', '0')}): {what}", file=sys.stderr)
