"""Judges: the interface and a registry, imported lazily."""
from __future__ import annotations

import importlib

from judges.base import Judge, JudgeConfigError, JudgeError, Verdict

# name -> "module:factory"; each factory takes the CLI's judge options as keyword arguments.
JUDGES: dict[str, str] = {
    "rules": "judges.rules:RulesJudge",
    "llm": "judges.llm:LLMJudge",
    "rules+llm": "judges.hybrid:HybridJudge",  # rules first; what they cannot read goes to the LLM judge
}


def create_judge(name: str, **options) -> Judge:
    """Build the named judge; unknown names list the valid ones."""
    if name not in JUDGES:
        raise JudgeError(f"unknown judge {name!r}; valid judges: {', '.join(sorted(JUDGES))}")
    module_name, _, factory = JUDGES[name].partition(":")
    return getattr(importlib.import_module(module_name), factory).from_options(**options)


__all__ = ["Judge", "JudgeConfigError", "JudgeError", "Verdict", "JUDGES", "create_judge"]
