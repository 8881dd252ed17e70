"""--int4 and --nextn on generate and serve reach the native engine's options (and nothing when left at defaults)."""
from __future__ import annotations

import pytest

from harness.cli import build_parser
from harness.commands.native_flags import native_extra
from harness.commands.serve import engine_options


@pytest.mark.parametrize("argv, extra", [
    ([], {}),
    (["--int4", "off"], {"int4": False}),
    (["--int4", "on", "--nextn", "3"], {"int4": True, "nextn": 3}),
])
def test_generate_and_serve_flags_become_engine_extras(argv, extra):
    parser = build_parser()
    assert native_extra(parser.parse_args(["generate", "--task", "aime", "--out", "x", *argv])) == extra
    served = engine_options(parser.parse_args(["serve", *argv]))
    assert {k: served.extra[k] for k in ("int4", "nextn") if k in served.extra} == extra


def test_int4_takes_only_known_values():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--int4", "maybe"])
