"""KV block allocation: fixed-size blocks, reference counts, prefix caching by chained block hash."""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Callable

import numpy as np

from engine.native.sequence import Sequence


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "parent", "token_ids")

    def __init__(self, block_id: int):
        self.block_id = block_id
        self.ref_count = 0
        self.hash: bytes | None = None
        self.parent: bytes | None = None  # hash of the block before it in the sequence that computed it
        self.token_ids: tuple[int, ...] = ()


def block_hash(token_ids: tuple[int, ...], parent: bytes | None) -> bytes:
    """SHA-256 over the parent block's digest and the token ids' bytes: chained, so a block's identity
    includes everything before it, and not forgeable the way Python's hash() is (vLLM's fix for the same)."""
    return hashlib.sha256((parent or b"") + np.asarray(token_ids, dtype=np.int64).tobytes()).digest()


class BlockManager:
    """Hands out blocks; a freed block keeps its hash until reused, so later requests can hit it."""

    def __init__(self, num_blocks: int, block_size: int, enable_prefix_caching: bool = True,
                 on_allocate: Callable[[list[int]], None] | None = None):
        self.block_size = block_size
        # Called with the ids of blocks handed out for new tokens (not prefix hits), e.g. to zero them so
        # attention may read whole blocks: slots past a sequence's end then hold zeros or its own stale
        # rows, never another request's values or uninitialised memory.
        self.on_allocate = on_allocate
        self.enable_prefix_caching = enable_prefix_caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        # Block 0 is the KV cache's zeroed null block (padding target) and is never handed out.
        # Reuse order: freed blocks holding no cached prefix, then never-used blocks, then cached prefix
        # blocks, least recently freed first. Never-used blocks come late so resident memory follows the
        # load rather than the whole budget (the cache tensor's pages stay untouched until needed).
        self.free_plain: list[int] = []
        self.untouched: list[int] = list(range(num_blocks - 1, 0, -1))
        self.free: OrderedDict[int, None] = OrderedDict()  # freed blocks with a prefix hash, LRU order
        self.hash_to_block: dict[bytes, int] = {}
        self.num_used = 0  # blocks with ref_count > 0
        self.queries = 0  # prompt blocks looked up
        self.hits = 0

    @property
    def num_blocks(self) -> int:
        return len(self.blocks) - 1  # usable blocks

    @property
    def num_free(self) -> int:
        return len(self.free_plain) + len(self.untouched) + len(self.free)

    def blocks_for(self, num_tokens: int) -> int:
        return (num_tokens + self.block_size - 1) // self.block_size

    def lookup_prefix(self, seq: Sequence) -> list[int]:
        """Block ids of the longest cached prefix; the last token is always left to compute. Each hit's own
        tokens and its parent's digest are compared too, so even a digest collision cannot splice prefixes."""
        if not self.enable_prefix_caching:
            return []
        hits, parent, bs = [], None, self.block_size
        for i in range((seq.num_tokens - 1) // bs):
            ids = tuple(seq.token_ids[i * bs:(i + 1) * bs])
            h = block_hash(ids, parent)
            bid = self.hash_to_block.get(h)
            if bid is None or self.blocks[bid].token_ids != ids or self.blocks[bid].parent != parent:
                break
            hits.append(bid)
            parent = h
        return hits

    def admit(self, seq: Sequence, num_new_tokens_after_hits: int) -> bool:
        """Give a waiting seq its cached prefix plus blocks for the next chunk; False when short of blocks."""
        hits = self.lookup_prefix(seq)
        cached = len(hits) * self.block_size
        need_new = self.blocks_for(cached + num_new_tokens_after_hits) - len(hits)
        from_free = sum(1 for b in hits if self.blocks[b].ref_count == 0)
        if need_new + from_free > self.num_free:
            return False
        if self.enable_prefix_caching:
            self.queries += (seq.num_tokens - 1) // self.block_size
            self.hits += len(hits)
        for bid in hits:
            self._take(bid)
        seq.block_table = list(hits)
        seq.num_hashed_blocks = len(hits)
        seq.rollback(0)  # a waiting sequence holds no KV: it starts from its cached prefix
        seq.advance(cached)
        seq.num_cached_tokens = cached
        self.grow(seq, cached + num_new_tokens_after_hits)
        return True

    def _take(self, bid: int) -> None:
        b = self.blocks[bid]
        if b.ref_count == 0:
            del self.free[bid]
            self.num_used += 1
        b.ref_count += 1

    def can_grow(self, seq: Sequence, num_tokens: int) -> bool:
        return self.blocks_for(num_tokens) - len(seq.block_table) <= self.num_free

    def grow(self, seq: Sequence, num_tokens: int) -> None:
        """Make the block table cover `num_tokens` tokens (caller checked can_grow)."""
        new = []
        for _ in range(self.blocks_for(num_tokens) - len(seq.block_table)):
            if self.free_plain:
                bid = self.free_plain.pop()
            elif self.untouched:
                bid = self.untouched.pop()
            else:
                bid = self.free.popitem(last=False)[0]
            b = self.blocks[bid]
            if b.hash is not None and self.hash_to_block.get(b.hash) == bid:
                del self.hash_to_block[b.hash]  # evict the stale prefix entry
            b.hash, b.parent, b.token_ids, b.ref_count = None, None, (), 1
            self.num_used += 1
            seq.block_table.append(bid)
            new.append(bid)
        if new and self.on_allocate is not None:
            self.on_allocate(new)

    def register_computed(self, seq: Sequence) -> None:
        """Publish newly completed full prompt blocks (K/V written) to the prefix cache. Blocks of generated
        tokens are not cached: they are rarely shared, and recycling them keeps resident memory low."""
        if not self.enable_prefix_caching:
            return
        bs = self.block_size
        full = min(seq.num_computed_tokens, seq.num_prompt_tokens) // bs
        prev = self.blocks[seq.block_table[seq.num_hashed_blocks - 1]].hash if seq.num_hashed_blocks else None
        for i in range(seq.num_hashed_blocks, full):
            ids = tuple(seq.token_ids[i * bs:(i + 1) * bs])
            h = block_hash(ids, prev)
            b = self.blocks[seq.block_table[i]]
            if b.hash is None:
                b.hash, b.parent, b.token_ids = h, prev, ids
                self.hash_to_block.setdefault(h, b.block_id)
            prev = b.hash
        seq.num_hashed_blocks = max(seq.num_hashed_blocks, full)

    def free_seq(self, seq: Sequence) -> None:
        # Reversed so a sequence's tail blocks are reused before its prefix (which others may share).
        for bid in reversed(seq.block_table):
            b = self.blocks[bid]
            b.ref_count -= 1
            if b.ref_count == 0:
                self.num_used -= 1
                if b.hash is None:
                    self.free_plain.append(bid)
                else:
                    self.free[bid] = None
        seq.block_table = []
        seq.num_hashed_blocks = 0
        seq.rollback(0)

    def prefix_hit_rate(self) -> float:
        return self.hits / self.queries if self.queries else 0.0
