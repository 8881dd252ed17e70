"""`python -m harness VERB ...`: a thin dispatcher over one module per verb."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

# verb -> module in harness.commands; each defines HELP, EXAMPLES, add_arguments(), run().
VERBS: dict[str, str] = {
    "generate": "harness.commands.generate",
    "grade": "harness.commands.grade",
    "summary": "harness.commands.summary",
    "compare": "harness.commands.compare",
    "report": "harness.commands.report",
    "sweep": "harness.commands.sweep",
    "serve": "harness.commands.serve",
    "models": "harness.commands.models",
    "data": "harness.commands.data",
}


def _available_verbs() -> dict[str, object]:
    modules = {}
    for verb, module_name in VERBS.items():
        try:
            modules[verb] = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:  # a real missing dependency, not an absent verb
                raise
    return modules


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; a flag whose help does not name its default gets '(default: X)' appended."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text, default = action.help or "", action.default
        # identity checks: 0 and 0.0 equal False but are defaults worth showing
        unset = default is None or default is False or default is argparse.SUPPRESS or default == []
        if not action.option_strings or "default" in text or unset:
            return text
        return f"{text} (default: %(default)s)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Evaluation-first harness: generate, grade with a judge, summarise, sweep.",
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for verb, module in _available_verbs().items():
        p = sub.add_parser(
            verb,
            help=module.HELP,
            description=module.HELP,
            epilog="examples:\n" + module.EXAMPLES,
            formatter_class=HelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _stdout_closed() -> int:
    """The reader of stdout left (`compare A B | head`): stop quietly, as Unix tools do, not with a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush at exit must not fail again
    return 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe


def main(argv: list[str] | None = None) -> int:
    """Run one verb; a reader of stdout that left (`| head`) ends it quietly, help text included."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # a reader that left shows here, where it is handled, not at exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except SystemExit:  # argparse after --help or a usage error
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _stdout_closed()
        raise


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "verb", None):
        parser.print_help()
        return 2
    from harness.errors import UserError, format_user_error

    try:
        return int(args._run(args) or 0)
    except UserError as exc:
        print(format_user_error(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished records are saved and a rerun resumes", file=sys.stderr)
        return 130
