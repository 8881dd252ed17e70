"""Tokenizer (byte-level BPE via `tokenizers`) built from GGUF metadata or tokenizer.json, with the chat template."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.base import EngineError
from engine.native.chat_template import ChatTemplate

# GGUF `tokenizer.ggml.pre` -> pre-tokenizer split regex (from llama.cpp's llama-vocab.cpp); None = GPT-2's.
_PRE_REGEX = {
    "qwen2": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "llama-bpe": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}
_CONTROL, _USER_DEFINED = 3, 4


def from_gguf_metadata(meta: dict[str, Any]) -> tuple[str, str | None, dict]:
    """Build a tokenizers JSON document, the chat template and special token strings from GGUF fields."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    if meta.get("model") != "gpt2":
        raise EngineError(f"GGUF tokenizer model {meta.get('model')!r} is not supported (only byte-level BPE 'gpt2')")
    tokens = list(meta["tokens"])
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ", 1)) for m in meta["merges"]]
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    pre = meta.get("pre")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=pre not in _PRE_REGEX)
    if pre in _PRE_REGEX:
        tk.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(_PRE_REGEX[pre]), behavior="isolated"), byte_level])
    elif pre == "smollm":  # SmolLM's tokenizer.json splits digits one by one before GPT-2's regex
        tk.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tk.pre_tokenizer = byte_level
    tk.decoder = decoders.ByteLevel()
    types = list(meta.get("token_type") or [])
    special = [AddedToken(tokens[i], special=True, normalized=False)
               for i, t in enumerate(types) if int(t) in (_CONTROL, _USER_DEFINED)]
    tk.add_special_tokens(special)

    def tok_str(i):
        return tokens[int(i)] if i is not None and 0 <= int(i) < len(tokens) else None
    strings = {"bos_token": tok_str(meta.get("bos_token_id")), "eos_token": tok_str(meta.get("eos_token_id"))}
    return tk.to_str(), meta.get("chat_template"), strings


def from_hf_folder(folder: Path) -> tuple[str, str | None, dict]:
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise EngineError(f"{folder}: no tokenizer.json")
    cfg_path = folder / "tokenizer_config.json"
    try:
        cfg = json.loads(cfg_path.read_text()) if cfg_path.is_file() else {}
    except json.JSONDecodeError as exc:
        raise EngineError(f"{cfg_path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    template = cfg.get("chat_template")
    if isinstance(template, list):  # named templates (default, tool_use, ...): chats render with the default
        template = next((t.get("template") for t in template if isinstance(t, dict) and t.get("name") == "default"), None)
    if (folder / "chat_template.jinja").is_file():
        template = (folder / "chat_template.jinja").read_text()

    def s(v):
        return v.get("content") if isinstance(v, dict) else v
    names = ("bos_token", "eos_token", "unk_token", "pad_token")
    return path.read_text(), template, {name: s(cfg.get(name)) for name in names}


class Tokenizer:
    """encode/decode plus the model's own chat template (chat_template.ChatTemplate)."""

    def __init__(self, tokenizer_json: str, chat_template: str | None, special_tokens: dict, model: str = "model",
                 template_kwargs: dict[str, Any] | None = None):
        from tokenizers import Tokenizer as _Tk
        self._tk = _Tk.from_str(tokenizer_json)
        self.special_tokens = special_tokens
        self.template = ChatTemplate(chat_template, model, special_tokens, template_kwargs)

    @property
    def chat_template(self) -> str:
        return self.template.source

    @property
    def vocab_size(self) -> int:
        return self._tk.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self._tk.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self._tk.decode(ids, skip_special_tokens=skip_special_tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._tk.token_to_id(token)

    def render_chat(self, messages: list[dict[str, Any]], add_generation_prompt: bool = True, **kwargs: Any) -> str:
        """Render messages with the model's template (as HF's apply_chat_template does); kwargs such as
        enable_thinking override the engine's --chat-template-kwargs."""
        for m in messages:
            if not isinstance(m.get("content", ""), str):
                raise EngineError("this model takes text only; message content must be a string")
        return self.template.render(messages, add_generation_prompt, **kwargs)


def generation_eos_ids(folder: Path) -> tuple[int, ...] | None:
    """End-of-sequence ids from an HF folder's generation_config.json (one id or a list), None without one.
    They take precedence over config.json's, as in transformers (Qwen2.5 and Llama 3 list several)."""
    path = folder / "generation_config.json"
    if not folder.is_dir() or not path.is_file():
        return None
    try:
        eos = json.loads(path.read_text()).get("eos_token_id")
    except (json.JSONDecodeError, AttributeError) as exc:
        raise EngineError(f"{path}: not a JSON object ({exc})") from None
    if eos is None:
        return None
    ids = eos if isinstance(eos, list) else [eos]
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise EngineError(f"{path}: field 'eos_token_id' must be an integer or a list of integers, got {eos!r}")
    return tuple(ids)
