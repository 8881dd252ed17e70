"""Every flag of every verb explains itself and shows its default in --help."""
import argparse
import re

import pytest

from harness.cli import HelpFormatter, build_parser, main


def parsers(parser: argparse.ArgumentParser, name: str = "harness"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from parsers(sub, f"{name} {sub_name}")


def test_every_argument_has_help_and_every_default_is_shown():
    missing, no_default = [], []
    for name, parser in parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            if not (action.help or "").strip():
                missing.append(label)
            shown = HelpFormatter("x")._get_help_string(action)
            unset = action.default is None or action.default is False or action.default == [] \
                or action.default is argparse.SUPPRESS
            if action.option_strings and not unset and "default" not in shown:
                no_default.append(label)
    assert not missing, f"arguments without help: {missing}"
    assert not no_default, f"defaults not shown: {no_default}"


@pytest.mark.parametrize("verb,flag,default", [("serve", "--port", "8000"), ("generate", "--max-tokens", "4096"),
                                               ("compare", "--seed", "0"), ("report", "--out", "report")])
def test_help_text_names_the_default(verb, flag, default, capsys):
    with pytest.raises(SystemExit):
        main([verb, "--help"])
    options = " ".join(capsys.readouterr().out.split()).split("options:")[1]
    after_flag = options[options.index(flag + " "):][:240]
    line = re.search(r"\(default:? ([^)]*)\)", after_flag)
    assert line and default in line.group(1), after_flag
