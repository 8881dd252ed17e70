"""Fixtures: a real uvicorn server on 127.0.0.1 (ephemeral port) over the fake or the built-in engine."""
from __future__ import annotations

import contextlib
from typing import Iterator

import pytest

from engine.server import ServerSettings, serve_in_background
from tests.server.fake_engine import FakeEngine


@contextlib.contextmanager
def fake_server(engine: FakeEngine | None = None, **settings) -> Iterator:
    engine = engine or FakeEngine()
    settings.setdefault("served_model_name", "fake")
    with serve_in_background(engine, ServerSettings(**settings)) as srv:
        srv.fake = engine
        yield srv


@pytest.fixture
def server():
    with fake_server(FakeEngine(token_delay_s=0.001)) as srv:
        yield srv
