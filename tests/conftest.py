"""Fixtures shared across the test suite."""
from __future__ import annotations

from typing import Iterator

import pytest

from tests.support.scripted_server import ScriptedServer


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A running scripted OpenAI-compatible server answering "ok"; change it with set_handler()."""
    with ScriptedServer() as server:
        yield server
