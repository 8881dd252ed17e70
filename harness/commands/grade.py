"""`grade`: grade a run's saved generations with one judge (never regenerates)."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from harness.commands.arg_types import non_negative_float, non_negative_int, positive_float, positive_int
from harness.commands.native_flags import add_engine_arguments, add_request_param_arguments, engine_fields, flags_given
from harness.grade import grade_run
from harness.report import format_summary_line
from harness.rundir import judge_kind, safe_judge_dir_name
from judges import JUDGES, JudgeError, create_judge

HELP = "grade runs/NAME with a judge; writes grades/<judge-id>/samples.jsonl and summary.json"
EXAMPLES = """\
  python -m harness grade runs/aime-demo --judge rules
  OPENAI_API_KEY=... python -m harness grade runs/hle-M --judge llm \\
      --judge-model gpt-4o-2024-08-06 --judge-base-url https://api.example.com/v1
  python -m harness grade runs/aime-demo --judge llm --judge-model judge-model \\
      --judge-base-url http://127.0.0.1:8000/v1      # re-grade the same outputs with another judge
  python -m harness grade runs/aime-demo --judge llm --judge-engine native --judge-model smollm2-135m
                                                     # the built-in engine as the judge, no server needed
  python -m harness grade runs/gpqa-M --judge rules+llm --judge-model judge-model \\
      --judge-base-url http://127.0.0.1:8000/v1      # rules first; only what they cannot read costs a judge call
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dirs", nargs="+", help="run directories written by `generate`")
    p.add_argument("--judge", default="rules",
                   help=f"one of: {', '.join(sorted(JUDGES))}, or a full judge id such as rules-v11 (default: rules)")
    p.add_argument("--judge-model", help="LLM judge: model name")
    p.add_argument("--judge-base-url", action="append", default=[], help="LLM judge: OpenAI-compatible server URL")
    p.add_argument("--judge-engine", choices=("openai", "native"), default="openai",
                   help="LLM judge: a server (openai, default) or the built-in engine in-process, no server (native)")
    p.add_argument("--judge-api-key-env", default="OPENAI_API_KEY", help="LLM judge: env var holding the API key")
    p.add_argument("--judge-concurrency", type=positive_int, default=16, help="LLM judge: requests in flight")
    p.add_argument("--judge-max-tokens", type=positive_int, help="LLM judge: token limit of a verdict")
    p.add_argument("--judge-temperature", type=float, help="LLM judge: sampling temperature (default 0)")
    add_request_param_arguments(p, prefix="judge-", help_prefix="LLM judge: ")
    p.add_argument("--judge-reasoning-effort", help="LLM judge: reasoning_effort sent to a reasoning model "
                   "(e.g. low, medium, high; part of the judge id)")
    p.add_argument("--judge-max-retries", type=non_negative_int,
                   help="LLM judge: retries on 429/5xx/timeouts/bad replies")
    p.add_argument("--judge-retry-base-delay", type=non_negative_float,
                   help="LLM judge: seconds; backoff doubles per retry")
    p.add_argument("--judge-timeout", type=positive_float, help="LLM judge: seconds per request attempt")
    p.add_argument("--judge-no-cache", action="store_true", help="LLM judge: ignore cached verdicts")
    add_engine_arguments(p, prefix="judge-", help_prefix="LLM judge, --judge-engine native: ")
    p.add_argument("--out", metavar="DIR",
                   help="write grades to DIR/grades/<judge-id>/ instead of into the run (for a read-only run; "
                        "one run directory only)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown on stderr)")


def judge_options(args: argparse.Namespace) -> dict:
    return {
        "judge_model": args.judge_model,
        "judge_base_url": [u for url in args.judge_base_url for u in url.split(",") if u] or None,
        "judge_api_key_env": args.judge_api_key_env,
        "judge_concurrency": args.judge_concurrency,
        "judge_temperature": args.judge_temperature,
        "judge_send_temperature": args.judge_send_temperature,
        "judge_token_param": args.judge_token_param,
        "judge_reasoning_effort": args.judge_reasoning_effort,
        "judge_no_cache": args.judge_no_cache,
        "judge_engine": args.judge_engine,
        "judge_native_options": engine_fields(args, prefix="judge-"),
        **{name: value for name, value in (
            ("judge_max_tokens", args.judge_max_tokens),
            ("judge_max_retries", args.judge_max_retries),
            ("judge_retry_base_delay_s", args.judge_retry_base_delay),
            ("judge_timeout_s", args.judge_timeout),
        ) if value is not None},
    }


def run(args: argparse.Namespace) -> int:
    # a full id (rules-v11) grades as its kind (rules); _grade_all checks the judge made is that id
    args.judge_id, args.judge = args.judge, judge_kind(args.judge, JUDGES) or args.judge
    if args.out and len(args.run_dirs) > 1:
        raise ValueError("--out takes one run directory: grades of two runs would land in one folder")
    if args.judge_engine != "native" and (given := flags_given(args, prefix="judge-")):
        raise ValueError(f"{', '.join(given)}: built-in engine settings; they apply with --judge-engine native")
    judge = create_judge(args.judge, **judge_options(args))
    return asyncio.run(_grade_all(judge, args))


async def _grade_all(judge, args: argparse.Namespace) -> int:
    status = 0
    try:
        if args.judge_id not in (args.judge, judge.judge_id, safe_judge_dir_name(judge.judge_id)):
            raise JudgeError(f"--judge {args.judge_id}: these options make judge {judge.judge_id}; "
                             f"use --judge {args.judge}, or the options that made {args.judge_id}")
        for run_dir in args.run_dirs:
            summary = await grade_run(Path(run_dir), judge, args.judge_concurrency,
                                      show_progress=not args.no_progress, grades_out=Path(args.out) if args.out else None)
            print(format_summary_line(run_dir, summary))
            if summary.note:  # incomplete coverage, a torn tail skipped, a generate still running
                print(f"  {summary.note}", file=sys.stderr)
            if not summary.coverage_complete:
                status = 3
    finally:
        await judge.aclose()
    return status
