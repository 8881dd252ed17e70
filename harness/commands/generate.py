"""`generate`: run a task's prompts through an engine into a run directory (resumable)."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from engine import ENGINES, EngineOptions, SamplingParams, create_engine
from harness.commands.arg_types import (non_negative_float, non_negative_int, positive_float, positive_int,
                                       probability)
from engine.native.model_registry import DEFAULT_MODEL
from engine.reasoning import PARSERS
from harness.commands.native_flags import (NATIVE_FLAGS, add_chat_template_argument, add_engine_arguments,
                                           add_request_param_arguments, chat_template_kwargs, engine_fields,
                                           run_tp_worker)
from harness.generate import (GenerateConfig, claim_run_dir, describe_result, limit_items, load_task_data,
                              run_generation)
from tasks import TASKS, get_task
from tasks.hle.prompts import HLE_PROMPTS

HELP = "generate responses for a task into runs/NAME (rerun the same command to resume)"
EXAMPLES = """\
  python -m harness generate --task aime --limit 2 --samples 1 --max-tokens 256 --out runs/aime-demo
  python -m harness generate --task gpqa --engine openai --base-url http://127.0.0.1:8000/v1 \\
      --model my-model --concurrency 64 --out runs/gpqa-my-model
  python -m harness generate --task aime --engine openai --base-url http://h1:8000/v1 \\
      --base-url http://h2:8000/v1 --model M --data data/aime/aime_2026.jsonl --out runs/aime-M
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help=f"one of: {', '.join(sorted(TASKS))}")
    p.add_argument("--data", help="dataset file, folder (save_to_disk or hub snapshot; FOLDER#SPLIT picks one), or "
                   "hf:OWNER/NAME[:CONFIG][@REVISION][#SPLIT] from the local cache (default: the task's documented "
                   "path, else its demo set); see `python -m harness data show`")
    p.add_argument("--out", required=True, help="run directory, e.g. runs/aime-mymodel")
    p.add_argument("--engine", default="native", help=f"one of: {', '.join(sorted(ENGINES))} (default: native)")
    p.add_argument("--model", help=f"model name or path (native default: {DEFAULT_MODEL})")
    p.add_argument("--base-url", action="append", default=[], help="OpenAI-compatible server URL; repeat to spread load")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key")
    p.add_argument("--samples", type=positive_int, help="samples per item (default: the task's, e.g. AIME 32, GPQA 8)")
    p.add_argument("--limit", type=positive_int, help="only the first N items")
    p.add_argument("--max-tokens", type=positive_int, default=4096,
                   help="most tokens generated per response (default: %(default)s)")
    p.add_argument("--temperature", type=float, default=0.6, help="sampling temperature; 0 = greedy (default: %(default)s)")
    p.add_argument("--top-p", type=probability, default=0.95,
                   help="nucleus sampling in (0, 1]; 1 = off, tiny = greedy (default: %(default)s)")
    p.add_argument("--top-k", type=int, default=0,
                   help="sample among the K most likely tokens; 0 = off (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="run seed: per-sample seeds and GPQA shuffles derive from it")
    p.add_argument("--concurrency", type=positive_int, default=32, help="requests in flight at once")
    p.add_argument("--request-timeout", type=positive_float, default=600.0, help="seconds per request attempt")
    p.add_argument("--max-retries", type=non_negative_int, default=5,
                   help="retries per request on 429/5xx/timeouts/bad replies")
    p.add_argument("--retry-base-delay", type=non_negative_float, default=1.0,
                   help="seconds; backoff doubles per retry, with jitter")
    add_request_param_arguments(p)
    p.add_argument("--subset", help="task subset where the task has one (HLE: all|text|image)")
    p.add_argument("--hle-prompt", choices=HLE_PROMPTS, help="HLE system prompt: official (the HLE release's "
                   "wording, default) or harness (ours)")
    add_engine_arguments(p, NATIVE_FLAGS, help_prefix="native engine: ")
    add_chat_template_argument(p)
    p.add_argument("--reasoning-parser", choices=PARSERS, default="auto",
                   help="split a reasoning model's <think>...</think> block into the record's `reasoning`, apart "
                        "from the `response` judges read; see docs/reasoning.md (default: %(default)s)")
    p.add_argument("--force", action="store_true",
                   help="start a new run even if --out holds a different run (moved aside) or other files")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown on stderr)")


def request_param_fields(args: argparse.Namespace) -> dict:
    """--token-param / --send-temperature for the openai engine (nothing for the defaults)."""
    return {name: value for name, value in (("token_param", args.token_param),
                                            ("send_temperature", args.send_temperature)) if value != "auto"}


def run(args: argparse.Namespace) -> int:
    if (code := run_tp_worker(args)) is not None:
        return code
    task_options = {"subset": args.subset} if args.subset else {}
    if args.hle_prompt:
        if args.task != "hle":
            raise ValueError(f"--hle-prompt applies to --task hle, not {args.task!r}")
        task_options["prompt"] = args.hle_prompt
    task = get_task(args.task, **task_options)
    data_path, dataset = load_task_data(task, args.data)
    items = limit_items(dataset.items, args.limit)
    sampling = SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature, top_p=args.top_p, top_k=args.top_k)
    model = args.model or (DEFAULT_MODEL if args.engine == "native" else None)
    template_kwargs = chat_template_kwargs(args)
    template_fields = {}
    if template_kwargs:  # the native engine renders with them; an OpenAI-compatible server gets them per request
        template_fields = ({"chat_template_kwargs": template_kwargs} if args.engine == "native"
                           else {"extra_body": {"chat_template_kwargs": template_kwargs}})
    options = EngineOptions(
        model=model, base_urls=[u for url in args.base_url for u in url.split(",") if u], api_key_env=args.api_key_env,
        request_timeout_s=args.request_timeout, max_retries=args.max_retries,
        retry_base_delay_s=args.retry_base_delay, **engine_fields(args), **request_param_fields(args),
        **template_fields,
    )
    cfg = GenerateConfig(
        task=task, data_path=data_path, out=Path(args.out),
        samples=args.samples if args.samples is not None else task.default_samples, limit=args.limit,
        sampling=sampling, seed=args.seed, concurrency=args.concurrency, force=args.force,
        progress=not args.no_progress, dataset_source=dataset.source, reasoning_parser=args.reasoning_parser,
        chat_template_kwargs=template_kwargs,
    )
    with claim_run_dir(cfg.out, cfg.force) as lock:  # before the model loads: a bad --out costs nothing
        return asyncio.run(_generate(cfg, args.engine, options, items, model, lock))


async def _generate(cfg: GenerateConfig, engine_name: str, options: EngineOptions, items, model, lock) -> int:
    engine = create_engine(engine_name, options)
    try:
        result = await run_generation(cfg, engine, items, model, lock)
    finally:
        await engine.aclose()
    print(describe_result(result), file=sys.stderr)
    return 3 if result.errors else 0
