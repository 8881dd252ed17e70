import pytest


@pytest.fixture(autouse=True)
def offline_hf_home(tmp_path, monkeypatch):
    """Every test here gets its own empty HF_HOME and offline mode: nothing may reach the network."""
    import datasets
    import huggingface_hub.constants

    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # datasets read these at import time, possibly before this fixture ran
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return home
