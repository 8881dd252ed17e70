"""Turns a scheduled batch into model inputs (ids, positions, AttentionMetadata) and runs one forward."""
from __future__ import annotations

import torch

from engine.native.attention import AttentionMetadata, Workspace, prefill_chunk
from engine.native.kv_cache import KVCache
from engine.native.sequence import Sequence


class ModelRunner:
    def __init__(self, model, kv_cache: KVCache, device: torch.device):
        self.model = model
        self.kv = kv_cache
        self.device = device
        self.block_size = kv_cache.block_size
        self.workspace = Workspace()
        # bf16 on a CPU: matrices packed once for oneDNN (packed_weights); a model without the hook keeps F.linear
        self.packed_matrices = model.enable_packed() if hasattr(model, "enable_packed") else 0

    def prepare(self, seqs: list[Sequence], chunks: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, AttentionMetadata, list[int]]:
        """chunks[i]: the token ids sequence i feeds this step, from position seq.num_computed_tokens on.
        One-token chunks (decodes) go first, then longer chunks; also returns each sequence's first row.
        Everything is built on the CPU; forward() moves it to the device."""
        dec = [i for i, c in enumerate(chunks) if len(c) == 1]
        pre = [i for i, c in enumerate(chunks) if len(c) != 1]
        ids: list[int] = []
        positions: list[int] = []
        slot_parts: list[torch.Tensor] = []
        first_row = [0] * len(seqs)
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
                ids.append(chunks[i][0])
                positions.append(seqs[i].num_computed_tokens)
                first_row[i] = r
            p = torch.arange(L)
            valid = p[None, :] < ctx[:, None]
            # Padded positions read the zeroed null slot 0 and are masked off.
            slots = (bt[:, p // bs] * bs + p % bs).masked_fill_(~valid, 0)  # [Bd, L]
            attn.decode_slots = slots
            attn.decode_mask = valid[:, None, None, :]
            attn.decode_blocks, attn.decode_lens, attn.block_size = bt, ctx, bs
            slot_parts.append(slots.gather(1, (ctx - 1)[:, None]).squeeze(1))
        row = len(dec)
        for i in pre:
            seq, n = seqs[i], len(chunks[i])
            start = seq.num_computed_tokens
            ids.extend(chunks[i])
            positions.extend(range(start, start + n))
            chunk, written = prefill_chunk(seq.block_table, start, start + n, row, bs)
            attn.prefills.append(chunk)
            slot_parts.append(written)
            first_row[i] = row
            row += n
        attn.slot_mapping = torch.cat(slot_parts) if len(slot_parts) > 1 else slot_parts[0]
        return torch.tensor(ids, dtype=torch.long), torch.tensor(positions, dtype=torch.long), attn, first_row

    def run(self, seqs: list[Sequence], chunks: list[list[int]]) -> tuple[torch.Tensor, list[int]]:
        """Forward one step (see prepare); returns the hidden states [rows, H] and each sequence's first row."""
        input_ids, positions, attn, first_row = self.prepare(seqs, chunks)
        return self.forward(input_ids, positions, attn), first_row

    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
        """One forward over inputs prepare() built on the CPU (a tensor-parallel rank 0 sends them as they are)."""
        attn = attn.to(self.device)
        attn.workspace = self.workspace if attn.decode_blocks is not None else None
        self.kv.flush_zeroes()
        return self.model(input_ids.to(self.device), positions.to(self.device), attn)

    @torch.inference_mode()
    def logits(self, hidden: torch.Tensor, rows: list[int]) -> torch.Tensor:
        """float32 CPU logits of the given hidden rows (per-request generators are CPU generators)."""
        idx = torch.tensor(rows, dtype=torch.long, device=hidden.device)
        return self.model.compute_logits(hidden.index_select(0, idx)).float().cpu()
