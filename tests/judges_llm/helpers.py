"""Records and scripted judge replies shared by the LLM-judge tests."""
from __future__ import annotations

import asyncio
import json
import re

from records import GenerationRecord
from tests.support.scripted_server import Reply

JUDGE_MODEL = "judge-model"


def record(response: str, item: str = "q1", sample: int = 0, task: str = "hle", target: str = "42",
           question: str | list = "What is 6 times 7?", finish_reason: str = "stop") -> GenerationRecord:
    return GenerationRecord(task=task, item_id=item, sample=sample,
                            messages=[{"role": "system", "content": "Answer with Answer: X"},
                                      {"role": "user", "content": question}],
                            target=target, response=response, finish_reason=finish_reason,
                            usage={"prompt_tokens": 1, "completion_tokens": 1}, latency_s=0.1,
                            engine={"name": "openai"}, seed=0, category="Math", meta={})


def verdict_json(extracted="42", correct="yes", confidence=85, reasoning="matches the reference") -> str:
    body = {"extracted_final_answer": extracted, "reasoning": reasoning, "correct": correct}
    if confidence is not None:
        body["confidence"] = confidence
    return json.dumps(body)


def fenced_response(body: dict) -> tuple[str, str]:
    """The nonce and the text between <response-NONCE> tags of a judge request."""
    user = body["messages"][-1]["content"]
    if isinstance(user, list):
        user = user[0]["text"]
    match = re.search(r"<response-([0-9a-z]+)>\n(.*)\n</response-\1>\Z", user, re.S)
    assert match, user
    return match.group(1), match.group(2)


def honest_judge(body: dict) -> Reply:
    """A judge that compares the response's 'Answer:' line with the reference, like a careful model."""
    user = body["messages"][-1]["content"]
    if isinstance(user, list):
        user = user[0]["text"]
    reference = re.search(r"<reference-[0-9a-z]+>\n(.*?)\n</reference-", user, re.S).group(1)
    _, response = fenced_response(body)
    answer = re.findall(r"Answer:\s*(.+)", response)
    confidence = re.findall(r"Confidence:\s*(\d+)", response)
    extracted = answer[-1].strip() if answer else "None"
    return Reply(text=verdict_json(extracted, "yes" if extracted == reference else "no",
                                   int(confidence[-1]) if confidence else None))


def grade_all(judge, records):
    """Grade records concurrently with one judge, then close its clients."""
    async def go():
        try:
            return await asyncio.gather(*(judge.agrade(r) for r in records))
        finally:
            await judge.aclose()
    return asyncio.run(go())
