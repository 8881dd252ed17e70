"""Turns a scheduled batch into model inputs (ids, positions, AttentionMetadata) and runs one forward."""
from __future__ import annotations

import torch

from engine.native.attention import AttentionMetadata, PrefillChunk, Workspace
from engine.native.kv_cache import KVCache
from engine.native.sequence import Sequence


class ModelRunner:
    def __init__(self, model, kv_cache: KVCache, device: torch.device):
        self.model = model
        self.kv = kv_cache
        self.device = device
        self.block_size = kv_cache.block_size
        self.workspace = Workspace()

    def _slots(self, block_table: list[int], start: int, end: int) -> torch.Tensor:
        bs = self.block_size
        pos = torch.arange(start, end)
        bt = torch.tensor(block_table, dtype=torch.long)
        return bt[pos // bs] * bs + pos % bs

    def prepare(self, seqs: list[Sequence], counts: list[int]) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata, list[int]]:
        """Decode rows (one new token) go first, then prefill chunks; returns rows whose logits to sample.
        Everything is built on the CPU (forward() moves it), so a tensor-parallel rank 0 can send it as is."""
        order = sorted(range(len(seqs)), key=lambda i: counts[i] != 1)
        dec = [i for i in order if counts[i] == 1]
        pre = [i for i in order if counts[i] != 1]
        ids: list[int] = []
        positions: list[int] = []
        slot_parts: list[torch.Tensor] = []
        bs = self.block_size
        attn = AttentionMetadata(slot_mapping=torch.empty(0, dtype=torch.long), num_decode=len(dec))
        if dec:
            ctx = torch.tensor([seqs[i].num_computed_tokens + 1 for i in dec])
            attn.decode_max_len = int(ctx.max())
            nb = (attn.decode_max_len + bs - 1) // bs
            L = nb * bs  # whole blocks: the attention gathers by block
            bt = torch.zeros(len(dec), nb, dtype=torch.long)
            for r, i in enumerate(dec):
                table = seqs[i].block_table[:nb]
                bt[r, :len(table)] = torch.tensor(table)
                pos = seqs[i].num_computed_tokens
                ids.append(seqs[i].token_ids[pos])
                positions.append(pos)
            p = torch.arange(L)
            valid = p[None, :] < ctx[:, None]
            # Padded positions read the zeroed null slot 0 and are masked off.
            slots = (bt[:, p // bs] * bs + p % bs).masked_fill_(~valid, 0)  # [Bd, L]
            attn.decode_slots = slots
            attn.decode_mask = valid[:, None, None, :]
            attn.decode_blocks, attn.block_size = bt, bs
            slot_parts.append(slots.gather(1, (ctx - 1)[:, None]).squeeze(1))
        row = len(dec)
        for i in pre:
            seq, n = seqs[i], counts[i]
            start = seq.num_computed_tokens
            ids.extend(seq.token_ids[start:start + n])
            positions.extend(range(start, start + n))
            ctx_slots = self._slots(seq.block_table, 0, start + n)
            mask = None
            if start:
                q = torch.arange(start, start + n)
                mask = torch.arange(start + n)[None, :] <= q[:, None]
            attn.prefills.append(PrefillChunk(row, row + n, ctx_slots, mask))
            slot_parts.append(ctx_slots[start:])
            row += n
        attn.slot_mapping = torch.cat(slot_parts) if len(slot_parts) > 1 else slot_parts[0]
        input_ids = torch.tensor(ids, dtype=torch.long)
        pos_t = torch.tensor(positions, dtype=torch.long)
        # Map sampled rows back to the caller's sequence order.
        row_of = {}
        r = 0
        for i in dec:
            if seqs[i].num_computed_tokens + 1 == seqs[i].num_tokens:  # not a 1-token chunk mid-prompt
                row_of[i] = r
            r += 1
        for i in pre:
            r += counts[i]
            if seqs[i].num_computed_tokens + counts[i] == seqs[i].num_tokens:
                row_of[i] = r - 1
        return input_ids, pos_t, attn, [row_of.get(i, -1) for i in range(len(seqs))]

    def run(self, seqs: list[Sequence], counts: list[int]) -> tuple[torch.Tensor | None, list[int]]:
        """Forward one step; returns float32 logits for sequences that finished their prompt/decode (row order
        given by the returned index list, -1 for sequences mid-prefill)."""
        input_ids, positions, attn, rows = self.prepare(seqs, counts)
        want = [r for r in rows if r >= 0]
        logits = self.forward(input_ids, positions, attn, want)
        # rows[i] becomes the index into `logits` for sequence i.
        out, k = [], 0
        for r in rows:
            if r >= 0:
                out.append(k)
                k += 1
            else:
                out.append(-1)
        return logits, out

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionMetadata,
                want: list[int]) -> torch.Tensor | None:
        """One forward over prepared (CPU) inputs; float32 logits of the rows in `want`, None when there are none."""
        if self.device.type != "cpu":
            attn = _to_device(attn, self.device)
            input_ids, positions = input_ids.to(self.device), positions.to(self.device)
        attn.workspace = self.workspace if attn.decode_blocks is not None else None
        self.kv.flush_zeroes()
        hidden = self.model(input_ids, positions, attn)
        if not want:
            return None
        idx = torch.tensor(want, dtype=torch.long, device=hidden.device)
        return self.model.compute_logits(hidden.index_select(0, idx)).float().cpu()


def _to_device(attn: AttentionMetadata, device: torch.device) -> AttentionMetadata:
    attn.slot_mapping = attn.slot_mapping.to(device)
    if attn.decode_slots is not None:
        attn.decode_slots = attn.decode_slots.to(device)
        attn.decode_mask = attn.decode_mask.to(device)
        attn.decode_blocks = attn.decode_blocks.to(device)
    for c in attn.prefills:
        c.slots = c.slots.to(device)
        if c.mask is not None:
            c.mask = c.mask.to(device)
    return attn
