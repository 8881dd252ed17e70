"""Run a plan's choices on the engine: admission, streaming deltas, metrics, and cancellation on exit."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from engine.base import ChatRequest, Completion
from engine.server.adapter import ServingAdapter
from engine.server.admission import Admission, Ticket
from engine.server.metrics import ServerMetrics
from engine.server.planning import Choice, Plan


@dataclass
class ChoiceEvent:
    """A piece of one choice's output; `final` is set on the last event of that choice."""

    index: int
    text: str
    token_count: int = 0
    final: Completion | None = None


@dataclass
class Runtime:
    """Everything a request handler shares: the engine view, admission queue and metrics."""

    adapter: ServingAdapter
    admission: Admission
    metrics: ServerMetrics
    served_names: set[str] = field(default_factory=set)
    reasoning_parser: str = "none"  # chat replies split <think> blocks into reasoning_content unless "none"


async def _choice_events(rt: Runtime, plan: Plan, choice: Choice, ticket: Ticket) -> AsyncIterator[ChoiceEvent]:
    """One choice on the engine, inside its own admission slot (a wide request's choices take turns)."""
    await ticket.acquire()
    rt.metrics.sequence_queue.observe(time.perf_counter() - ticket.arrival)
    try:
        async for ev in _engine_events(rt, plan, choice, ticket.arrival):
            yield ev
    finally:
        ticket.done_one()


async def _engine_events(rt: Runtime, plan: Plan, choice: Choice, arrival: float) -> AsyncIterator[ChoiceEvent]:
    constraint = plan.constraint_factory() if plan.constraint_factory else None
    if choice.prompt_ids is not None:
        gen = rt.adapter.stream_prompt(choice.request_id, choice.prompt_ids, choice.params, constraint)
    else:
        gen = rt.adapter.stream_chat(ChatRequest(choice.request_id, choice.messages or [], choice.params))
    first: float | None = None
    tokens = 0
    finished = False
    try:
        async for delta in gen:
            if first is None and (delta.token_count or delta.text):
                first = time.perf_counter()
                rt.metrics.ttft.observe(first - arrival)
            tokens += delta.token_count
            rt.metrics.generation_tokens += delta.token_count
            if delta.final is not None:
                finished = True
                _record_finish(rt, delta.final, arrival, first, tokens)
            yield ChoiceEvent(choice.index, delta.text, delta.token_count, delta.final)
            if delta.final is not None:
                return
        if not finished:  # an engine that ended without a final delta: report it rather than hang
            finished = True
            yield ChoiceEvent(choice.index, "", 0, Completion.failed("the engine ended the stream without a result"))
    finally:
        if not finished:
            rt.metrics.requests_cancelled += 1
        await gen.aclose()  # runs the engine's own cleanup (abort) when we stop early


def _record_finish(rt: Runtime, done: Completion, arrival: float, first: float | None, tokens: int) -> None:
    now = time.perf_counter()
    rt.metrics.finished(done.finish_reason)
    rt.metrics.e2e.observe(now - arrival)
    n = done.completion_tokens or tokens
    if first is not None and n > 1:
        rt.metrics.tpot.observe((now - first) / (n - 1))


async def plan_events(rt: Runtime, plan: Plan, ticket: Ticket) -> AsyncIterator[ChoiceEvent]:
    """All choices' events, interleaved as they come; waits for the request's first slot, and gives every slot back
    at the end."""
    n = len(plan.choices)
    try:
        await ticket.wait()
    except BaseException:
        ticket.release()
        raise
    rt.metrics.queue.observe(ticket.started - ticket.arrival)  # type: ignore[operator]
    if plan.prompt_tokens:
        rt.metrics.prompt_tokens += plan.prompt_tokens
    try:
        if n == 1:  # the common case, without a task per choice
            async for ev in _choice_events(rt, plan, plan.choices[0], ticket):
                yield ev
            return
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def pump(choice: Choice) -> None:
            try:
                async for ev in _choice_events(rt, plan, choice, ticket):
                    await queue.put(ev)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer below
                await queue.put(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise

        tasks = [asyncio.create_task(pump(c)) for c in plan.choices]
        try:
            done = 0
            while done < n:
                ev = await queue.get()
                if isinstance(ev, BaseException):
                    raise ev
                if ev.final is not None:
                    done += 1
                yield ev
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        ticket.release()


async def collect(rt: Runtime, plan: Plan, ticket: Ticket) -> list[Completion]:
    """Run to the end and return each choice's Completion in index order."""
    results: dict[int, Completion] = {}
    texts: dict[int, list[str]] = {c.index: [] for c in plan.choices}
    async for ev in plan_events(rt, plan, ticket):
        texts[ev.index].append(ev.text)
        if ev.final is not None:
            results[ev.index] = ev.final
    out = []
    for c in plan.choices:
        done = results[c.index]
        if not done.text and texts[c.index] and done.finish_reason != "error":
            done.text = "".join(texts[c.index])
        out.append(done)
    return out
