"""NativeEngine: the harness Engine over LLMEngine, stepping in a background thread (continuous batching)."""
from __future__ import annotations

import asyncio
import queue
import signal
import sys
import threading
import time
from typing import Any, AsyncIterator

from engine.base import ChatRequest, Completion, Engine, EngineError, EngineOptions, SamplingParams, StreamDelta
from engine.native.llm_engine import LLMEngine, LogitsProcessor, RequestOutput
from engine.reasoning import prompt_opens_thinking

def _put_all(items: list[tuple[asyncio.Queue, Any]]) -> None:
    for q, item in items:
        q.put_nowait(item)


# Under torchrun, a rank that fails makes torchrun SIGTERM the others (30 s before SIGKILL).
SIGTERM_REASON = ("stopped by SIGTERM before it finished (under torchrun: another rank failed or the job was "
                  "stopped); rerun the same command to retry it")
# EngineOptions fields passed to LLMEngine when set (None keeps LLMEngine's own default).
_ENGINE_FIELDS = ("block_size", "max_num_batched_tokens", "enable_prefix_caching", "max_prefill_chunk",
                  "chat_template_kwargs", "kv_cache_dtype")


def _text_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Flatten OpenAI content-part lists to strings (text parts only; images are rejected earlier)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        out.append({**m, "content": content if content is not None else ""})
    return out


class NativeEngine(Engine):
    name = "native"
    supports_images = False

    def __init__(self, engine: LLMEngine, lean_delivery: bool = True):
        self.engine = engine
        # lean_delivery: one cross-thread call per event loop per step, and chat() (no stream) gets only the
        # final output. False: one call per request per token, as before (benchmarks compare the two).
        self.lean_delivery = lean_delivery
        self._inbox: queue.Queue = queue.Queue()
        self._sinks: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue, bool]] = {}  # loop, queue, final only
        self._closed = False
        self._closed_reason = "engine is closed"
        self._interrupted = False
        self._counter = 0
        self._thread = threading.Thread(target=self._loop, name="native-engine", daemon=True)
        self._thread.start()
        if getattr(engine, "parallel", None) is not None:
            self._record_on_sigterm()

    @classmethod
    def from_options(cls, options: EngineOptions) -> "NativeEngine":
        kwargs = {k: getattr(options, k) for k in _ENGINE_FIELDS if getattr(options, k) is not None}
        engine_cls: type[LLMEngine] = LLMEngine
        if options.nextn:  # MTP speculative decoding
            from engine.native.spec_engine import SpecLLMEngine
            engine_cls, kwargs["nextn"] = SpecLLMEngine, options.nextn
        engine = engine_cls(model=options.model, device=options.device, dtype=options.dtype, threads=options.threads,
                            kv_cache_gib=options.kv_cache_gib if options.kv_cache_gib is not None else 1.0,
                            max_model_len=options.max_model_len, max_num_seqs=options.max_num_seqs or 256,
                            int4=options.int4, tp=options.tp, ep=options.ep, dp_attention=options.dp_attention,
                            dist_timeout_s=options.dist_timeout_s, **kwargs)
        return cls(engine)

    # ---- engine thread ----------------------------------------------------------------------------
    def _loop(self) -> None:
        eng = self.engine
        while not self._closed:
            try:
                # Block only when idle; otherwise pick up new work between steps.
                cmd = self._inbox.get(timeout=0.5) if not eng.has_unfinished() else self._inbox.get_nowait()
            except queue.Empty:
                cmd = None
            while cmd is not None:
                self._apply(cmd)
                try:
                    cmd = self._inbox.get_nowait()
                except queue.Empty:
                    cmd = None
            if not eng.has_unfinished():
                continue
            try:
                outputs = eng.step().outputs
            except Exception as exc:  # a bug or device fault: fail in-flight requests, keep serving
                self._fail_all(f"engine step failed: {type(exc).__name__}: {exc}")
                continue
            if self.lean_delivery:
                self._deliver_step(outputs)
            else:
                for o in outputs:
                    self._deliver(o.request_id, o)

    def _apply(self, cmd: tuple) -> None:
        if cmd[0] == "add":
            _, rid, ids, params, processor = cmd
            try:
                self.engine.add_request(ids, params, rid, logits_processor=processor)
            except Exception as exc:
                self._deliver(rid, exc)
        elif cmd[0] == "abort":
            self.engine.abort(cmd[1])

    def _deliver(self, rid: str, item: Any) -> None:
        sink = self._sinks.get(rid)
        if sink is not None:
            loop, q, _ = sink
            try:
                loop.call_soon_threadsafe(q.put_nowait, item)
            except RuntimeError:  # the caller's loop is closed; nobody is listening
                self._sinks.pop(rid, None)

    def _deliver_step(self, outputs: list[RequestOutput]) -> None:
        """A step's outputs in one call per event loop. Each cross-thread call wakes the loop's thread, which
        then competes with the step's compute threads for the cores and the GIL (64 requests x 256 tokens were
        16k wake-ups); a final-only sink (chat) skips the tokens nobody reads."""
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Queue, Any]]] = {}
        for o in outputs:
            sink = self._sinks.get(o.request_id)
            if sink is not None and (o.finished or not sink[2]):
                by_loop.setdefault(sink[0], []).append((sink[1], o))
        for loop, items in by_loop.items():
            try:
                loop.call_soon_threadsafe(_put_all, items)
            except RuntimeError:  # the caller's loop is closed; nobody is listening
                for rid in [r for r, sink in self._sinks.items() if sink[0] is loop]:
                    self._sinks.pop(rid, None)

    def _fail_all(self, error: str, abort: bool = True) -> None:
        for rid in list(self._sinks):
            if abort:
                self.engine.abort(rid)
            self._deliver(rid, EngineError(error))

    # ---- Engine API -------------------------------------------------------------------------------
    async def stream(self, request: ChatRequest, final_only: bool = False) -> AsyncIterator[StreamDelta]:
        """final_only: yield only the last delta (with the whole text), as chat() needs."""
        t0 = time.perf_counter()
        if request.has_images:
            yield self._error_delta("this model takes no images (text-only); the request has image parts", t0)
            return
        if self._closed:
            yield self._error_delta(self._closed_reason, t0)
            return
        try:
            prompt = self.engine.tokenizer.render_chat(_text_messages(request.messages))
            ids = self.engine.tokenizer.encode(prompt)
        except Exception as exc:
            yield self._error_delta(f"could not render the chat template: {exc}", t0)
            return
        opens_thinking = prompt_opens_thinking(prompt)
        async for delta in self._stream_ids(request.request_id, ids, request.params, None, final_only):
            if delta.final is not None and opens_thinking:
                delta.final.extra["prompt_opens_thinking"] = True  # for the reasoning parser (auto)
            yield delta

    async def stream_prompt(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                            logits_processor: LogitsProcessor | None = None) -> AsyncIterator[StreamDelta]:
        """Stream one request given as token ids; the last delta carries the Completion (with token ids).
        logits_processor: see LLMEngine.add_request."""
        async for delta in self._stream_ids(request_id, prompt_token_ids, params, logits_processor, False):
            yield delta

    async def _stream_ids(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                          logits_processor: LogitsProcessor | None, final_only: bool) -> AsyncIterator[StreamDelta]:
        """stream_prompt; final_only: only the last delta (its text the whole text, its TTFT the engine's)."""
        t0 = time.perf_counter()
        if self._closed:
            yield self._error_delta(self._closed_reason, t0)
            return
        ids = list(prompt_token_ids)
        self._counter += 1
        rid = f"{request_id}#{self._counter}"  # unique even when a caller reuses ids
        q: asyncio.Queue = asyncio.Queue()
        final_only = final_only and self.lean_delivery
        self._sinks[rid] = (asyncio.get_running_loop(), q, final_only)
        self._inbox.put(("add", rid, ids, params, logits_processor))
        first: float | None = None
        finished = False
        try:
            while True:
                item = await q.get()
                if isinstance(item, BaseException):
                    finished = True
                    yield self._error_delta(str(item), t0, prompt_tokens=len(ids))
                    return
                o: RequestOutput = item
                if first is None and o.token_ids:
                    first = time.perf_counter()
                if not o.finished:
                    if o.new_text or o.new_token_ids:
                        yield StreamDelta(text=o.new_text, token_count=len(o.new_token_ids))
                    continue
                finished = True
                if first is None and o.first_token_time is not None:  # final-only: the engine's clock (perf_counter)
                    first = o.first_token_time
                done = Completion(
                    text=o.text, finish_reason=o.finish_reason or "error", prompt_tokens=len(ids),
                    completion_tokens=len(o.token_ids), latency_s=time.perf_counter() - t0,
                    ttft_s=(first - t0) if first is not None else None, error=o.error,
                    logprobs=list(o.logprobs) if o.logprobs is not None else None,
                    extra={"cached_tokens": o.num_cached_tokens, "token_ids": list(o.token_ids)})
                if final_only:
                    yield StreamDelta(text=o.text, token_count=len(o.token_ids), final=done)
                else:
                    yield StreamDelta(text=o.new_text, token_count=len(o.new_token_ids), final=done)
                return
        finally:
            self._sinks.pop(rid, None)
            if not finished:  # the caller went away: free the KV blocks now
                self._inbox.put(("abort", rid))

    @staticmethod
    def _error_delta(error: str, t0: float, prompt_tokens: int = 0) -> StreamDelta:
        c = Completion.failed(error, latency_s=time.perf_counter() - t0)
        c.prompt_tokens = prompt_tokens
        return StreamDelta(text="", final=c)

    async def chat(self, request: ChatRequest) -> Completion:
        final = None
        async for delta in self.stream(request, final_only=True):
            if delta.final is not None:
                final = delta.final
        return final if final is not None else Completion.failed("stream ended without a result")

    async def check_ready(self) -> None:
        if self._closed:
            raise EngineError(self._closed_reason)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **self.engine.describe()}

    async def aclose(self) -> None:
        """Stop the engine thread; every stream still in flight ends with an error naming the shutdown."""
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(None, self._thread.join, 5.0)
        # Abort (free blocks) only when the loop is gone: then this thread may touch the engine.
        self._fail_all("the engine was shut down (aclose) while this request was in flight",
                       abort=not self._thread.is_alive())
        # Collectives (tensor parallel) only from one thread at a time; after SIGTERM the peers are being
        # stopped too, and a stop message to a dead one could wait for the control group's long timeout.
        if not self._thread.is_alive() and not self._interrupted:
            self.engine.close()

    def interrupt(self, reason: str) -> None:
        """Fail every request in flight with `reason` and refuse new ones; the caller records them as errors."""
        self._interrupted = self._closed = True
        self._closed_reason = reason
        self._fail_all(reason, abort=False)  # the engine thread may be inside a step: leave its state alone

    def _record_on_sigterm(self) -> None:
        """Rank 0 of a parallel launch: on SIGTERM, unfinished requests become error records and the caller
        releases its run lock, instead of the process dying with nothing recorded."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not inside the caller's loop (the server installs its own SIGTERM drain)
            return

        def on_sigterm() -> None:
            print(f"rank 0: SIGTERM; {len(self._sinks)} request(s) in flight and every one not yet started are "
                  "recorded as errors", file=sys.stderr)
            self.interrupt(SIGTERM_REASON)

        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
