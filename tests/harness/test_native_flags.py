"""Engine flags are declared once (harness/commands/native_flags.py): generate and serve take the same set, grade
takes it as --judge-*, bad values are argparse errors naming the flag, and the values become typed EngineOptions."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import harness.commands.native_flags as native_flags
from engine.base import EngineOptions
from harness.cli import build_parser, main
from harness.commands.generate import request_param_fields
from harness.commands.grade import judge_options
from harness.commands.native_flags import ENGINE_FLAGS, NATIVE_FLAGS, engine_fields
from harness.commands.serve import engine_options

REPO = Path(__file__).resolve().parents[2]
GENERATE = ["generate", "--task", "aime", "--out", "x"]


def _options_of(parser, command: str) -> dict[str, object]:
    """option string -> argparse action, for one subcommand of the harness parser."""
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[command]
    return {s: a for a in sub._actions for s in a.option_strings}


def test_generate_and_serve_declare_the_same_flag_list(monkeypatch):
    passed: dict[str, object] = {}
    real = native_flags.add_engine_arguments

    def record(p, flags=ENGINE_FLAGS, *args, **kwargs):
        passed.setdefault(p.prog.split()[-1], flags)
        return real(p, flags, *args, **kwargs)
    monkeypatch.setattr("harness.commands.generate.add_engine_arguments", record)
    monkeypatch.setattr("harness.commands.serve.add_engine_arguments", record)
    parser = build_parser()
    assert passed["generate"] is passed["serve"] is NATIVE_FLAGS
    generate, serve = _options_of(parser, "generate"), _options_of(parser, "serve")
    for flag in NATIVE_FLAGS:
        name = f"--{flag.name}"
        assert (generate[name].type, generate[name].choices, generate[name].dest) == \
               (serve[name].type, serve[name].choices, serve[name].dest), name


def test_every_flag_fills_a_typed_field():
    fields = {f.name for f in dataclasses.fields(EngineOptions)}
    assert {flag.option for flag in NATIVE_FLAGS} <= fields
    with pytest.raises(TypeError):
        EngineOptions(extra={"nextn": 3})  # no untyped bag of options any more


@pytest.mark.parametrize("argv, error", [
    (["serve", "--tp", "0"], "argument --tp: must be >= 1, got 0"),
    (["serve", "--ep", "-2"], "argument --ep: must be >= 1, got -2"),
    (["serve", "--dist-timeout", "0"], "argument --dist-timeout: must be a finite number > 0"),
    (["serve", "--dtype", "fp8"], "argument --dtype: invalid choice: 'fp8'"),
    (["serve", "--device", "gpu"], "argument --device: expected one of cpu, cuda, npu"),
    (["serve", "--device", "cuda:x"], "argument --device: expected one of cpu, cuda, npu"),
    (["serve", "--kv-cache-gib", "0"], "argument --kv-cache-gib: must be a finite number > 0"),
    (["serve", "--block-size", "0"], "argument --block-size: must be >= 1, got 0"),
    ([*GENERATE, "--threads", "0"], "argument --threads: must be >= 1, got 0"),
    ([*GENERATE, "--nextn", "-1"], "argument --nextn: must be >= 0, got -1"),
    ([*GENERATE, "--max-num-seqs", "many"], "argument --max-num-seqs: expected a whole number >= 1, got 'many'"),
    ([*GENERATE, "--int4", "maybe"], "argument --int4: invalid choice: 'maybe'"),
    (["serve", "--kv-cache-dtype", "fp8"], "argument --kv-cache-dtype: invalid choice: 'fp8'"),
    (["grade", "runs/x", "--judge-threads", "0"], "argument --judge-threads: must be >= 1, got 0"),
    (["grade", "runs/x", "--judge-dtype", "int8"], "argument --judge-dtype: invalid choice: 'int8'"),
    (["sweep", "decode", "ce-2k", "--nextn", "-1"], "argument --nextn: must be >= 0, got -1"),
])
def test_bad_values_are_argparse_errors_naming_the_flag(argv, error, capsys):
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(argv)
    assert info.value.code == 2 and error in capsys.readouterr().err


def test_defaults_leave_the_engine_its_own_defaults():
    parser = build_parser()
    generated = EngineOptions(**engine_fields(parser.parse_args(GENERATE)))
    served = engine_options(parser.parse_args(["serve"]))
    for options in (generated, served):
        assert (options.device, options.dtype, options.threads, options.kv_cache_gib, options.block_size,
                options.enable_prefix_caching, options.int4, options.kv_cache_dtype, options.nextn, options.tp,
                options.ep) == (None, None, None, None, None, None, None, None, 0, 1, 1)
    assert (generated.max_num_seqs, served.max_num_seqs) == (None, 64)  # serve's own default, as before
    assert served.model == "smollm2-135m" and served.chat_template_kwargs is None


@pytest.mark.parametrize("argv, want", [
    (["--int4", "off"], {"int4": False}),
    (["--int4", "on", "--nextn", "3"], {"int4": True, "nextn": 3}),
    (["--kv-cache-dtype", "int8"], {"kv_cache_dtype": "int8"}),
    (["--kv-cache-dtype", "auto"], {"kv_cache_dtype": None}),
    (["--no-prefix-caching", "--block-size", "32", "--max-num-batched-tokens", "512"],
     {"enable_prefix_caching": False, "block_size": 32, "max_num_batched_tokens": 512}),
    (["--device", "cpu", "--dtype", "fp32", "--threads", "2", "--kv-cache-gib", "0.5", "--max-model-len", "1024"],
     {"device": "cpu", "dtype": "fp32", "threads": 2, "kv_cache_gib": 0.5, "max_model_len": 1024}),
    (["--ep", "2", "--dp-attention", "--dist-timeout", "9"], {"ep": 2, "dp_attention": True, "dist_timeout_s": 9.0}),
])
def test_generate_and_serve_flags_become_the_same_typed_options(argv, want):
    parser = build_parser()
    generated = EngineOptions(**engine_fields(parser.parse_args([*GENERATE, *argv])))
    served = engine_options(parser.parse_args(["serve", *argv]))
    for options in (generated, served):
        assert {name: getattr(options, name) for name in want} == want


def test_openai_request_fields_are_typed_and_reach_the_backend_only_when_set():
    from engine.openai.backend import OpenAIEngine
    args = build_parser().parse_args([*GENERATE, "--engine", "openai", "--token-param", "max_tokens"])
    options = EngineOptions(model="m", base_urls=["http://h/v1"], http_transport="httpx", **request_param_fields(args))
    assert options.token_param == "max_tokens" and options.send_temperature is None
    engine = OpenAIEngine.from_options(options)
    default = OpenAIEngine.from_options(EngineOptions(model="m", base_urls=["http://h/v1"]))
    assert engine.http_transport == "httpx" and default.http_transport != "httpx"
    assert engine.params.token_param == "max_tokens"
    assert engine.params.send_temperature == default.params.send_temperature


def test_grade_takes_the_engine_flags_for_the_native_judge():
    args = build_parser().parse_args(["grade", "runs/x", "--judge", "llm", "--judge-engine", "native",
                                      "--judge-device", "cpu", "--judge-threads", "1", "--judge-int4", "off"])
    native = judge_options(args)["judge_native_options"]
    assert native == {**native, "device": "cpu", "threads": 1, "int4": False}
    assert set(native) == {flag.option for flag in ENGINE_FLAGS}  # no tensor/expert parallel for the judge


def test_grade_refuses_engine_flags_without_the_native_judge(tmp_path, capsys):
    assert main(["grade", str(tmp_path), "--judge", "llm", "--judge-model", "m", "--judge-dtype", "fp32"]) == 2
    assert "--judge-dtype: built-in engine settings; they apply with --judge-engine native" in capsys.readouterr().err


def test_the_default_model_name_is_written_once_in_code():
    """Code imports DEFAULT_MODEL from engine/native/model_registry.py (prose, configs and tests may say the name)."""
    hits = [str(path.relative_to(REPO)) for folder in ("engine", "harness", "judges", "sweep", "tasks")
            for path in (REPO / folder).rglob("*.py") if '"smollm2-135m"' in path.read_text(encoding="utf-8")]
    assert hits == ["engine/native/model_registry.py"]
