"""Request bodies of the OpenAI API subset we serve; pydantic checks shapes and ranges (400 on failure)."""
from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_N = 16
MAX_STOP = 16


class _Body(BaseModel):
    # Unknown fields are ignored, as OpenAI-compatible servers do, so newer clients keep working.
    # Python's JSON reader accepts NaN and Infinity (and reads 1e999 as inf): every float must be finite.
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class TextPart(_Body):
    type: Literal["text"]
    text: str


class ImagePart(_Body):
    type: Literal["image_url"]
    image_url: Union[dict[str, Any], str]


class ChatMessage(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Union[str, list[Union[TextPart, ImagePart]], None] = None
    name: str | None = None

    @model_validator(mode="after")
    def _content_present(self) -> "ChatMessage":
        if self.content is None and self.role != "assistant":
            raise ValueError(f"a {self.role} message needs 'content'")
        return self


class StreamOptions(_Body):
    include_usage: bool = False
    continuous_usage_stats: bool = False  # vLLM's extension: running usage in every chunk


class JSONSchemaFormat(_Body):
    name: str = "schema"
    # `schema` shadows a BaseModel attribute, hence the alias.
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool | None = None
    description: str | None = None


class ResponseFormat(_Body):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JSONSchemaFormat | None = None

    @model_validator(mode="after")
    def _schema_given(self) -> "ResponseFormat":
        if self.type == "json_schema" and self.json_schema is None:
            raise ValueError("type 'json_schema' needs a 'json_schema' object with a 'schema'")
        return self


class _Sampling(_Body):
    model: str
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    top_k: int | None = Field(None, ge=-1)  # -1 or 0: off (vLLM uses -1)
    n: int = Field(1, ge=1, le=MAX_N)
    seed: int | None = Field(None, ge=-(2 ** 63), lt=2 ** 63)
    stop: Union[str, list[str], None] = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    presence_penalty: float | None = Field(None, ge=0, le=0)  # accepted only at 0: not implemented
    frequency_penalty: float | None = Field(None, ge=0, le=0)
    user: str | None = None
    ignore_eos: bool = False  # vLLM/SGLang extension for benchmarks; a grammar (response_format) overrides it

    @field_validator("stop")
    @classmethod
    def _stops(cls, v: Union[str, list[str], None]) -> Union[str, list[str], None]:
        if isinstance(v, list) and len(v) > MAX_STOP:
            raise ValueError(f"at most {MAX_STOP} stop sequences")
        return v

    @property
    def stop_list(self) -> tuple[str, ...]:
        if self.stop is None:
            return ()
        return (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)

    @property
    def continuous_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.continuous_usage_stats)


class ChatCompletionRequest(_Sampling):
    messages: list[ChatMessage] = Field(min_length=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    logprobs: bool = False
    top_logprobs: int | None = Field(None, ge=0, le=0)  # only the sampled token's logprob is available
    response_format: ResponseFormat | None = None
    # vLLM's extension: extra chat-template variables for this request (e.g. {"enable_thinking": false}),
    # merged over the server's --chat-template-kwargs
    chat_template_kwargs: dict[str, Any] | None = None

    @field_validator("chat_template_kwargs")
    @classmethod
    def _template_names(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        # the template's own inputs must not be replaced from a request
        taken = sorted(set(v or {}) & {"messages", "add_generation_prompt"})
        if taken:
            raise ValueError(f"{', '.join(taken)} cannot be set through chat_template_kwargs")
        return v

    @property
    def max_new_tokens(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens


class CompletionRequest(_Sampling):
    prompt: Union[str, list[str], list[int], list[list[int]]]
    max_tokens: int | None = Field(16, ge=1)  # the OpenAI default for /v1/completions
    logprobs: int | None = Field(None, ge=0, le=1)  # only the sampled token's logprob is available
    echo: bool = False
    suffix: str | None = None
    response_format: ResponseFormat | None = None

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, v: Any) -> Any:
        if isinstance(v, list) and not v:
            raise ValueError("prompt must not be empty")
        if isinstance(v, list) and isinstance(v[0], list) and any(not p for p in v):
            raise ValueError("token-id prompts must not be empty")
        return v

    @field_validator("suffix")
    @classmethod
    def _no_suffix(cls, v: str | None) -> str | None:
        if v:
            raise ValueError("suffix (fill-in-the-middle) is not supported")
        return v

    @property
    def max_new_tokens(self) -> int | None:
        return self.max_tokens

    def prompts(self) -> list[Union[str, list[int]]]:
        """One entry per prompt: text, or token ids."""
        p = self.prompt
        if isinstance(p, str):
            return [p]
        if p and isinstance(p[0], int):
            return [list(p)]  # type: ignore[arg-type]
        return list(p)  # type: ignore[arg-type]
