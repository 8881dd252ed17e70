"""Run under torchrun by the expert-parallel tests: rank 0 generates greedily (MTP speculative decoding when
NEXTN > 0) and writes what it saw; the other ranks serve steps.
argv: MODEL OUT_JSON NEXTN DP_ATTENTION(0/1) JOB_JSON ({"prompts": [[ids]], "max_tokens": [n per prompt]})."""
import json
import sys

from engine.base import SamplingParams
from engine.native.rank_worker import serve_if_worker
from engine.native.ranks import launched
from engine.native.spec_engine import SpecLLMEngine
from tests.engine_deepseek.conftest import run_requests

world = launched().world_size
model, out, nextn, dp_attention, job = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", \
    json.loads(sys.argv[5])
if (code := serve_if_worker(device="cpu", threads=1, timeout_s=60)) is not None:
    sys.exit(code)
# The settings of conftest.build_engine, so the single-rank reference matches.
engine = SpecLLMEngine(model=model, device="cpu", threads=1, block_size=4, kv_cache_gib=0.005, dtype="fp32",
                       max_num_batched_tokens=16, nextn=nextn, ep=world, dp_attention=dp_attention,
                       dist_timeout_s=60)
outs = run_requests(engine, job["prompts"], [SamplingParams(max_tokens=m) for m in job["max_tokens"]])
engine.close()
json.dump({"tokens": [o.token_ids for o in outs], "errors": [o.error for o in outs],
           "routed_expert_bytes": engine.model.routed_expert_bytes(),
           "num_drafts": engine.spec_stats.num_drafts, "accepted": engine.spec_stats.num_accepted_tokens,
           "describe": engine.describe(), "rows_per_rank": getattr(engine.runner, "rows_per_rank", None),
           "idle_rank_steps": getattr(engine.runner, "idle_rank_steps", None)}, open(out, "w"))
