"""HLE prompts: the answer format is asked for, and images travel as OpenAI image_url content parts."""
import asyncio

import openai
import pytest

from engine.base import ChatRequest, SamplingParams
from tasks.hle import HleTask
from tests.support.scripted_server import Reply, ScriptedServer


@pytest.fixture(scope="module")
def demo():
    task = HleTask()
    items = task.load(task.demo_data_path)
    return task, next(i for i in items if not i.fields["has_image"]), next(i for i in items if i.fields["has_image"])


def test_text_item_is_a_plain_user_message(demo):
    task, text_item, _ = demo
    prompt = task.render(text_item, 0, 0)
    system, user = prompt.messages
    assert system["role"] == "system" and user == {"role": "user", "content": text_item.fields["question"]}
    for line in ("Explanation:", "Answer:", "Confidence:"):
        assert line in system["content"]
    assert "0%" in system["content"] and "100%" in system["content"]
    assert prompt.target == text_item.fields["answer"]
    assert prompt.meta == {"answer_type": text_item.fields["answer_type"], "has_image": False,
                           "raw_subject": text_item.fields["raw_subject"]}


def test_image_item_sends_text_and_image_url_parts(demo):
    task, _, image_item = demo
    prompt = task.render(image_item, 0, 7)
    parts = prompt.messages[-1]["content"]
    assert parts == [{"type": "text", "text": image_item.fields["question"]},
                     {"type": "image_url", "image_url": {"url": image_item.fields["image"]}}]
    assert prompt.meta["has_image"] is True
    assert ChatRequest("r", prompt.messages, SamplingParams()).has_images


def test_harness_prompt_asks_multiple_choice_for_a_letter(demo):
    task = HleTask(prompt="harness")
    items = task.load(task.demo_data_path)
    mc = next(i for i in items if i.fields["answer_type"] == "multipleChoice")
    em = next(i for i in items if i.fields["answer_type"] == "exactMatch")
    assert "letter" in task.render(mc, 0, 0).messages[0]["content"]
    assert "letter" not in task.render(em, 0, 0).messages[0]["content"]


def test_official_prompt_is_the_hle_release_wording(demo):
    task, _, _ = demo
    items = task.load(task.demo_data_path)
    mc = next(i for i in items if i.fields["answer_type"] == "multipleChoice")
    em = next(i for i in items if i.fields["answer_type"] == "exactMatch")
    assert task.prompt == "official" and task.run_options()["prompt"] == "official"
    # the strings of hle_eval/run_model_predictions.py (centerforaisafety/hle), checked word for word
    assert task.render(em, 0, 0).messages[0]["content"] == (
        "Your response should be in the following format:\nExplanation: {your explanation for your final answer}\n"
        "Exact Answer: {your succinct, final answer}\n"
        "Confidence: {your confidence score between 0% and 100% for your answer}")
    assert task.render(mc, 0, 0).messages[0]["content"] == (
        "Your response should be in the following format:\nExplanation: {your explanation for your answer choice}\n"
        "Answer: {your chosen answer}\nConfidence: {your confidence score between 0% and 100% for your answer}")


def test_unknown_prompt_is_a_clear_error():
    from tasks.base import DataError

    with pytest.raises(DataError, match="valid prompts: official, harness"):
        HleTask(prompt="mine")


def test_image_parts_reach_the_server_through_the_openai_client(demo):
    task, _, image_item = demo
    prompt = task.render(image_item, 0, 0)

    async def send(url):
        client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)
        try:
            await client.chat.completions.create(model="test-model", messages=prompt.messages)
        finally:
            await client.close()

    with ScriptedServer(Reply(text="Answer: 3")) as server:
        asyncio.run(send(server.base_url))
        sent = server.requests[0]["messages"][-1]["content"]
    assert sent[1] == {"type": "image_url", "image_url": {"url": image_item.fields["image"]}}


def test_image_parts_reach_the_server_through_the_openai_engine(demo):
    pytest.importorskip("engine.openai.backend", reason="the openai backend is not in this tree")
    from engine import EngineOptions, create_engine

    task, _, image_item = demo
    prompt = task.render(image_item, 0, 0)

    async def send(url):
        engine = create_engine("openai", EngineOptions(model="test-model", base_urls=[url], max_retries=0))
        try:
            assert engine.supports_images
            return await engine.chat(ChatRequest("r1", prompt.messages, SamplingParams(max_tokens=16)))
        finally:
            await engine.aclose()

    with ScriptedServer(Reply(text="Answer: 3")) as server:
        completion = asyncio.run(send(server.base_url))
        sent = server.requests[0]["messages"][-1]["content"]
    assert completion.finish_reason == "stop" and completion.text == "Answer: 3"
    assert sent[1]["type"] == "image_url" and sent[1]["image_url"]["url"].startswith("data:image/png;base64,")
