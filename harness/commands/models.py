"""`python -m harness models list|pull`: the built-in engine's known models and their installation."""
from __future__ import annotations

import argparse

HELP = "list the built-in engine's known models, or install one (pull)"
EXAMPLES = """  python -m harness models list
  python -m harness models pull smollm2-135m
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("list", help="known model names, their source package and whether they are installed")
    pull = sub.add_parser("pull", help="install a model's package (pip --no-deps) and verify its sha256")
    pull.add_argument("name", help="a model name from `models list`")


def run(args: argparse.Namespace) -> int:
    from engine.native import model_registry as reg
    if args.action == "pull":
        path = reg.pull(args.name)
        print(f"{args.name}: {path} (sha256 verified)")
        return 0
    print(f"{'name':<16} {'installed':<10} {'package':<14} description")
    for entry in reg.REGISTRY.values():
        path = reg.package_file(entry)
        default = " (default)" if entry.name == reg.DEFAULT_MODEL else ""
        print(f"{entry.name:<16} {'yes' if path else 'no':<10} {entry.pip_package:<14} {entry.description}{default}")
        if path:
            print(f"{'':<16} {path}")
    print("\nAny local .gguf file or HF model folder (config.json + *.safetensors) also works as --model PATH.")
    return 0
