"""Shared fixtures: one fp32 engine and one HF reference model per test session (loading HF takes ~17 s)."""
from __future__ import annotations

import pytest

from engine.native.model_registry import REGISTRY, resolve_model

PROMPTS = [
    "What is the capital of France?", "Write a haiku about the sea.", "Explain photosynthesis in one sentence.",
    "List three prime numbers.", "Who wrote Hamlet?", "Translate 'good morning' into Spanish.",
    "What is 12 times 7?", "Give me a tip for learning to code.", "Describe a cat to someone who has never seen one.",
    "Why is the sky blue?", "Name a famous painting.", "What does a compiler do?",
    "Suggest a name for a pet turtle.", "How many legs does a spider have?", "What is the boiling point of water?",
    "Tell me a fun fact about octopuses.", "Summarise the plot of Cinderella.", "What is gravity?",
]


@pytest.fixture(scope="session")
def model_path():
    return resolve_model("smollm2-135m").path


@pytest.fixture(scope="session")
def llm32():
    from engine.native import LLM
    # One thread: on a shared 2-core machine, two OpenMP threads per process thrash under load.
    return LLM(model="smollm2-135m", device="cpu", dtype="fp32", threads=1)


@pytest.fixture(scope="session")
def chat_ids(llm32):
    """Token ids of chat-rendered prompts, mixed lengths."""
    tk = llm32.tokenizer
    return [tk.encode(tk.render_chat([{"role": "user", "content": p}])) for p in PROMPTS]


@pytest.fixture(scope="session")
def mixed_ids(chat_ids):
    """32 chat prompts of mixed lengths (single questions and pairs of questions)."""
    out = list(chat_ids)
    i = 0
    while len(out) < 32:
        out.append(chat_ids[i][:-6] + chat_ids[(i + 5) % len(chat_ids)][20:])
        i += 1
    return out


@pytest.fixture(scope="session")
def hf_model(model_path):
    transformers = pytest.importorskip("transformers")
    import torch
    return transformers.AutoModelForCausalLM.from_pretrained(
        str(model_path.parent), gguf_file=model_path.name, dtype=torch.float32).eval()


def pytest_report_header(config):
    return f"native engine registry: {', '.join(REGISTRY)}"
