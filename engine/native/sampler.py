"""Token selection: greedy, temperature, top-k, top-p; one uniform draw per row from the row's own generator."""
from __future__ import annotations

import torch

from engine.native.sequence import Sequence


def sample(logits: torch.Tensor, seqs: list[Sequence]) -> tuple[list[int], list[float] | None]:
    """logits: [B, V] float32 on CPU, one row per sequence. Returns token ids and (optional) logprobs."""
    temps = [s.params.temperature for s in seqs]
    tokens = torch.empty(len(seqs), dtype=torch.long)
    greedy = [i for i, t in enumerate(temps) if t == 0]
    sampled = [i for i, t in enumerate(temps) if t > 0]
    if greedy:
        rows = logits if len(greedy) == len(seqs) else logits[greedy]
        tokens[greedy] = rows.argmax(dim=-1)
    if sampled:
        tokens[sampled] = _sample_rows(logits[sampled], [seqs[i] for i in sampled])
    logprobs = None
    if any(s.params.logprobs for s in seqs):
        # Log-probabilities of the chosen tokens under the model's distribution (before temperature).
        logprobs = torch.log_softmax(logits, dim=-1).gather(1, tokens[:, None]).squeeze(1).tolist()
    return tokens.tolist(), logprobs


def _sample_rows(logits: torch.Tensor, seqs: list[Sequence]) -> torch.Tensor:
    # Every operation below is row-wise, so a row's result never depends on the other rows.
    temps = torch.tensor([s.params.temperature for s in seqs], dtype=logits.dtype)
    logits = logits / temps[:, None]
    top_k = [s.params.top_k for s in seqs]
    if any(k > 0 for k in top_k):
        V = logits.shape[-1]
        ks = torch.tensor([k if 0 < k < V else V for k in top_k])
        kth = logits.topk(int(ks.max()), dim=-1).values.gather(1, (ks - 1)[:, None])
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    top_p = torch.tensor([s.params.top_p for s in seqs], dtype=probs.dtype)
    index = None
    if bool((top_p < 1).any()):
        probs, index = probs.sort(dim=-1, descending=True)
        before = probs.cumsum(-1) - probs  # mass strictly before each token; the top token always stays
        probs = probs.masked_fill(before >= top_p[:, None], 0.0)
    cdf = probs.cumsum(-1)
    u = torch.cat([torch.rand(1, generator=s.generator, dtype=torch.float64) for s in seqs])
    target = (u.to(cdf.dtype) * cdf[:, -1])[:, None]
    pos = torch.searchsorted(cdf, target, right=True).clamp_(max=cdf.shape[-1] - 1)
    # Skip zero-probability tokens that a rounding tie could land on.
    pos = torch.minimum(pos, (probs > 0).cumsum(-1).argmax(-1, keepdim=True))
    picked = pos.squeeze(1)
    return index.gather(1, pos).squeeze(1) if index is not None else picked
