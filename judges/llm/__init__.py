"""The LLM judge: a model behind an Engine (an OpenAI-compatible server, or the built-in engine) grades responses."""
from judges.llm.judge import LLMJudge
from judges.llm.parsing import ParseError, parse_confidence, parse_reply
from judges.llm.prompt import PROMPT_VERSION, prompt_sha256

__all__ = ["LLMJudge", "PROMPT_VERSION", "ParseError", "parse_confidence", "parse_reply", "prompt_sha256"]
