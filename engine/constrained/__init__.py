"""Constrained decoding for `response_format` (json_object / json_schema) with xgrammar, as vLLM and SGLang use.

The engine-facing contract is `TokenConstraint` (one object per request):
  before sampling a row:   constraint.mask_logits(logits_row)   (in place: disallowed tokens -> -inf)
  after a token is chosen: constraint.accept_token(token_id)    (False: the token broke the grammar)
  constraint.is_terminated()  True once the grammar has accepted a stop token
  constraint.rollback(n)      undo the last n accepted tokens (speculative decoding rejections)
`sync(output_token_ids)` accepts whatever tokens the engine appended since the last call, so a hook
that only sees logits (before sampling) can keep the matcher in step without an after-sampling call.
Schemas compile in a child process (engine.constrained.worker), so a slow compile can be stopped.
"""
from __future__ import annotations

from engine.constrained.grammar import (
    GrammarConstraint, TokenConstraint, cancel_compile, compile_response_format, constraints_available,
)
from engine.constrained.worker import CompileCancelled, CompileTimeout

__all__ = ["CompileCancelled", "CompileTimeout", "GrammarConstraint", "TokenConstraint", "cancel_compile",
           "compile_response_format", "constraints_available"]
