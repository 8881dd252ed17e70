"""A model's own chat template, rendered with jinja2 in a sandbox the way Hugging Face's apply_chat_template does."""
from __future__ import annotations

import json
import sys
import traceback
from datetime import datetime
from functools import lru_cache
from typing import Any

from engine.base import EngineError

# Used only when the model ships no template of its own (said in a log line and in run.json): ChatML, the
# format of SmolLM2, Qwen and many others.
BUILTIN_TEMPLATE_NAME = "built-in ChatML"
BUILTIN_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


class ChatTemplateError(EngineError):
    """A template that does not compile or render; the message names the model and the template line."""


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators=None,
            sort_keys: bool = False) -> str:
    # jinja2's own tojson escapes HTML characters ('<' -> \u003c): templates expect plain JSON, as HF renders it.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: str):
    from jinja2.exceptions import TemplateError
    raise TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


@lru_cache(maxsize=8)
def _environment():
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTag(Extension):
        """`{% generation %}...{% endgeneration %}` marks assistant text for training masks; here it only renders."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def _template_line(exc: BaseException) -> int | None:
    """The template line a render error came from: jinja2 maps template frames to '<template>' line numbers."""
    line = getattr(exc, "lineno", None)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<template>":
            line = frame.lineno
    return line


class ChatTemplate:
    """One compiled template plus the special-token strings and default keyword arguments it renders with."""

    def __init__(self, source: str | None, model: str = "model", special_tokens: dict[str, str | None] | None = None,
                 default_kwargs: dict[str, Any] | None = None, warn: bool = True):
        self.model = model
        self.is_builtin = not source
        self.source = source or BUILTIN_TEMPLATE
        self.special_tokens = {k: v for k, v in (special_tokens or {}).items() if v is not None}
        self.default_kwargs = dict(default_kwargs or {})
        if self.is_builtin and warn:
            print(f"note: {model} has no chat template; using the {BUILTIN_TEMPLATE_NAME} template", file=sys.stderr)
        self._compiled = None

    @property
    def origin(self) -> str:
        """What run.json records: the model's own template, or the built-in one."""
        return BUILTIN_TEMPLATE_NAME if self.is_builtin else "model"

    def _line_text(self, line: int | None) -> str:
        if not line:
            return ""
        lines = self.source.splitlines()
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return f" at template line {line}" + (f" ({text[:120]})" if text else "")

    def _compile(self):
        if self._compiled is None:
            from jinja2.exceptions import TemplateSyntaxError
            try:
                self._compiled = _environment().from_string(self.source)
            except TemplateSyntaxError as exc:
                raise ChatTemplateError(f"{self.model}: chat template does not compile{self._line_text(exc.lineno)}: "
                                        f"{exc.message}") from None
        return self._compiled

    def render(self, messages: list[dict[str, Any]], add_generation_prompt: bool = True, **kwargs: Any) -> str:
        """The prompt text; kwargs (e.g. enable_thinking=False) override the defaults given at construction."""
        template = self._compile()
        values = {**self.special_tokens, **self.default_kwargs, **kwargs}
        try:
            return template.render(messages=messages, add_generation_prompt=add_generation_prompt, **values)
        except Exception as exc:
            raise ChatTemplateError(f"{self.model}: chat template failed to render{self._line_text(_template_line(exc))}: "
                                    f"{type(exc).__name__}: {exc}") from None


def parse_template_kwargs(text: str | None, where: str = "--chat-template-kwargs") -> dict[str, Any]:
    """A JSON object of extra template variables, e.g. '{"enable_thinking": false}'; a clear error otherwise."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno}): {text!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a JSON object such as '{{\"enable_thinking\": false}}', got {text!r}")
    return value
