"""BlockManager and Scheduler on their own (no model): allocation, free, prefix hits, preemption, chunked
prefill budget, the prefix key, and a seeded random walk that checks the block invariants after every op."""
from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from engine.base import SamplingParams
from engine.native import block_manager as bm_module
from engine.native.block_manager import BlockManager, block_hash
from engine.native.config import EngineConfig
from engine.native.scheduler import Scheduler
from engine.native.sequence import Sequence, SeqStatus

BS = 4


def _seq(tokens: list[int], rid: str = "r", max_tokens: int = 8) -> Sequence:
    return Sequence(rid, tokens, SamplingParams(max_tokens=max_tokens))


def _compute(bm: BlockManager, seq: Sequence, n: int) -> None:
    """What a step does after the forward: n more tokens are in the cache, full prompt blocks get published."""
    seq.advance(n)
    bm.register_computed(seq)


def test_admit_allocates_whole_blocks_and_free_returns_them():
    bm = BlockManager(num_blocks=9, block_size=BS)  # block 0 is the null block: 8 usable
    seq = _seq(list(range(10)))
    assert bm.admit(seq, 10)
    assert len(seq.block_table) == 3 and 0 not in seq.block_table
    assert bm.num_used == 3 and bm.num_free == 5
    _compute(bm, seq, 10)
    bm.free_seq(seq)
    assert bm.num_used == 0 and bm.num_free == 8 and seq.block_table == [] and seq.num_computed_tokens == 0
    assert not bm.admit(_seq(list(range(40))), 40)  # 10 blocks do not fit in 8
    assert bm.num_used == 0


def test_prefix_hit_reuses_identical_blocks_and_leaves_the_last_token():
    bm = BlockManager(num_blocks=16, block_size=BS)
    a = _seq(list(range(13)), "a")
    assert bm.admit(a, 13)
    _compute(bm, a, 13)
    a_blocks = list(a.block_table)
    bm.free_seq(a)
    b = _seq(list(range(12)) + [99, 98], "b")
    hits = bm.lookup_prefix(b)
    assert hits == a_blocks[:3]
    assert [bm.blocks[h].token_ids for h in hits] == [tuple(range(i, i + 4)) for i in (0, 4, 8)]
    assert bm.admit(b, 2)
    assert b.num_cached_tokens == b.num_computed_tokens == 12 and b.block_table[:3] == a_blocks[:3]
    assert bm.hits == 3 and bm.queries == 3 + 3
    exact = _seq(list(range(12)), "c")  # 12 tokens: only two blocks may hit, the last token is computed
    assert len(bm.lookup_prefix(exact)) == 2


def test_prefix_key_is_a_sha256_digest_over_parent_and_token_bytes():
    h = block_hash((1, 2, 3, 4), None)
    assert isinstance(h, bytes) and len(h) == 32
    assert h == hashlib.sha256(np.asarray([1, 2, 3, 4], dtype=np.int64).tobytes()).digest()
    child = block_hash((5, 6, 7, 8), h)
    assert child == hashlib.sha256(h + np.asarray([5, 6, 7, 8], dtype=np.int64).tobytes()).digest()
    assert child != block_hash((5, 6, 7, 8), block_hash((1, 2, 3, 5), None))  # the parent is part of the key


@pytest.mark.parametrize("forced", ["python-hash", "digest"])
def test_colliding_keys_never_splice_two_prefixes(monkeypatch, forced):
    """Keys made to ignore the parent block (a forced collision) must not let [b0, x] reuse x computed after c0."""
    if forced == "python-hash":  # what an attacker could aim for with Python's hash() of a tuple
        monkeypatch.setattr(bm_module, "hash", lambda obj: hash(obj[1]), raising=False)
    else:
        real = bm_module.block_hash
        monkeypatch.setattr(bm_module, "block_hash", lambda ids, parent: real(ids, None))
    bm = BlockManager(num_blocks=32, block_size=BS)
    c0, b0, x, y = [1, 1, 1, 1], [2, 2, 2, 2], [7, 7, 7, 7], [8, 8, 8, 8]
    for rid, toks in (("c", c0 + x + [5]), ("b", b0 + y + [5])):
        s = _seq(toks, rid)
        assert bm.admit(s, len(toks))
        _compute(bm, s, len(toks))
        bm.free_seq(s)
    victim = _seq(b0 + x + [5], "victim")
    hits = bm.lookup_prefix(victim)
    assert len(hits) == 1 and bm.blocks[hits[0]].token_ids == tuple(b0)  # b0 only; x was computed after c0


def _scheduler(num_blocks: int, budget: int, chunk: int | None = None, max_seqs: int = 8):
    bm = BlockManager(num_blocks=num_blocks, block_size=BS)
    cfg = EngineConfig(block_size=BS, max_num_seqs=max_seqs, max_num_batched_tokens=budget, max_prefill_chunk=chunk)
    return bm, Scheduler(cfg, bm)


def _run_step(bm: BlockManager, batch) -> None:
    """Commit a scheduled batch as the engine would, sampling token 0 where a chunk reaches the end."""
    for seq, n in zip(batch.seqs, batch.num_new_tokens):
        done = seq.num_computed_tokens + n == seq.num_tokens
        _compute(bm, seq, n)
        if done:
            seq.append_token(0, None)


def test_chunked_prefill_respects_the_token_budget_and_the_chunk_cap():
    bm, sched = _scheduler(num_blocks=64, budget=8, chunk=5)
    a, b = _seq(list(range(10, 22)), "a"), _seq(list(range(30, 37)), "b")
    sched.add(a)
    sched.add(b)
    batch, failed = sched.schedule()
    assert not failed and [s.request_id for s in batch.seqs] == ["a", "b"] and batch.num_new_tokens == [5, 3]
    _run_step(bm, batch)
    batch, _ = sched.schedule()  # running sequences first, each capped at 5, all within 8
    assert batch.num_new_tokens == [5, 3]
    _run_step(bm, batch)
    batch, _ = sched.schedule()  # a has 2 prompt tokens left, b one
    assert [s.request_id for s in batch.seqs] == ["a", "b"] and batch.num_new_tokens == [2, 1]
    _run_step(bm, batch)
    batch, _ = sched.schedule()  # both decode one token each
    assert batch.num_new_tokens == [1, 1] and a.is_decoding and b.is_decoding


def test_preemption_frees_the_newest_request_and_requeues_it_first():
    bm, sched = _scheduler(num_blocks=7, budget=64)  # 6 usable blocks of 4 tokens
    a, b = _seq(list(range(1, 12)), "a", max_tokens=30), _seq(list(range(20, 31)), "b", max_tokens=30)
    sched.add(a)
    sched.add(b)
    batch, _ = sched.schedule()
    assert len(batch.seqs) == 2 and bm.num_free == 0  # 3 blocks each
    _run_step(bm, batch)  # prompts computed, one token sampled each
    batch, _ = sched.schedule()
    assert batch.num_new_tokens == [1, 1] and batch.num_preempted == 0
    _run_step(bm, batch)  # 12 tokens computed each: every slot of the three blocks is used
    batch, _ = sched.schedule()  # a's next token needs a 4th block: b (the newest) is preempted
    assert [s.request_id for s in batch.seqs] == ["a"] and batch.num_preempted == 1
    assert b.status == SeqStatus.WAITING and b.block_table == [] and b.num_computed_tokens == 0
    assert sched.waiting[0] is b and sched.total_preemptions == 1 and b.num_preemptions == 1
    assert b.token_ids[-1] == 0  # generated tokens are kept and recomputed later


def test_a_request_larger_than_the_whole_cache_fails_alone():
    bm, sched = _scheduler(num_blocks=5, budget=64)
    big, small = _seq(list(range(1, 30)), "big"), _seq([1, 2, 3], "small")
    sched.add(big)
    sched.add(small)
    batch, failed = sched.schedule()
    assert [s.request_id for s in failed] == ["big"] and "more KV cache" in failed[0].error
    assert [s.request_id for s in batch.seqs] == ["small"]


def _check_invariants(bm: BlockManager, live: list[Sequence]) -> None:
    refs = [0] * len(bm.blocks)
    for seq in live:
        assert len(set(seq.block_table)) == len(seq.block_table), "a block twice in one table"
        assert 0 not in seq.block_table
        assert seq.num_computed_tokens <= len(seq.block_table) * BS
        for bid in seq.block_table:
            refs[bid] += 1
    assert [b.ref_count for b in bm.blocks] == refs  # counts match the owners; never negative
    owners: dict[int, tuple[Sequence, int]] = {}
    for seq in live:  # a block with two owners is a shared prefix block holding both owners' tokens
        for i, bid in enumerate(seq.block_table):
            if bid in owners:
                other, j = owners[bid]
                b = bm.blocks[bid]
                assert i == j and b.hash is not None
                assert tuple(seq.token_ids[i * BS:(i + 1) * BS]) == tuple(other.token_ids[j * BS:(j + 1) * BS]) == b.token_ids
            owners[bid] = (seq, i)
    free = bm.free_plain + bm.untouched + list(bm.free)
    assert len(free) == len(set(free)), "a block twice in the free lists"
    used = {i for i in range(1, len(bm.blocks)) if refs[i] > 0}
    assert set(free) | used == set(range(1, len(bm.blocks))) and not set(free) & used  # free + used partition
    assert bm.num_used == len(used) and bm.num_free + bm.num_used == bm.num_blocks
    for h, bid in bm.hash_to_block.items():
        assert bm.blocks[bid].hash == h


def test_random_walk_keeps_block_invariants():
    rng = random.Random(1234)
    bm, sched = _scheduler(num_blocks=24, budget=24, chunk=9, max_seqs=6)
    live: list[Sequence] = []
    prefixes = [[rng.randrange(3, 50) for _ in range(rng.choice([4, 8, 12]))] for _ in range(4)]
    ops = {"add": 0, "hit": 0, "step": 0, "preempt": 0, "finish": 0, "abort": 0}
    for n in range(3000):
        op = rng.choices(["add", "step", "abort"], weights=[2, 6, 1])[0]
        if op == "add" and len(live) < 12:
            tokens = rng.choice(prefixes) + [rng.randrange(3, 50) for _ in range(rng.randrange(1, 14))]
            seq = _seq(tokens, f"r{n}", max_tokens=rng.randrange(1, 40))
            sched.add(seq)
            live.append(seq)
            ops["add"] += 1
        elif op == "abort" and live:
            seq = rng.choice(live)
            sched.finish(seq)
            live.remove(seq)
            ops["abort"] += 1
        else:
            before = {s.request_id: s.num_computed_tokens for s in live}
            batch, failed = sched.schedule()
            for seq in failed:
                live.remove(seq)
            for seq in batch.seqs:
                if seq.num_cached_tokens and before[seq.request_id] == 0 and seq.num_computed_tokens == seq.num_cached_tokens:
                    ops["hit"] += 1
                    hit_blocks = seq.block_table[:seq.num_cached_tokens // BS]  # served blocks hold these tokens
                    assert [bm.blocks[b].token_ids for b in hit_blocks] == [
                        tuple(seq.token_ids[i * BS:(i + 1) * BS]) for i in range(len(hit_blocks))]
            ops["preempt"] += batch.num_preempted
            _run_step(bm, batch)
            for seq in list(batch.seqs):
                if seq.num_output_tokens >= seq.params.max_tokens:
                    sched.finish(seq)
                    live.remove(seq)
                    ops["finish"] += 1
            ops["step"] += 1
        _check_invariants(bm, live)
    for seq in live:
        sched.finish(seq)
    _check_invariants(bm, [])
    assert bm.num_used == 0
    assert all(v > 20 for v in ops.values()), ops  # every kind of event really happened


def test_kv_cache_zeroes_exactly_the_queued_blocks():
    """flush_zeroes clears every queued block (scattered, repeated, in runs) in every layer, and nothing else."""
    import torch
    from engine.native.attention import KVCacheSpec
    from engine.native.kv_cache import KVCache, block_runs
    assert block_runs([7, 3, 1, 2, 3, 9, 8]) == [(1, 3), (7, 3)]
    spec = KVCacheSpec(num_layers=2, k_shape=(4, 8), v_shape=None, slot_axis=1)
    kv = KVCache(spec, budget_bytes=spec.bytes_per_token(torch.float32) * 4 * 12, block_size=4,
                 dtype=torch.float32, device=torch.device("cpu"))
    for k, _ in kv.caches:
        k.fill_(1.0)
    kv.zero_blocks([5, 2, 3, 9, 3])
    kv.flush_zeroes()
    for k, _ in kv.caches:
        per_block = k.unflatten(1, (kv.num_blocks, 4)).abs().sum(dim=(0, 2, 3))
        assert [b for b in range(kv.num_blocks) if per_block[b] == 0] == [2, 3, 5, 9]
