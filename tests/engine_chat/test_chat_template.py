"""Our chat-template rendering equals transformers' apply_chat_template on the real templates of six families."""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.native.chat_template import ChatTemplate, ChatTemplateError, parse_template_kwargs

TEMPLATES = Path(__file__).parent / "templates"  # sources named in templates/SOURCES.md

# Each family's template file and the special-token strings its tokenizer_config.json sets.
FAMILIES = {
    "qwen2_5": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "qwen3": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "qwq": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "deepseek_r1_distill": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "mistral_nemo": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
}

CONVERSATIONS = {
    "one-user-turn": [{"role": "user", "content": "What is 7 * 6? Answer with a number."}],
    "system-and-user": [{"role": "system", "content": "You are terse."},
                        {"role": "user", "content": "Name a prime number above 10."}],
    "multi-turn-with-thinking": [
        {"role": "user", "content": "Is 91 prime?"},
        {"role": "assistant", "content": "<think>\n91 = 7 * 13.\n</think>\n\nNo: 91 = 7 x 13."},
        {"role": "user", "content": "And 97?  Reply in \"quotes\", with unicode: é ✓"},
    ],
}


def _hf_tokenizer(template: str, special: dict[str, str]):
    """A transformers fast tokenizer built here (no hub): a word-level vocabulary holding the special tokens."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers
    vocab = {tok: i for i, tok in enumerate(["<unk-fallback>", *special.values()])}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk-fallback>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=backend, chat_template=template, **special)


def _template(name: str) -> str:
    return (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("conversation", sorted(CONVERSATIONS))
@pytest.mark.parametrize("add_generation_prompt", [True, False], ids=["gen-prompt", "no-gen-prompt"])
def test_rendering_equals_transformers(family, conversation, add_generation_prompt):
    source, special = _template(family), FAMILIES[family]
    messages = CONVERSATIONS[conversation]
    hf = _hf_tokenizer(source, special)
    ours = ChatTemplate(source, family, special)
    kwargs = {"date_string": "03 Dec 2026"} if family == "llama3" and conversation == "one-user-turn" else {}
    expected = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt, **kwargs)
    assert ours.render(messages, add_generation_prompt, **kwargs) == expected
    assert messages[-1]["content"].split("?")[0] in expected  # the conversation really was rendered


@pytest.mark.parametrize("family", ["qwen3", "qwen2_5", "deepseek_r1_distill", "qwq"])
@pytest.mark.parametrize("enable_thinking", [True, False], ids=["thinking-on", "thinking-off"])
def test_enable_thinking_switch_equals_transformers(family, enable_thinking):
    source, special = _template(family), FAMILIES[family]
    messages = CONVERSATIONS["system-and-user"]
    hf = _hf_tokenizer(source, special)
    expected = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=enable_thinking)
    # Given per call, and given once as the engine's default (--chat-template-kwargs).
    assert ChatTemplate(source, family, special).render(messages, enable_thinking=enable_thinking) == expected
    as_default = ChatTemplate(source, family, special, default_kwargs={"enable_thinking": enable_thinking})
    assert as_default.render(messages) == expected


def test_qwen3_thinking_off_fills_an_empty_think_block():
    template = ChatTemplate(_template("qwen3"), "qwen3", FAMILIES["qwen3"])
    messages = CONVERSATIONS["one-user-turn"]
    assert template.render(messages, enable_thinking=False).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert template.render(messages).endswith("<|im_start|>assistant\n")


def test_template_that_raises_names_model_and_line():
    template = ChatTemplate(_template("mistral_nemo"), "my-mistral", FAMILIES["mistral_nemo"])
    bad_order = [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "hello"}]
    with pytest.raises(ChatTemplateError) as info:
        template.render(bad_order)
    message = str(info.value)
    assert message.startswith("my-mistral: chat template failed to render at template line 18")
    assert "roles must alternate" in message


def test_template_that_does_not_compile_names_model_and_line():
    broken = "{% for m in messages %}\n{{ m.content }}\n{% endfor %}\n{% if add_generation_prompt %}oops"
    with pytest.raises(ChatTemplateError, match=r"^tiny: chat template does not compile at template line 4"):
        ChatTemplate(broken, "tiny").render([{"role": "user", "content": "x"}])


def test_sandbox_refuses_attribute_escapes():
    escape = "{{ messages.__class__.__mro__[1].__subclasses__() }}"
    with pytest.raises(ChatTemplateError, match="template line 1"):
        ChatTemplate(escape, "m").render([{"role": "user", "content": "x"}])


def test_builtin_template_only_without_a_model_template(capsys):
    builtin = ChatTemplate(None, "no-template-model")
    assert builtin.is_builtin and builtin.origin == "built-in ChatML"
    assert "no-template-model has no chat template; using the built-in ChatML template" in capsys.readouterr().err
    assert builtin.render([{"role": "user", "content": "hi"}]) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    own = ChatTemplate(_template("qwen3"), "qwen3")
    assert not own.is_builtin and own.origin == "model" and capsys.readouterr().err == ""


def test_tojson_keeps_unicode_and_angle_brackets_like_transformers():
    template = "{{ messages[0] | tojson }}"
    message = [{"role": "user", "content": "<b>é</b>"}]
    expected = _hf_tokenizer(template, {"eos_token": "</s>"}).apply_chat_template(message, tokenize=False)
    assert ChatTemplate(template, "m").render(message, add_generation_prompt=False) == expected
    assert "<b>é</b>" in expected


@pytest.mark.parametrize("text, error", [
    ("not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
])
def test_chat_template_kwargs_flag_rejects_bad_json(text, error):
    with pytest.raises(ValueError, match=f"--chat-template-kwargs: {error}"):
        parse_template_kwargs(text)
    assert parse_template_kwargs('{"enable_thinking": false}') == {"enable_thinking": False}
