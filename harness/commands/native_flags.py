"""The built-in engine's flags, declared once here and shared by generate, serve, sweep and grade's
`--judge-engine native` (kept free of torch imports); argparse types reject bad values at parse time."""
from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from engine.native.device_names import DTYPE_NAMES
from harness.commands.arg_types import device_name, non_negative_int, positive_float, positive_int


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class EngineFlag:
    """One engine flag: its name, the EngineOptions field it fills, and how its value becomes that field's."""

    name: str  # the flag without dashes or prefix, e.g. "kv-cache-gib"
    option: str  # EngineOptions field
    help: str
    argparse: Mapping[str, Any] = field(default_factory=dict)  # type, choices, action, default, metavar
    to_option: Callable[[Any], Any] = _same
    default_text: str = ""  # shown in --help when the default is None (the engine decides)

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


# The single-process engine: what generate, serve and the native judge all take.
ENGINE_FLAGS: tuple[EngineFlag, ...] = (
    EngineFlag("device", "device", "cpu|cuda|npu, optionally :INDEX", {"type": device_name}, default_text="detected"),
    EngineFlag("dtype", "dtype", "weights and activations", {"choices": tuple(DTYPE_NAMES)},
               default_text="bf16 where the device computes it natively, else fp32"),
    EngineFlag("threads", "threads", "CPU threads", {"type": positive_int}, default_text="torch's"),
    EngineFlag("kv-cache-gib", "kv_cache_gib", "KV cache memory budget in GiB", {"type": positive_float},
               default_text="1"),
    EngineFlag("max-model-len", "max_model_len", "context length", {"type": positive_int},
               default_text="the model's"),
    EngineFlag("max-num-seqs", "max_num_seqs", "sequences batched per step", {"type": positive_int},
               default_text="256"),
    EngineFlag("max-num-batched-tokens", "max_num_batched_tokens", "token budget per step", {"type": positive_int},
               default_text="2048"),
    EngineFlag("block-size", "block_size", "KV cache block size in tokens", {"type": positive_int},
               default_text="16"),
    EngineFlag("no-prefix-caching", "enable_prefix_caching", "turn the prefix cache off",
               {"action": "store_true"}, lambda off: False if off else None, default_text="on"),
    EngineFlag("int4", "int4", "multiply small batches with the model file's own 4-bit codes (Q4_0/Q4_1 GGUF, CPU, "
               "bf16); auto = whenever possible", {"choices": ("auto", "on", "off"), "default": "auto"},
               lambda choice: None if choice == "auto" else choice == "on"),
    EngineFlag("kv-cache-dtype", "kv_cache_dtype", "K/V cache precision: auto = the model's dtype; int8 = 8-bit rows "
               "with a scale per 32 values (half the bytes of bf16, so twice the tokens per GiB; Llama-family models, "
               "one rank)", {"choices": ("auto", "int8"), "default": "auto"},
               lambda choice: None if choice == "auto" else choice),
    EngineFlag("nextn", "nextn", "draft tokens per step for MTP speculative decoding (DeepSeek-V3-style checkpoints "
               "with MTP modules); 0 = off", {"type": non_negative_int, "default": 0}),
)

# Ranks under torchrun: generate and serve (grade's judge runs in one process).
PARALLEL_FLAGS: tuple[EngineFlag, ...] = (
    EngineFlag("tp", "tp", "tensor-parallel ranks (Llama-family models); launch with "
               "`torchrun --nproc-per-node N -m harness ... --tp N`", {"type": positive_int, "default": 1}),
    EngineFlag("ep", "ep", "expert-parallel ranks (DeepSeek-V3 routed experts; attention replicated unless "
               "--dp-attention); launch with `torchrun --nproc-per-node N -m harness ... --ep N` (one of --tp/--ep)",
               {"type": positive_int, "default": 1}),
    EngineFlag("dp-attention", "dp_attention", "with --ep: each rank runs attention for its own requests (rank 0 "
               "assigns them); the experts still see every rank's tokens", {"action": "store_true"}),
    EngineFlag("dist-timeout", "dist_timeout_s", "seconds a collective may wait for a peer before the ranks stop "
               "with an error", {"type": positive_float, "default": 300.0}),
)
# generate and serve declare exactly these
NATIVE_FLAGS = ENGINE_FLAGS + PARALLEL_FLAGS


def engine_flags(*names: str) -> list[EngineFlag]:
    """The named flags' declarations, for a command that takes only some (the sweep takes --nextn)."""
    known = {flag.name: flag for flag in NATIVE_FLAGS}
    return [known[name] for name in names]


def add_engine_arguments(p: argparse.ArgumentParser, flags: Iterable[EngineFlag] = ENGINE_FLAGS, prefix: str = "",
                         help_prefix: str = "", defaults: Mapping[str, tuple[Any, str]] | None = None) -> None:
    """Declare `flags` on p as --PREFIX<name>; defaults: flag name -> (value, its text in --help)."""
    defaults = defaults or {}
    for flag in flags:
        kwargs = dict(flag.argparse)
        shown = "" if flag.argparse.get("action") == "store_true" else (
            str(kwargs.get("default")) if kwargs.get("default") is not None else flag.default_text)
        if flag.name in defaults:
            kwargs["default"], shown = defaults[flag.name]
        if "choices" in kwargs and "type" not in kwargs:
            kwargs["metavar"] = "|".join(kwargs["choices"])
        text = f"{help_prefix}{flag.help}" + (f" (default: {shown})" if shown else "")
        p.add_argument(f"--{prefix}{flag.name}", dest=f"{prefix.replace('-', '_')}{flag.dest}", help=text, **kwargs)


def engine_fields(args: argparse.Namespace, flags: Iterable[EngineFlag] = NATIVE_FLAGS,
                  prefix: str = "") -> dict[str, Any]:
    """The EngineOptions fields the parsed `flags` set (flags the parser lacks are left out); --PREFIX<name>."""
    dest = prefix.replace("-", "_")
    fields = {f.option: f.to_option(getattr(args, dest + f.dest)) for f in flags if hasattr(args, dest + f.dest)}
    from engine.native.ranks import check_parallel  # no torch at import
    # --tp with --ep, or --dp-attention without --ep: one clear error before anything loads
    check_parallel(fields.get("tp", 1), fields.get("ep", 1), fields.get("dp_attention", False))
    return fields


def flags_given(args: argparse.Namespace, flags: Iterable[EngineFlag] = ENGINE_FLAGS, prefix: str = "") -> list[str]:
    """The --PREFIX<name> flags whose parsed value differs from their declared default."""
    dest = prefix.replace("-", "_")
    return [f"--{prefix}{f.name}" for f in flags
            if getattr(args, dest + f.dest, None) not in (None, False, f.argparse.get("default"))]


def add_request_param_arguments(p: argparse.ArgumentParser, prefix: str = "", help_prefix: str = "openai engine: ") -> None:
    """--PREFIXtoken-param and --PREFIXsend-temperature: how an OpenAI-compatible server is asked (generate's
    openai engine, grade's LLM judge)."""
    from engine.openai.params import SEND_TEMPERATURE_CHOICES, TOKEN_PARAM_CHOICES  # no SDK at import
    p.add_argument(f"--{prefix}token-param", choices=TOKEN_PARAM_CHOICES, default="auto",
                   help=f"{help_prefix}the token limit's request field (auto: max_completion_tokens for OpenAI's "
                        "o1/o3/o4/gpt-5 reasoning models, else max_tokens)")
    p.add_argument(f"--{prefix}send-temperature", choices=SEND_TEMPERATURE_CHOICES, default="auto",
                   help=f"{help_prefix}send temperature and top_p (auto: not to OpenAI's reasoning models, which "
                        "accept only their defaults)")


def add_chat_template_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chat-template-kwargs", metavar="JSON",
                   help="extra variables for the model's chat template, e.g. '{\"enable_thinking\": false}' "
                        "(Qwen3); native engine: rendered with them; openai engine: sent as chat_template_kwargs "
                        "(vLLM, SGLang); recorded in run.json")


def chat_template_kwargs(args: argparse.Namespace) -> dict:
    """--chat-template-kwargs as a dict ({} when absent); a clear error for anything but a JSON object."""
    from engine.native.chat_template import parse_template_kwargs  # jinja2 and json only, no torch
    return parse_template_kwargs(getattr(args, "chat_template_kwargs", None))


def parallel_size(args: argparse.Namespace) -> int:
    """The number of ranks --tp / --ep ask for (1 without them); the rules are engine.native.ranks.check_parallel's."""
    from engine.native.ranks import check_parallel  # no torch at import
    return check_parallel(getattr(args, "tp", 1), getattr(args, "ep", 1), getattr(args, "dp_attention", False))[0]


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
