import pytest

from tests.tasks.hub_fixtures import offline_hf_home  # noqa: F401  (a fixture)


@pytest.fixture(autouse=True)
def _always_offline(offline_hf_home):
    """Every test here gets its own empty HF_HOME and offline mode."""
