"""EngineOptions' typed fields reach LLMEngine; fields left at None keep LLMEngine's own defaults."""
from __future__ import annotations

import inspect

import pytest

import engine.native.backend as backend
from engine.base import EngineOptions
from engine.native.llm_engine import LLMEngine


class Built(Exception):
    """Raised by the recording engine class so from_options stops before starting an engine thread."""


def _kwargs_from(options: EngineOptions, monkeypatch) -> dict:
    seen: dict = {}

    def record(**kwargs):
        seen.update(kwargs)
        raise Built
    monkeypatch.setattr(backend, "LLMEngine", record)
    with pytest.raises(Built):
        backend.NativeEngine.from_options(options)
    return seen


def test_defaults_are_llm_engines_defaults(monkeypatch):
    kwargs = _kwargs_from(EngineOptions(model="m"), monkeypatch)
    defaults = {name: p.default for name, p in inspect.signature(LLMEngine.__init__).parameters.items()
                if name in kwargs and name != "model"}
    assert {k: kwargs[k] for k in defaults} == defaults


def test_set_fields_are_passed(monkeypatch):
    kwargs = _kwargs_from(EngineOptions(model="m", block_size=4, enable_prefix_caching=False, int4=False,
                                        max_num_batched_tokens=64, chat_template_kwargs={"x": 1}), monkeypatch)
    assert {k: kwargs[k] for k in ("block_size", "enable_prefix_caching", "int4", "max_num_batched_tokens",
                                   "chat_template_kwargs")} == {"block_size": 4, "enable_prefix_caching": False,
                                                                "int4": False, "max_num_batched_tokens": 64,
                                                                "chat_template_kwargs": {"x": 1}}
