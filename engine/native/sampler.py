"""Token selection: greedy, temperature, top-k, top-p; one uniform draw per row from the row's own generator.
The only top-k/top-p implementation: plain sampling, speculative drafts and rejection sampling all use it."""
from __future__ import annotations

import torch

from engine.base import SamplingParams
from engine.native.sequence import Sequence, is_greedy


def filtered_probs(logits: torch.Tensor, params: list[SamplingParams]) -> torch.Tensor:
    """Softmax of logits / temperature after top-k and top-p filtering, renormalised (fp32). logits: [B, V],
    one SamplingParams per row; every operation is row-wise, so a row never depends on the other rows."""
    x = logits.float() / torch.tensor([p.temperature for p in params], dtype=torch.float32)[:, None]
    V = x.shape[-1]
    if any(0 < p.top_k < V for p in params):
        ks = torch.tensor([p.top_k if 0 < p.top_k < V else V for p in params])
        kth = x.topk(int(ks.max()), dim=-1).values.gather(1, (ks - 1)[:, None])
        x = x.masked_fill(x < kth, float("-inf"))
    probs = torch.softmax(x, dim=-1)
    top_p = torch.tensor([p.top_p for p in params], dtype=probs.dtype)
    if bool((top_p < 1).any()):
        sorted_p, order = probs.sort(dim=-1, descending=True)
        # Keep the smallest prefix whose mass reaches top_p (mass strictly before a token). The top token always
        # stays: a top_p that underflows to 0 in float32 (below ~1.4e-45) then means greedy, not "mask all".
        drop = (sorted_p.cumsum(-1) - sorted_p) >= top_p[:, None]
        drop[:, 0] = False
        sorted_p = sorted_p.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(-1, order, sorted_p)
    return probs / probs.sum(-1, keepdim=True)


def draw(probs: torch.Tensor, generators: list[torch.Generator | None]) -> torch.Tensor:
    """One token per row of probs [B, V] by inverse CDF, with one float64 uniform from that row's generator."""
    cdf = probs.cumsum(-1)
    u = torch.cat([torch.rand(1, generator=g, dtype=torch.float64) for g in generators])
    pos = torch.searchsorted(cdf, (u.to(cdf.dtype) * cdf[:, -1])[:, None], right=True)
    # Never past the last token with positive probability (a rounding tie at the top of the CDF).
    pos = torch.minimum(pos, (probs > 0).cumsum(-1).argmax(-1, keepdim=True))
    return pos.squeeze(1)


def sample(logits: torch.Tensor, seqs: list[Sequence]) -> tuple[list[int], list[float] | None, dict[int, str]]:
    """logits: [B, V] float32 on CPU, one row per sequence. Returns token ids, logprobs (when any sequence asks)
    and {row: error} for rows that cannot be sampled (NaN or no finite logit); their token is meaningless."""
    # One pass gives the greedy tokens and the check: a row's max is NaN when the row has a NaN (max propagates
    # it), and infinite when no value is finite or one is +inf (a bad row's token is meaningless anyway).
    top, best = logits.max(-1)
    bad = ~torch.isfinite(top)
    errors = {}
    if bool(bad.any()):
        errors = {i: "the logits row has NaN or no finite value (a logits processor or the model produced it)"
                  for i in bad.nonzero().flatten().tolist()}
        logits = logits.masked_fill(bad[:, None], 0.0)
    tokens = torch.empty(len(seqs), dtype=torch.long)
    greedy = [i for i, s in enumerate(seqs) if is_greedy(s.params)]
    sampled = [i for i, s in enumerate(seqs) if not is_greedy(s.params)]
    if greedy:
        tokens[greedy] = best if len(greedy) == len(seqs) else best[greedy]
    if sampled:
        rows = [seqs[i] for i in sampled]
        tokens[sampled] = draw(filtered_probs(logits[sampled], [s.params for s in rows]), [s.generator for s in rows])
    logprobs = None
    if any(s.params.logprobs for s in seqs):
        # Log-probabilities of the chosen tokens under the model's distribution (before temperature).
        logprobs = torch.log_softmax(logits, dim=-1).gather(1, tokens[:, None]).squeeze(1).tolist()
    return tokens.tolist(), logprobs, errors
