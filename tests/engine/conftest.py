"""Engine tests run once per HTTP transport the openai engine can use here."""
from __future__ import annotations

import pytest

from engine.openai.clients import aiohttp_available
from tests.engine import helpers

TRANSPORTS = ["httpx"] + (["aiohttp"] if aiohttp_available() else [])


@pytest.fixture(params=TRANSPORTS)
def http_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Engines built by tests.engine.helpers use this transport."""
    monkeypatch.setattr(helpers, "HTTP_TRANSPORT", request.param)
    return request.param
